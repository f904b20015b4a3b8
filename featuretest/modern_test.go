package featuretest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// The 2026-07-28 era against the official Go SDK's dual-era server, over
// stdio and Streamable HTTP (stateless), and against a raw server for the
// tasks extension, subscriptions and HTTP headers.

// modernTarget is one way to reach the modern Go SDK test server.
type modernTarget struct {
	name   string
	server []string // the server part of an mcpx command line
	rec    *testservers.Recorder
}

func modernTargets(t *testing.T) []modernTarget {
	rec := &testservers.Recorder{}
	url := testservers.Modern(t, testservers.NewModernServer(rec, nil))
	return []modernTarget{
		{name: "stdio", server: []string{"--env", serverEnv + "=modern", "--", os.Args[0]}},
		{name: "http", server: []string{"--url", url}, rec: rec},
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestModernCommands(t *testing.T) {
	t.Parallel()
	name := writeFile(t, "name.json", `{"name":"Ada"}`)
	reply := writeFile(t, "reply.json", `{"model":"file-model","role":"assistant","content":{"type":"text","text":"roses are blue"}}`)
	root := t.TempDir()
	for _, tg := range modernTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			m := func(parts ...any) []string {
				return args(append(append([]any{}, parts...), "--protocol-era", "modern", tg.server)...)
			}

			r := run(t, "", m("info")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "modern-test-server 2.0.0", "Protocol:   2026-07-28", "Era:        modern (stateless, per-request _meta); chosen with --protocol-era",
				"Supported:  2026-07-28, 2025-11-25", "Cache:      ttl 0 (stale at once), scope public", "A server for mcpx's 2026-07-28 tests.")

			r = run(t, "", m("info", "--json")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, `"supportedVersions"`, `"resultType": "complete"`)

			r = run(t, "", m("ping")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "pong (", "server/discover")

			r = run(t, "", m("tools", "list")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "confirm", "region", "region:string*")
			// A hint that says nothing (stale at once) only with -v.
			if strings.Contains(r.stderr, "cache hint") {
				t.Errorf("tools list shows a cache hint of ttl 0 without -v:\n%s", r.stderr)
			}
			r = run(t, "", m("tools", "list", "-v")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stderr", r.stderr, "cache hint: ttl 0 (stale at once), scope public")

			r = run(t, "", m("tools", "call", "add", "a=2", "b=3", "--json")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, `"text": "5"`)

			// A multi-round tool answered from a file: one round, the
			// request state echoed exactly.
			r = run(t, "", m("tools", "call", "confirm", "--on-elicit", "file:"+name)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "Hello, Ada (state ok)")
			wantContains(t, "stderr", r.stderr, `tools/call "confirm": the server needs input (round 1 of at most 10): elicitation/create (name); retrying as a new request`,
				"server request elicitation/create", `→ answered: accept {"name":"Ada"}`)

			// Two rounds: an elicitation, then a sampling request beside it.
			r = run(t, "", m("tools", "call", "survey", "--on-elicit", "accept-defaults", "--on-sampling", "file:"+reply)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, `colour blue, poem "roses are blue"`)
			wantContains(t, "stderr", r.stderr, "(round 1 of at most 10): elicitation/create (color)", "(round 2 of at most 10): elicitation/create (color), sampling/createMessage (poem)")

			// Roots, through the same --root flag.
			r = run(t, "", m("tools", "call", "where", "--root", root)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "roots: file://"+filepath.ToSlash(root))

			// A declined elicitation is an answer too.
			r = run(t, "", m("tools", "call", "confirm", "--on-elicit", "decline")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "no name: decline")

			// resources/read and prompts/get are multi-round too.
			r = run(t, "", m("resources", "read", "test://secret", "--on-elicit", "accept-defaults")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "secret unlocked with 1234")
			wantContains(t, "stderr", r.stderr, `resources/read "test://secret": the server needs input`)
			r = run(t, "", m("prompts", "get", "vip", "--on-elicit", "file:"+name)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "Welcome, Ada")
			r = run(t, "", m("prompts", "get", "greet", "name=Bo")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "Say hello to Bo")
			r = run(t, "", m("resources", "list")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "test://doc", "test://secret")
			r = run(t, "", m("resources", "read", "test://doc")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "the document")

			r = run(t, "", m("resources", "templates")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "test://items/{id}")
			r = run(t, "", m("resources", "read", "test://items/7")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "item test://items/7")
			r = run(t, "", m("complete", "--prompt", "greet", "name=Ad")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "Ad-done")
			r = run(t, "", m("notify", "notifications/cancelled", `{"requestId":99}`, "-v")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stderr", r.stderr, "sent notifications/cancelled")
			r = run(t, "", m("tools", "schema", "region")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, `"x-mcp-header":"Region"`)

			// Any method, raw: the _meta goes in, the result comes out.
			r = run(t, "", m("call", "tools/call", `{"name":"echo","arguments":{"message":"raw"}}`)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "Echo: raw")

			// Unknown tool: a JSON-RPC error, with close names.
			r = run(t, "", m("tools", "call", "ech", "message=x")...)
			r.wantCode(t, cmd.ExitServerError)

			// The old methods are gone: logging/setLevel and
			// resources/subscribe are not sent; --log-level rides in _meta.
			r = run(t, "", m("tools", "call", "echo", "message=x", "--log-level", "debug", "--wire")...)
			r.wantCode(t, cmd.ExitOK)
			if strings.Contains(r.stderr, "logging/setLevel") || strings.Contains(r.stderr, `"method":"initialize"`) {
				t.Errorf("modern session sent a handshake-era method:\n%s", r.stderr)
			}
			wantContains(t, "stderr", r.stderr, `"io.modelcontextprotocol/logLevel":"debug"`, `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`,
				`"io.modelcontextprotocol/clientInfo":{"name":"mcpx"`)
		})
	}
}

func TestModernHTTPHeaders(t *testing.T) {
	t.Parallel()
	rec := &testservers.Recorder{}
	url := testservers.Modern(t, testservers.NewModernServer(rec, nil))
	r := run(t, "", "tools", "call", "region", "region=eu west", "priority=7", "query=q", "--protocol-era", "modern", "--url", url, "--wire")
	r.wantCode(t, cmd.ExitOK)
	// The SDK server validates every header against the body; the tool
	// shows what it saw.
	wantContains(t, "stdout", r.stdout, "Mcp-Method=tools/call", "Mcp-Name=region", "Mcp-Param-Region=eu west", "Mcp-Param-Priority=7")
	wantContains(t, "stderr", r.stderr, "Mcp-Protocol-Version: 2026-07-28", "Mcp-Method: tools/call", "Mcp-Name: region")
	if strings.Contains(r.stderr, "Mcp-Session-Id") {
		t.Errorf("a modern request carried a session id:\n%s", r.stderr)
	}
	// An unsafe value goes Base64-encoded, and the server decodes it.
	r = run(t, "", "tools", "call", "region", "region= ünïcode ", "--protocol-era", "modern", "--url", url)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "Mcp-Param-Region==?base64?IMO8bsOvY29kZSA=?=")
}

