package cmd

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/tui"
)

// The stateless 2026-07-28 era over HTTP, end to end through the commands:
// --record, mcpx replay --listen, mcpx verify --url, mcpx proxy --listen
// and trace show, against the Go SDK's stateless server.
func TestModernRecordReplayVerifyHTTP(t *testing.T) {
	t.Parallel()
	u := testservers.Modern(t, testservers.NewModernServer(nil, nil))
	changedSrv := testservers.NewModernServer(nil, nil)
	testservers.ChangeEcho(changedSrv)
	changed := testservers.Modern(t, changedSrv)
	dir := t.TempDir()
	modern := func(args ...string) []string { return append(args, "--protocol-era", "modern") }

	list := filepath.Join(dir, "list.jsonl")
	live := runMcpx(t, nil, modern("tools", "list", "--json", "--url", u, "--record", list)...)
	if live.code != 0 || !strings.Contains(live.stdout, `"region"`) {
		t.Fatalf("record: exit %d\n%s\n%s", live.code, live.stdout, live.stderr)
	}
	calls := filepath.Join(dir, "calls.jsonl")
	name := filepath.Join(dir, "name.json")
	os.WriteFile(name, []byte(`{"name":"Ada"}`), 0o644)
	for _, args := range [][]string{
		{"tools", "call", "echo", "message=hello"},
		{"tools", "call", "region", "region=eu west", "priority=7"},
		{"tools", "call", "confirm", "--on-elicit", "file:" + name},
	} {
		// One trace per command; the last one is kept for verify.
		if r := runMcpx(t, nil, modern(append(args, "--url", u, "--record", calls)...)...); r.code != 0 {
			t.Fatalf("%q: exit %d: %s", args, r.code, r.stderr)
		}
		tr, _ := readTraceFile(t, calls)
		if res := runMcpx(t, nil, "verify", calls, "--url", u); res.code != 0 {
			t.Errorf("verify %q: exit %d\n%s\n%s", args, res.code, res.stdout, res.stderr)
		}
		if args[2] == "echo" {
			// The changed server's echo differs: exit 7, naming it.
			res := runMcpx(t, nil, "verify", calls, "--url", changed)
			if res.code != ExitMismatch || !strings.Contains(res.stdout, "$.result.content[0].text") || !strings.Contains(res.stdout, `+ live:     "Echo! hello"`) {
				t.Errorf("verify against the changed server: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
			}
		}
		if len(tr.Frames()) == 0 || tr.Header.Minor != record.Minor {
			t.Errorf("%q: trace %+v", args, tr.Header)
		}
	}

	// The recording, replayed over HTTP (strictly), lists the same tools
	// to a modern client, and to one that has to find out the era.
	addr := freeAddr(t)
	stop := background(t, "replay", list, "--strict", "--listen", addr)
	waitListening(t, addr)
	for _, era := range []string{"modern", "auto"} {
		r := runMcpx(t, nil, "tools", "list", "--json", "--protocol-era", era, "--url", "http://"+addr+"/mcp")
		if r.code != 0 || r.stdout != live.stdout {
			t.Errorf("replayed (%s): exit %d\n%s\nwant\n%s\n%s", era, r.code, r.stdout, live.stdout, r.stderr)
		}
	}
	if rr := stop(); rr.code != ExitInterrupted || strings.Contains(rr.stderr, "replay:") {
		t.Errorf("replay: exit %d\n%s", rr.code, rr.stderr)
	}

	// The proxy passes the session through and records it with routes.
	proxied := filepath.Join(dir, "proxied.jsonl")
	addr = freeAddr(t)
	stop = background(t, "proxy", "--listen", addr, "--url", u, "--record", proxied)
	waitListening(t, addr)
	r := runMcpx(t, nil, modern("tools", "call", "region", "region=eu west", "priority=7", "--url", "http://"+addr+"/mcp")...)
	if r.code != 0 || !strings.Contains(r.stdout, "Mcp-Param-Region=eu west Mcp-Param-Priority=7") {
		t.Fatalf("through the proxy: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	stop()
	if res := runMcpx(t, nil, "verify", proxied, "--url", u); res.code != 0 {
		t.Errorf("verify the proxy's trace: exit %d\n%s\n%s", res.code, res.stdout, res.stderr)
	}
	show := runMcpx(t, nil, "trace", "show", proxied)
	for _, want := range []string{"era: modern (2026-07-28", "→ server/discover #1  mcpx ", `region {"region":"eu west","priority":7} [Mcp-Param-Priority: 7, Mcp-Param-Region: eu west]`} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("trace show lacks %q:\n%s", want, show.stdout)
		}
	}
	show = runMcpx(t, nil, "trace", "show", "--json", proxied)
	var doc struct {
		Era    string `json:"era"`
		Events []struct {
			Method string `json:"method"`
			Route  *struct {
				Name   string `json:"name"`
				Params []struct{ Name, Value string }
			} `json:"route"`
		} `json:"events"`
	}
	if err := json.Unmarshal([]byte(show.stdout), &doc); err != nil || doc.Era != "modern" {
		t.Fatalf("trace show --json: %v\n%s", err, show.stdout)
	}
	found := false
	for _, e := range doc.Events {
		found = found || e.Route != nil && e.Route.Name == "region" && len(e.Route.Params) == 2
	}
	if !found {
		t.Errorf("no region route in trace show --json:\n%s", show.stdout)
	}
}

// --redact and secret-looking names reach mirrored arguments: neither the
// route nor the HTTP events of the trace give the value away.
func TestModernRecordRedactsMirroredArguments(t *testing.T) {
	t.Parallel()
	u := testservers.Modern(t, testservers.NewModernServer(nil, nil))
	file := filepath.Join(t.TempDir(), "r.jsonl")
	r := runMcpx(t, nil, "tools", "call", "region", "region=SECRET-REGION", "--protocol-era", "modern", "--url", u, "--record", file,
		"--redact", "$.params.arguments.region", "--redact", "$..text")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	tr, raw := readTraceFile(t, file)
	if strings.Contains(raw, "SECRET-REGION") {
		t.Errorf("the trace holds the redacted value:\n%s", raw)
	}
	var routed bool
	for _, e := range tr.Frames() {
		if e.Route != nil && e.Route.Name == "region" {
			routed = len(e.Route.Params) == 1 && e.Route.Params[0].Value == record.Placeholder
		}
	}
	if !routed {
		t.Errorf("no redacted region route in:\n%s", raw)
	}
}

// A session that found out the era (auto) against a handshake-era server
// records the probe (answered, or refused without an answer as some
// servers do), then the handshake; replayed, it behaves the same, and the
// auto client takes the same path.
func TestAutoEraRecordingReplaysHTTP(t *testing.T) {
	t.Parallel()
	refuse := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") == "server/discover" {
				http.Error(w, "Bad Request: Server not initialized", http.StatusBadRequest)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	for name, wrap := range map[string]func(http.Handler) http.Handler{"answered": nil, "refused": refuse} {
		t.Run(name, func(t *testing.T) {
			u := sdkURL(t, wrap)
			file := filepath.Join(t.TempDir(), "auto.jsonl")
			// info says which era auto chose, and why.
			live := runMcpx(t, nil, "info", "--protocol-era", "auto", "--url", u, "--record", file)
			if live.code != 0 {
				t.Fatalf("record: exit %d: %s", live.code, live.stderr)
			}
			if tr, _ := readTraceFile(t, file); tui.Era(tr) != "modern+legacy" {
				t.Errorf("era %q", tui.Era(tr))
			}
			// Verify re-sends the probe too; its refusal (as recorded)
			// does not end the verification.
			if v := runMcpx(t, nil, "verify", file, "--url", u); v.code != 0 {
				t.Errorf("verify: exit %d\n%s\n%s", v.code, v.stdout, v.stderr)
			}
			addr := freeAddr(t)
			stop := background(t, "replay", file, "--strict", "--listen", addr)
			waitListening(t, addr)
			r := runMcpx(t, nil, "info", "--protocol-era", "auto", "--timeout", "10s", "--url", "http://"+addr+"/mcp")
			if era := eraLine(live.stdout); r.code != 0 || era == "" || eraLine(r.stdout) != era {
				t.Errorf("replayed: exit %d\n%s\nwant\n%s\n%s", r.code, r.stdout, live.stdout, r.stderr)
			}
			if rr := stop(); rr.code != ExitInterrupted || strings.Contains(rr.stderr, "replay:") {
				t.Errorf("replay: exit %d\n%s", rr.code, rr.stderr)
			}
		})
	}
}

// eraLine returns info's Era line.
func eraLine(info string) string {
	for _, l := range strings.Split(info, "\n") {
		if strings.HasPrefix(l, "Era:") {
			return l
		}
	}
	return ""
}
