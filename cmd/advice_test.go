package cmd

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/servers"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
)

// An initialize that got no answer in the legacy era suggests the era
// that would find out; in auto (which did) or modern it would not help,
// nor when the server answered the POST with a stream.
func TestSessionHint(t *testing.T) {
	err := fmt.Errorf("initialize: %w", &inspector.TimeoutError{Method: "initialize", After: time.Second})
	if got := sessionHint(err, hintFacts{era: eraLegacy}); !strings.Contains(got, "--protocol-era auto finds out") {
		t.Errorf("legacy: %q", got)
	}
	for _, f := range []hintFacts{{era: eraAuto}, {era: eraModern}} {
		if got := sessionHint(err, f); got != "" {
			t.Errorf("%s: %q", f.era, got)
		}
	}
	// A server that answered with a stream did answer: that is said instead.
	streamed := fmt.Errorf("initialize: %w", &inspector.TimeoutError{Method: "initialize", After: time.Second, Awaiting: "the server answered POST U with an SSE stream, but has sent no response on it"})
	if got := sessionHint(streamed, hintFacts{era: eraLegacy}); got != " (the server answered POST U with an SSE stream, but has sent no response on it)" {
		t.Errorf("a stream that carried nothing: %q", got)
	}
	other := fmt.Errorf("tools/list: %w", &inspector.TimeoutError{Method: "tools/list", After: time.Second})
	if got := sessionHint(other, hintFacts{era: eraLegacy}); got != "" {
		t.Errorf("tools/list: %q", got)
	}
}