// A timed-out request is cancelled: over stdio with notifications/cancelled,
// over HTTP by closing its response stream.
func TestModernCancellation(t *testing.T) {
	t.Parallel()
	for _, tg := range modernTargets(t) {
		t.Run(tg.name, func(t *testing.T) {
			r := run(t, "", args("tools", "call", "slow", "--timeout", "500ms", "--protocol-era", "modern", "--wire", tg.server)...)
			r.wantCode(t, cmd.ExitTimeout)
			if tg.name == "stdio" {
				wantContains(t, "stderr", r.stderr, `"method":"notifications/cancelled"`)
				return
			}
			if strings.Contains(r.stderr, "notifications/cancelled") {
				t.Errorf("over HTTP the modern era cancels by closing the stream, not with a notification:\n%s", r.stderr)
			}
			testwait.For(t, "the server to see the call cancelled", func() bool { return tg.rec.Cancelled("slow") > 0 })
		})
	}
}

// wait bounds the polls of these tests.
const wait = 10 * time.Second

// Auto-detection of the era against Go servers of both eras, over stdio,
// Streamable HTTP and HTTP+SSE; then against server-everything (npm),
// whose cases alone skip without the npm peers.
func TestAutoEra(t *testing.T) {
	t.Parallel()
	modernURL := testservers.Modern(t, testservers.NewModernServer(nil, nil))
	// The SDK's stateful handler only speaks the handshake era over HTTP.
	legacyURL := testservers.Streamable(t, testservers.NewModernServer(nil, nil), nil, nil)
	sseURL := testservers.SSE(t, testservers.NewServer(), nil)
	cases := []struct {
		name   string
		server func(t *testing.T) []string
		want   []string
	}{
		{"modern stdio", fixed("--env", serverEnv+"=modern", "--", os.Args[0]), []string{"Era:        modern", "auto-detected: server/discover answered"}},
		{"modern http", fixed("--url", modernURL), []string{"Era:        modern", "auto-detected: server/discover answered"}},
		{"legacy stdio", fixed(legacyServer()...), []string{"Era:        legacy", "auto-detected: server/discover failed"}},
		{"legacy http", fixed("--url", legacyURL), []string{"Era:        legacy", "auto-detected: server/discover named only handshake-era versions", "Protocol:   2025-11-25"}},
		{"legacy sse", fixed("--url", sseURL), []string{"Era:        legacy", "auto-detected", "http+sse"}},
		// Started before the commands run: a node start alone can take
		// the 3s auto-detection waits for server/discover over stdio.
		{"everything stdio", everythingStarted(2), []string{"Era:        legacy", "auto-detected: server/discover failed"}},
		{"everything http", everything, []string{"Era:        legacy", "auto-detected: server/discover"}},
		{"everything sse", func(t *testing.T) []string { return []string{"--url", everythingURL(t, "sse")} }, []string{"Era:        legacy", "auto-detected: server/discover", "http+sse"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			server := c.server(t)
			r := run(t, "", args("info", "--protocol-era", "auto", server)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, c.want...)
			r = run(t, "", args("tools", "call", "echo", "message=auto", "--protocol-era", "auto", server)...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "auto")
		})
	}
	// MCPX_PROTOCOL_ERA chooses the era too.
	t.Run("env", func(t *testing.T) {
		t.Parallel()
		r := runEnv(t, map[string]string{"MCPX_PROTOCOL_ERA": "auto"}, "info", "--url", modernURL)
		r.wantCode(t, cmd.ExitOK)
		wantContains(t, "stdout", r.stdout, "Era:        modern")
	})
}

