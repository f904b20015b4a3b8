package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/transport"
)

// Placeholder replaces every redacted value.
const Placeholder = "[redacted]"

var placeholderJSON = []byte(`"` + Placeholder + `"`)

// RedactRules is the version of the rules that say which member names
// hold secrets, the one a recorder applies and writes in its trace's
// header (Header.RedactRules). Replay and verify redact live traffic by
// the rules the trace was recorded with (Header.RedactOptions), since a
// recorded request is matched by its redacted form: a trace keeps
// replaying as it did when the rules grow.
//
// Rules 1 (traces without redactRules) redact the members named exactly
// one of legacyKeys (without regard to case). Rules 2 redact every member
// whose name, lower-cased and without its punctuation (Api-Key, api_key
// and apiKey are all apikey), is or ends with a word of secretSuffixes:
// the tool arguments token, github_token, clientSecret, dbPassword,
// openaiApiKey, and the names of rules 1. The few names ending so that
// are no secrets are left alone (notSecret: the progress token and the
// tokens of pagination and of language models). The text rules (Text)
// follow the same names in rules 2.
//
// Rules 3 redact what rules 2 do, and also every later occurrence, in any
// frame or text of the session, of a value the session's client sent
// under a secret name, of a string or number its server sent under one,
// or of a value the recorder was told is secret (see memory in
// redactvalues.go): a server that echoes a token argument back in a text,
// an error or a stderr line; a client that sends back a token the server
// handed out. Replay redacts the live client's frames so too, learning
// the values the live client sends.
const RedactRules = 3

// legacyKeys are the member names rules 1 redact from every frame, at
// any depth, compared without regard to case.
var legacyKeys = []string{
	"access_token", "refresh_token", "id_token", "client_secret", "code_verifier",
	"authorization", "cookie", "set-cookie", "password", "api_key", "apikey", "x-api-key",
}

// secretSuffixes are the words (lower case, no punctuation) that mark a
// member name as a secret in rules 2, as the whole name or its end.
var secretSuffixes = [][]byte{
	[]byte("token"), []byte("secret"), []byte("password"), []byte("passwd"), []byte("passphrase"),
	[]byte("apikey"), []byte("privatekey"), []byte("secretkey"), []byte("accesskey"),
	[]byte("credential"), []byte("credentials"), []byte("cookie"), []byte("authorization"),
	[]byte("codeverifier"),
}

// notSecret are the names (lower case, no punctuation) that end with a
// word of secretSuffixes but hold no secret: MCP's progress token (spec
// basic/utilities/progress), which replay must see to tie notifications
// to their requests, the tokens of pagination, and a language model's
// special tokens.
var notSecret = map[string]bool{
	"progresstoken": true, "pagetoken": true, "nextpagetoken": true, "prevpagetoken": true,
	"previouspagetoken": true, "nexttoken": true, "continuationtoken": true, "synctoken": true,
	"bostoken": true, "eostoken": true, "padtoken": true, "unktoken": true, "septoken": true,
	"clstoken": true, "masktoken": true,
}

// maxSecretName bounds the member names rules 2 look at: longer ones are
// data, not names of arguments.
const maxSecretName = 64

// secretName reports whether a member name holds a secret by rules 2.
func secretName(key []byte) bool {
	if len(key) < len("token") || len(key) > maxSecretName {
		return false
	}
	var buf [maxSecretName]byte
	n := 0
	for _, c := range key {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			buf[n] = c
			n++
		case c >= 'A' && c <= 'Z':
			buf[n] = c + 'a' - 'A'
			n++
		}
	}
	name := buf[:n]
	for _, s := range secretSuffixes {
		if bytes.HasSuffix(name, s) {
			return !notSecret[string(name)]
		}
	}
	return false
}

// RedactOptions say what is removed before anything reaches a trace.
type RedactOptions struct {
	// Disabled turns redaction off (--no-redact): the trace may then hold
	// secrets.
	Disabled bool
	// Paths are JSONPath expressions (see Path) whose values are replaced
	// in every frame, in addition to the members the rules name as
	// secrets (--redact).
	Paths []string
	// Secrets are literal values known to be secret (a bearer token, the
	// value of an Authorization header given with -H): they are removed
	// wherever they appear, in frames, text and metadata.
	Secrets []string
	// Values are values to look for wherever they appear as a session
	// looks for the values it learned (rules 3, see RedactRules): those
	// of the options and environment variables of the server's command
	// line that are named as secrets, which the server may print. Unlike
	// Secrets, values shorter than 8 bytes (a flag's 1 or yes) are left
	// alone, as is everything before rules 3.
	Values []string
	// Rules is the version of the rules that name secret members (see
	// RedactRules); 0 means the newest, which recordings use. Replay and
	// verify use the trace's (Header.RedactOptions).
	Rules int
}

