package record

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Value redaction (rules 3). A secret the client sends under a secret
// name (a token argument, an api_key member) is redacted there by name;
// a server that repeats it (an echo tool, an error quoting the request,
// a stderr line, a header it mirrors) puts the same value where no name
// says so. A memory keeps the values a session's client frames held under
// secret names (and the values of its --redact paths), and the values
// the recorder was told are secret (RedactOptions.Values: those of the
// secret options of the command lines and of the server's environment;
// Recorder.Secret: an OAuth access token, a proxied host's credentials),
// and every later occurrence of one of them, in any frame or text of the
// session, is replaced too: in JSON, inside strings (member names
// included), in the forms JSON encoders write the value in (escapes); in
// text, as it is and in those forms. The client's values are learned
// (replay learns the live client's the same way, and verify sends the
// recorded client frames, which hold the placeholder instead), and the
// strings and numbers a server's frame holds under secret names (a token
// it hands out, which the client sends back under any name: learnFrom);
// a live client of replay gets, and sends back, the placeholder, and
// verify matches a recorded string that holds it with any live value in
// its place (placeholderMatch).
//
// The values are looked for with one pass over the data whatever their
// number (sampled q-gram filters, see finder), so that a 50 MiB frame
// costs about as much as with none.

const (
	// minLearned is the shortest value a memory keeps: a shorter one
	// ("yes", "1234", a word) would match innocent text all over a trace.
	// It is still redacted where its name says it is secret.
	minLearned = 8
	// minSecret is the shortest configured secret (RedactOptions.Secrets)
	// looked for: the user said it is one.
	minSecret = 4
	// maxLearnedLen bounds a value a memory keeps: a longer one is data
	// rather than a credential (a private key in PEM is shorter).
	maxLearnedLen = 4 << 10
	// maxLearned and maxLearnedBytes bound the values one memory keeps;
	// past them the oldest are forgotten (a session that sends a new
	// token with every call keeps the latest, which its server echoes
	// next).
	maxLearned      = 32
	maxLearnedBytes = 16 << 10
	// maxLeaves bounds the values learned from one secret member that is
	// an object or an array (credentials: {user, password}).
	maxLeaves = 16
)

// memory holds the secret values of one session (or, as the parent of
// the sessions' memories, of a whole recording). It is safe for
// concurrent use: frames of both directions are recorded from different
// goroutines.
type memory struct {
	red    *Redactor
	parent *memory

	mu   sync.Mutex
	vals []string // oldest first
	size int      // their bytes
	gen  atomic.Uint64
	m    atomic.Pointer[matcher]
}

// newMemory returns a memory of the values r redacts wherever they appear
// (its Secrets and Values) and those learned later; nil when r's rules learn nothing
// (before rules 3, or redaction off). parent's values are looked for too.
func (r *Redactor) newMemory(parent *memory) *memory {
	if !r.Enabled() || r.rules < 3 {
		return nil
	}
	return &memory{red: r, parent: parent}
}

// learn adds the value v to the memory (and says whether it was new).
func (m *memory) learn(v string) bool { return m.learnFrom(v, minLearned) }

