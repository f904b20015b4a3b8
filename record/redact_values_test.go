package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// recordEvents records into a new trace: "> " frames of the client, "< "
// frames of the server, "! " stderr lines, "# " notes, "h " HTTP events;
// it returns the trace's bytes.
func recordEvents(t *testing.T, o RecorderOptions, lines ...string) []byte {
	t.Helper()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range lines {
		recordLine(rec, l)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

// recordLine records one line of recordEvents to rec.
func recordLine(rec interface {
	Frame(time.Time, transport.Direction, transport.Frame)
	Observe(transport.Event)
}, l string) {
	switch l[:2] {
	case "> ":
		rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(l[2:])})
	case "< ":
		rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: []byte(l[2:])})
	case "! ":
		rec.Observe(transport.Event{Kind: transport.EventStderr, Text: l[2:]})
	case "# ":
		rec.Observe(transport.Event{Kind: transport.EventNote, Text: l[2:]})
	case "h ":
		rec.Observe(transport.Event{Kind: transport.EventHTTP, Text: l[2:], Meta: &transport.Meta{URL: "http://127.0.0.1/mcp?next=" + l[2:]}})
	default:
		panic("recordLine: " + l)
	}
}

// traceData returns what a trace's events hold, one line each: frames
// as recorded, texts and URLs. Each frame must be valid JSON.
func traceData(t *testing.T, b []byte) []string {
	t.Helper()
	tr, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%v:\n%s", err, b)
	}
	var out []string
	for _, e := range tr.Events {
		switch {
		case e.Kind == KindFrame:
			if !json.Valid(e.Data) {
				t.Errorf("a frame is no JSON now: %s", e.Data)
			}
			out = append(out, string(e.Data))
		case e.Kind != KindSession:
			s := e.Text
			if e.Meta != nil && e.Meta.URL != "" {
				s += " url " + e.Meta.URL
			}
			out = append(out, s)
		}
	}
	return out
}

