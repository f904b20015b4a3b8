package record

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Raw JSON surgery: finding values by path in a frame's bytes and
// replacing them without touching anything else, so that a redacted or
// re-numbered frame keeps the member order, spacing and escapes the peer
// chose. The input must be valid JSON (callers check with json.Valid); on
// anything else these functions stop early rather than panic. The
// scanning itself is internal/rawjson's, shared with the rest of mcpx.

// span is a value's byte range in a frame.
type span struct{ start, end int }

// rawWalker visits the values of a frame with their paths. For every value
// it asks match; a matched value's span is collected and not descended into.
type rawWalker struct {
	data  []byte
	path  []elem
	match func([]elem) bool
	spans []span
}

// findSpans returns the spans of the values in data that match selects,
// in order.
func findSpans(data []byte, match func([]elem) bool) []span {
	w := &rawWalker{data: data, match: match}
	i := rawjson.SkipSpace(data, 0)
	if match(nil) {
		return []span{{i, rawjson.SkipValue(data, i)}}
	}
	w.value(i)
	return w.spans
}

func (w *rawWalker) visit(i int) int {
	if w.match(w.path) {
		end := rawjson.SkipValue(w.data, i)
		w.spans = append(w.spans, span{i, end})
		return end
	}
	return w.value(i)
}

func (w *rawWalker) value(i int) int {
	data := w.data
	if i >= len(data) {
		return i
	}
	switch data[i] {
	case '{':
		i = rawjson.SkipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1
		}
		for i < len(data) {
			if data[i] != '"' {
				return len(data)
			}
			ks := i
			i = rawjson.SkipString(data, i)
			key := decodeKey(data[ks:i])
			i = rawjson.SkipSpace(data, i)
			if i >= len(data) || data[i] != ':' {
				return len(data)
			}
			i = rawjson.SkipSpace(data, i+1)
			w.path = append(w.path, elem{key: key, index: -1})
			i = w.visit(i)
			w.path = w.path[:len(w.path)-1]
			i = rawjson.SkipSpace(data, i)
			if i < len(data) && data[i] == ',' {
				i = rawjson.SkipSpace(data, i+1)
				continue
			}
			if i < len(data) && data[i] == '}' {
				return i + 1
			}
			return len(data)
		}
		return i
	case '[':
		i = rawjson.SkipSpace(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1
		}
		for n := 0; i < len(data); n++ {
			w.path = append(w.path, elem{index: n})
			i = w.visit(i)
			w.path = w.path[:len(w.path)-1]
			i = rawjson.SkipSpace(data, i)
			if i < len(data) && data[i] == ',' {
				i = rawjson.SkipSpace(data, i+1)
				continue
			}
			if i < len(data) && data[i] == ']' {
				return i + 1
			}
			return len(data)
		}
		return i
	}
	return rawjson.SkipValue(data, i)
}

// decodeKey returns a member name from its quoted form.
func decodeKey(q []byte) string {
	if len(q) >= 2 && bytes.IndexByte(q, '\\') < 0 {
		return string(q[1 : len(q)-1])
	}
	var s string
	if json.Unmarshal(q, &s) != nil {
		return string(q)
	}
	return s
}

// splice returns data with each span replaced by what repl returns for
// the bytes it held. Spans must not overlap.
func splice(data []byte, spans []span, repl func(old []byte) []byte) []byte {
	if len(spans) == 0 {
		return data
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := make([]byte, 0, len(data))
	prev := 0
	for _, s := range spans {
		out = append(out, data[prev:s.start]...)
		out = append(out, repl(data[s.start:s.end])...)
		prev = s.end
	}
	return append(out, data[prev:]...)
}

// topMember returns the span of member key of the object starting data
// (or ok=false when data is not an object or has no such member). Only the
// top level is scanned: values are skipped, not walked.
func topMember(data []byte, key string) (span, bool) {
	i, ok := topValueAt(data, key)
	if !ok {
		return span{}, false
	}
	return span{i, rawjson.SkipValue(data, i)}, true
}

// hasTopMember reports whether the object starting data has a top-level
// member key, without reading that member's value (a response's result
// may be large).
func hasTopMember(data []byte, key string) bool {
	_, ok := topValueAt(data, key)
	return ok
}

// topValueAt returns where the value of the top-level member key of the
// object starting data begins; the values of the members before it are
// skipped, its own is not read.
func topValueAt(data []byte, key string) (int, bool) {
	i := rawjson.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	i = rawjson.SkipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		ks := i
		i = rawjson.SkipString(data, i)
		k := decodeKey(data[ks:i])
		i = rawjson.SkipSpace(data, i)
		if i >= len(data) || data[i] != ':' {
			return 0, false
		}
		i = rawjson.SkipSpace(data, i+1)
		if k == key {
			return i, true
		}
		i = rawjson.SkipSpace(data, rawjson.SkipValue(data, i))
		if i < len(data) && data[i] == ',' {
			i = rawjson.SkipSpace(data, i+1)
			continue
		}
		break
	}
	return 0, false
}

// elements returns the spans of the elements of the array starting data.
func elements(data []byte) []span {
	i := rawjson.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil
	}
	var out []span
	i = rawjson.SkipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		end := rawjson.SkipValue(data, i)
		out = append(out, span{i, end})
		i = rawjson.SkipSpace(data, end)
		if i < len(data) && data[i] == ',' {
			i = rawjson.SkipSpace(data, i+1)
		}
	}
	return out
}

// replaceTop returns a message (an object) with the value of its top-level
// member key replaced by value; unchanged when it has no such member.
func replaceTop(msg []byte, key string, value []byte) []byte {
	s, ok := topMember(msg, key)
	if !ok || bytes.Equal(msg[s.start:s.end], value) {
		// The same value (a live client's id that is the recorded one):
		// no copy of what may be a large frame.
		return msg
	}
	return splice(msg, []span{s}, func([]byte) []byte { return value })
}

// eachMessage calls fn with each message of a frame: the frame itself, or
// each element of a batch.
func eachMessage(frame []byte, fn func(msg []byte)) {
	i := rawjson.SkipSpace(frame, 0)
	if i < len(frame) && frame[i] == '[' {
		for _, sp := range elements(frame) {
			fn(frame[sp.start:sp.end])
		}
		return
	}
	fn(frame)
}

// mapMessages applies fn to each message of a frame: the frame itself, or
// each element of a batch, keeping everything between them.
func mapMessages(frame []byte, fn func(msg []byte) []byte) []byte {
	i := rawjson.SkipSpace(frame, 0)
	if i < len(frame) && frame[i] == '[' {
		return splice(frame, elements(frame), fn)
	}
	return fn(frame)
}
