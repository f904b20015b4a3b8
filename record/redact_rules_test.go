package record

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// Rules 2 name secret members by the end of their name, whatever its
// case and punctuation; the names of rules 1 stay secret; the progress
// token, pagination and a model's token counts are no secrets.
func TestRedactRulesNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{
		"token", "Token", "TOKEN", "github_token", "GITHUB_TOKEN", "authToken", "api-token", "bearerToken",
		"secret", "client_secret", "clientSecret", "webhook-secret", "password", "dbPassword", "passwd", "passphrase",
		"api_key", "apiKey", "API-KEY", "x-api-key", "openaiApiKey", "private_key", "secretKey", "aws_secret_access_key",
		"credentials", "credential", "authorization", "Proxy-Authorization", "cookie", "Set-Cookie", "code_verifier",
		"access_token", "refresh_token", "id_token",
	} {
		if !secretName([]byte(name)) {
			t.Errorf("%q is not redacted by rules 2", name)
		}
	}
	for _, name := range []string{
		"progressToken", "pageToken", "nextPageToken", "next_token", "maxTokens", "max_tokens", "tokens", "token_type",
		"tokenizer", "eos_token", "key", "name", "message", "secretive", "passwordHint", "cookies_enabled", "",
		strings.Repeat("a", maxSecretName) + "token",
	} {
		if secretName([]byte(name)) {
			t.Errorf("%q is redacted by rules 2", name)
		}
	}
	// Rules 1 keep to their list: a trace recorded by them is replayed
	// by them, the token argument as it was recorded.
	r1, err := NewRedactor(RedactOptions{Rules: 1})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"params":{"arguments":{"token":"t1","api_key":"k1"}}}`
	if got := string(r1.Frame([]byte(in))); got != `{"params":{"arguments":{"token":"t1","api_key":"[redacted]"}}}` {
		t.Errorf("rules 1: %s", got)
	}
	r2, _ := NewRedactor(RedactOptions{})
	if got := string(r2.Frame([]byte(in))); got != `{"params":{"arguments":{"token":"[redacted]","api_key":"[redacted]"}}}` {
		t.Errorf("rules 2: %s", got)
	}
	if r1.Rules() != 1 || r2.Rules() != RedactRules {
		t.Errorf("rules %d and %d", r1.Rules(), r2.Rules())
	}
	var rules *RulesError
	if _, err := NewRedactor(RedactOptions{Rules: RedactRules + 1}); !errors.As(err, &rules) || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("unknown rules: %v", err)
	}
}

func TestRedactRulesText(t *testing.T) {
	t.Parallel()
	r, _ := NewRedactor(RedactOptions{})
	for in, want := range map[string]string{
		"login with token=tk-12345 for ada":          "login with token=[redacted] for ada",
		`args {"GITHUB_TOKEN": "ghp_x", "n": 1}`:     `args {"GITHUB_TOKEN": "[redacted]", "n": 1}`,
		"token dump: access_token=abc123&x=1":        "token dump: access_token=[redacted]&x=1",
		"progressToken: 5, clientSecret: cs-1; done": "progressToken: 5, clientSecret: [redacted]; done",
		"Authorization: Bearer abc.def-ghi":          "Authorization: [redacted] [redacted]",
		"password=[redacted] already":                "password=[redacted] already",
		"max_tokens=100 time=12:30":                  "max_tokens=100 time=12:30",
	} {
		if got := r.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	r1, _ := NewRedactor(RedactOptions{Rules: 1})
	if got := r1.Text("token=tk-12345 password=pw"); got != "token=tk-12345 password=[redacted]" {
		t.Errorf("rules 1 text: %q", got)
	}
}

// secretCall is a tools/call whose arguments hold secrets by rules 2
// only (rules 1 redact none of them).
const secretCall = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"prod","token":"tk-LIVE-0001","clientSecret":"cs-LIVE-0002"},"_meta":{"progressToken":2}}}`

