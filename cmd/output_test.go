package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// failingWriter is a standard output whose writes fail with err (after
// the first ok bytes, when ok > 0), counting the writes that reach it.
type failingWriter struct {
	err    error
	ok     int
	writes atomic.Int32
	buf    bytes.Buffer
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes.Add(1)
	if w.buf.Len()+len(p) <= w.ok {
		return w.buf.Write(p)
	}
	return 0, w.err
}

// runWithOut runs mcpx in-process with out as its standard output.
func runWithOut(t *testing.T, out *failingWriter, args ...string) runResult {
	t.Helper()
	ios, _, errOut := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
	ios.Out = out
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, args, ios)
	return runResult{code: code, stdout: out.buf.String(), stderr: errOut.String()}
}

func TestFailedStdoutIsAnError(t *testing.T) {
	t.Parallel()
	u := sdkURL(t, nil)
	enospc := &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}

	r := runWithOut(t, &failingWriter{err: enospc}, "tools", "call", "echo", "message=hi", "--url", u)
	if r.code != ExitError || r.stderr != "mcpx: writing to standard output: no space left on device\n" {
		t.Errorf("plain: exit %d, stderr %q", r.code, r.stderr)
	}

	r = runWithOut(t, &failingWriter{err: enospc}, "tools", "list", "--json", "--url", u)
	var e struct {
		Error struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			ExitCode int    `json:"exitCode"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &e); err != nil || r.code != ExitError ||
		e.Error.Message != "writing to standard output: no space left on device" || e.Error.ExitCode != 1 {
		t.Errorf("--json: exit %d, stderr %q (%v)", r.code, r.stderr, err)
	}

	// A closed pipe (mcpx … | head -1) stays a quiet, successful end.
	r = runWithOut(t, &failingWriter{err: &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.EPIPE}},
		"tools", "list", "--url", u)
	if r.code != ExitOK || strings.Contains(r.stderr, "standard output") || strings.Contains(r.stderr, "interrupted") {
		t.Errorf("closed pipe: exit %d, stderr %q", r.code, r.stderr)
	}

	// Help goes to stdout too.
	if r := runWithOut(t, &failingWriter{err: enospc}, "--help"); r.code != ExitError ||
		!strings.HasPrefix(r.stderr, "mcpx: writing to standard output: ") {
		t.Errorf("--help: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestFailedStdoutStopsLongCommands: the REPL and watch stop at the
// first output they cannot write instead of going on for nothing.
func TestFailedStdoutStopsLongCommands(t *testing.T) {
	t.Parallel()
	srv := testservers.NewServer()
	u := testservers.Streamable(t, srv, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go testservers.ChangeTools(ctx, srv, 20*time.Millisecond)
	enospc := &os.PathError{Op: "write", Path: "/dev/stdout", Err: syscall.ENOSPC}

	script := filepath.Join(t.TempDir(), "script")
	os.WriteFile(script, []byte("tools list\n:sleep 25s\nping\n"), 0o644)
	start := time.Now()
	out := &failingWriter{err: enospc}
	r := runWithOut(t, out, "repl", "-f", script, "--url", u)
	// The tools the server keeps changing are announced on stderr, which
	// works; the failure is reported once, last.
	if r.code != ExitError || !strings.HasSuffix(r.stderr, "mcpx: writing to standard output: no space left on device\n") ||
		strings.Count(r.stderr, "standard output") != 1 || strings.Contains(r.stderr, "interrupted") {
		t.Errorf("REPL: exit %d, stderr %q", r.code, r.stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("the REPL went on for %s after its output failed", d)
	}

	start = time.Now()
	out = &failingWriter{err: enospc}
	r = runWithOut(t, out, "watch", "--for", "25s", "--json", "--url", u)
	if r.code != ExitError || !strings.Contains(r.stderr, `"message":"writing to standard output: no space left on device"`) {
		t.Errorf("watch: exit %d, stderr %q", r.code, r.stderr)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("watch went on for %s after its output failed", d)
	}
	if n := out.writes.Load(); n != 1 {
		t.Errorf("%d writes reached the failed output, want 1", n)
	}
}

// TestWatchJSONLinesAsSent: watch --json prints each notification as the
// server sent it, on one line: "<" not rewritten as \u003c, numbers with
// their digits, and only what a terminal must not get raw (a C1 control)
// escaped, as JSON.
func TestWatchJSONLinesAsSent(t *testing.T) {
	msgs, _, err := jsonrpc.DecodeFrame([]byte(`{"jsonrpc":"2.0", "method":"notifications/message","params":{"level":"info","data":{"t":"<b>&","n":12345678901234567890,"c":"` + "\u009b" + `"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	ios, stdout, _ := NewTestIOStreams(nil)
	notificationPrinter(ios, output{json: true})(msgs[0])
	want := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"t":"<b>&","n":12345678901234567890,"c":"\u009b"}}}` + "\n"
	if got := stdout.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// Binary contents a command summarises say how to get them with what
// that command has: prompts get has no -o, so its hint names --json only;
// resources read and tools call offer -o.
func TestBinaryHintNamesTheCommandsFlags(t *testing.T) {
	t.Parallel()
	srv := testservers.NewServer()
	srv.AddPrompt(&sdk.Prompt{Name: "blobby"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
		return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.EmbeddedResource{
			Resource: &sdk.ResourceContents{URI: "test://b", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}}}}}, nil
	})
	srv.AddResource(&sdk.Resource{URI: "test://b", Name: "b"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: "test://b", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}}}, nil
	})
	// -o writes one content: the first contents of a resource, a tool
	// result's first binary block. Only that one's summary offers -o.
	srv.AddResource(&sdk.Resource{URI: "test://two", Name: "two"}, func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{
			{URI: "test://two/a", MIMEType: "text/plain", Text: "a"},
			{URI: "test://two/b", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}}}, nil
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "two"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1}},
			&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte{1, 2}}}}, nil, nil
	})
	u := testservers.Streamable(t, srv, nil, nil)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"prompts", "get", "blobby"}, "[binary: application/octet-stream, 3 B; use --json to get it]\n"},
		{[]string{"resources", "read", "test://b"}, "[binary: application/octet-stream, 3 B; use -o FILE to save it]\n"},
		{[]string{"resources", "read", "test://two"}, "[binary: application/octet-stream, 3 B; use --json to get it]\n"},
		{[]string{"tools", "call", "two"}, "[image: image/png, 1 B; use -o FILE or --json to get it]\n[audio: audio/wav, 2 B; use --json to get it]\n"},
	} {
		r := runMcpx(t, nil, append(tt.args, "--url", u)...)
		if r.code != ExitOK || !strings.HasSuffix(r.stdout, tt.want) {
			t.Errorf("%s: exit %d, stdout %q, want it to end with %q (stderr %s)", strings.Join(tt.args, " "), r.code, r.stdout, tt.want, r.stderr)
		}
	}
}