// fixed is the server part of a case that needs nothing from its test.
func fixed(server ...string) func(*testing.T) []string {
	return func(*testing.T) []string { return server }
}

func TestEraMismatch(t *testing.T) {
	t.Parallel()
	// Modern pinned against a handshake-era server: a clear error naming
	// the flag. The Go SDK server, and server-everything (npm).
	for _, c := range []struct {
		name   string
		server func(t *testing.T) []string
	}{
		{"go-sdk", fixed(legacyServer()...)},
		{"everything", everythingStdio},
	} {
		t.Run("modern against "+c.name, func(t *testing.T) {
			t.Parallel()
			r := run(t, "", args("tools", "list", "--protocol-era", "modern", c.server(t))...)
			if r.code == cmd.ExitOK {
				t.Fatal("modern against a legacy server succeeded")
			}
			wantContains(t, "stderr", r.stderr, "--protocol-era legacy")
		})
	}

	// Legacy against a modern-only server.
	r := run(t, "", args("tools", "list", rawModern(""))...)
	if r.code == cmd.ExitOK {
		t.Fatal("legacy against a modern-only server succeeded")
	}
	wantContains(t, "stderr", r.stderr, "--protocol-era modern")

	// Usage errors.
	r = run(t, "", args("info", "--protocol-era", "sometimes", sdkServer())...)
	r.wantCode(t, cmd.ExitUsage)
	r = run(t, "", args("info", "--protocol-era", "legacy", "--protocol-version", "2026-07-28", sdkServer())...)
	r.wantCode(t, cmd.ExitUsage)
	r = run(t, "", args("info", "--protocol-era", "modern", "--protocol-version", "2025-06-18", sdkServer())...)
	r.wantCode(t, cmd.ExitUsage)
	r = run(t, "", "info", "--protocol-era", "modern", "--transport", "sse", "--url", "http://127.0.0.1:1/sse")
	r.wantCode(t, cmd.ExitUsage)
}