// A value the client sent under a secret name is replaced wherever it
// comes again: in what the server sends (in a text, in JSON quoted inside
// a text, as Go, Python or PHP escape it, in an error, in a member's
// name), in its stderr, notes and HTTP events, and in the client's own
// frames; the rest keeps its exact bytes, and every frame stays JSON.
func TestRecorderRedactsEchoedSecrets(t *testing.T) {
	t.Parallel()
	const tok = "tk-LIVE-0001"
	// A secret that encoders write in several ways.
	const odd = `pw<&>"é\/ü-0002`
	// A string in JSON, as Go writes it.
	str := func(v string) string { b, _ := json.Marshal(v); return string(b) }
	inner := func(v string) string { return strings.Trim(str(v), `"`) }
	raw := func(v string) string { // as JavaScript writes it
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		return strings.TrimSpace(b.String())
	}
	python := `pw<&>\"\u00e9\\/\u00fc-0002`
	php := `pw<&>\"\u00e9\\\/\u00fc-0002`
	b := recordEvents(t, RecorderOptions{},
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"`+tok+`","password":`+raw(odd)+`}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"logged in with `+tok+`, password `+inner(odd)+`"}],"structuredContent":{"`+tok+`":true}}}`,
		// The types tool: the arguments as JSON, in a text.
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":`+str(`{"token":"`+tok+`","password":`+raw(odd)+`}`)+`}]}}`,
		`< {"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad request {\"token\": \"`+tok+`\"}","data":["`+python+`","`+php+`"]}}`,
		`! got `+tok+` from the client, and `+odd+` as `+raw(odd),
		`# retrying with `+tok,
		`h POST http://127.0.0.1/mcp?k=`+tok,
		`> {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`+tok+`!"}}}`,
		`< {"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"`+tok+`!"}]}}`,
	)
	for _, form := range []string{tok, "0002", "0001"} {
		if bytes.Contains(b, []byte(form)) {
			t.Errorf("the trace holds %q:\n%s", form, b)
		}
	}
	got := traceData(t, b)
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"[redacted]","password":"[redacted]"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"logged in with [redacted], password [redacted]"}],"structuredContent":{"[redacted]":true}}}`,
		`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"token\":\"[redacted]\",\"password\":\"[redacted]\"}"}]}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"bad request {\"token\": \"[redacted]\"}","data":["[redacted]","[redacted]"]}}`,
		`got [redacted] from the client, and [redacted] as "[redacted]"`,
		`retrying with [redacted]`,
		`POST http://127.0.0.1/mcp?k=[redacted] url http://127.0.0.1/mcp?next=POST http://127.0.0.1/mcp?k=[redacted]`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[redacted]!"}}}`,
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"[redacted]!"}]}}`,
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d:\ngot  %s\nwant %s", i, got[i], want[i])
		}
	}
}

// Values shorter than minLearned are not looked for elsewhere (they
// would shred the trace), values are found only where they begin a
// character of a JSON string (not inside an escape), and a value that
// may stand outside a string (digits) is replaced there only in a number,
// which becomes the string "[redacted]" (the frame stays JSON).
func TestRecorderEchoedSecretsBounds(t *testing.T) {
	t.Parallel()
	b := recordEvents(t, RecorderOptions{},
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"pin_token":"1234567","password":"nabcdefgh","api_key":"0041abcdefg","secret":"12345678"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"text":"1234567 ok\nabcdefgh \u0041abcdefg \\nabcdefgh","n":12345678,"m":[-9123456789e1,"12345678",1234567.8],"s":"x12345678"}}`,
		`! pin 1234567, code 12345678`,
	)
	got := traceData(t, b)
	want := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"pin_token":"[redacted]","password":"[redacted]","api_key":"[redacted]","secret":"[redacted]"}}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"text":"1234567 ok\nabcdefgh \u0041abcdefg \\[redacted]","n":"[redacted]","m":["[redacted]","[redacted]",1234567.8],"s":"x[redacted]"}}`,
		`pin 1234567, code [redacted]`,
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Errorf("event %d:\ngot  %v\nwant %s", i, got, want[i])
		}
	}
}

// A memory keeps at most maxLearned values, the latest; each session of
// a recording learns its own; what the recorder is told (Secret, Values)
// is looked for in every session, and what a session is told, in it.
func TestRecorderSecretMemories(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{Redact: RedactOptions{Values: []string{"env-VALUE-0001", "short"}}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Secret("oauth-ACCESS-0002")
	rec.Secret("tiny")
	s2 := rec.StartSession(SessionInfo{Transport: "http"}, "two")
	s2.Secret("bearer-HOST-0003")
	for i := range maxLearned + 8 {
		recordLine(rec, fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"a","arguments":{"token":"tk-%04d-SECRET"}}}`, i, i))
	}
	recordLine(s2, `> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"token":"tk-TWO-SECRET"}}}`)
	const echo = `< {"jsonrpc":"2.0","id":99,"result":{"text":"tk-0000-SECRET tk-0008-SECRET tk-0039-SECRET tk-TWO-SECRET env-VALUE-0001 oauth-ACCESS-0002 bearer-HOST-0003 short tiny"}}`
	recordLine(rec, echo)
	recordLine(s2, echo)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got := traceData(t, []byte(buf.String()))
	own, two := got[len(got)-2], got[len(got)-1]
	if w := `"text":"tk-0000-SECRET [redacted] [redacted] tk-TWO-SECRET [redacted] [redacted] bearer-HOST-0003 short tiny"`; !strings.Contains(own, w) {
		t.Errorf("the recorder's session: %s\nwant %s", own, w)
	}
	if w := `"text":"tk-0000-SECRET tk-0008-SECRET tk-0039-SECRET [redacted] [redacted] [redacted] [redacted] short tiny"`; !strings.Contains(two, w) {
		t.Errorf("session two: %s\nwant %s", two, w)
	}
}

// The rules before 3 learn nothing: a recording by them (a Go caller
// that asks for them) keeps what it kept.
func TestRecorderOlderRulesLearnNothing(t *testing.T) {
	t.Parallel()
	b := recordEvents(t, RecorderOptions{Redact: RedactOptions{Rules: 2}},
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"token":"tk-LIVE-0001"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"text":"tk-LIVE-0001"}}`,
	)
	if got := traceData(t, b); got[1] != `{"jsonrpc":"2.0","id":1,"result":{"text":"tk-LIVE-0001"}}` {
		t.Errorf("rules 2: %s", got[1])
	}
}

// echoTrace is a session of rules 3 whose client sent a token, then the
// same token as a message an echo tool repeated.
func echoTrace(t *testing.T) *Trace {
	t.Helper()
	b := recordEvents(t, RecorderOptions{Header: Header{Transport: "stdio"}},
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"tk-LIVE-0001"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"welcome tk-LIVE-0001"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"tk-LIVE-0001"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"tk-LIVE-0001"}]}}`,
	)
	if bytes.Contains(b, []byte("tk-LIVE-0001")) {
		t.Fatalf("the trace holds the token:\n%s", b)
	}
	tr, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// Replay redacts the live client's frames as the recorder did: the live
