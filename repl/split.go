// Package repl is the line-editor glue of mcpx's interactive session: it
// splits lines into words the way a shell does, reads commands from a
// terminal (chzyer/readline, with completion, history and multi-line
// input) or from a script, and runs them one by one. It knows the shape of
// mcpx's command grammar for completion, but nothing about what the
// commands do: cmd executes them, inspector holds the live data.
package repl

import (
	"fmt"
	"strings"
)

// Open says how a line ends inside a word that is not finished.
type Open int

// The ways a word can be left unfinished.
const (
	Closed     Open = iota // the word is complete
	OpenSingle             // inside '...'
	OpenDouble             // inside "..."
	OpenJSON               // inside an unquoted JSON value {...} or [...]
	OpenEscape             // after a final backslash
)

func (o Open) String() string {
	switch o {
	case OpenSingle:
		return "an unterminated single quote"
	case OpenDouble:
		return "an unterminated double quote"
	case OpenJSON:
		return "unbalanced JSON braces or brackets"
	case OpenEscape:
		return "a final backslash"
	}
	return "nothing open"
}

// Token is one word of a line: its value after quote removal, and the byte
// offsets of its raw text.
type Token struct {
	Value      string
	Start, End int
	// Open is how the word is unfinished; only the last token of a line
	// can be open.
	Open Open
	// ValueStart is the offset in the raw text where the part after the
	// word's first unquoted '=' begins, or -1 (for key=value completion).
	ValueStart int
}

// Scanned is a line split into tokens.
type Scanned struct {
	Tokens []Token
	// Trailing is true when the line does not end inside a word (it is
	// empty, or ends with a blank or a comment): a new word would start
	// at the end.
	Trailing bool
	// Comment is true when the line ends inside a comment.
	Comment bool
}

// Last returns the last token, or nil.
func (s Scanned) Last() *Token {
	if len(s.Tokens) == 0 {
		return nil
	}
	return &s.Tokens[len(s.Tokens)-1]
}

// Incomplete reports what leaves the line unfinished (a quote, JSON
// brackets, a final backslash), or Closed when it is complete: a reader
// asks for another line while it is not Closed.
func (s Scanned) Incomplete() Open {
	if t := s.Last(); t != nil && !s.Trailing {
		return t.Open
	}
	return Closed
}