func rawModern(end string) []string {
	return []string{"--env", serverEnv + "=raw-modern", "--env", "RAW_LISTEN_END=" + end, "--", os.Args[0]}
}

func TestModernTasks(t *testing.T) {
	t.Parallel()
	srv := &testservers.RawModern{}
	url := srv.HTTP(t)
	for _, tg := range []struct {
		name   string
		server []string
	}{{"stdio", rawModern("")}, {"http", []string{"--url", url}}} {
		t.Run(tg.name, func(t *testing.T) {
			m := func(parts ...any) []string {
				return args(append(append([]any{}, parts...), "--protocol-era", "modern", tg.server)...)
			}
			r := run(t, "", m("tools", "call", "job")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, "job done")
			wantContains(t, "stderr", r.stderr, "task task-", ": working", ": completed")

			r = run(t, "", m("tools", "call", "ask-job", "--on-elicit", "accept-defaults")...)
			r.wantCode(t, cmd.ExitOK)
			wantContains(t, "stdout", r.stdout, `ask-job got {"confirm":{"action":"accept","content":{"ok":true}}}`)
			wantContains(t, "stderr", r.stderr, "input_required", "needs input: 1 request(s)", "server request elicitation/create")

			r = run(t, "", m("tools", "call", "fail-job")...)
			r.wantCode(t, cmd.ExitServerError)
			wantContains(t, "stderr", r.stderr, "failed", "the job crashed")

			// Interrupted: the task is cancelled with tasks/cancel.
			r = runInterrupted(t, ": working", m("tools", "call", "slow-job")...)
			r.wantCode(t, cmd.ExitInterrupted)
			wantContains(t, "stderr", r.stderr, "cancellation requested (tasks/cancel)")

			// tasks get / cancel / list in the modern era.
			r = run(t, "", m("tasks", "get", "nope")...)
			r.wantCode(t, cmd.ExitServerError)
			r = run(t, "", m("tasks", "list")...)
			r.wantCode(t, cmd.ExitUsage)
			wantContains(t, "stderr", r.stderr, "no tasks/list")
		})
	}
	// Over HTTP the server outlives the command: look up, follow and
	// cancel a task an earlier command created (task-1, the job).
	r := run(t, "", "tasks", "get", "task-1", "--protocol-era", "modern", "--url", url)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "task task-1: completed")
	r = run(t, "", "tasks", "result", "task-1", "--protocol-era", "modern", "--url", url, "--json")
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "job done")
	r = run(t, "", "tasks", "cancel", "task-1", "--protocol-era", "modern", "--url", url)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "cancellation requested for task task-1")
}