// client's token, sent again as a message, matches the recorded message;
// another message does not.
func TestReplayLearnsLiveSecrets(t *testing.T) {
	t.Parallel()
	tr := echoTrace(t)
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"tk-OTHER-0002"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"welcome [redacted]"}]}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"tk-OTHER-0002"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[redacted]"}]}}`)
	if d := c.deviations(); len(d) > 0 {
		t.Errorf("deviations: %q", d)
	}

	c = replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"tk-OTHER-0002"}}}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"something else"}}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("another message: %s", got)
	}
}

// A trace of rules 2 replays as it did: the message is compared in clear
// (the recording kept it so). A session recorded by rules 2 in a trace
// now of rules 3 (appended to) still replays: the message redacted by the
// live memory is not in the recording, the message redacted by the rules
// alone is.
func TestReplayOlderSessionsOfSecrets(t *testing.T) {
	t.Parallel()
	lines := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"tk-LIVE-0001"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"text":"tk-LIVE-0001"}}`,
	}
	for _, rules := range []int{2, 3} {
		tr := mkTrace(lines...)
		tr.Header.RedactRules = rules
		c := replayRaw(t, tr, ReplayOptions{Strict: true})
		c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"tk-LIVE-0001"}}}`)
		c.expect(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
		c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"tk-LIVE-0001"}}}`)
		c.expect(`{"jsonrpc":"2.0","id":2,"result":{"text":"tk-LIVE-0001"}}`)
		if d := c.deviations(); len(d) > 0 {
			t.Errorf("rules %d: deviations: %q", rules, d)
		}
	}
}

// Verify compares the live server's answers with the recorded ones: the
// requests it sends hold the placeholder where the client sent a secret,
// so an echo of it matches the recorded echo.
func TestVerifyEchoedSecrets(t *testing.T) {
	t.Parallel()
	tr := echoTrace(t)
	live := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"welcome [redacted]"}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"[redacted]"}]}}`,
	)
	if res := runVerify(t, tr, liveReplay(t, live), VerifyOptions{}); !res.OK() || res.Exchanges != 2 {
		t.Errorf("verify: %+v", res)
	}
}

// Appending to a trace of older rules redacts its sessions again by the
// newer ones, each learning from its client frames: an echo of a token
// rules 1 kept in clear goes with it.
func TestAppendRedactsOldEchoes(t *testing.T) {
	t.Parallel()
	old := strings.Replace(oldSecretTrace, `"result":{"ok":true}`, `"result":{"text":"deployed with tk-OLD-0001"}`, 1)
	for _, stable := range []bool{false, true} {
		_, b := appendPing(t, old, stable)
		if bytes.Contains(b, []byte("tk-OLD-0001")) || !bytes.Contains(b, []byte(`"text":"deployed with [redacted]"`)) {
			t.Errorf("stable %v: the trace keeps an old echo:\n%s", stable, b)
		}
	}
}

func TestJSONForms(t *testing.T) {
	t.Parallel()
	v := "a\"b\\c/d<é>\n\x01😀"
	forms := jsonForms(v)
	if forms[0] != `a\"b\\c/d<é>\n\u0001😀` {
		t.Errorf("the shortest form: %s", forms[0])
	}
	var goHTML bytes.Buffer
	json.NewEncoder(&goHTML).Encode(v)
	for _, want := range []string{
		strings.Trim(strings.TrimSpace(goHTML.String()), `"`), // Go's encoding/json
		`a\"b\\c/d<\u00e9>\n\u0001\ud83d\ude00`,               // Python's json.dumps
		`a\"b\\c\/d<\u00e9>\n\u0001\ud83d\ude00`,              // PHP's json_encode
		`a\"b\\c/d<\u00E9>\n\u0001\uD83D\uDE00`,               // upper-case escapes
	} {
		found := false
		for _, f := range forms {
			found = found || f == want
		}
		if !found {
			t.Errorf("no form %s in %q", want, forms)
		}
		var back string
		if err := json.Unmarshal([]byte(`"`+want+`"`), &back); err != nil || back != v {
			t.Errorf("%s is not %q: %q, %v", want, v, back, err)
		}
	}
}