// Redactor removes secrets from frames, text and metadata. The zero value
// and nil redact nothing.
type Redactor struct {
	on      bool
	rules   int
	paths   []*Path
	secrets [][]byte                // Secrets
	values  []string                // Values
	static  *matcher                // finds secrets and values (nil: none)
	keys    [maxKeyLen + 1][][]byte // rules 1: legacyKeys by length
}

// maxKeyLen bounds the length of legacyKeys.
const maxKeyLen = 24

// RulesError reports redaction rules this package does not know: a trace
// recorded by a newer program.
type RulesError struct{ Rules int }

func (e *RulesError) Error() string {
	if e.Rules > RedactRules {
		return fmt.Sprintf("redaction rules %d are newer than this program knows (%d): the trace was recorded by a newer mcpx; upgrade to use it", e.Rules, RedactRules)
	}
	return fmt.Sprintf("redaction rules %d are no valid version (1 to %d)", e.Rules, RedactRules)
}

// NewRedactor compiles o.
func NewRedactor(o RedactOptions) (*Redactor, error) {
	if o.Disabled {
		return &Redactor{}, nil
	}
	rules := o.Rules
	if rules == 0 {
		rules = RedactRules
	}
	if rules < 1 || rules > RedactRules {
		return nil, &RulesError{Rules: o.Rules}
	}
	paths, err := ParsePaths(o.Paths)
	if err != nil {
		return nil, err
	}
	r := &Redactor{on: true, rules: rules, paths: paths}
	if rules == 1 {
		for _, k := range legacyKeys {
			r.keys[len(k)] = append(r.keys[len(k)], []byte(k))
		}
	}
	for _, s := range o.Secrets {
		// Very short values would redact innocent text everywhere.
		if len(s) >= minSecret {
			r.secrets = append(r.secrets, []byte(s))
		}
	}
	for _, v := range o.Values {
		if rules >= 3 && len(v) >= minLearned && len(v) <= maxLearnedLen {
			r.values = append(r.values, v)
		}
	}
	if len(r.secrets) > 0 || len(r.values) > 0 {
		r.static = compileMatcher(r.secrets, r.values)
	}
	return r, nil
}

// Enabled reports whether r redacts anything.
func (r *Redactor) Enabled() bool { return r != nil && r.on }

// Rules returns the version of the rules r applies (see RedactRules); 0
// when it redacts nothing.
func (r *Redactor) Rules() int {
	if !r.Enabled() {
		return 0
	}
	return r.rules
}

// sensitive reports whether a member's value is a secret by r's rules.
func (r *Redactor) sensitive(key []byte) bool {
	if r.rules != 1 {
		return secretName(key)
	}
	if len(key) > maxKeyLen {
		return false
	}
	for _, k := range r.keys[len(key)] {
		if bytes.EqualFold(k, key) {
			return true
		}
	}
	return false
}

func (r *Redactor) matchFrame(path []elem) bool {
	if n := len(path); n > 0 && path[n-1].index < 0 && r.sensitive([]byte(path[n-1].key)) {
		return true
	}
	return anyMatch(r.paths, path)
}

// Frame returns data with secrets replaced by "[redacted]": the values of
// sensitive members and of the configured paths (when data is JSON; the
// rest of the frame keeps its exact bytes), known secret values, and, in
// frames that are not JSON, anything that looks like a credential. It
// learns nothing: the values a session learned are redacted by a memory
// (see frameMem).
func (r *Redactor) Frame(data []byte) []byte {
	out, _ := r.frame(data)
	return out
}

// frame is Frame, also returning what a scan of the result found (so the
// writer need not scan it again).
func (r *Redactor) frame(data []byte) ([]byte, scanResult) {
	out, res, _ := r.frameMem(data, nil, learnNone, false)
	return out, res
}

// learnFrom says what a frame teaches its session's memory (rules 3).
type learnFrom int

const (
	// learnNone: nothing (a view's message, a trace being read).
	learnNone learnFrom = iota
	// learnClient: every value redacted by name or path, and the strings
	// and numbers in one that is an object or an array (a client's frame).
	learnClient
	// learnServer: the strings and numbers redacted by name or path, not
	// what is in an object or an array (a server's frame): a token the
	// server hands out ({"sessionToken": "..."}), which its client sends
	// back later under any name; not a tool's input schema, whose
	// property named token is an object of descriptions.
	learnServer
)

// learnDir is what a frame recorded in direction d teaches.
func learnDir(d Direction) learnFrom {
	if d == ClientToServer {
		return learnClient
	}
	return learnServer
}