// learnFrom is learn for a value of min bytes or more (minSecret for a
// credential the caller sends, which the user said is one).
func (m *memory) learnFrom(v string, min int) bool {
	if m == nil || len(v) < min || len(v) > maxLearnedLen || v == Placeholder {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Contains(m.vals, v) {
		return false
	}
	m.vals = append(m.vals, v)
	m.size += len(v)
	for len(m.vals) > maxLearned || m.size > maxLearnedBytes {
		m.size -= len(m.vals[0])
		m.vals = slices.Delete(m.vals, 0, 1)
	}
	m.gen.Add(1)
	return true
}

// learnValue learns the secret JSON value v (a member redacted by name):
// a string, a number, or the strings and numbers inside an object or an
// array.
func (m *memory) learnValue(v []byte) {
	if m == nil {
		return
	}
	n := 0
	var walk func(v []byte)
	walk = func(v []byte) {
		v = bytes.TrimSpace(v)
		if len(v) == 0 || n >= maxLeaves {
			return
		}
		switch c := v[0]; {
		case c == '"':
			if len(v)-2 >= minLearned && len(v) <= 6*maxLearnedLen+2 {
				if s, ok := rawjson.String(v); ok {
					m.learn(s)
					n++
				}
			}
		case c == '-' || c >= '0' && c <= '9':
			m.learn(string(v))
			n++
		case c == '{':
			rawjson.Members(v, func(_, val []byte) bool { walk(val); return n < maxLeaves })
		case c == '[':
			rawjson.Elements(v, func(val []byte) bool { walk(val); return n < maxLeaves })
		}
	}
	walk(v)
}

// scalar reports whether the JSON value v is a string or a number.
func scalar(v []byte) bool {
	v = bytes.TrimSpace(v)
	return len(v) > 0 && (v[0] == '"' || v[0] == '-' || v[0] >= '0' && v[0] <= '9')
}

// matcher returns what looks for the memory's values and its parent's,
// and the redactor's secrets, compiled again when any changed.
func (m *memory) matcher() *matcher {
	if m == nil {
		return nil
	}
	gen, pgen := m.gen.Load(), uint64(0)
	if m.parent != nil {
		pgen = m.parent.gen.Load()
	}
	if c := m.m.Load(); c != nil && c.gen == gen && c.pgen == pgen {
		return c
	}
	vals := slices.Clone(m.red.values)
	if m.parent != nil {
		m.parent.mu.Lock()
		vals = append(vals, m.parent.vals...)
		m.parent.mu.Unlock()
	}
	m.mu.Lock()
	vals = append(vals, m.vals...)
	m.mu.Unlock()
	c := compileMatcher(m.red.secrets, vals)
	c.gen, c.pgen = gen, pgen
	m.m.Store(c)
	return c
}

// A matcher finds the forms of a set of secret values in frames and
// text.
type matcher struct {
	gen, pgen uint64
	pats      []pattern
	f         *finder // nil: nothing to look for
}

// pattern is one form of a secret value.
type pattern struct {
	b []byte
	// json: the form may stand inside a JSON string (it is an escaped
	// form); text: it is looked for in text (every form is).
	json bool
	// free: every byte of it may stand outside a JSON string too (a
	// number, true, false, null, punctuation), so a match in a frame is
	// replaced only when it is inside a string.
	free bool
}

// compileMatcher builds the matcher of the configured secrets and the
// learned values (the first at least minSecret bytes long, the others
// minLearned).
func compileMatcher(secrets [][]byte, learned []string) *matcher {
	c := &matcher{}
	seen := map[string]int{}
	add := func(b string, json bool) {
		if i, ok := seen[b]; ok {
			c.pats[i].json = c.pats[i].json || json
			return
		}
		seen[b] = len(c.pats)
		c.pats = append(c.pats, pattern{b: []byte(b), json: json, free: freeBytes(b)})
	}
	value := func(v string) {
		forms := jsonForms(v)
		add(v, forms[0] == v)
		for _, f := range forms {
			add(f, true)
		}
	}
	for _, s := range secrets {
		value(string(s))
	}
	for _, v := range learned {
		value(v)
	}
	if len(c.pats) > 0 {
		c.f = newFinder(c.pats)
	}
	return c
}

// empty reports whether c looks for nothing.
func (c *matcher) empty() bool { return c == nil || c.f == nil }

// outside marks the bytes valid JSON may hold outside strings.
var outside = func() (t [256]bool) {
	for _, c := range []byte(" \t\r\n{}[],:0123456789+-.eEtrufalsn") {
		t[c] = true
	}
	return t
}()

func freeBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if !outside[s[i]] {
			return false
		}
	}
	return true
}

