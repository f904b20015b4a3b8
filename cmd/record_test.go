package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/tui"
)

func readTraceFile(t *testing.T, name string) (*record.Trace, string) {
	t.Helper()
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := record.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	return tr, string(raw)
}

func TestRecordHTTPRedactsCredentials(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	dir := t.TempDir()
	for name, args := range map[string][]string{
		// Any header the user adds may be a credential under a name of
		// their choosing (X-Auth): its value is never recorded.
		"header": {"-H", "Authorization: Bearer SECRET-123", "-H", "X-Api-Key: KEY-456", "-H", "X-Auth: AUTH-321", "-H", "X-Tenant: TENANT-654"},
		"bearer": {"--bearer", "SECRET-123"},
	} {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(dir, name+".jsonl")
			r := runMcpx(t, nil, append([]string{"tools", "call", "echo", "message=hi", "--url", u + "?token=QUERY-789", "--record", file}, args...)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			tr, raw := readTraceFile(t, file)
			for _, secret := range []string{"SECRET-123", "KEY-456", "QUERY-789", "AUTH-321", "TENANT-654"} {
				if strings.Contains(raw, secret) {
					t.Errorf("the trace holds %s", secret)
				}
			}
			var frames, httpEvents int
			for _, e := range tr.Events {
				switch e.Kind {
				case record.KindFrame:
					frames++
				case record.KindHTTP:
					httpEvents++
				}
			}
			if name == "header" && !strings.Contains(raw, "X-Auth: [redacted], X-Tenant: [redacted]") {
				t.Error("the trace's HTTP lines do not name the added headers (in order, values redacted)")
			}
			if frames < 5 || httpEvents < 4 || tr.Header.Transport != "http" || !strings.HasPrefix(tr.Header.Target, "http: ") || !tr.Header.Redacted {
				t.Errorf("%d frames, %d http events, header %+v", frames, httpEvents, tr.Header)
			}
		})
	}
	// --no-redact keeps them: only when asked.
	file := filepath.Join(dir, "plain.jsonl")
	r := runMcpx(t, nil, "ping", "--url", u, "--bearer", "SECRET-123", "--no-redact", "--record", file)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if tr, _ := readTraceFile(t, file); tr.Header.Redacted {
		t.Error("--no-redact trace says it is redacted")
	}
}

func TestRecordFailedStartLeavesFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "t.jsonl")
	os.WriteFile(file, []byte("old trace\n"), 0o644)
	r := runMcpx(t, nil, "tools", "list", "--record", file, "--force", "--", "/no/such/server")
	if r.code != ExitConnect {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(file); string(b) != "old trace\n" {
		t.Errorf("the old file was clobbered: %q", b)
	}
	if !strings.Contains(r.stderr, "nothing was recorded; "+file+" was left as it was") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestRecordUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	os.WriteFile(good, []byte(`{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","redacted":true}`+"\n"), 0o644)
	newer := filepath.Join(dir, "newer.jsonl")
	os.WriteFile(newer, []byte(`{"format":"mcpx-trace","version":3}`+"\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ping", "--redact", "params.x", "--", "x"}, "--redact: JSONPath \"params.x\" must start with $"},
		{[]string{"ping", "--redact", "$.x", "--no-redact", "--", "x"}, "--redact and --no-redact contradict each other"},
		{[]string{"ping", "--record", dir, "--", "x"}, "that is a directory"},
		{[]string{"replay", good, "--", "x"}, "it takes no server command"},
		{[]string{"replay", good, "--url", "http://127.0.0.1:1/"}, "--url does not apply to mcpx replay, which serves the server recorded in a trace"},
		{[]string{"replay", good, "--record", "x.jsonl"}, "--record does not apply to mcpx replay"},
		{[]string{"replay", good, "--ignore", "nope"}, "--ignore: JSONPath \"nope\" must start with $"},
		{[]string{"replay", filepath.Join(dir, "missing.jsonl")}, "no such file"},
		{[]string{"verify", newer, "--", "x"}, "trace format version 3 is newer than this mcpx understands (version 1); upgrade mcpx"},
		{[]string{"verify", good}, "no server given"},
		{[]string{"trace", "show"}, "wrong number of arguments"},
		{[]string{"trace", "show", good, "--", "x"}, "takes no server"},
		{[]string{"proxy", "--listen", "127.0.0.1:0"}, "needs both --listen ADDR and --url UPSTREAM"},
		{[]string{"proxy"}, "no server given"},
	} {
		r := runMcpx(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

func TestVerifyHTTP(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	dir := t.TempDir()
	file := filepath.Join(dir, "t.jsonl")
	if r := runMcpx(t, nil, "tools", "call", "add", "a=2", "b=3", "--url", u, "--record", file); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	r := runMcpx(t, nil, "verify", file, "--url", u)
	if r.code != 0 || !strings.Contains(r.stdout, "✓ 3 exchange(s) verified, 0 mismatch(es)") {
		t.Fatalf("verify: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Another server instance with a different answer.
	raw, _ := os.ReadFile(file)
	edited := filepath.Join(dir, "edited.jsonl")
	os.WriteFile(edited, bytes.Replace(raw, []byte(`"text":"5"`), []byte(`"text":"6"`), 1), 0o644)
	r = runMcpx(t, nil, "verify", edited, "--json", "--url", u)
	if r.code != ExitMismatch {
		t.Fatalf("verify edited: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var out struct {
		OK         bool `json:"ok"`
		Mismatches []struct {
			Method string `json:"method"`
			Diffs  []struct {
				Path     string          `json:"path"`
				Recorded json.RawMessage `json:"recorded"`
				Live     json.RawMessage `json:"live"`
			} `json:"diffs"`
		} `json:"mismatches"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.OK || len(out.Mismatches) != 1 || len(out.Mismatches[0].Diffs) != 1 {
		t.Fatalf("--json output %v: %s", err, r.stdout)
	}
	if d := out.Mismatches[0].Diffs[0]; d.Path != "$.result.content[0].text" || string(d.Recorded) != `"6"` || string(d.Live) != `"5"` {
		t.Errorf("diff %+v", d)
	}
	if !strings.Contains(r.stderr, `"code":"mismatch","exitCode":7`) {
		t.Errorf("stderr %s", r.stderr)
	}
}

func TestTraceShow(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	file := filepath.Join(t.TempDir(), "t.jsonl")
	if r := runMcpx(t, nil, "tools", "call", "nope", "--url", u, "--record", file); r.code != ExitServerError {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	r := runMcpx(t, nil, "trace", "show", file)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// #2 is the tools/list that checks the call's arguments.
	for _, want := range []string{"mcpx-trace v1, recorded ", "→ initialize #1", "← initialize #1", "ok sdk-test-server 1.0.0, protocol 2025-11-25", "→ notification notifications/initialized", "tools/call #3  nope", "error -32602: unknown tool", "http POST "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("timeline lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runMcpx(t, nil, "trace", "show", "--json", file)
	var doc struct {
		Header struct{ Format string } `json:"header"`
		Events []struct {
			Kind      string   `json:"kind"`
			Method    string   `json:"method"`
			LatencyMS *float64 `json:"latencyMs"`
			Error     *struct {
				Code int `json:"code"`
			} `json:"error"`
			ToolError bool `json:"toolError"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Header.Format != "mcpx-trace" {
		t.Fatalf("--json: %v\n%s", err, r.stdout)
	}
	paired := false
	for _, e := range doc.Events {
		if e.Kind == "response" && e.Method == "tools/list" && e.LatencyMS != nil {
			paired = true
		}
	}
	if !paired {
		t.Errorf("no tools/list response paired with its request: %s", r.stdout)
	}
}

// freeAddr returns a loopback address nothing listens on (for a moment).
func freeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// background runs mcpx until the test cancels it and returns its result.
func background(t *testing.T, args ...string) (cancel func() runResult) {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	ios, out, errOut := NewTestIOStreams(nil)
	done := make(chan int, 1)
	go func() { done <- Run(ctx, args, ios) }()
	return func() runResult {
		stop()
		select {
		case code := <-done:
			return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
		case <-time.After(10 * time.Second):
			t.Fatal("mcpx did not stop within 10s")
		}
		return runResult{}
	}
}

// waitListening polls (bounded) until addr accepts connections.
func waitListening(t *testing.T, addr string) {
	t.Helper()
	testwait.Within(t, 10*time.Second, "something to listen on "+addr, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func TestProxyHTTPAndReplayHTTP(t *testing.T) {
	t.Parallel()
	up := sdkURL(t, nil)
	dir := t.TempDir()
	trace := filepath.Join(dir, "p.jsonl")
	addr := freeAddr(t)
	stop := background(t, "proxy", "--listen", addr, "--url", up, "--record", trace)
	waitListening(t, addr)
	r := runMcpx(t, nil, "tools", "call", "echo", "message=through the proxy", "--json", "--url", "http://"+addr+"/mcp", "-H", "Authorization: Bearer SECRET-PROXY")
	if r.code != 0 || !strings.Contains(r.stdout, "Echo: through the proxy") {
		t.Fatalf("through the proxy: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	pr := stop()
	if pr.code != ExitInterrupted || !strings.Contains(pr.stderr, "proxying "+up) {
		t.Errorf("proxy: exit %d, stderr %s", pr.code, pr.stderr)
	}
	tr, raw := readTraceFile(t, trace)
	if strings.Contains(raw, "SECRET-PROXY") {
		t.Error("the proxy recorded the bearer token")
	}
	if len(tr.Frames()) < 5 {
		t.Errorf("%d frames recorded", len(tr.Frames()))
	}

	// The proxy's trace, replayed over HTTP, answers the same.
	addr2 := freeAddr(t)
	stop = background(t, "replay", trace, "--listen", addr2)
	waitListening(t, addr2)
	r2 := runMcpx(t, nil, "tools", "call", "echo", "message=through the proxy", "--json", "--url", "http://"+addr2+"/mcp")
	if r2.code != 0 || r2.stdout != r.stdout {
		t.Fatalf("replayed: exit %d\n%s\nwant %s\n%s", r2.code, r2.stdout, r.stdout, r2.stderr)
	}
	stop()
}

func TestCommandLineRedactsSecretOptions(t *testing.T) {
	t.Parallel()
	got := commandLine([]string{"node", "server.js", "--api-key", "K1", "--token=T2", "-password", "P3", "--port", "80", "--verbose"})
	want := "node server.js --api-key [redacted] --token=[redacted] -password [redacted] --port 80 --verbose"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A URL's credentials; a URL without any is left as it is, even one
	// that net/url would write otherwise (a template's {name}).
	got = commandLine([]string{"server", "--dsn=postgres://u:pw@h/db", "https://t@h/", "resources", "read", "test://greet/{name}", "https://h/?q=a b"})
	want = "server --dsn=postgres://u:redacted@h/db https://redacted@h/ resources read test://greet/{name} https://h/?q=a b"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Assignments: an environment for env, a tool's arguments.
	got = commandLine([]string{"env", "GITHUB_TOKEN=G1", "OPENAI_API_KEY=O2", "PORT=80", "node", "s.js", "token=T3", "api_key:=\"A4\"", "message=hi", "tokens=5x"})
	want = "env GITHUB_TOKEN=[redacted] OPENAI_API_KEY=[redacted] PORT=80 node s.js token=[redacted] api_key:=[redacted] message=hi tokens=[redacted]"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// A variable given to env on the server's command line whose name has a
// word KEY or AUTH (env STRIPE_KEY=… node s.js) is as secret as the same
// variable in the server's configured or inherited environment
// (secretEnvName): it is hidden where the command line is shown (the
// trace's header, mcpx sessions, -v) and looked for in what the server
// sends. A tool's argument named key (a lookup's) is not a variable's.
func TestCommandLineRedactsSecretEnvNames(t *testing.T) {
	t.Parallel()
	server := []string{"env", "STRIPE_KEY=sk-ARG-00000006", "MY_AUTH=au-ARG-00000007", "KEYBOARD=us", "XAUTHORITY=/x/a", "node", "s.js", "key=lookup01"}
	got := commandLine(server)
	want := "env STRIPE_KEY=[redacted] MY_AUTH=[redacted] KEYBOARD=us XAUTHORITY=/x/a node s.js key=lookup01"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	secrets := connDesc{server: server}.commandSecrets()
	for _, v := range []string{"sk-ARG-00000006", "au-ARG-00000007"} {
		if !slices.Contains(secrets, v) {
			t.Errorf("commandSecrets %q lacks %q", secrets, v)
		}
	}
}

// A server that prints the secrets of its command line and environment
// (--env, a secret option) gives none of them away in a trace: the
// recorder looks for them everywhere, in its stderr too.
func TestRecordRedactsCommandLineSecretsEverywhere(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	r := runMcpx(t, nil, "tools", "list", "--record", trace, "--env", "MCPX_TEST_SAY=config: $API_TOKEN",
		"--env", "API_TOKEN=tk-ENV-00000001", "--", os.Args[0], stdioServerArg, "--token", "tk-ARG-00000002")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	tr, raw := readTraceFile(t, trace)
	if strings.Contains(raw, "tk-ENV") || strings.Contains(raw, "tk-ARG") {
		t.Errorf("the trace holds a secret of the command line:\n%s", raw)
	}
	found := false
	for _, e := range tr.Events {
		found = found || e.Kind == record.KindStderr && e.Text == "config: [redacted] --token [redacted]"
	}
	if !found {
		t.Errorf("no redacted stderr line:\n%s", raw)
	}
}

// The password of a URL in the server's environment or on its command
// line (DATABASE_URL=postgres://u:pw@h/db), whatever the name, is a
// secret too: the trace's header and its stderr lines show the URL
// without it, and the password alone is redacted where it comes back.
func TestRecordRedactsURLPasswordsOfTheCommandLine(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	r := runMcpx(t, nil, "tools", "list", "-v", "--record", trace,
		"--env", "MCPX_TEST_SAY=db $DATABASE_URL pw pw-ENV-00000004 arg pw-ARG-00000005",
		"--env", "DATABASE_URL=postgres://u:pw-ENV-00000004@h/db", "--", os.Args[0], stdioServerArg, "--dsn=postgres://u:pw-ARG-00000005@h/db")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	tr, raw := readTraceFile(t, trace)
	if strings.Contains(raw, "pw-ENV") || strings.Contains(raw, "pw-ARG") {
		t.Errorf("the trace holds a URL's password:\n%s", raw)
	}
	if !strings.Contains(tr.Header.Target, "--dsn=postgres://u:redacted@h/db") {
		t.Errorf("target %q", tr.Header.Target)
	}
	found := false
	for _, e := range tr.Events {
		found = found || e.Kind == record.KindStderr && strings.HasPrefix(e.Text, "db [redacted] pw [redacted] arg [redacted]")
	}
	if !found {
		t.Errorf("no redacted stderr line:\n%s", raw)
	}
	// mcpx's own lines (-v) show the command line as the trace does; the
	// server's stderr is the server's to print.
	for _, line := range strings.Split(r.stderr, "\n") {
		if strings.Contains(line, "pw-ARG") && !strings.HasPrefix(line, "server|") {
			t.Errorf("mcpx said a URL's password: %s", line)
		}
	}
}

// A variable named with the word KEY or AUTH (STRIPE_KEY, MY_AUTH) holds
// a secret, as mcpx servers show takes it; one where they are part of a
// word (KEYBOARD_LAYOUT) does not.
func TestSecretValuesOfTheEnvironment(t *testing.T) {
	got := secretValues([]string{"STRIPE_KEY=sk-00000001", "MY_AUTH=au-00000002", "GITHUB_TOKEN=gh-00000003",
		"KEYBOARD_LAYOUT=us-intl-1", "XAUTHORITY=/home/u/.Xauthority", "PORT=8080", "DATABASE_URL=postgres://u:pw-00000004@h/db",
		"HOME_PAGE=https://h/{name}"})
	want := []string{"sk-00000001", "au-00000002", "gh-00000003", "postgres://u:pw-00000004@h/db", "pw-00000004", "dTpwdy0wMDAwMDAwNA=="}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A server command that prints a secret it inherited of mcpx's own
// environment (GITHUB_TOKEN and the like; a debugging tool that shows
// its environment) gives it away in no trace either.
func TestRecordRedactsInheritedSecrets(t *testing.T) {
	const secret = "tk-INH-00000003"
	t.Setenv("MCPX_TEST_INHERITED_TOKEN", secret) // (what the server inherits)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	r := runMcpx(t, map[string]string{"MCPX_TEST_INHERITED_TOKEN": secret}, "tools", "list", "--record", trace,
		"--env", "MCPX_TEST_SAY=inherited: $MCPX_TEST_INHERITED_TOKEN", "--", os.Args[0], stdioServerArg)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	tr, raw := readTraceFile(t, trace)
	if strings.Contains(raw, secret) {
		t.Errorf("the trace holds a secret the server inherited:\n%s", raw)
	}
	found := false
	for _, e := range tr.Events {
		found = found || e.Kind == record.KindStderr && strings.TrimSpace(e.Text) == "inherited: [redacted]"
	}
	if !found {
		t.Errorf("no redacted stderr line:\n%s", raw)
	}
}

// verify --update records the server again without the secrets of its
// command line and environment, which it prints on stderr.
func TestVerifyUpdateRedactsCommandLineSecrets(t *testing.T) {
	t.Parallel()
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	server := func(n string) []string {
		return []string{"--env", "MCPX_TEST_SAY=config: $API_TOKEN", "--env", "API_TOKEN=tk-ENV-0000000" + n,
			"--", os.Args[0], stdioServerArg, "--token", "tk-ARG-0000000" + n}
	}
	if r := runMcpx(t, nil, append([]string{"tools", "list", "--record", trace}, server("1")...)...); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r := runMcpx(t, nil, append([]string{"verify", trace, "--update"}, server("2")...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	tr, raw := readTraceFile(t, trace)
	if strings.Contains(raw, "tk-ENV") || strings.Contains(raw, "tk-ARG") {
		t.Errorf("the updated trace holds a secret of the command line:\n%s", raw)
	}
	found := false
	for _, e := range tr.Events {
		found = found || e.Kind == record.KindStderr && e.Text == "config: [redacted] --token [redacted]"
	}
	if !found {
		t.Errorf("no redacted stderr line:\n%s", raw)
	}
}

// whoami makes the echo tool, asked for "whoami", say the credential the
// request carried (after the Authorization header's scheme).
func whoami(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, tok, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if body, err := io.ReadAll(r.Body); err == nil {
			body = bytes.ReplaceAll(body, []byte(`"message":"whoami"`), []byte(`"message":"`+tok+`"`))
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		}
		h.ServeHTTP(w, r)
	})
}

// A server that echoes the access token OAuth presents (here: the echo
// tool, asked for "whoami", is given the request's token) gives it away
// in no trace.
func TestRecordRedactsEchoedOAuthToken(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{WrapMCP: whoami})
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	r := runMcpx(t, withBrowser(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()}),
		"tools", "call", "echo", "message=whoami", "--url", srv.MCPURL, "--record", trace)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Echo: ") || strings.Contains(r.stdout, "whoami") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	_, raw := readTraceFile(t, trace)
	noSecrets(t, srv, raw)
	if !strings.Contains(raw, `"text":"Echo: [redacted]"`) {
		t.Errorf("the echo is not in the trace, redacted:\n%s", raw)
	}
}

// verify redacts the credentials it sends (--bearer, the environment's
// bearer token, a -H header, the access token OAuth presents) from what
// the live server echoes, as the recording redacted them: the echo
// matches the recorded "[redacted]", and a difference is reported
// without them, on the screen, in --json and in the JUnit report.
func TestVerifyRedactsEchoedCredentials(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, whoami)
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	if r := runMcpx(t, nil, "tools", "call", "echo", "message=whoami", "--url", u, "--bearer", "tk-RECORDED-0001", "--record", trace); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// The server as recorded, and one that changed: its echo says "Echo! ".
	changedSrv := testservers.NewServer()
	testservers.ChangeEcho(changedSrv)
	changed := testservers.Streamable(t, changedSrv, nil, whoami)
	for name, tc := range map[string]struct {
		env  map[string]string
		args []string
	}{
		"bearer": {nil, []string{"--bearer", "tk-LIVE-SECRET-0002"}},
		"env":    {map[string]string{"MCPX_BEARER_TOKEN": "tk-LIVE-SECRET-0003"}, nil},
		"header": {nil, []string{"-H", "Authorization: Token tk-LIVE-SECRET-0004"}},
	} {
		t.Run(name, func(t *testing.T) {
			if r := runMcpx(t, tc.env, append([]string{"verify", trace, "--url", u}, tc.args...)...); r.code != 0 {
				t.Errorf("exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
			}
			junit := filepath.Join(t.TempDir(), "j.xml")
			args := append([]string{"verify", trace, "--url", changed, "--junit", junit}, tc.args...)
			r := runMcpx(t, tc.env, args...)
			rj := runMcpx(t, tc.env, append(args, "--json")...)
			report, _ := os.ReadFile(junit)
			if r.code != ExitMismatch || !strings.Contains(r.stdout, `"Echo! [redacted]"`) || !strings.Contains(rj.stdout, `Echo! [redacted]`) {
				t.Errorf("the difference is not shown, redacted: exit %d\nstdout %s\nstderr %s\n--json %s", r.code, r.stdout, r.stderr, rj.stdout)
			}
			for _, o := range []string{r.stdout, r.stderr, rj.stdout, rj.stderr, string(report)} {
				if strings.Contains(o, "SECRET") {
					t.Errorf("the live credential was shown:\n%s", o)
				}
			}
		})
	}

	// OAuth: the access token the live session presents, echoed by a
	// server that changed (its answers say "Echo! ").
	var regressed atomic.Bool
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{WrapMCP: func(h http.Handler) http.Handler {
		h = whoami(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if regressed.Load() {
				w = echoBang{w}
			}
			h.ServeHTTP(w, r)
		})
	}})
	env := withBrowser(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	otrace := filepath.Join(dir, "o.jsonl")
	if r := runMcpx(t, env, "tools", "call", "echo", "message=whoami", "--url", srv.MCPURL, "--record", otrace); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r := runMcpx(t, env, "verify", otrace, "--url", srv.MCPURL); r.code != 0 {
		t.Errorf("verify with OAuth: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	regressed.Store(true)
	r := runMcpx(t, env, "verify", otrace, "--url", srv.MCPURL, "--json")
	if r.code != ExitMismatch || !strings.Contains(r.stdout, `Echo! [redacted]`) {
		t.Errorf("verify with OAuth, changed: exit %d\nstdout %s\nstderr %s", r.code, r.stdout, r.stderr)
	}
	noSecrets(t, srv, r.stdout, r.stderr)
}

// echoBang makes the answers of the echo tool say "Echo! " rather than
// "Echo: ", as a regressed server would.
type echoBang struct{ http.ResponseWriter }

func (w echoBang) Write(b []byte) (int, error) {
	if _, err := w.ResponseWriter.Write(bytes.ReplaceAll(b, []byte("Echo: "), []byte("Echo! "))); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (w echoBang) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func TestReplayHTTPStrictStopsOnDeviation(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if r := runMcpx(t, nil, "ping", "--url", u, "--record", trace); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ios, _, buf := NewTestIOStreams(nil)
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"replay", trace, "--strict", "--listen", addr}, ios)
	}()
	waitListening(t, addr)
	r := runMcpx(t, nil, "tools", "list", "--url", "http://"+addr+"/mcp")
	if r.code != ExitServerError || !strings.Contains(r.stderr, "the recording has no tools/list request") {
		t.Errorf("client: exit %d, %s", r.code, r.stderr)
	}
	select {
	case code := <-done:
		if code != ExitMismatch || !strings.Contains(buf.String(), "mcpx: replay: the recording has no tools/list request") {
			t.Errorf("replay: exit %d, stderr %s", code, buf.String())
		}
	case <-ctx.Done():
		t.Fatal("the strict replay did not stop")
	}
}

// A strict replay over HTTP serves any conforming client: another
// client's identity and capabilities at initialize are reported, not a
// departure that stops the server (issue 14, defect 5).
func TestReplayHTTPStrictServesAnotherClient(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	trace := filepath.Join(t.TempDir(), "t.jsonl")
	if r := runMcpx(t, nil, "ping", "--url", u, "--record", trace); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ios, _, buf := NewTestIOStreams(nil)
	done := make(chan int, 1)
	replayCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		done <- Run(replayCtx, []string{"replay", trace, "--strict", "--listen", addr}, ios)
	}()
	waitListening(t, addr)
	client := mcp.NewClient(&mcp.Implementation{Name: "another-client", Version: "9"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	if err := cs.Ping(ctx, nil); err != nil {
		t.Errorf("ping: %v", err)
	}
	cs.Close()
	stop()
	code := <-done
	if code != ExitInterrupted || !strings.Contains(buf.String(), "replay: initialize params differ from the recording") {
		t.Errorf("replay: exit %d, stderr %s", code, buf.String())
	}
}

// mcpx replay exits as the recorded server process did.
func TestRecordedExitCode(t *testing.T) {
	for status, want := range map[string]int{
		"exit status 3":    3,
		"exit status 0":    0,
		"signal: killed":   137,
		"signal: unheard":  ExitError,
		"":                 ExitError, // an older trace does not say
		"EOF":              ExitOK,    // the server closed its output
		"exit status -5":   ExitError,
		"exit status many": ExitError,
	} {
		if got := recordedExitCode(record.ServerEnd{Status: status}); got != want {
			t.Errorf("%q: exit code %d, want %d", status, got, want)
		}
	}
}

// The access token OAuth presents is shown by no --wire (nor the REPL's
// :wire), and kept by no trace the REPL's :record starts mid-session,
// when the server echoes it; nor is the --bearer token.
func TestWireAndLateRecordRedactEchoedCredentials(t *testing.T) {
	t.Parallel()
	srv := testservers.StartOAuth(t, testservers.OAuthOptions{WrapMCP: whoami})
	env := withBrowser(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	r := runMcpx(t, env, "tools", "call", "echo", "message=whoami", "--url", srv.MCPURL, "--wire")
	if r.code != 0 || !strings.Contains(r.stderr, `"text":"Echo: [redacted]"`) {
		t.Errorf("--wire: exit %d\nstderr %s", r.code, r.stderr)
	}
	noSecrets(t, srv, r.stderr)

	dir := t.TempDir()
	trace := filepath.Join(dir, "t.jsonl")
	script := filepath.Join(dir, "script")
	if err := os.WriteFile(script, []byte(":record "+trace+"\n:wire on\ntools call echo message=whoami\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r = runMcpx(t, env, "repl", "-f", script, "--url", srv.MCPURL)
	if r.code != 0 {
		t.Fatalf("repl: exit %d\nstderr %s", r.code, r.stderr)
	}
	_, raw := readTraceFile(t, trace)
	noSecrets(t, srv, raw, r.stderr)
	if !strings.Contains(raw, `"text":"Echo: [redacted]"`) {
		t.Errorf("the echo is not in the trace, redacted:\n%s", raw)
	}

	u := sdkURL(t, whoami)
	r = runMcpx(t, nil, "tools", "call", "echo", "message=whoami", "--url", u, "--bearer", "tk-BEARER-SECRET-1", "--wire")
	if r.code != 0 || strings.Contains(r.stderr, "SECRET") || !strings.Contains(r.stderr, `"text":"Echo: [redacted]"`) {
		t.Errorf("--wire --bearer: exit %d\nstderr %s", r.code, r.stderr)
	}
}

// mcpx proxy --wire does not show the upstream credential it adds
// (--bearer) where the server echoes it.
func TestProxyWireRedactsUpstreamCredentials(t *testing.T) {
	t.Parallel()
	up := sdkURL(t, whoami)
	addr := freeAddr(t)
	stop := background(t, "proxy", "--listen", addr, "--url", up, "--bearer", "tk-UPSTREAM-SECRET-1", "--wire")
	waitListening(t, addr)
	r := runMcpx(t, nil, "tools", "call", "echo", "message=whoami", "--url", "http://"+addr+"/mcp")
	if r.code != 0 {
		t.Fatalf("through the proxy: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	pr := stop()
	if strings.Contains(pr.stderr, "SECRET") || !strings.Contains(pr.stderr, `"text":"Echo: [redacted]"`) {
		t.Errorf("proxy --wire:\n%s", pr.stderr)
	}
}

// Every *.jsonl entry of a directory given to verify is a trace to verify:
// one that cannot be read as one (a symbolic link to nothing, a
// directory) is an error naming it, said before any server starts, as it
// is for a file named. Before, such entries were left out without a word:
// the run verified the others and passed.
func TestVerifyDirectoryNamesWhatIsNoTrace(t *testing.T) {
	t.Parallel()
	const trace = `{"format":"mcpx-trace","version":1,"minor":2,"created":"2026-01-01T00:00:00Z","transport":"stdio","target":"stdio: x","redacted":true}` + "\n" +
		`{"t":1,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\n" +
		`{"t":2,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}` + "\n"
	for _, c := range []struct {
		name string
		make func(dir string) error
		want string
	}{
		{"dangling link", func(dir string) error {
			return os.Symlink(filepath.Join(dir, "nothing"), filepath.Join(dir, "gone.jsonl"))
		},
			"gone.jsonl: a symbolic link to "},
		{"directory", func(dir string) error { return os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700) },
			"sub.jsonl is not a regular file (a directory)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "ok.jsonl"), []byte(trace), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := c.make(dir); err != nil {
				t.Skip(err) // no symbolic links here
			}
			// The server is never reached: the traces are read first.
			r := runMcpx(t, nil, "verify", dir, "--url", "http://127.0.0.1:9/mcp")
			if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want %d and one line with %q", r.code, r.stderr, ExitUsage, c.want)
			}
		})
	}
}

// With --junit, a trace that cannot be read (the run's usage error) is
// also the report's: one test case in error naming it. Before, no report
// was written, and CI showed the one an earlier run had left, passing.
func TestVerifyJUnitSaysATraceCannotBeRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "empty.jsonl"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report.xml")
	if err := os.WriteFile(report, []byte(`<testsuites tests="9" failures="0"></testsuites>`), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runMcpx(t, nil, "verify", dir, "--junit", report, "--url", "http://127.0.0.1:9/mcp")
	if r.code != ExitUsage || !strings.Contains(r.stderr, "empty.jsonl: not an mcpx trace: the file is empty") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Tests  int `xml:"tests,attr"`
		Errors int `xml:"errors,attr"`
		Suites []struct {
			Cases []struct {
				Error *struct {
					Message string `xml:"message,attr"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the report is not XML: %v\n%s", err, raw)
	}
	if doc.Tests != 1 || doc.Errors != 1 || len(doc.Suites) != 1 || len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Error == nil ||
		!strings.Contains(doc.Suites[0].Cases[0].Error.Message, "empty.jsonl: not an mcpx trace") {
		t.Errorf("report:\n%s", raw)
	}
}

// A run lets go of each client once it is closed: verify of a directory
// of traces opens one per session, and the run kept every one (for
// closing after a panic) with what its session held, the live and
// recorded frames, until the end: 60 traces whose 2 MiB answers differ
// peaked at 350 MB, each trace's memory added to the last's.
func TestVerifyManyLetsGoOfClosedClients(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	dir := t.TempDir()
	first := filepath.Join(dir, "a.jsonl")
	if r := runMcpx(t, nil, "tools", "call", "echo", "message=hi", "--url", u, "--record", first); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"b.jsonl", "c.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, name), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ios, out, errOut := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var run *runState
	code := runTree(ctx, []string{"verify", dir, "--url", u}, ios, func(e *env, args []string) (*cobra.Command, *rootFlags) {
		run = e.run
		return newRootCmdFor(e, args)
	})
	if code != 0 || !strings.Contains(out.String(), "3 trace(s): 3 verified") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	if n := len(run.open); n != 0 {
		t.Errorf("the run still holds %d closed client(s)", n)
	}
}

// verify of several traces holds one trace's answers at a time: what it
// keeps of each for the end (--junit, --json, the total) is the
// differences, shortened, not the whole recorded and live answers of each
// mismatch. Before, a directory of traces whose large answers differ held
// them all: 60 traces of 2 MiB answers peaked at 350 MB. The heap is
// measured, after a collection, as each trace's session begins (its
// initialize has no session id yet); not in parallel, so that only this
// test's memory is counted.
func TestVerifyManyHoldsOneTracesAnswersAtATime(t *testing.T) {
	var peak atomic.Uint64
	u := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				for p := peak.Load(); ms.HeapAlloc > p && !peak.CompareAndSwap(p, ms.HeapAlloc); p = peak.Load() {
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	dir := t.TempDir()
	first := filepath.Join(t.TempDir(), "a.jsonl")
	if r := runMcpx(t, nil, "tools", "call", "echo", "message=hi", "--url", u, "--record", first); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	// The recorded answer is a 2 MiB text the live server does not give.
	const big = 2 << 20
	edited := bytes.Replace(raw, []byte(`"text":"Echo: hi"`), []byte(`"text":"`+strings.Repeat("x", big)+`"`), 1)
	if len(edited) < big {
		t.Fatalf("no answer to edit in the trace:\n%s", raw)
	}
	const traces = 10
	for i := range traces {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("t%02d.jsonl", i)), edited, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	peak.Store(0)
	r := runMcpx(t, nil, "verify", dir, "--junit", filepath.Join(t.TempDir(), "report.xml"), "--url", u)
	if r.code != ExitMismatch || !strings.Contains(r.stdout, fmt.Sprintf("%d trace(s): 0 verified, %d with differences", traces, traces)) {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// Each trace's answer kept would be 20 MiB by the last trace.
	if p := peak.Load(); p > 5*big {
		t.Errorf("the heap held %d MiB as the last trace began, for traces of one %d MiB answer each", p>>20, big>>20)
	}
}

// Each trace verify cannot read is said on lines broken at words to the
// terminal, as every other line it prints there: they were printed whole,
// and the terminal cut them mid-word at its edge.
func TestVerifyUnreadableTracesWrapOnATerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"first.jsonl", "second.jsonl"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const width = 30
	ios, _, errOut := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	ios.ErrTTY, ios.ErrWidth = true, func() int { return width }
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The server is never reached: the traces are read first.
	code := Run(ctx, []string{"verify", filepath.Join(dir, "first.jsonl"), filepath.Join(dir, "second.jsonl"), "--url", "http://127.0.0.1:9/mcp"}, ios)
	stderr := errOut.String()
	if code != ExitUsage || !strings.Contains(stderr, "first.jsonl: not an") || !strings.Contains(stderr, "second.jsonl: not an") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
		if tui.DisplayWidth(l) > width {
			t.Errorf("a line takes %d columns, more than the terminal's %d: %q", tui.DisplayWidth(l), width, l)
		}
	}
}

// A trace of several that changes after verify read it (before any was
// verified) is not verified as it is now: the run says it changed. Each
// was read a second time to be verified, and that read was verified,
// though its header was never checked nor its warnings said.
func TestVerifyManySaysATraceChangedSinceItWasRead(t *testing.T) {
	t.Parallel()
	b, _, r := verifyChangedSinceRead(t, "verify")
	if r.code != ExitUsage || !strings.Contains(r.stderr, b+" changed after mcpx verify read it") || strings.Contains(r.stdout, "Echo: changed") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
}

// So with --update: a trace of several that changed after verify read it
// is not recorded again from what it has become; it is left as it is.
func TestVerifyUpdateManySaysATraceChangedSinceItWasRead(t *testing.T) {
	t.Parallel()
	b, changed, r := verifyChangedSinceRead(t, "verify", "--update")
	if r.code != ExitUsage || !strings.Contains(r.stderr, b+" changed after mcpx verify read it") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if now, err := os.ReadFile(b); err != nil || !bytes.Equal(now, changed) {
		t.Errorf("b.jsonl was not left as it was changed (%v):\n%s", err, now)
	}
}

// verifyChangedSinceRead records a trace a.jsonl, copies it to b.jsonl,
// and runs mcpx with args, a.jsonl and b.jsonl against a server whose
// first request (a.jsonl's, once both were read) changes b.jsonl's
// answer. It returns b.jsonl's name, what it was changed to, and the run.
func verifyChangedSinceRead(t *testing.T, args ...string) (string, []byte, runResult) {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	var changed []byte
	var armed atomic.Bool
	u := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The first request verify makes (a.jsonl's) changes b.jsonl.
			if armed.CompareAndSwap(true, false) {
				if err := os.WriteFile(b, changed, 0o600); err != nil {
					t.Error(err)
				}
			}
			h.ServeHTTP(w, r)
		})
	})
	if r := runMcpx(t, nil, "tools", "call", "echo", "message=hi", "--url", u, "--record", a); r.code != 0 {
		t.Fatalf("record: exit %d: %s", r.code, r.stderr)
	}
	raw, err := os.ReadFile(a)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	changed = bytes.Replace(raw, []byte(`"text":"Echo: hi"`), []byte(`"text":"Echo: changed"`), 1)
	if bytes.Equal(changed, raw) {
		t.Fatalf("no answer to edit in the trace:\n%s", raw)
	}
	armed.Store(true)
	r := runMcpx(t, nil, append(args, a, b, "--url", u)...)
	if armed.Load() {
		t.Fatal("the server was not asked")
	}
	return b, changed, r
}
