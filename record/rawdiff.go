package record

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
)

// diffResponses compares a recorded and a live response message (valid
// JSON) as comparable, normalize and diffJSON together would, but in
// place: values are walked in the frames they arrived in and only the
// differing ones are decoded (to show them), so comparing two large
// responses costs nothing beyond the frames. The id and jsonrpc members
// are left out, values ignore selects dropped (array elements count as
// "<ignored>"), strings that are timestamps or session ids normalized, and
// a recorded "[redacted]" matches anything.
func diffResponses(rec, live []byte, ignore []*Path, sessionIDs map[string]bool) ([]Difference, int) {
	return diffMessages(rec, live, diffOptions{ignore: ignore, ids: sessionIDs})
}

// diffOptions say how two messages are compared.
type diffOptions struct {
	// ignore selects what is left out.
	ignore []*Path
	// ids are session ids: a string that is one is "<session-id>".
	ids map[string]bool
	// tasks maps the recorded and the live id of each task a verified
	// request created to the recorded one (sessionRun.taskPairs).
	tasks map[string]string
	// cursors maps the recorded and the live cursor of each page a
	// verified request was given to the recorded one
	// (sessionRun.cursorPairs), at a member named nextCursor or cursor
	// only.
	cursors map[string]string
	// norm, when set, rewrites every string before it is compared.
	norm *Normalizers
	// named compares the lists of named things in a result by identity
	// (see namedList) rather than by position.
	named bool
}

// diffMessages is diffResponses with every option: the comparison verify
// makes of responses, notifications and server requests alike.
func diffMessages(rec, live []byte, o diffOptions) ([]Difference, int) {
	d := &rawDiffer{diffOptions: o}
	if anyMatch(o.ignore, nil) {
		return nil, 0
	}
	d.diff(nil, bytes.TrimSpace(rec), bytes.TrimSpace(live))
	return d.out, d.more
}

type rawDiffer struct {
	diffOptions
	out  []Difference
	more int
}

// present marks a side that has the value, for add.
type side struct {
	raw []byte
	ok  bool
	// ignored stands for the "<ignored>" an ignored array element becomes.
	ignored bool
}

func (d *rawDiffer) add(path []elem, a, b side) {
	if len(d.out) >= maxDiffs {
		d.more++
		return
	}
	diff := Difference{Path: pathString(path)}
	if a.ok && b.ok && !a.ignored && !b.ignored && kindOf(a.raw) == '"' && kindOf(b.raw) == '"' && max(len(a.raw), len(b.raw)) > maxShown {
		// Two strings, one long (a large text): where they differ, not
		// their starts (which may well be the same).
		diff.Recorded, diff.Live = excerpts(d.normString(a.raw), d.normString(b.raw))
		diff.Shortened = true
		d.out = append(d.out, diff)
		return
	}
	if a.ok {
		diff.Recorded = d.show(path, a)
	}
	if b.ok {
		diff.Live = d.show(path, b)
	}
	diff.shorten()
	d.out = append(d.out, diff)
}

// show renders a differing value as diffJSON shows a decoded one: without
// what ignore selects, normalized, as compact JSON.
func (d *rawDiffer) show(path []elem, s side) string {
	if s.ignored {
		return encodeValue(ignoredValue)
	}
	v, ok := decode(s.raw)
	if !ok {
		return string(s.raw)
	}
	v = removePathsUnder(v, path, d.ignore)
	if len(path) == 0 {
		if m, ok := v.(map[string]any); ok {
			delete(m, "id")
			delete(m, "jsonrpc")
		}
	}
	return encodeValue(d.norm.Value(normalize(v, d.ids)))
}

// members returns the members of object v by name (the last of a name
// wins, as in a decoded object) and their names, sorted.
func members(v []byte) (map[string][]byte, []string) {
	m := map[string][]byte{}
	var names []string
	rawjson.Members(v, func(name, val []byte) bool {
		n := rawjson.Name(name)
		if _, ok := m[n]; !ok {
			names = append(names, n)
		}
		m[n] = val
		return true
	})
	return m, names
}

