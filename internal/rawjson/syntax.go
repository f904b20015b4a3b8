package rawjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// SyntaxProblem is where a text stops being valid JSON, for a message
// that lets a person find it: the line and column, and the text that
// leads up to it.
type SyntaxProblem struct {
	// Offset is the byte at which the JSON breaks (the length of the text
	// when it ends too early).
	Offset int
	// Line and Column are 1-based; Column counts characters.
	Line, Column int
	// Early is set when the text ends before its JSON does.
	Early bool
	// Reason is encoding/json's description ("invalid character '}'
	// looking for beginning of object key string").
	Reason string
	// Excerpt is the line up to where it breaks, that character
	// included, at most excerptRunes characters of it ("…" before a cut).
	Excerpt string
}

// excerptRunes bounds SyntaxProblem.Excerpt.
const excerptRunes = 40

// FindSyntaxProblem returns where data stops being valid JSON, or nil when
// it is valid (one JSON value, white space around it allowed).
func FindSyntaxProblem(data []byte) *SyntaxProblem {
	var se *json.SyntaxError
	if err := json.Unmarshal(data, new(json.RawMessage)); !errors.As(err, &se) {
		return nil
	}
	p := &SyntaxProblem{Offset: int(se.Offset), Reason: se.Error()}
	end := p.Offset // the excerpt ends after the byte that broke it
	if p.Offset >= len(bytes.TrimRight(data, " \t\r\n")) && se.Error() == "unexpected end of JSON input" {
		p.Early = true
		data = bytes.TrimRight(data, " \t\r\n")
		p.Offset, end = len(data), len(data)
	} else if p.Offset > 0 {
		p.Offset-- // (encoding/json counts the bad byte as read)
	}
	end = min(end, len(data))
	start := bytes.LastIndexByte(data[:min(p.Offset, len(data))], '\n') + 1
	p.Line = bytes.Count(data[:start], []byte("\n")) + 1
	p.Column = utf8.RuneCount(data[start:min(p.Offset, len(data))]) + 1
	if p.Early {
		p.Column-- // the column of the last character
	}
	line := data[start:end]
	if n := utf8.RuneCount(line); n > excerptRunes {
		for range n - excerptRunes {
			_, size := utf8.DecodeRune(line)
			line = line[size:]
		}
		p.Excerpt = "…" + string(line)
	} else {
		p.Excerpt = string(line)
	}
	return p
}

// String says where the JSON breaks and why, on one line.
func (p *SyntaxProblem) String() string {
	if p.Early && p.Offset == 0 {
		return "it is empty"
	}
	if p.Early {
		return fmt.Sprintf("it ends before its JSON does, at line %d, column %d: %s", p.Line, p.Column, p.Excerpt)
	}
	return fmt.Sprintf("%s, at line %d, column %d: %s", p.Reason, p.Line, p.Column, p.Excerpt)
}

// NestedBeyond reports whether data, read as JSON, opens more than max
// objects and arrays at once. It reads no further than it must: a
// document that goes beyond max is told at the level that does.
func NestedBeyond(data []byte, max int) bool {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = SkipString(data, i) - 1
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