// Split splits line into words shell-style: blanks separate words; '...'
// quotes literally; "..." quotes with \" \\ \$ \` and \<newline> escapes;
// a backslash outside quotes escapes the next character; a word starting
// with # begins a comment. There is no expansion of any kind. As a REPL
// convenience, an unquoted JSON object or array — at the start of a word,
// or right after the = of key= — is one word up to its matching bracket,
// taken verbatim (blanks and newlines included), so JSON needs no quoting:
//
//	call tools/call {"name": "echo", "arguments": {"message": "hi"}}
func Split(line string) ([]string, error) {
	sc := Scan(line)
	if open := sc.Incomplete(); open != Closed {
		return nil, fmt.Errorf("the line ends with %s", open)
	}
	var words []string
	for _, t := range sc.Tokens {
		words = append(words, t.Value)
	}
	return words, nil
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// Scan splits line into tokens (see Split), keeping an unfinished last
// word and the offsets completion needs.
func Scan(line string) Scanned {
	var out Scanned
	var cur strings.Builder
	in := false
	plain := true // the current word has no quotes or escapes so far
	start, valueStart := 0, -1
	state := Closed
	depth := 0
	jsonStr, jsonEsc := false, false

	begin := func(i int) {
		if !in {
			in, plain, start, valueStart = true, true, i, -1
			cur.Reset()
		}
	}
	emit := func(end int, open Open) {
		out.Tokens = append(out.Tokens, Token{Value: cur.String(), Start: start, End: end, Open: open, ValueStart: valueStart})
		in = false
	}
	afterKey := func() bool {
		s := cur.String()
		return plain && strings.HasSuffix(s, "=") && strings.Count(s, "=") == 1
	}

	for i := 0; i < len(line); i++ {
		c := line[i]
		switch state {
		case OpenSingle:
			if c == '\'' {
				state = Closed
			} else {
				cur.WriteByte(c)
			}
			continue
		case OpenDouble:
			switch {
			case c == '"':
				state = Closed
			case c == '\\' && i+1 < len(line) && strings.IndexByte("\\\"$`\n", line[i+1]) >= 0:
				if line[i+1] != '\n' {
					cur.WriteByte(line[i+1])
				}
				i++
			default:
				cur.WriteByte(c)
			}
			continue
		case OpenJSON:
			cur.WriteByte(c)
			switch {
			case jsonStr && jsonEsc:
				jsonEsc = false
			case jsonStr && c == '\\':
				jsonEsc = true
			case jsonStr && c == '"':
				jsonStr = false
			case jsonStr:
			case c == '"':
				jsonStr = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				depth--
				if depth == 0 {
					state = Closed
				}
			}
			continue
		}
		switch {
		case isBlank(c):
			if in {
				emit(i, Closed)
			}
		case c == '#' && !in:
			// A comment runs to the end of its line.
			if j := strings.IndexByte(line[i:], '\n'); j >= 0 {
				i += j
			} else {
				i, out.Comment = len(line), true
			}
		case c == '\\' && i+1 < len(line) && line[i+1] == '\n':
			// \<newline> continues the line and is removed, as a shell
			// does: inside a word the word goes on, between words it
			// starts none (an indented or empty next line would
			// otherwise add an empty word).
			if in {
				plain = false
			}
			i++
		case c == '\\':
			begin(i)
			plain = false
			if i+1 >= len(line) {
				emit(len(line), OpenEscape)
				return out
			}
			if line[i+1] != '\n' { // \<newline> continues the line
				cur.WriteByte(line[i+1])
			}
			i++
		case c == '\'':
			begin(i)
			plain = false
			state = OpenSingle
		case c == '"':
			begin(i)
			plain = false
			state = OpenDouble
		case (c == '{' || c == '[') && (!in || afterKey()):
			begin(i)
			plain = false
			state, depth, jsonStr, jsonEsc = OpenJSON, 1, false, false
			cur.WriteByte(c)
		default:
			begin(i)
			if c == '=' && valueStart < 0 && plain {
				valueStart = i + 1
			}
			cur.WriteByte(c)
		}
	}
	if in {
		emit(len(line), state)
	} else {
		out.Trailing = true
	}
	return out
}

// Quote renders s as one word that Split reads back as s: bare when it
// needs no quoting, else in single quotes.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	if !strings.ContainsAny(s, " \t\n\r'\"\\#{[") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// escapeFor renders s to be appended to a word left in state open whose
// value so far is typed, so that the word's value gains exactly s.
func escapeFor(s string, open Open, typed string) string {
	var b strings.Builder
	// Outside quotes, what the word's value ends with so far.
	empty, afterEq := typed == "", strings.HasSuffix(typed, "=")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch open {
		case OpenSingle:
			if c == '\'' {
				b.WriteString(`'\''`)
				continue
			}
		case OpenDouble:
			if strings.IndexByte("\\\"$`", c) >= 0 {
				b.WriteByte('\\')
			}
		default:
			if c == '\n' {
				// A backslash before a newline continues the line (it
				// adds nothing), so quote the newline.
				b.WriteString("'\n'")
				empty, afterEq = false, false
				continue
			}
			// '#' starts a comment at the start of a word, '{' and '['
			// a verbatim JSON word there and after the = of key=.
			starts := empty && c == '#' || (empty || afterEq) && (c == '{' || c == '[')
			if isBlank(c) || strings.IndexByte("'\"\\", c) >= 0 || starts {
				b.WriteByte('\\')
			}
			empty, afterEq = false, c == '='
		}
		b.WriteByte(c)
	}
	return b.String()
}

// closer returns what ends a word left in state open (a closing quote).
func closer(open Open) string {
	switch open {
	case OpenSingle:
		return "'"
	case OpenDouble:
		return `"`
	}
	return ""
}