func (d *rawDiffer) diff(path []elem, a, b []byte) {
	ka, kb := kindOf(a), kindOf(b)
	if ka == '"' && len(a) < 64 && isPlaceholder(a) {
		return // redacted when recorded: anything goes
	}
	switch ka {
	case '{':
		if kb != '{' {
			d.add(path, side{raw: a, ok: true}, side{raw: b, ok: true})
			return
		}
		am, an := members(a)
		bm, bn := members(b)
		keys := an
		for _, k := range bn {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			if len(path) == 0 && (k == "id" || k == "jsonrpc") || isSubscriptionID(path, k) {
				continue
			}
			p := append(path, elem{key: k, index: -1})
			if anyMatch(d.ignore, p) {
				continue
			}
			av, aok := am[k]
			bv, bok := bm[k]
			if aok && bok {
				d.diff(p, av, bv)
			} else {
				d.add(p, side{raw: av, ok: aok}, side{raw: bv, ok: bok})
			}
		}
	case '[':
		if kb != '[' {
			d.add(path, side{raw: a, ok: true}, side{raw: b, ok: true})
			return
		}
		ae, be := elementsOf(a), elementsOf(b)
		if key := namedList(path); key != "" && d.named && d.byIdentity(path, key, ae, be) {
			return
		}
		for i := 0; i < max(len(ae), len(be)); i++ {
			p := append(path, elem{index: i})
			ignored := anyMatch(d.ignore, p)
			switch {
			case i < len(ae) && i < len(be):
				if !ignored {
					d.diff(p, ae[i], be[i])
				}
			case i < len(ae):
				d.add(p, side{raw: ae[i], ok: true, ignored: ignored}, side{})
			default:
				d.add(p, side{}, side{raw: be[i], ok: true, ignored: ignored})
			}
		}
	case '"':
		if kb != '"' {
			d.add(path, side{raw: a, ok: true}, side{raw: b, ok: true})
			return
		}
		// Strings are compared once decoded and normalized. Equal bytes
		// need no decoding, which is the rule for a large text that
		// matches. A recorded string that holds the placeholder matches a
		// live one that has anything (not nothing) where it stands: the
		// recording redacted a secret there (a token the server echoed in
		// a text), which the live server may echo in clear.
		if bytes.Equal(a, b) {
			return
		}
		ra, lb := d.stringAt(path, a), d.stringAt(path, b)
		switch {
		case ra == lb || placeholderMatch(ra, lb):
		case max(len(a), len(b)) > maxShown && len(d.out) < maxDiffs:
			// Excerpts of the strings just decoded (not decoded again).
			rec, live := excerpts(ra, lb)
			d.out = append(d.out, Difference{Path: pathString(path), Recorded: rec, Live: live, Shortened: true})
		default:
			d.add(path, side{raw: a, ok: true}, side{raw: b, ok: true})
		}
	case '0':
		if kb != '0' || !sameNumber(json.Number(a), json.Number(b)) {
			d.add(path, side{raw: a, ok: true}, side{raw: b, ok: true})
		}
	default:
		if kb != ka {
			d.add(path, side{raw: a, ok: true}, side{raw: b, ok: true})
		}
	}
}

// isSubscriptionID says whether member k at path is the subscription id
// of a notification or result (params._meta or result._meta): the id of
// the subscriptions/listen request echoed (spec 2026-07-28:
// basic/patterns/subscriptions), which is left out as the id is, since
// the live request's id is not the recorded one's. Attribution checks it
// (see attributor).
func isSubscriptionID(path []elem, k string) bool {
	return k == mcp.MetaSubscriptionID && len(path) == 2 && path[0].index < 0 &&
		(path[0].key == "params" || path[0].key == "result") && path[1].index < 0 && path[1].key == "_meta"
}