// The libraries' typed errors get their command-line advice here, after
// their own text and before what the error chain adds: the lines people
// see are those mcpx printed when the libraries named the flags.
func TestAdvice(t *testing.T) {
	rpc := &jsonrpc.Error{Code: -32601, Message: "Method not found"}
	cursorC1 := "c1"
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"era: modern", fmt.Errorf("initialize: %w", &inspector.EraError{Looks: "modern", Err: rpc}),
			"initialize: server error -32601 (method not found): Method not found; the server looks like a 2026-07-28 (stateless) server: use --protocol-era modern (or auto)"},
		{"era: legacy", &inspector.EraError{Looks: "legacy", Err: errors.New("server/discover: boom")},
			"server/discover: boom; the server looks like a handshake-era (initialize) server: use --protocol-era legacy (or auto)"},
		// The era came from --protocol-version: --protocol-era legacy with
		// it is refused, so the advice leaves it out.
		{"era: legacy, chosen by the version", markVersionEra(&inspector.EraError{Looks: "legacy", Err: errors.New("server/discover: boom")}, "2026-07-28"),
			"server/discover: boom; the server looks like a handshake-era (initialize) server: use --protocol-era legacy without --protocol-version 2026-07-28, a version of the other era (or --protocol-era auto)"},
		{"era: modern, a handshake-era version offered", markVersionEra(fmt.Errorf("initialize: %w", &inspector.EraError{Looks: "modern", Err: rpc}), "2025-06-18"),
			"initialize: server error -32601 (method not found): Method not found; the server looks like a 2026-07-28 (stateless) server: use --protocol-era modern without --protocol-version 2025-06-18, a version of the other era (or --protocol-era auto)"},
		// A version of the era the server speaks, or one mcpx does not
		// know, changes nothing.
		{"era: legacy, a version of its era", markVersionEra(&inspector.EraError{Looks: "legacy", Err: errors.New("server/discover: boom")}, "2025-06-18"),
			"server/discover: boom; the server looks like a handshake-era (initialize) server: use --protocol-era legacy (or auto)"},
		{"both eras fail: nothing to add", fmt.Errorf("initialize: %w", &inspector.EraError{Looks: "modern", Err: rpc, Other: errors.New("server/discover: not a DiscoverResult")}),
			"initialize: server error -32601 (method not found): Method not found; the server looks like a 2026-07-28 (stateless) server, but that era fails too: server/discover: not a DiscoverResult"},
		{"no string version: nothing to add", fmt.Errorf("initialize: %w", &inspector.VersionError{Offered: "2025-11-25", Invalid: "null"}),
			`initialize: the server's initialize result has protocolVersion null, not a string naming a version (offered "2025-11-25"; spec basic/lifecycle, "Version Negotiation")`},
		{"probe failed", fmt.Errorf("server/discover: %w", &inspector.ProbeError{Err: errors.New("POST http://x/mcp: HTTP 500 Internal Server Error")}),
			"server/discover: POST http://x/mcp: HTTP 500 Internal Server Error (the probe for the server's protocol era); --protocol-era legacy or modern opens the session without it"},
		{"handshake-era versions", &inspector.UnsupportedVersionError{Requested: "2026-07-28", Supported: []string{"2025-06-18"}},
			"the server does not support protocol version 2026-07-28 (it supports 2025-06-18); those are handshake-era versions: use --protocol-era legacy (or auto)"},
		{"modern versions: nothing to add", &inspector.UnsupportedVersionError{Requested: "2026-07-28", Supported: []string{"2099-01-01"}},
			"the server does not support protocol version 2026-07-28 (it supports 2099-01-01)"},
		{"version", fmt.Errorf("initialize: %w", &inspector.VersionError{Offered: "2025-11-25", Got: "2099-01-01"}),
			`initialize: server chose protocol version "2099-01-01", which mcpx does not speak (offered "2025-11-25"; mcpx speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05); try --protocol-version with one the server supports`},
		{"a stateless version: the era", fmt.Errorf("initialize: %w", &inspector.VersionError{Offered: "2025-11-25", Got: "2026-07-28"}),
			`initialize: server chose protocol version "2026-07-28", a stateless revision, which has no initialize handshake (offered "2025-11-25"; in the handshake mcpx speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05): use --protocol-era modern (or auto)`},
		{"no version: nothing to add", fmt.Errorf("initialize: %w", &inspector.VersionError{Offered: "2025-11-25"}),
			`initialize: the server's initialize result has no protocolVersion, which it must name (offered "2025-11-25"; spec basic/lifecycle, "Version Negotiation")`},
		{"missing capabilities", &inspector.MissingCapabilityError{Required: json.RawMessage(`{"roots":{},"sampling":{"tools":{}}}`), Err: errors.New("tools/call: refused")},
			"tools/call: refused; the request needs the client capabilities roots, sampling.tools (--root PATH declares roots; sampling is declared unless --no-sampling)"},
		{"not found", &inspector.NotFoundError{Kind: "prompt", Name: "x", Err: errors.New("prompts/get: refused")},
			`prompts/get: refused (the server lists no prompt "x"); see ` + "`mcpx prompts list`"},
		{"not found, with suggestions", &inspector.NotFoundError{Kind: "tool", Name: "ech", Suggestions: []string{"echo"}, Err: errors.New("tools/call: refused")},
			`tools/call: refused (the server has no tool "ech"; did you mean echo?)`},
		{"a number too large to check", fmt.Errorf("the arguments of tool %q cannot be checked against its inputSchema: %w", "t", &inspector.NumberRangeError{At: "/u", Number: "1e999"}),
			`the arguments of tool "t" cannot be checked against its inputSchema: at /u: 1e999 is out of the range of the numbers mcpx can check (about ±1.8e308) (--no-validate sends the call as typed)`},
		{"a number too large to check, as key=value", &inspector.ArgumentError{Key: "n", Value: "1e999", Reason: "1e999 is out of the range of the numbers mcpx can check (about ±1.8e308)", Err: &inspector.NumberRangeError{Number: "1e999"}},
			`argument n=1e999: 1e999 is out of the range of the numbers mcpx can check (about ±1.8e308) (--no-validate sends the call as typed)`},
		{"task required", fmt.Errorf("%w (%w)", errors.New("tools/call: refused"), inspector.ErrTaskRequired),
			"tools/call: refused (the tool requires task execution); add --task"},
		{"task timeout", fmt.Errorf("tools/call: %w", &inspector.TaskTimeoutError{TaskID: "t1", Status: "working", After: 5 * time.Second, Cancelled: true}),
			"tools/call: task t1 still working: no status change in 5s; tasks/cancel sent (a longer --timeout waits longer between status changes; --timeout 0, as long as --max-timeout)"},
		{"task timeout, maximum", &inspector.TaskTimeoutError{TaskID: "t1", Status: "working", After: time.Minute, Max: true},
			"task t1 still working after 1m0s (the maximum total time, even with status changes) (--max-timeout waits longer)"},
		{"pagination", &inspector.IncompleteListError{Method: "tools/list", Pages: 3, Items: 7, Cursor: &cursorC1,
			Err: &inspector.PaginationError{Method: "tools/list", Cursor: "c1", Repeated: true, Pages: 3}},
			`tools/list: server returned cursor "c1" twice; stopping to avoid a loop; the list stops after 7 items from 3 pages (use --cursor to fetch pages one by one)`},
		// A cursor that is not a string cannot be given to --cursor.
		{"list stopped at a cursor that is not a string", &inspector.IncompleteListError{Method: "tools/list", Pages: 1, Items: 1,
			Err: errors.New("tools/list: nextCursor is 5, not a string")},
			`tools/list: nextCursor is 5, not a string; the list stops after 1 item from 1 page`},
		{"skills undeclared", fmt.Errorf("skills list: %w", &inspector.ExtensionNotDeclaredError{Extension: "io.modelcontextprotocol/skills", Method: "skills/list"}),
			"skills list: the server does not declare the io.modelcontextprotocol/skills extension (it declares no extensions), so skills/list is not sent; any skill files it serves are ordinary resources (`mcpx resources list`, `mcpx resources read URI`)"},
		{"directoryRead undeclared", &inspector.ExtensionNotDeclaredError{Extension: "io.modelcontextprotocol/skills", Setting: "directoryRead", Method: "resources/directory/read"},
			"the server declares the io.modelcontextprotocol/skills extension without directoryRead: true, so resources/directory/read may not be sent to it; `mcpx skills get URI` lists a skill's files"},
		{"another extension: nothing to add", &inspector.ExtensionNotDeclaredError{Extension: "io.example/other", Method: "other/x"},
			"the server does not declare the io.example/other extension (it declares no extensions), so other/x is not sent"},
		{"stored tokens only", &oauthflow.NoTokenError{ServerURL: "https://mcp.example/mcp", StoredOnly: true},
			"authorization needs a person: no usable stored token for https://mcp.example/mcp, and only stored tokens may be used (--stored-auth-only forbids a new authorization: run `mcpx auth login --url https://mcp.example/mcp` first)"},
		{"no stored token", &oauthflow.NoTokenError{ServerURL: "https://mcp.example/mcp"},
			"no usable stored token for https://mcp.example/mcp (run `mcpx auth login --url https://mcp.example/mcp`)"},
		{"client moved", &oauthflow.ClientError{Problem: oauthflow.ClientMoved, Detail: "… register mcpx with https://as2.example"},
			"… register mcpx with https://as2.example and pass that client's --client-id"},
		{"no static client", &oauthflow.ClientError{Problem: oauthflow.NeedsStaticClient, Detail: "no client for https://as.example"},
			"no client for https://as.example: give --client-id (or --client-metadata-url where it supports client ID metadata documents)"},
		{"frame too large", fmt.Errorf("initialize: %w", transport.ErrFrameTooLarge),
			"initialize: " + transport.ErrFrameTooLarge.Error() + "; raise the limit with --max-message-size"},
		// The open session's limit was set when it opened: the command's
		// --max-message-size does not raise it.
		{"message too large for the session", fmt.Errorf("tools/call: %w", &sessiond.MessageTooLargeError{Name: "dev", Size: 2 << 20, Limit: 1 << 20}),
			"tools/call: a message of 2 MiB is longer than the 1 MiB session dev takes (its maximum message size, set when it opened) (mcpx disconnect dev, then mcpx connect dev --max-message-size SIZE opens it with a larger limit)"},
		// An answer over the open session's limit: the same.
		{"answer too large for the session", fmt.Errorf("tools/list: %w", &sessiond.AnswerTooLargeError{Name: "dev", Limit: 64 << 10}),
			"tools/list: the server's answer exceeds the maximum message size of session dev (64 KiB) (mcpx disconnect dev, then mcpx connect dev --max-message-size SIZE opens it with a larger limit)"},
		// An SSE field's cap is not the maximum message size.
		{"SSE field too long", fmt.Errorf("tools/list: %w", &transport.SSEFieldTooLongError{Field: "id", Limit: 4096}),
			"tools/list: an SSE id field is longer than 4 KiB, the most mcpx takes for one"},
		// Unless the maximum message size was the cap.
		{"SSE field longer than a small maximum message size", fmt.Errorf("tools/list: %w", &transport.SSEFieldTooLongError{Field: "id", Limit: 100, MessageSize: true}),
			"tools/list: an SSE id field is longer than the maximum message size (100 bytes); raise the limit with --max-message-size"},
		{"answer in an event with an SSE field too long", fmt.Errorf("tools/list: %w", (&transport.SkippedMessageError{What: "an SSE event", Whole: true, Limit: 1 << 20,
			Field: &transport.SSEFieldTooLongError{Field: "id", Limit: 4096}})),
			"tools/list: an SSE event was dropped: an SSE id field is longer than 4 KiB, the most mcpx takes for one"},
		{"server name", &servers.NotFoundError{Ref: "github"},
			"no server named \"github\" in any configuration file; `mcpx servers` lists the servers found (or give the server command after --, or --url URL)"},
		// A mistyped name: the closest the files define.
		{"server name mistyped", &servers.NotFoundError{Ref: "githbu", Names: []string{"everything", "github", "gitlab"}},
			"no server named \"githbu\" in any configuration file (did you mean github, gitlab?); `mcpx servers` lists the servers found (or give the server command after --, or --url URL)"},
		// mcpx repl @dev: a session's name where a server's goes.
		{"session name in a server's place", &servers.NotFoundError{Ref: "@dev"},
			"no server named \"@dev\" in any configuration file; a session of mcpx connect is named by @NAME as mcpx's first argument (mcpx @NAME repl, mcpx @NAME tools list)"},
		{"a resource template read as a URI", &inspector.NotFoundError{Kind: "resource", Name: "a://{b}", Template: true, Err: errors.New("resources/read: not found")},
			"resources/read: not found (\"a://{b}\" is one of the server's resource templates: read a URI made from it, each {variable} replaced by a value); give its variables values after it (mcpx resources read 'a://{b}' b=VALUE), or see `mcpx resources templates`"},
		{"nothing to add", errors.New("boom"), "boom"},
	} {
		if got := errorMessage(tc.err); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

// The advice comes before the data the error chain carries.
func TestAdviceBeforeData(t *testing.T) {
	err := &inspector.NotFoundError{Kind: "resource", Name: "test://nope",
		Err: fmt.Errorf("resources/read: %w", &jsonrpc.Error{Code: -32602, Message: "Resource not found", Data: json.RawMessage(`{"uri":"test://nope"}`)})}
	got := errorMessage(err)
	if want := `(the server lists no resource "test://nope"); see ` + "`mcpx resources list`" + ` (data: {"uri":"test://nope"})`; !strings.HasSuffix(got, want) {
		t.Errorf("got %s\nwant …%s", got, want)
	}
}

// httpHint after a connection or HTTP failure: TLS spoken to a plain HTTP
// server is not a certificate matter, a transport asked for that the
// server does not speak points at the other one (or auto), and a refusal
// from another origin a redirect led to is no verdict on the credentials,
// which did not go there.
func TestHTTPHintTransportAndTLS(t *testing.T) {
	connect := func(err error) error { return fmt.Errorf("%w: POST https://x/mcp: %w", transport.ErrConnect, err) }
	sse := hintFacts{mode: transport.ModeSSE, modeReason: "chosen with --transport sse"}
	streamable := hintFacts{mode: transport.ModeStreamable, modeReason: "chosen with --transport http"}
	for _, tc := range []struct {
		name string
		err  error
		f    hintFacts
		want string
	}{
		{"https to plain HTTP", connect(tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}), hintFacts{},
			" (the server does not speak TLS at that address; for a plain HTTP server, use an http:// URL)"},
		{"https to plain HTTP, net/http's words", connect(errors.New("http: server gave HTTP response to HTTPS client")), hintFacts{},
			" (the server does not speak TLS at that address; for a plain HTTP server, use an http:// URL)"},
		{"unknown CA", connect(x509.UnknownAuthorityError{}), hintFacts{},
			" (if the server's certificate comes from a private CA, trust it with --ca-cert FILE)"},
		{"sse's GET refused", &transport.HTTPError{Method: "GET", Status: 400}, sse,
			" (the URL was reached as a legacy HTTP+SSE server, chosen with --transport sse; for a Streamable HTTP server use --transport http, or auto to find out)"},
		{"sse's GET: 405", &transport.HTTPError{Method: "GET", Status: 405}, sse, "for a Streamable HTTP server use --transport http"},
		{"sse's GET: 500 says nothing of the transport", &transport.HTTPError{Method: "GET", Status: 500}, sse, ""},
		{"streamable's POST: 404", &transport.HTTPError{Method: "POST", Status: 404}, streamable,
			" (the URL was reached as a Streamable HTTP server, chosen with --transport http; for a legacy HTTP+SSE server use --transport sse, or auto to find out)"},
		{"streamable's POST: 400 is the server's word on the request", &transport.HTTPError{Method: "POST", Status: 400}, streamable, ""},
		{"auto tried both", &transport.HTTPError{Method: "GET", Status: 405}, hintFacts{mode: transport.ModeAuto}, ""},
		{"auto tried both, and found nothing at the path", &transport.HTTPError{Method: "GET", Status: 404}, hintFacts{mode: transport.ModeAuto},
			" (nothing answers MCP at that URL's path: check it; a server's endpoint is often /mcp, or /sse for HTTP+SSE)"},
		{"refused by another origin, the bearer token left behind", &transport.UnauthorizedError{Method: "GET", Status: 401, LeftOrigin: true}, hintFacts{bearer: true},
			" (a redirect led to another origin, which mcpx sends no credentials to; if that is the server's own address, give it as --url)"},
		{"refused with the bearer token", &transport.UnauthorizedError{Method: "GET", Status: 401}, hintFacts{bearer: true}, " (the server refused the bearer token)"},
		{"refused over a socket, where OAuth is off", &transport.UnauthorizedError{Method: "POST", URL: "unix:///tmp/s.sock#/mcp", Status: 401}, hintFacts{narrated: true},
			" (mcpx does not use OAuth over a socket; --bearer TOKEN or -H 'Authorization: …' sends credentials)"},
		{"refused over a socket with the bearer token", &transport.UnauthorizedError{Method: "POST", URL: "unix:///tmp/s.sock#/mcp", Status: 401}, hintFacts{bearer: true},
			" (the server refused the bearer token)"},
	} {
		got := httpHint(tc.err, tc.f)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// The legacy era's hint that a 2026-07-28 server may not answer
	// initialize is not given over HTTP+SSE, which that revision does not
	// run over.
	err := fmt.Errorf("initialize: %w", &inspector.TimeoutError{Method: "initialize", After: time.Second})
	if got := sessionHint(err, hintFacts{era: eraLegacy, mode: transport.ModeSSE}); got != "" {
		t.Errorf("sessionHint over HTTP+SSE: %q", got)
	}
}