// FuzzRedactValues: a value learned from a client frame is gone from a
// server frame that holds it in a string, as Go's encoder writes it, or
// in a number, and the frame stays JSON whatever it holds.
func FuzzRedactValues(f *testing.F) {
	f.Add("tk-LIVE-0001", "echo: ", true)
	f.Add("12345678", "n\\u0041", false)
	f.Add(`a"b\c<d>`, "\n\\", true)
	f.Add("nabcdefgh", "\\", false)
	f.Add("redacted", "", false) // the placeholder's own text
	f.Fuzz(func(t *testing.T, secret, around string, html bool) {
		r, _ := NewRedactor(RedactOptions{})
		mem := r.newMemory(nil)
		call, _ := json.Marshal(map[string]any{"params": map[string]any{"arguments": map[string]string{"token": secret}}})
		r.liveFrame(call, mem)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(html)
		enc.Encode(map[string]any{"text": around + secret + around, "n": 12345678, around: secret})
		out, _, _ := r.frameMem(bytes.TrimSpace(buf.Bytes()), mem, learnNone, false)
		var v map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil || !json.Valid(out) {
			t.Fatalf("%s became %s: %v", buf.Bytes(), out, err)
		}
		learned := len(secret) >= minLearned && len(secret) <= maxLearnedLen && secret != Placeholder && !strings.ContainsAny(secret, "[]") && strings.ToValidUTF8(secret, "\uFFFD") == secret
		if !learned {
			return
		}
		// The secret's text may be the placeholder's ("redacted"): it is
		// looked for between the placeholders, which it cannot straddle
		// (it has no "[" or "]").
		holds := func(s string) bool {
			return slices.ContainsFunc(strings.Split(s, Placeholder), func(part string) bool { return strings.Contains(part, secret) })
		}
		for k, x := range v {
			s := fmt.Sprint(x) // a string, or a json.Number as written
			if holds(s) || holds(k) {
				t.Errorf("%s became %s: %q still holds the secret", buf.Bytes(), out, s)
			}
		}
	})
}

// mintTrace is a session of rules 3 whose server hands out a token under
// a secret name, which the client then sends back under another name
// (and the server echoes); its tools/list has an argument named token,
// whose schema (an object) is redacted by name but teaches nothing.
func mintTrace(t *testing.T) []byte {
	t.Helper()
	return recordEvents(t, RecorderOptions{Header: Header{Transport: "stdio"}},
		`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"login","description":"The API token to use","inputSchema":{"type":"object","properties":{"token":{"type":"string","description":"The API token to use"}}}}]}}`,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mint"}}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sessionToken":"st-MINTED-0042","expires":"2030-01-01"}}}`,
		`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"st-MINTED-0042"}}}`,
		`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: st-MINTED-0042"}]}}`,
	)
}

// A token the server hands out under a secret name is redacted wherever
// it comes back later in the session: in the client's requests (under
// any name) and in the server's echoes.
func TestRecorderRedactsServerTokens(t *testing.T) {
	t.Parallel()
	b := mintTrace(t)
	if bytes.Contains(b, []byte("MINTED")) {
		t.Errorf("the trace holds the server's token:\n%s", b)
	}
	got := traceData(t, b)
	want := map[int]string{
		1: `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"login","description":"The API token to use","inputSchema":{"type":"object","properties":{"token":"[redacted]"}}}]}}`,
		3: `{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sessionToken":"[redacted]","expires":"2030-01-01"}}}`,
		4: `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[redacted]"}}}`,
		5: `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: [redacted]"}]}}`,
	}
	for i, w := range want {
		if i >= len(got) || got[i] != w {
			t.Errorf("event %d:\ngot  %v\nwant %s", i, got, w)
		}
	}
}

