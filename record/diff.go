package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Difference is one place where what the live server sent differs from
// what the recorded one did.
type Difference struct {
	// Message names the message Path is in, when it is not the response:
	// "notifications/message #2" (the second notifications/message the
	// server sent in the request's window), a method alone when the
	// server sent another number of its messages (Path is then $, the
	// list of them, and the values are JSON arrays of the messages), or
	// "HTTP" for the HTTP outcome (Path $.status, the status code).
	Message string
	// Path is the JSONPath of the differing value in the message.
	Path string
	// Recorded and Live are the values as compact JSON; "" means the value
	// is absent on that side. A value whose JSON is longer than 1 KiB is
	// Shortened: two strings of which one is that long are shown as
	// excerpts around where they first differ, with "…" for what is left
	// out ("…xxxZxxx…"), and any other such value as a string holding the
	// start of its JSON and "…".
	Recorded, Live string
	// Shortened says that Recorded and Live are excerpts (see above).
	Shortened bool
}

// maxShown bounds the JSON of a value a Difference holds in full: a
// difference in a large text (a 50 MiB tool result) is held, printed and
// reported (--json, --junit) as excerpts, not twice in full.
const maxShown = 1 << 10

// Excerpts of two long strings that differ keep this many bytes before
// the first difference and after it.
const excerptBefore, excerptAfter = 60, 120

// excerpts returns the JSON of excerpts of rec and live around the first
// byte where they differ.
func excerpts(rec, live string) (string, string) {
	p := 0
	for p < len(rec) && p < len(live) && rec[p] == live[p] {
		p++
	}
	for p > 0 && (p < len(rec) && !utf8.RuneStart(rec[p]) || p < len(live) && !utf8.RuneStart(live[p])) {
		p-- // the character that differs, from its first byte
	}
	cut := func(s string) string {
		start := max(p-excerptBefore, 0)
		for start > 0 && !utf8.RuneStart(s[start]) {
			start--
		}
		end := min(p+excerptAfter, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end--
		}
		out := s[start:end]
		if start > 0 {
			out = "…" + out
		}
		if end < len(s) {
			out += "…"
		}
		return encodeValue(out)
	}
	return cut(rec), cut(live)
}

// shorten makes each value whose JSON is longer than maxShown an excerpt:
// a string its start, another value the start of its JSON, as a string.
func (d *Difference) shorten() {
	for _, v := range []*string{&d.Recorded, &d.Live} {
		if len(*v) <= maxShown {
			continue
		}
		s := *v
		if kindOf([]byte(s)) == '"' {
			if str, ok := rawjson.String([]byte(s)); ok {
				s = str
			}
		}
		*v = encodeValue(rawjson.Shorten(s, maxShown))
		d.Shortened = true
	}
}

// maxDiffs bounds the differences reported for one message.
const maxDiffs = 20

// diffJSON compares two decoded messages and returns their differences
// (at most maxDiffs, and how many more there were).
func diffJSON(recorded, live any) ([]Difference, int) {
	d := &differ{}
	d.diff(nil, recorded, live)
	return d.out, d.more
}

type differ struct {
	out  []Difference
	more int
}

func (d *differ) add(path []elem, a, b any, aok, bok bool) {
	if len(d.out) >= maxDiffs {
		d.more++
		return
	}
	diff := Difference{Path: pathString(path)}
	if aok {
		diff.Recorded = encodeValue(a)
	}
	if bok {
		diff.Live = encodeValue(b)
	}
	d.out = append(d.out, diff)
}

func (d *differ) diff(path []elem, a, b any) {
	if s, ok := a.(string); ok && s == Placeholder {
		return // redacted when recorded: anything goes
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			d.add(path, a, b, true, true)
			return
		}
		keys := make([]string, 0, len(x)+len(y))
		for k := range x {
			keys = append(keys, k)
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, aok := x[k]
			bv, bok := y[k]
			p := append(path, elem{key: k, index: -1})
			if aok && bok {
				d.diff(p, av, bv)
			} else {
				d.add(p, av, bv, aok, bok)
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok {
			d.add(path, a, b, true, true)
			return
		}
		for i := 0; i < max(len(x), len(y)); i++ {
			p := append(path, elem{index: i})
			switch {
			case i < len(x) && i < len(y):
				d.diff(p, x[i], y[i])
			case i < len(x):
				d.add(p, x[i], nil, true, false)
			default:
				d.add(p, nil, y[i], false, true)
			}
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || !sameNumber(x, y) {
			d.add(path, a, b, true, true)
		}
	default:
		if a != b {
			d.add(path, a, b, true, true)
		}
	}
}

func sameNumber(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, err1 := strconv.ParseFloat(string(a), 64)
	y, err2 := strconv.ParseFloat(string(b), 64)
	return err1 == nil && err2 == nil && x == y
}

func encodeValue(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// normalize replaces values that legitimately change from run to run:
// strings that are timestamps (RFC 3339) become "<time>", and the given
// session ids "<session-id>".
func normalize(v any, sessionIDs map[string]bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			x[k] = normalize(c, sessionIDs)
		}
	case []any:
		for i, c := range x {
			x[i] = normalize(c, sessionIDs)
		}
	case string:
		if sessionIDs[x] {
			return "<session-id>"
		}
		if isTimestamp(x) {
			return "<time>"
		}
	}
	return v
}

func isTimestamp(s string) bool {
	if len(s) < 20 || len(s) > 40 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') {
		return false
	}
	_, err := time.Parse(time.RFC3339Nano, strings.Replace(s, " ", "T", 1))
	return err == nil
}