// recordSecretCall records secretCall and its answer as a new recorder
// does, and returns the trace's bytes.
func recordSecretCall(t *testing.T) []byte {
	t.Helper()
	var buf safeBuffer
	rec, err := NewRecorder(&buf, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, transport.Frame{Data: []byte(secretCall)})
	rec.Observe(transport.Event{Kind: transport.EventStderr, Text: "deploying with token=tk-LIVE-0001"})
	rec.Frame(time.Now(), transport.Incoming, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"deployed prod"}]}}`)})
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(buf.String())
}

func TestRecorderRedactsSecretArguments(t *testing.T) {
	t.Parallel()
	b := recordSecretCall(t)
	for _, secret := range []string{"tk-LIVE-0001", "cs-LIVE-0002"} {
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the trace holds %q:\n%s", secret, b)
		}
	}
	tr, err := Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.RedactRules != RedactRules || tr.Header.Minor != Minor {
		t.Errorf("header %+v", tr.Header)
	}
	want := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"prod","token":"[redacted]","clientSecret":"[redacted]"},"_meta":{"progressToken":2}}}`
	if got := string(tr.Frames()[0].Data); got != want {
		t.Errorf("recorded %s\nwant     %s", got, want)
	}
}

// A trace recorded with secret arguments replays for a client that sends
// any secret there, and still tells a changed argument that is no secret;
// what replay says about the request it cannot answer does not give the
// live secret away.
func TestReplaySecretArguments(t *testing.T) {
	t.Parallel()
	tr, err := Read(bytes.NewReader(recordSecretCall(t)))
	if err != nil {
		t.Fatal(err)
	}
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(strings.NewReplacer("tk-LIVE-0001", "tk-OTHER-0003", "cs-LIVE-0002", "cs-OTHER-0004").Replace(secretCall))
	c.expect(`{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"deployed prod"}]}}`)

	c = replayRaw(t, tr, ReplayOptions{})
	c.send(strings.Replace(secretCall, `"env":"prod"`, `"env":"staging"`, 1))
	got := c.recv()
	if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, `"received":{"name":"deploy","arguments":{"env":"staging","token":"[redacted]"`) {
		t.Errorf("a changed argument was answered with %s", got)
	}
	for _, s := range append(c.deviations(), got) {
		if strings.Contains(s, "tk-LIVE-0001") || strings.Contains(s, "cs-LIVE-0002") {
			t.Errorf("replay gave the live secret away: %s", s)
		}
	}
}

// A trace of rules 1 (no redactRules) recorded a token argument in
// clear: it replays as it always did, the live token compared with the
// recorded one.
func TestReplayOlderRulesKeepTheirMatching(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"token":"tk-1","password":"[redacted]"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"ok":true}}`,
	)
	c := replayRaw(t, tr, ReplayOptions{})
	c.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"token":"tk-1","password":"pw"}}}`)
	c.expect(`{"jsonrpc":"2.0","id":1,"result":{"ok":true}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"deploy","arguments":{"token":"tk-2","password":"pw"}}}`)
	if got := c.recv(); !strings.Contains(got, `"code":-32602`) {
		t.Errorf("another token, rules 1: %s", got)
	}
}

// Verify compares the live answer redacted by the trace's rules: a secret
// member recorded redacted matches any live value, one recorded in clear
// by rules 1 is compared as it was, and a changed member that is no
// secret is a difference.
func TestVerifySecretMembers(t *testing.T) {
	t.Parallel()
	call := `> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"session"}}`
	answer := func(result string) []string {
		return []string{call, `< {"jsonrpc":"2.0","id":1,"result":` + result + `}`}
	}
	rules2 := func(lines []string) *Trace {
		tr := mkTrace(lines...)
		tr.Header.RedactRules = RedactRules
		return tr
	}
	res := runVerify(t, rules2(answer(`{"sessionToken":"[redacted]","n":1}`)), liveReplay(t, mkTrace(answer(`{"sessionToken":"st-live","n":1}`)...)), VerifyOptions{})
	if !res.OK() {
		t.Errorf("rules 2, another secret: %+v", res.Mismatches)
	}
	res = runVerify(t, rules2(answer(`{"sessionToken":"[redacted]","n":1}`)), liveReplay(t, mkTrace(answer(`{"sessionToken":"st-live","n":2}`)...)), VerifyOptions{})
	if len(res.Mismatches) != 1 || len(res.Mismatches[0].Diffs) != 1 || res.Mismatches[0].Diffs[0].Path != "$.result.n" {
		t.Errorf("rules 2, another n: %+v", res.Mismatches)
	}
	if m := res.Mismatches; len(m) == 1 && strings.Contains(string(m[0].Live), "st-live") {
		t.Errorf("the mismatch holds the live secret: %s", m[0].Live)
	}
	res = runVerify(t, mkTrace(answer(`{"sessionToken":"st-1","n":1}`)...), liveReplay(t, mkTrace(answer(`{"sessionToken":"st-1","n":1}`)...)), VerifyOptions{})
	if !res.OK() {
		t.Errorf("rules 1, the same token: %+v", res.Mismatches)
	}
}