// Flags of jsonEscape.
const (
	escHTML  = 1 << iota // <, >, & as \u003c, \u003e, \u0026 (Go's encoding/json)
	escASCII             // everything beyond ASCII as \uXXXX (Python's json, PHP)
	escSlash             // / as \/ (PHP)
	escUpper             // \u escapes in upper-case hexadecimal
)

// jsonForms returns the forms the string v takes inside a JSON string as
// encoders write it, the shortest (escaping only what JSON requires, as
// JavaScript does) first, without repeats; and that form escaped again,
// as JSON inside a JSON string holds it.
func jsonForms(v string) []string {
	forms := []string{jsonEscape(v, 0)}
	add := func(f string) {
		if !slices.Contains(forms, f) {
			forms = append(forms, f)
		}
	}
	for _, fl := range []int{escHTML, escASCII, escASCII | escUpper, escSlash, escSlash | escASCII} {
		add(jsonEscape(v, fl))
	}
	// Escaped twice: JSON quoted in a JSON string (a tool that returns
	// its arguments as a text), by JavaScript or by Go.
	add(jsonEscape(forms[0], 0))
	add(jsonEscape(forms[0], escHTML))
	return forms
}

// jsonEscape returns v as it stands between the quotes of a JSON string
// written with the escapes fl asks for.
func jsonEscape(v string, fl int) string {
	var b []byte
	hex := "0123456789abcdef"
	if fl&escUpper != 0 {
		hex = "0123456789ABCDEF"
	}
	u := func(r rune) {
		b = append(b, '\\', 'u', hex[r>>12&15], hex[r>>8&15], hex[r>>4&15], hex[r&15])
	}
	for i := 0; i < len(v); {
		c := v[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '/' && fl&escSlash != 0:
				b = append(b, '\\', '/')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20, (c == '<' || c == '>' || c == '&') && fl&escHTML != 0:
				u(rune(c))
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, c) // not UTF-8: as it is
		case fl&escASCII != 0 && r > 0xFFFF:
			r -= 0x10000
			u(0xD800 + r>>10)
			u(0xDC00 + r&0x3FF)
		case fl&escASCII != 0, fl&escHTML != 0 && (r == '\u2028' || r == '\u2029'):
			u(r)
		default:
			b = append(b, v[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

// A finder finds patterns in data in time linear in its length, however
// many patterns there are, and whatever the data holds (a server may send
// what nearly matches a secret it was sent, over and over). Patterns are
// grouped by length, each group found by a filter: every pattern of a
// group is at least minLen bytes long, so each occurrence covers one of
// the positions 0, step, 2·step, … (step = minLen-3) with one of its
// first step 4-byte grams, which a bit set of their hashes tells apart
// from nearly all of the other grams there; a gram whose bit is set is
// looked up, and its patterns compared. A group's patterns are less than
// twice as long as its step (up to maxStep), so the comparisons at a
// position cost about the bytes the filter steps over. A pattern that
// holds one gram many times among those first ones (aaaaaaaaaaaa) could
// be compared at every offset of every position: it is looked for with
// bytes.Index instead.
type finder struct {
	groups []*filter
	slow   []int // patterns looked for with bytes.Index
	pats   []pattern
}

type filter struct {
	step  int
	bits  [filterBits / 64]uint64
	cands map[uint32][]cand
}

// cand says that pattern pat holds a gram at offset off.
type cand struct{ pat, off int32 }

const (
	filterLog  = 16
	filterBits = 1 << filterLog
	// maxStep bounds a filter's step, and so the grams each pattern puts
	// in it (a long secret in many forms would fill it).
	maxStep = 64
	// maxRepeats bounds how often a pattern of a filter holds one gram
	// among its first step ones (tk-00000000 holds 0000 five times).
	maxRepeats = 8
)

func gramHash(g uint32) uint32 { return (g * 0x9E3779B1) >> (32 - filterLog) }

func newFinder(pats []pattern) *finder {
	f := &finder{pats: pats}
	byLen := map[int][]int{} // bits.Len of the length -> patterns
	for i, p := range pats {
		k := 0
		for n := len(p.b); n > 0; n >>= 1 {
			k++
		}
		byLen[k] = append(byLen[k], i)
	}
	for k := range 64 {
		group := byLen[k]
		if len(group) == 0 {
			continue
		}
		minLen := len(pats[group[0]].b)
		for _, i := range group {
			minLen = min(minLen, len(pats[i].b))
		}
		fl := &filter{step: min(max(1, minLen-3), maxStep), cands: map[uint32][]cand{}}
		for _, i := range group {
			b := pats[i].b
			grams := map[uint32]int{}
			most := 0
			for off := 0; off < fl.step && off+4 <= len(b); off++ {
				g := binary.LittleEndian.Uint32(b[off:])
				grams[g]++
				most = max(most, grams[g])
			}
			if most > maxRepeats {
				f.slow = append(f.slow, i)
				continue
			}
			for off := 0; off < fl.step && off+4 <= len(b); off++ {
				g := binary.LittleEndian.Uint32(b[off:])
				h := gramHash(g)
				fl.bits[h/64] |= 1 << (h % 64)
				fl.cands[g] = append(fl.cands[g], cand{int32(i), int32(off)})
			}
		}
		if len(fl.cands) > 0 {
			f.groups = append(f.groups, fl)
		}
	}
	return f
}

// find returns the spans of data where a pattern stands (for JSON, only
// the forms that may stand in a string, where they begin a character of
// it), overlapping ones merged; and, in JSON, the numbers that hold a
// pattern (a secret of digits), each whole.
func (f *finder) find(data []byte, json bool) (hits, nums []span) {
	var strs []uint64 // which bytes of data are inside strings, when needed
	hit := func(p *pattern, i int) {
		if json && (!p.json || !charStart(data, i)) {
			return
		}
		if json && p.free {
			if strs == nil {
				strs = stringBits(data)
			}
			if strs[i/64]&(1<<(i%64)) == 0 {
				if k := len(nums) - 1; k >= 0 && nums[k].start <= i && i < nums[k].end {
					return // in the number found last
				}
				if sp, ok := numberAt(data, i, i+len(p.b)); ok {
					nums = append(nums, sp)
				}
				return
			}
		}
		if k := len(hits) - 1; k >= 0 && hits[k].start <= i && i <= hits[k].end {
			// Found in order, touching the last: one span (a run of
			// occurrences is not a span each).
			hits[k].end = max(hits[k].end, i+len(p.b))
			return
		}
		hits = append(hits, span{i, i + len(p.b)})
	}
	n := len(data)
	for _, fl := range f.groups {
		for j := 0; j+4 <= n; j += fl.step {
			g := binary.LittleEndian.Uint32(data[j:])
			h := gramHash(g)
			if fl.bits[h/64]&(1<<(h%64)) == 0 {
				continue
			}
			for _, c := range fl.cands[g] {
				p := &f.pats[c.pat]
				if i := j - int(c.off); i >= 0 && i+len(p.b) <= n && bytes.Equal(data[i:i+len(p.b)], p.b) {
					hit(p, i)
				}
			}
		}
	}
	for _, k := range f.slow {
		p := &f.pats[k]
		for i := 0; ; {
			x := bytes.Index(data[i:], p.b)
			if x < 0 {
				break
			}
			hit(p, i+x)
			i += x + 1
			if json && (!p.json || !charStart(data, i-1)) {
				continue
			}
			i += len(p.b) - 1 // the next occurrence that does not overlap
		}
	}
	return mergeSpans(hits), mergeSpans(nums)
}

// numberAt returns the number of the JSON text data that holds the bytes
// from i to j (outside strings), if they are in one.
func numberAt(data []byte, i, j int) (span, bool) {
	num := func(c byte) bool {
		return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
	}
	s, e := i, i
	for s > 0 && num(data[s-1]) {
		s--
	}
	for e < len(data) && num(data[e]) {
		e++
	}
	if e < j || data[s] != '-' && !isDigit(data[s]) {
		return span{}, false
	}
	return span{s, e}, true
}

// charStart reports whether offset i of a JSON text, inside a string,
// begins a character of it rather than continuing an escape (\n, \u0041).
func charStart(data []byte, i int) bool {
	if backslashes(data, i)%2 == 1 {
		return false
	}
	for d := 0; d < 4; d++ {
		a := i - 2 - d // where \u would begin
		if a < 0 {
			break
		}
		if data[a] == '\\' && data[a+1] == 'u' && backslashes(data, a+1)%2 == 1 {
			hex := true
			for _, c := range data[a+2 : i] {
				hex = hex && isHex(c)
			}
			if hex {
				return false
			}
		}
	}
	return true
}

// backslashes counts the backslashes just before offset i.
func backslashes(data []byte, i int) int {
	n := 0
	for i > 0 && data[i-1] == '\\' {
		n++
		i--
	}
	return n
}

// stringBits returns a bit for each byte of the JSON text data, set for
// the bytes inside its strings (between their quotes): an eighth of the
// data's size, made only when a pattern that may stand outside strings
// was found.
func stringBits(data []byte) []uint64 {
	bits := make([]uint64, len(data)/64+1)
	for i := 0; i < len(data); {
		q := bytes.IndexByte(data[i:], '"')
		if q < 0 {
			break
		}
		open := i + q
		end := stringEnd(data, open)
		for k := open + 1; k < end; {
			if k%64 == 0 && end-k >= 64 {
				bits[k/64] = ^uint64(0)
				k += 64
				continue
			}
			bits[k/64] |= 1 << (k % 64)
			k++
		}
		i = end + 1
	}
	return bits
}

// stringEnd returns the offset of the closing quote of the JSON string
// whose opening quote is at i (len(data) when it has none).
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); {
		k := bytes.IndexAny(data[j:], `"\`)
		if k < 0 {
			return len(data)
		}
		j += k
		if data[j] == '"' {
			return j
		}
		j += 2
	}
	return len(data)
}

// mergeSpans sorts spans and merges those that overlap or touch.
func mergeSpans(s []span) []span {
	if len(s) < 2 {
		return s
	}
	slices.SortFunc(s, func(a, b span) int { return a.start - b.start })
	out := s[:1]
	for _, x := range s[1:] {
		last := &out[len(out)-1]
		if x.start <= last.end {
			last.end = max(last.end, x.end)
			continue
		}
		out = append(out, x)
	}
	return out
}

// placeholderBytes replaces a span inside a string or in text.
var placeholderBytes = []byte(Placeholder)

// frame replaces the secrets c looks for in the JSON text data (a copy
// when any is found).
// A number that holds one becomes the string "[redacted]": the frame
// stays as valid and as compact as it was.
func (c *matcher) frame(data []byte) ([]byte, bool) {
	if c.empty() {
		return data, false
	}
	hits, nums := c.f.find(data, true)
	if len(hits) == 0 && len(nums) == 0 {
		return data, false
	}
	// Apart: hits are inside strings, numbers outside.
	out := make([]byte, 0, len(data))
	prev := 0
	for len(hits) > 0 || len(nums) > 0 {
		sp, repl := span{}, placeholderBytes
		if len(nums) == 0 || len(hits) > 0 && hits[0].start < nums[0].start {
			sp, hits = hits[0], hits[1:]
		} else {
			sp, nums, repl = nums[0], nums[1:], placeholderJSON
		}
		out = append(append(out, data[prev:sp.start]...), repl...)
		prev = sp.end
	}
	return append(out, data[prev:]...), true
}

// text replaces the secrets c looks for in s.
func (c *matcher) text(s string) string {
	if c.empty() || s == "" {
		return s
	}
	spans, _ := c.f.find([]byte(s), false)
	if len(spans) == 0 {
		return s
	}
	return string(splice([]byte(s), spans, func([]byte) []byte { return placeholderBytes }))
}