// frameMem is frame for a session whose secret values mem holds (nil:
// r's secrets alone). learn says whose data is (see learnFrom): the
// values of its secret members are learned first, so that they are
// replaced wherever else they stand in it and in what follows. With values, it also returns
// the values it replaced by name, in the form a route header mirrors them
// (strings as they are, numbers as written, booleans as true or false).
func (r *Redactor) frameMem(data []byte, mem *memory, learn learnFrom, values bool) ([]byte, scanResult, map[string]bool) {
	if !r.Enabled() {
		return data, scanJSON(data, nil), nil
	}
	var res scanResult
	if len(r.paths) > 0 {
		// Paths need the full path of every value: the slower walk.
		if res = scanJSON(data, nil); res.valid {
			res.spans = findSpans(data, r.matchFrame)
		}
	} else {
		res = scanJSON(data, r.sensitive)
	}
	if !res.valid {
		if t := r.textMem(string(data), mem); t != string(data) {
			data = []byte(t)
			return data, scanJSON(data, nil), nil
		}
		return data, res, nil
	}
	var replaced map[string]bool
	if values && len(res.spans) > 0 {
		replaced = map[string]bool{}
		for _, sp := range res.spans {
			if v, ok := headerForm(data[sp.start:sp.end]); ok {
				replaced[v] = true
			}
		}
	}
	if learn != learnNone && mem != nil {
		for _, sp := range res.spans {
			if v := data[sp.start:sp.end]; learn == learnClient || scalar(v) {
				mem.learnValue(v)
			}
		}
	}
	if len(res.spans) > 0 {
		data = splice(data, res.spans, func([]byte) []byte { return placeholderJSON })
		res = scanJSON(data, nil)
	}
	// Values are replaced inside strings: the frame stays as valid and
	// as compact as it was, and need not be scanned again.
	data, _ = r.matcher(mem).frame(data)
	return data, res, replaced
}

// liveFrame redacts a frame a live client sent, as the recorder redacted
// the recorded client's: it learns the frame's secret values into mem
// (the live session's memory; nil before rules 3) and replaces them and
// those learned before.
func (r *Redactor) liveFrame(data []byte, mem *memory) []byte {
	out, _, _ := r.frameMem(data, mem, learnClient, false)
	return out
}

// matcher returns what finds the secret values of a session whose memory
// is mem (nil: r's secrets).
func (r *Redactor) matcher(mem *memory) *matcher {
	if mem != nil {
		return mem.matcher()
	}
	return r.static
}

// headerForm returns a JSON scalar as a route header mirrors it (spec
// 2026-07-28: basic/transports/streamable-http, "Value Encoding", before
// encoding): a string as it is, a number as written, a boolean as true or
// false. Objects, arrays and null are never mirrored.
func headerForm(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return s, true
	case c == 't' || c == 'f' || c == '-' || c >= '0' && c <= '9':
		return string(raw), true
	}
	return "", false
}

// FrameRoute redacts a frame and the route it was sent with. A route
// mirrors parts of its frame (the method, a tool's name or a resource's
// URI, tool arguments designated with x-mcp-header), so a mirrored value
// is replaced wherever the same value was redacted from the frame
// (sensitive member names, --redact paths); an Mcp-Param-{Name} value is
// also replaced when its Name names a secret by the rules (with "-" read
// as "_": Api-Key is api_key), and known secrets are removed from every
// value. The route returned is a copy when anything changed.
func (r *Redactor) FrameRoute(data []byte, route *transport.Route) ([]byte, *transport.Route) {
	out, _, rt := r.frameRoute(data, route)
	return out, rt
}

func (r *Redactor) frameRoute(data []byte, route *transport.Route) ([]byte, scanResult, *transport.Route) {
	return r.frameRouteMem(data, route, nil, learnNone)
}

// frameRouteMem is frameRoute for a session whose secret values mem
// holds; learn says whose the frame is (see frameMem).
func (r *Redactor) frameRouteMem(data []byte, route *transport.Route, mem *memory, learn learnFrom) ([]byte, scanResult, *transport.Route) {
	if route == nil || !r.Enabled() {
		out, res, _ := r.frameMem(data, mem, learn, false)
		return out, res, route
	}
	out, res, replaced := r.frameMem(data, mem, learn, true)
	return out, res, r.route(route, replaced, r.matcher(mem))
}