// oldSecretTrace is a trace of rules 1 that holds secrets rules 2 redact.
const oldSecretTrace = `{"format":"mcpx-trace","version":1,"minor":3,"created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: x","redacted":true}` + "\n" +
	`{"t":1,"s":1,"kind":"session","text":"stdio: x","session":{"transport":"stdio","target":"stdio: x","name":"tools call deploy"}}` + "\n" +
	`{"t":2,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"deploy","arguments":{"env":"prod","token":"tk-OLD-0001"}}}}` + "\n" +
	`{"t":3,"s":1,"kind":"stderr","dir":"s2c","text":"using clientSecret=cs-OLD-0002"}` + "\n" +
	`{"t":4,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"ok":true}}}` + "\n"

// Adding a session to a trace of older rules redacts its sessions again
// by the newer ones, so that the trace keeps one set of rules, and no
// secret those rules name; a trace of newer rules than the program's is
// refused.
// appendPing writes content to a new trace, appends a session with one
// ping to it (stable or not) and returns the file and what it then holds.
func appendPing(t *testing.T, content string, stable bool) (string, []byte) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "old.jsonl")
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	rec, err := Append(context.Background(), name, RecorderOptions{Stable: stable})
	if err != nil {
		t.Fatal(err)
	}
	rec.Frame(time.Now(), transport.Outgoing, ping("2"))
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return name, b
}

func TestAppendRedactsAnOlderTraceAgain(t *testing.T) {
	t.Parallel()
	for _, stable := range []bool{false, true} {
		name, b := appendPing(t, oldSecretTrace, stable)
		if bytes.Contains(b, []byte("tk-OLD-0001")) || bytes.Contains(b, []byte("cs-OLD-0002")) {
			t.Errorf("stable %v: the trace keeps an old secret:\n%s", stable, b)
		}
		tr, err := ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		ss := tr.Sessions()
		if tr.Header.RedactRules != RedactRules || len(ss) != 2 || len(ss[0].Events) != 3 || ss[0].Info.Name != "tools call deploy" {
			t.Fatalf("stable %v: header %+v, sessions %+v", stable, tr.Header, ss)
		}
		if got := string(ss[0].Events[0].Data); !strings.Contains(got, `"env":"prod"`) || !strings.Contains(got, `"token":"[redacted]"`) {
			t.Errorf("stable %v: the old call is now %s", stable, got)
		}
	}

	name := filepath.Join(t.TempDir(), "newer.jsonl")
	os.WriteFile(name, []byte(strings.Replace(oldSecretTrace, `"redacted":true`, `"redacted":true,"redactRules":99`, 1)), 0o600)
	before, _ := os.ReadFile(name)
	var he *HeaderError
	if _, err := Append(context.Background(), name, RecorderOptions{}); !errors.As(err, &he) || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("appending to a trace of newer rules: %v", err)
	}
	if after, _ := os.ReadFile(name); !bytes.Equal(before, after) {
		t.Error("the trace of newer rules was changed")
	}
	tr, err := ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Header.Check(); err == nil || !strings.Contains(err.Error(), "upgrade") {
		t.Errorf("Check: %v", err)
	}
	if _, err := NewReplayer(tr, ReplayOptions{}); err == nil {
		t.Error("a trace of newer rules was replayed")
	}
}
