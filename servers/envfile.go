package servers

import (
	"fmt"
	"strings"
)

// ParseEnvFile reads an environment file (VS Code's and Cursor's envFile),
// in the dotenv format those editors read:
//
//	# a comment
//	NAME=value            # unquoted: trimmed, " #" starts a comment
//	export NAME=value     # "export " is allowed
//	NAME="a\nb"           # double quotes: \n \r \t \" \\ escapes, may span lines
//	NAME='raw $text'      # single quotes: taken as written, may span lines
//
// A later line wins over an earlier one. A line that is not NAME=VALUE, or
// an unterminated quote, is an error naming its line.
func ParseEnvFile(data []byte) (map[string]string, error) {
	s := strings.TrimPrefix(string(data), "\uFEFF")
	out := map[string]string{}
	line := 1
	for len(s) > 0 {
		// One logical line: up to the newline, unless a quote spans more.
		nl := strings.IndexByte(s, '\n')
		first := s
		if nl >= 0 {
			first = s[:nl]
		}
		trimmed := strings.TrimSpace(first)
		if trimmed == "" || trimmed[0] == '#' {
			s, line = advance(s, nl, line)
			continue
		}
		body := strings.TrimLeft(s, " \t")
		if rest, ok := strings.CutPrefix(body, "export "); ok {
			body = strings.TrimLeft(rest, " \t")
		}
		eq := strings.IndexByte(body, '=')
		if eq < 0 || (nl >= 0 && eq > strings.IndexByte(body, '\n')) {
			return nil, fmt.Errorf("line %d: expected NAME=VALUE", line)
		}
		name := strings.TrimSpace(body[:eq])
		// A name cannot start with "#": the line "#A=1" is a comment, so
		// "export #A=1" (a comment after export, to a shell) is no
		// variable either, and no file could set one named "#A".
		if name == "" || name[0] == '#' || strings.ContainsAny(name, " \t\r\"'") {
			return nil, fmt.Errorf("line %d: %q is not a variable name", line, name)
		}
		rest := strings.TrimLeft(body[eq+1:], " \t")
		start := line
		var value string
		switch {
		case strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, `'`):
			q := rest[0]
			var b strings.Builder
			i := 1
			closed := false
			for i < len(rest) {
				c := rest[i]
				if c == q {
					closed = true
					i++
					break
				}
				if c == '\n' {
					line++
				}
				if c == '\\' && q == '"' && i+1 < len(rest) {
					switch rest[i+1] {
					case 'n':
						b.WriteByte('\n')
					case 'r':
						b.WriteByte('\r')
					case 't':
						b.WriteByte('\t')
					case '"', '\\':
						b.WriteByte(rest[i+1])
					default:
						b.WriteByte('\\')
						b.WriteByte(rest[i+1])
					}
					if rest[i+1] == '\n' {
						line++
					}
					i += 2
					continue
				}
				b.WriteByte(c)
				i++
			}
			if !closed {
				return nil, fmt.Errorf("line %d: the quote %c is not closed", start, q)
			}
			value = b.String()
			after := rest[i:]
			end := strings.IndexByte(after, '\n')
			tail := after
			if end >= 0 {
				tail = after[:end]
			}
			if t := strings.TrimSpace(tail); t != "" && t[0] != '#' {
				return nil, fmt.Errorf("line %d: unexpected %q after the closing quote", line, t)
			}
			if end < 0 {
				s = ""
			} else {
				s = after[end+1:]
				line++
			}
		default:
			end := strings.IndexByte(rest, '\n')
			v := rest
			if end >= 0 {
				v = rest[:end]
			}
			if i := strings.Index(v, " #"); i >= 0 {
				v = v[:i]
			} else if i := strings.Index(v, "\t#"); i >= 0 {
				v = v[:i]
			}
			value = strings.TrimSpace(v)
			if end < 0 {
				s = ""
			} else {
				s = rest[end+1:]
				line++
			}
		}
		out[name] = value
	}
	return out, nil
}

func advance(s string, nl, line int) (string, int) {
	if nl < 0 {
		return "", line
	}
	return s[nl+1:], line + 1
}
