package servers

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/tidwall/jsonc"
)

// jsonNode is a value of a JSON document and where it is: std[start:end]
// is its text. An object also has its members, in file order, duplicates
// included (the last one wins, as in JSON decoders).
type jsonNode struct {
	start, end int
	object     bool
	members    []jsonMember
}

type jsonMember struct {
	name               string
	nameStart, nameEnd int
	value              jsonNode
}

// jsonSyntaxError is a JSON (with comments) document that does not parse;
// Line is 1-based, 0 when unknown.
type jsonSyntaxError struct {
	Line int
	Msg  string
}

func (e *jsonSyntaxError) Error() string { return e.Msg }

// utf8BOM is the byte order mark some Windows editors (Notepad, older
// PowerShell's Out-File) put at the start of a UTF-8 file. VS Code and
// the other applications read such a file; encoding/json does not.
const utf8BOM = "\xef\xbb\xbf"

// parseJSONC parses a JSON document that may have comments and trailing
// commas, and a UTF-8 byte order mark. std is data as standard JSON:
// comments, trailing commas and the byte order mark turned into spaces,
// so that every offset (and so every line) in std is the same as in data.
func parseJSONC(data []byte) (std []byte, root jsonNode, err error) {
	// In place in a copy: std is as long as data, so one allocation
	// (ToJSON grows its result by appending).
	std = jsonc.ToJSONInPlace(bytes.Clone(data))
	if bytes.HasPrefix(std, []byte(utf8BOM)) {
		copy(std, "   ")
	}
	// json.Valid checks without copying; Unmarshal only says where.
	var raw json.RawMessage
	if !json.Valid(std) {
		err := json.Unmarshal(std, &raw)
		if err == nil { // cannot happen: the same checker
			err = errors.New("not valid JSON")
		}
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// Offset counts the byte that failed.
			line = lineAt(data, int(se.Offset)-1)
		}
		return nil, jsonNode{}, &jsonSyntaxError{Line: line, Msg: err.Error()}
	}
	p := &jsonScanner{b: std}
	root = p.value()
	return std, root, nil
}

// memberDepth is how deep the members of objects are noted: the fields
// of an entry of Claude Code's local scope (root → projects → PATH →
// mcpServers → NAME) are the deepest any location needs. Deeper values,
// and those in lists, are read from their text. ~/.claude.json keeps each project's history
// too, tens of megabytes of objects that nothing looks into.
const memberDepth = 5

// jsonScanner walks a document encoding/json has already found valid,
// noting where values and names are.
type jsonScanner struct {
	b     []byte
	i     int
	depth int // of the value being scanned
}

func (p *jsonScanner) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonScanner) value() jsonNode {
	p.space()
	n := jsonNode{start: p.i}
	if p.i >= len(p.b) {
		n.end = p.i
		return n
	}
	switch p.b[p.i] {
	case '{':
		n.object = true
		p.i++
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] == '}' {
				break
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			nameStart := p.i
			p.str()
			nameEnd := p.i
			p.space()
			if p.i < len(p.b) && p.b[p.i] == ':' {
				p.i++
			}
			p.depth++
			value := p.value()
			p.depth--
			if p.depth < memberDepth {
				m := jsonMember{nameStart: nameStart, nameEnd: nameEnd, value: value}
				_ = json.Unmarshal(p.b[nameStart:nameEnd], &m.name) // cannot fail: checked
				n.members = append(n.members, m)
			}
		}
		p.i++
	case '[':
		p.i++
		for {
			p.space()
			if p.i >= len(p.b) || p.b[p.i] == ']' {
				break
			}
			if p.b[p.i] == ',' {
				p.i++
				continue
			}
			// No location looks into a list: its elements are read
			// from their text.
			d := p.depth
			p.depth = memberDepth
			p.value()
			p.depth = d
		}
		p.i++
	case '"':
		p.str()
	default: // a number, true, false or null
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ' ', '\t', '\r', '\n', ',', ']', '}':
				n.end = p.i
				return n
			}
			p.i++
		}
	}
	n.end = min(p.i, len(p.b))
	return n
}

// str skips a string, p.i at its opening quote.
func (p *jsonScanner) str() {
	for p.i++; p.i < len(p.b); p.i++ {
		switch p.b[p.i] {
		case '\\':
			p.i++
		case '"':
			p.i++
			return
		}
	}
}