// byIdentity compares two lists of named things (see namedList) element
// by element of the same identity, whatever their positions: a reordered
// list matches, and a renamed element (the one left on each side, paired
// in order) is compared with its old self, one difference. It returns
// false, having compared nothing, when an element has no identity or two
// share one: the lists are then compared by position.
func (d *rawDiffer) byIdentity(path []elem, key string, ae, be [][]byte) bool {
	ids := func(els [][]byte) ([]string, map[string]int) {
		out, at := make([]string, len(els)), make(map[string]int, len(els))
		for i, e := range els {
			if kindOf(e) != '{' {
				return nil, nil
			}
			v := rawjson.Member(e, key)
			s, ok := rawjson.String(v)
			if v == nil || !ok {
				return nil, nil
			}
			if _, dup := at[s]; dup {
				return nil, nil
			}
			out[i], at[s] = s, i
		}
		return out, at
	}
	aid, aat := ids(ae)
	bid, bat := ids(be)
	if aat == nil || bat == nil {
		return false
	}
	at := func(i int, id string) []elem {
		return append(path[:len(path):len(path)], elem{index: i, idKey: key, idVal: id})
	}
	// Each recorded element is compared with the live one of its
	// identity, or else with the next live one of an identity the
	// recording lacks (a rename), in recorded order; then the live ones
	// left over.
	var newB []int
	for j, id := range bid {
		if _, ok := aat[id]; !ok {
			newB = append(newB, j)
		}
	}
	for i, id := range aid {
		p := at(i, id)
		j, ok := bat[id]
		if !ok && len(newB) > 0 {
			j, ok, newB = newB[0], true, newB[1:]
		}
		switch {
		case ok && !anyMatch(d.ignore, p):
			d.diff(p, ae[i], be[j])
		case !ok:
			d.add(p, side{raw: ae[i], ok: true, ignored: anyMatch(d.ignore, p)}, side{})
		}
	}
	for _, j := range newB {
		p := at(j, bid[j])
		d.add(p, side{}, side{raw: be[j], ok: true, ignored: anyMatch(d.ignore, p)})
	}
	return true
}

// kindOf classifies a JSON value by its first byte: '{', '[', '"', '0'
// (a number), 't', 'f' or 'n'.
func kindOf(v []byte) byte {
	if len(v) == 0 {
		return 0
	}
	switch c := v[0]; {
	case c == '-' || c >= '0' && c <= '9':
		return '0'
	default:
		return c
	}
}

func elementsOf(v []byte) [][]byte {
	var out [][]byte
	rawjson.Elements(v, func(e []byte) bool {
		out = append(out, e)
		return true
	})
	return out
}

// isPlaceholder reports whether the JSON string q is the redaction
// placeholder.
func isPlaceholder(q []byte) bool {
	s, _ := rawjson.String(q)
	return s == Placeholder
}

// normString decodes a JSON string and normalizes it (see normalize),
// then applies the normalizers.
func (d *rawDiffer) normString(q []byte) string {
	s, _ := rawjson.String(q)
	return d.normText(s)
}

// normText is normString for the decoded string s.
func (d *rawDiffer) normText(s string) string {
	if d.ids[s] {
		return "<session-id>"
	}
	if rec, ok := d.tasks[s]; ok {
		s = rec
	}
	if isTimestamp(s) {
		return "<time>"
	}
	return d.norm.String(s)
}

// stringAt is normString for the string q at path, where a cursor (a
// nextCursor or cursor member) reads as the recorded one it stands for
// (cursors).
func (d *rawDiffer) stringAt(path []elem, q []byte) string {
	if n := len(path); n > 0 && d.cursors != nil && path[n-1].index < 0 && (path[n-1].key == "nextCursor" || path[n-1].key == "cursor") {
		s, _ := rawjson.String(q)
		if rec, ok := d.cursors[s]; ok {
			// Normalized as any string is (a cursor may be a time),
			// as the live cursor of a page not carried is.
			return d.normText(rec)
		}
	}
	return d.normString(q)
}

// placeholderMatch reports whether live is rec with each placeholder in
// rec standing for one or more bytes.
func placeholderMatch(rec, live string) bool {
	parts := strings.Split(rec, Placeholder)
	if len(parts) < 2 || !strings.HasPrefix(live, parts[0]) {
		return false
	}
	pos := len(parts[0])
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		// The leftmost place of each part leaves the most for the rest.
		if pos+1 > len(live) {
			return false
		}
		i := strings.Index(live[pos+1:], p)
		if i < 0 {
			return false
		}
		pos += 1 + i + len(p)
	}
	return len(live)-pos >= len(last)+1 && strings.HasSuffix(live, last)
}
