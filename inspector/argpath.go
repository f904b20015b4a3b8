package inspector

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// A key of a key=value argument is a path into the arguments object:
// "user.address.city" sets city in the object address in the object user,
// "tags[0]" the first element of the array tags, "tags[]" a new last
// element, and "points[1].x" a member of an array's element. A backslash
// makes the next character plain ("file\.name" is the key "file.name"),
// an = too: a pair is split at its first = without one (splitPair), so
// "k\=v=hi" sets the key "k=v". A key the tool's schema names as it is,
// dots and all, is that key.

// pathStep is one step of a key path: a member name, or an array index
// (append: one past the end).
type pathStep struct {
	name   string
	index  int
	isElem bool
	append bool
}

func (s pathStep) String() string {
	switch {
	case s.append:
		return "[]"
	case s.isElem:
		return "[" + strconv.Itoa(s.index) + "]"
	}
	return s.name
}

// formatPath writes steps back as a key (escaping what needs it).
func formatPath(steps []pathStep) string {
	var b strings.Builder
	for i, s := range steps {
		if !s.isElem {
			if i > 0 {
				b.WriteByte('.')
			}
			for i := 0; i < len(s.name); i++ {
				if c := s.name[i]; c == '.' || c == '[' || c == ']' || c == '\\' || c == '=' {
					b.WriteByte('\\')
				}
				b.WriteByte(s.name[i])
			}
			continue
		}
		b.WriteString(s.String())
	}
	return b.String()
}

// splitPair splits a key=value argument at its first = that no backslash
// makes plain: the key keeps its backslashes (parsePath reads them), the
// value is the rest as typed. ok is false without such an =.
func splitPair(pair string) (key, value string, ok bool) {
	for i := 0; i < len(pair); i++ {
		switch pair[i] {
		case '\\':
			i++
		case '=':
			return pair[:i], pair[i+1:], true
		}
	}
	return pair, "", false
}

// pairError is the *ArgumentError of a pair splitPair refuses.
func pairError(pair string) *ArgumentError {
	reason := "expected key=value"
	if strings.Contains(pair, `\=`) {
		reason += ` (\= is an = in the key)`
	}
	return &ArgumentError{Value: pair, Reason: reason}
}

// parsePath splits a key into its steps.
func parsePath(key string) ([]pathStep, error) {
	const (
		expectName = iota // at the start, or after a dot
		inName
		afterIndex // after ]
	)
	var steps []pathStep
	var name strings.Builder
	state := expectName
	emptyName := errors.New("a member name is empty (two dots, or a dot at an end)")
	endName := func() {
		steps = append(steps, pathStep{name: name.String()})
		name.Reset()
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case c == '\\' || (c != '.' && c != '[' && c != ']'):
			if state == afterIndex {
				return nil, fmt.Errorf("%q must follow a dot after ]", key[i:])
			}
			if c == '\\' {
				if i+1 == len(key) {
					return nil, errors.New("a backslash at the end escapes nothing")
				}
				i++
			}
			name.WriteByte(key[i])
			state = inName
		case c == '.':
			if state == expectName {
				return nil, emptyName
			}
			if state == inName {
				endName()
			}
			state = expectName
		case c == '[':
			if state == expectName {
				if len(steps) == 0 {
					return nil, errors.New("a key starts with a member name, not [")
				}
				return nil, emptyName
			}
			if state == inName {
				endName()
			}
			end := strings.IndexByte(key[i:], ']')
			if end < 0 {
				return nil, errors.New("a [ is not closed")
			}
			inner := key[i+1 : i+end]
			i += end
			state = afterIndex
			if inner == "" {
				steps = append(steps, pathStep{isElem: true, append: true})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 || strings.TrimLeft(inner, "0123456789") != "" {
				return nil, fmt.Errorf("[%s] is not an array index (a number, or [] for a new element)", inner)
			}
			steps = append(steps, pathStep{isElem: true, index: n})
		default: // ']'
			return nil, errors.New("a ] without its [")
		}
	}
	switch state {
	case expectName:
		return nil, emptyName
	case inName:
		endName()
	}
	return steps, nil
}