// route redacts a route given the values redacted from its frame and
// what finds the session's secret values.
func (r *Redactor) route(route *transport.Route, replaced map[string]bool, secrets *matcher) *transport.Route {
	c := *route
	changed := false
	value := func(v string, sensitiveName bool) string {
		if v == "" {
			return v
		}
		if sensitiveName || replaced[v] {
			changed = true
			return Placeholder
		}
		if t := secrets.text(v); t != v {
			changed = true
			v = t
		}
		return v
	}
	// The version and the method are the protocol's, not the user's data.
	c.Name = value(c.Name, false)
	if len(route.Params) > 0 {
		c.Params = make([]transport.RouteParam, len(route.Params))
		for i, p := range route.Params {
			name := []byte(strings.ReplaceAll(p.Name, "-", "_"))
			c.Params[i] = transport.RouteParam{Name: p.Name, Value: value(p.Value, r.sensitive([]byte(p.Name)) || r.sensitive(name))}
		}
	}
	if !changed {
		return route
	}
	return &c
}

// namedValueRE finds the values rules 2 judge in free text: every
// NAME=VALUE, NAME: VALUE and "NAME": "VALUE", whose NAME secretName then
// judges. (The patterns of rules 1, and the tokens after Bearer and
// Basic, are transport's: see transport.RedactCredentials.)
var namedValueRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`([A-Za-z0-9_.-]+)"?\s*[:=]\s*"?([^"&\s,;)]+)`)
})

// Text returns s with known secrets, credential-like values and the
// secrets in URLs replaced: by rules 1, what transport.RedactCredentials
// finds; by rules 2, the secrets of URLs, the tokens after Bearer and
// Basic, and the values of the names that secretName judges secret.
func (r *Redactor) Text(s string) string { return r.textMem(s, nil) }

// textMem is Text for a session whose secret values mem holds.
func (r *Redactor) textMem(s string, mem *memory) string {
	if !r.Enabled() || s == "" {
		return s
	}
	s = r.matcher(mem).text(s)
	if r.rules == 1 {
		// The name list of rules 1 is transport's (RedactCredentials).
		return transport.RedactCredentials(s)
	}
	return namedValues(transport.RedactAuthTokens(transport.RedactURLs(s)))
}

// namedValues replaces the values that follow secret names in s (rules
// 2). The value of a name that is no secret is searched for names too
// (dump: access_token=x).
func namedValues(s string) string {
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		m := namedValueRE().FindStringSubmatchIndex(s[pos:])
		if m == nil {
			break
		}
		name, vs, ve := s[pos+m[2]:pos+m[3]], pos+m[4], pos+m[5]
		if !secretName([]byte(name)) {
			pos = vs
			continue
		}
		if s[vs:ve] != Placeholder {
			b.WriteString(s[last:vs])
			b.WriteString(Placeholder)
			last = ve
		}
		pos = ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// URL returns u with a password and the values of credential-like query
// parameters replaced.
func (r *Redactor) URL(u string) string {
	if !r.Enabled() || u == "" {
		return u
	}
	return r.Text(u)
}

// Meta returns m with its URL redacted (a copy when anything changed).
func (r *Redactor) Meta(m *transport.Meta) *transport.Meta { return r.metaMem(m, nil) }

// metaMem is Meta for a session whose secret values mem holds.
func (r *Redactor) metaMem(m *transport.Meta, mem *memory) *transport.Meta {
	if !r.Enabled() || m == nil || m.URL == "" {
		return m
	}
	if u := r.textMem(m.URL, mem); u != m.URL {
		c := *m
		c.URL = u
		return &c
	}
	return m
}

// reRedaction brings the events of a trace recorded by older rules to
// r's (see reRedactor), in the order they were recorded, each session
// with a memory of its own: the secret members of its client frames,
// which older rules may have kept in clear, are learned as a recording
// would have learned them.
type reRedaction struct {
	r    *Redactor
	mems map[int]*memory
}

func (r *Redactor) reRedaction() *reRedaction {
	return &reRedaction{r: r, mems: map[int]*memory{}}
}

// event returns e redacted by r: its frame and route, its text, its
// metadata and the description of the session it opens.
func (rr *reRedaction) event(e Event) Event {
	r := rr.r
	mem, ok := rr.mems[e.Session]
	if !ok {
		mem = r.newMemory(nil)
		rr.mems[e.Session] = mem
	}
	if e.Kind == KindFrame || e.Kind == KindView {
		learn := learnNone
		if e.Kind == KindFrame {
			learn = learnDir(e.Dir)
		}
		e.Data, _, e.Route = r.frameRouteMem(e.Data, e.Route, mem, learn)
	}
	e.Text = r.textMem(e.Text, mem)
	e.Meta = r.metaMem(e.Meta, mem)
	if e.SessionInfo != nil {
		info := *e.SessionInfo
		info.Target, info.Name = r.textMem(info.Target, mem), r.textMem(info.Name, mem)
		e.SessionInfo = &info
	}
	return e
}