func TestModernListen(t *testing.T) {
	t.Parallel()
	// Both ways a server ends a subscription, over stdio.
	r := run(t, "", args("watch", "--for", "5s", "--protocol-era", "modern", rawModern("graceful"))...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "notifications/tools/list_changed")
	wantContains(t, "stderr", r.stderr, "subscription acknowledged: tools list changes",
		"the server did not agree to: prompts list changes, resources list changes",
		"the server ended the subscription (it answered subscriptions/listen)")
	r = run(t, "", args("watch", "--for", "5s", "--protocol-era", "modern", rawModern("cancel"))...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "the server cancelled the subscription: server shutting down")

	// resources subscribe: the filter names the resource; the update is
	// printed (and re-read with --read). Ending it cancels the request:
	// with notifications/cancelled on stdio.
	r = run(t, "", args("resources", "subscribe", "test://x", "--for", "300ms", "--json", "--wire", "--protocol-era", "modern", rawModern(""))...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, `"method":"notifications/resources/updated"`, `"uri":"test://x"`)
	wantContains(t, "stderr", r.stderr, `"resourceSubscriptions":["test://x"]`, "subscription acknowledged: updates of test://x",
		`"method":"notifications/cancelled"`)
	if strings.Contains(r.stderr, "resources/subscribe") || strings.Contains(r.stderr, "resources/unsubscribe") {
		t.Errorf("the modern era has no resources/subscribe:\n%s", r.stderr)
	}

	// Over HTTP a dropped stream is listened to again; ending the command
	// closes the stream, which the server sees as cancellation.
	srv := &testservers.RawModern{ListenEnd: "drop"}
	url := srv.HTTP(t)
	r = runInterrupted(t, "(attempt 1 of 5)\nmcpx: subscription acknowledged", "watch", "--protocol-era", "modern", "--url", url)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "the subscription stream dropped", "listening again in 1s (attempt 1 of 5)")
	wantContains(t, "stdout", r.stdout, "notifications/tools/list_changed")
	if !srv.WaitLog("cancelled", wait) {
		t.Errorf("the server never saw the subscription cancelled: %q", srv.Log())
	}
	for _, l := range srv.Log() {
		if strings.HasPrefix(l, "notification ") {
			t.Errorf("over HTTP the modern era sends no notifications: %q", l)
		}
	}
}

func TestModernListenSDK(t *testing.T) {
	t.Parallel()
	srv := testservers.NewModernServer(nil, nil)
	url := testservers.Modern(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go testservers.ChangeTools(ctx, srv, 50*time.Millisecond)
	// The server may send a change before its acknowledgment: wait for both.
	r := runInterruptedAll(t, []string{"notifications/tools/list_changed", "subscription acknowledged"}, "watch", "--protocol-era", "modern", "--url", url, "--wire")
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "notification notifications/tools/list_changed")
	wantContains(t, "stderr", r.stderr, "subscription acknowledged: tools list changes, prompts list changes, resources list changes")
}

func TestModernToolHeaders(t *testing.T) {
	t.Parallel()
	srv := &testservers.RawModern{}
	url := srv.HTTP(t)
	// The server refuses the first call as a header mismatch: mcpx lists
	// the tools again and retries once, with Mcp-Param-Region.
	r := run(t, "", "tools", "call", "hdr", "region=us-west1", "--protocol-era", "modern", "--url", url)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "region us-west1")
	wantContains(t, "stderr", r.stderr, "the server reports mismatched headers", "listing the tools again and retrying once")

	// A tool with an invalid x-mcp-header is listed, with the reason, but
	// never called over HTTP.
	r = run(t, "", "tools", "list", "--protocol-era", "modern", "--url", url)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "bad-hdr [invalid x-mcp-header]", "type number may not be mirrored")
	wantContains(t, "stderr", r.stderr, "cache hint: ttl 5m0s, scope private")
	r = run(t, "", "tools", "call", "bad-hdr", "score=1.5", "--protocol-era", "modern", "--url", url, "--json")
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stderr", r.stderr, `"code":"invalid_tool"`)
	for _, l := range srv.Log() {
		if l == "tools/call bad-hdr" {
			t.Error("mcpx called a tool with an invalid x-mcp-header over HTTP")
		}
	}
	// stdio has no headers: the annotation does not matter there.
	r = run(t, "", args("tools", "call", "bad-hdr", "score=1.5", "--protocol-era", "modern", rawModern(""))...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "bad-hdr was called")
}