// The trace replays to a client that sends back the token the replay
// handed it ("[redacted]"), and verifies against a server that mints
// another one each time (an echo holding it matches the recorded
// "Echo: [redacted]"), and against one that mints the same.
func TestReplayAndVerifyServerTokens(t *testing.T) {
	t.Parallel()
	tr, err := Read(bytes.NewReader(mintTrace(t)))
	if err != nil {
		t.Fatal(err)
	}
	c := replayRaw(t, tr, ReplayOptions{Strict: true})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	c.recv()
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mint"}}`)
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sessionToken":"[redacted]","expires":"2030-01-01"}}}`)
	c.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[redacted]"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: [redacted]"}]}}`)
	if d := c.deviations(); len(d) > 0 {
		t.Errorf("deviations: %q", d)
	}
	for _, tok := range []string{"st-OTHER-0043", "st-MINTED-0042"} {
		live := mkTrace(
			`> {"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"login","description":"The API token to use","inputSchema":{"type":"object","properties":{"token":{"type":"string","description":"The API token to use"}}}}]}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mint"}}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"structuredContent":{"sessionToken":"`+tok+`","expires":"2030-01-01"}}}`,
			`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"[redacted]"}}}`,
			`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"Echo: `+tok+`"}]}}`,
		)
		if res := runVerify(t, tr, liveReplay(t, live), VerifyOptions{}); !res.OK() || res.Exchanges != 3 {
			t.Errorf("verify against %s: %+v", tok, res.Mismatches)
		}
	}
}

// A recorded string that holds the placeholder matches a live one with
// anything (not nothing) in its place, and nothing else.
func TestPlaceholderMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rec, live string
		ok        bool
	}{
		{"Echo: [redacted]", "Echo: tk-1", true},
		{"Echo: [redacted]", "Echo: ", false},
		{"Echo: [redacted]", "Echo! tk-1", false},
		{"[redacted] and [redacted]", "a and b", true},
		{"[redacted] and [redacted]", "a and ", false},
		{"[redacted] and [redacted]", "a and b and c", true},
		{"x[redacted]y[redacted]z", "xAyBz", true},
		{"x[redacted]y[redacted]z", "xyz", false},
		{"x[redacted]yy", "xAyy", true},
		{"x[redacted]yy", "xyy", false},
		{"no placeholder", "no placeholder!", false},
	} {
		if got := placeholderMatch(tc.rec, tc.live); got != tc.ok {
			t.Errorf("placeholderMatch(%q, %q) = %v, want %v", tc.rec, tc.live, got, tc.ok)
		}
	}
}

// A value the recorder is told is secret before its session's first
// event (the credentials of a held session, handed over as the command
// attaches) is redacted from the session's name and target too, which
// hold the command's own arguments: the session event is written with
// the first event, and what was told by then is known.
func TestRecorderSecretInSessionName(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{
		Header:      Header{Transport: "stdio", Target: "stdio: @who"},
		Session:     SessionInfo{Name: "tools call echo message=held-SECRET-0001"},
		SessionText: "through held-SECRET-0001",
	})
	if err != nil {
		t.Fatal(err)
	}
	rec.Secret("held-SECRET-0001")
	recordLine(rec, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "SECRET") {
		t.Errorf("the trace holds the secret:\n%s", buf.String())
	}
	tr, err := Read(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tr.Events {
		if e.Kind == KindSession && e.SessionInfo.Name != "tools call echo message=[redacted]" {
			t.Errorf("session name %q", e.SessionInfo.Name)
		}
	}
}

// A credential told late (Credential, AddCredential) is looked for from 4
// bytes on, as a configured secret is; a learned value (Secret, Add) from
// 8.
func TestCredentialToldLate(t *testing.T) {
	t.Parallel()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Credential("cr-S5")
	rec.Secret("se-S5")
	recordLine(rec, `< {"jsonrpc":"2.0","id":1,"result":{"text":"cr-S5 se-S5"}}`)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if got, w := traceData(t, []byte(buf.String())), `{"jsonrpc":"2.0","id":1,"result":{"text":"[redacted] se-S5"}}`; len(got) != 1 || got[0] != w {
		t.Errorf("recorded %v\nwant %s", got, w)
	}
	s := NewSecrets(nil, nil)
	s.AddCredential("cr-S5")
	s.Add("se-S5")
	if got, w := s.Text("cr-S5 se-S5"), "[redacted] se-S5"; got != w {
		t.Errorf("Secrets.Text: %q, want %q", got, w)
	}
}

// What Secrets tells a recorder (Tell) it already took, from 4 bytes on
// for a credential (AddCredential), from 8 for a learned value (Add): a
// recorder's Credential takes them as they are, so that a trace started
// later (:record, verify --update) redacts a short credential of a held
// session as the command's own redaction does.
func TestSecretsTellTheRecorderCredentials(t *testing.T) {
	t.Parallel()
	s := NewSecrets(nil, nil)
	s.AddCredential("cr-S5")
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s.Tell(rec.Credential)
	s.AddCredential("cr-T6")
	s.Add("se-S5")
	recordLine(rec, `< {"jsonrpc":"2.0","id":1,"result":{"text":"cr-S5 cr-T6 se-S5"}}`)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if got, w := traceData(t, []byte(buf.String())), `{"jsonrpc":"2.0","id":1,"result":{"text":"[redacted] [redacted] se-S5"}}`; len(got) != 1 || got[0] != w {
		t.Errorf("recorded %v\nwant %s", got, w)
	}
}