// isPlainKey reports whether key has no path syntax: it is one member.
func isPlainKey(key string) bool { return !strings.ContainsAny(key, `.[]\`) }

// stepSchema returns the schema of what one step leads to inside a value
// of schema: a property's schema, or an array's items; nil when the
// schema does not say (or is not an object and array schema).
func stepSchema(schema json.RawMessage, s pathStep) json.RawMessage {
	if len(schema) == 0 {
		return nil
	}
	if s.isElem {
		var a struct {
			Items json.RawMessage `json:"items"`
		}
		if json.Unmarshal(schema, &a) != nil || len(a.Items) == 0 || a.Items[0] != '{' {
			return nil
		}
		return a.Items
	}
	props, _ := schemaProperties(schema)
	if p, ok := props[s.name]; ok {
		return p
	}
	return extraMemberSchema(schema, s.name)
}

// extraMemberSchema returns the schema an object schema gives a member its
// properties do not name: that of the first of its patternProperties whose
// pattern matches name, else its additionalProperties when that is a
// schema (a map of strings, {"additionalProperties":{"type":"string"}},
// as zod writes a record: env.HOME=123 is then the string "123"); nil
// when it gives none.
func extraMemberSchema(schema json.RawMessage, name string) json.RawMessage {
	if len(schema) == 0 || schema[0] != '{' {
		return nil
	}
	var found json.RawMessage
	rawjson.Members(rawjson.Member(schema, "patternProperties"), func(q, v []byte) bool {
		pattern, ok := rawjson.String(q)
		if !ok {
			return true
		}
		// (ECMA-262 regular expressions, read as RE2: a pattern RE2
		// cannot read gives nothing.)
		if re, err := regexp.Compile(pattern); err == nil && re.MatchString(name) && len(v) > 0 && v[0] == '{' {
			found = v
			return false
		}
		return true
	})
	if found != nil {
		return found
	}
	if v := rawjson.Member(schema, "additionalProperties"); len(v) > 0 && v[0] == '{' {
		return v
	}
	return nil
}

// conflictError is a value set where an earlier argument set something
// else: the Reason of the *ArgumentError it becomes.
type conflictError struct{ msg string }

func (e *conflictError) Error() string { return e.msg }

// setPath returns container (a JSON value, nil when absent) with the value
// at steps set to v, creating the objects and arrays on the way. done
// receives the steps as set (an append resolved to its index). setBy
// names what set a value at a path before (for conflicts).
func setPath(container json.RawMessage, steps []pathStep, v json.RawMessage, done []pathStep, setBy func([]pathStep) string) (json.RawMessage, []pathStep, error) {
	if len(steps) == 0 {
		return v, done, nil
	}
	s := steps[0]
	container = bytes.TrimSpace(container)
	notA := func(kind string) error {
		shown := string(container)
		if r := []rune(shown); len(r) > 30 {
			shown = string(r[:30]) + "…"
		}
		msg := fmt.Sprintf("%s is %s, not %s", formatPath(done), shown, kind)
		if by := setBy(done); by != "" {
			msg += " (" + by + ")"
		}
		return &conflictError{msg: msg}
	}
	if !s.isElem {
		if len(container) > 0 && container[0] != '{' {
			return nil, nil, notA("an object")
		}
		obj, err := ParseObject(container)
		if err != nil {
			return nil, nil, err
		}
		done = append(done, s)
		child, done, err := setPath(obj.Get(s.name), steps[1:], v, done, setBy)
		if err != nil {
			return nil, nil, err
		}
		obj.Set(s.name, child)
		return obj.Marshal(), done, nil
	}
	if len(container) > 0 && container[0] != '[' {
		return nil, nil, notA("an array")
	}
	var elems []json.RawMessage
	if len(container) > 0 {
		if err := json.Unmarshal(container, &elems); err != nil {
			return nil, nil, err
		}
	}
	i := s.index
	if s.append {
		i = len(elems)
	}
	if i > len(elems) {
		return nil, nil, &conflictError{msg: fmt.Sprintf("%s has %d elements: [%d] would leave a gap (use [%d] or [])", formatPath(done), len(elems), i, len(elems))}
	}
	done = append(done, pathStep{isElem: true, index: i})
	var old json.RawMessage
	if i < len(elems) {
		old = elems[i]
	}
	child, done, err := setPath(old, steps[1:], v, done, setBy)
	if err != nil {
		return nil, nil, err
	}
	if i < len(elems) {
		elems[i] = child
	} else {
		elems = append(elems, child)
	}
	out, err := json.Marshal(elems)
	return out, done, err
}

// isPrefix reports whether p is a proper prefix of q.
func isPrefix(p, q []pathStep) bool {
	return len(p) < len(q) && slices.Equal(p, q[:len(p)])
}
