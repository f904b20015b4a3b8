package featuretest

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// The acceptance checks of the client-features issue, against
// @modelcontextprotocol/server-everything: over stdio for one request of
// each kind the server sends (roots, sampling, elicitation), otherwise on
// the package's one server over Streamable HTTP (see everything).

func TestEverythingRoots(t *testing.T) {
	t.Parallel()
	srv := everythingStdio(t)
	r := run(t, "", args("tools", "call", "get-roots-list", "--root", "/tmp", "--json", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "file:///tmp")
}

func TestEverythingSampling(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	reply := filepath.Join(t.TempDir(), "reply.json")
	if err := os.WriteFile(reply, []byte(`{"role":"assistant","model":"test","content":{"type":"text","text":"Reply text from the file"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", args("tools", "call", "trigger-sampling-request", "prompt=hi", "--on-sampling", "file:"+reply, "--json", everythingStdio(t))...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "Reply text from the file")

	// Declined: the tool reports the refusal as its error result; mcpx
	// prints it and exits 5 (a tool result with isError), nothing hangs.
	r = run(t, "", args("tools", "call", "trigger-sampling-request", "prompt=hi", "--on-sampling", "decline", srv)...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stdout", r.stdout, "User rejected sampling request")
}

func TestEverythingElicitation(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	r := run(t, "", args("tools", "call", "trigger-elicitation-request", "--on-elicit", "accept-defaults", everythingStdio(t))...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, `"firstLine": "It was a dark and stormy night."`, `"integer": 42`, `"titledMultipleSelectEnum": [`)
	wantContains(t, "stderr", r.stderr, `→ answered: accept {"firstLine":"It was a dark and stormy night.","integer":42`)

	r = run(t, "", args("tools", "call", "trigger-elicitation-request", "--on-elicit", "decline", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "User declined")
	wantContains(t, "stderr", r.stderr, "→ answered: decline")

	// Field by field: the name, then Enter for every default but the
	// email, a wrong one first.
	input := "\nAda Lovelace\ny\n\nnot-an-email\nada@example.com\n\n\n\n\n\n\n\n\n\n\n"
	r = run(t, input, args("tools", "call", "trigger-elicitation-request", "--on-elicit", "prompt", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "- Name: Ada Lovelace", "- Email: ada@example.com", "- Agreed to terms: true")
	wantContains(t, "stderr", r.stderr, "Superman  [hero-1]", "Tuna  [fish-1]", "Cats  [pet-1]", "✗")
}

func TestEverythingURLElicitation(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	r := run(t, "", args("tools", "call", "trigger-url-elicitation", "url=https://example.com/pay", "--on-elicit", "decline", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "User declined to open the URL")
}

func TestEverythingProgress(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	r := run(t, "", args("tools", "call", "trigger-long-running-operation", "duration=2", "steps=4", srv)...)
	r.wantCode(t, cmd.ExitOK)
	if n := len(regexp.MustCompile(`(?m)^progress: \d/4`).FindAllString(r.stderr, -1)); n != 4 {
		t.Errorf("want 4 progress lines on stderr, got %d", n)
	}
}

func TestEverythingLoggingLinger(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	// The server logs once at once and then every 5 seconds.
	r := run(t, "", args("tools", "call", "toggle-simulated-logging", "--log-level", "debug", "--linger", "7s", srv)...)
	r.wantCode(t, cmd.ExitOK)
	if n := len(regexp.MustCompile(`(?m)^\[(debug|info|notice|warning|error|critical|alert|emergency)\] .*-level message|Alert level-message`).FindAllString(r.stderr, -1)); n < 2 {
		t.Errorf("want at least 2 server log lines (one during the call, one while lingering), got %d", n)
	}
}

func TestEverythingSubscriberUpdates(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	// Toggling updates without a subscription only starts the timer;
	// subscribe itself is acknowledged with a log line and undone on exit.
	r := run(t, "", args("tools", "call", "toggle-subscriber-updates", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "Started simulated resource updated notifications")

	r = run(t, "", args("resources", "subscribe", "demo://resource/static/document/architecture.md", "--for", "500ms", "--log-level", "debug", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "Received Subscribe Resource request for URI: demo://resource/static/document/architecture.md")
}

// Each case waits for the server's simulated research (seconds): they
// run side by side.
func TestEverythingTasks(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	t.Run("task", func(t *testing.T) {
		t.Parallel()
		r := run(t, "", args("tools", "call", "simulate-research-query", "topic=python", "--task", "--ttl", "60s", srv)...)
		r.wantCode(t, cmd.ExitOK)
		wantContains(t, "stdout", r.stdout, "# Research Report: python")
		wantContains(t, "stderr", r.stderr, ": working — Gathering sources...", ": completed")
	})

	// Without --task, the hint says what to do.
	t.Run("no task", func(t *testing.T) {
		t.Parallel()
		r := run(t, "", args("tools", "call", "simulate-research-query", "topic=python", srv)...)
		r.wantCode(t, cmd.ExitServerError)
		wantContains(t, "stderr", r.stderr, "add --task")
	})

	// input_required: the server's elicitation arrives during tasks/result.
	t.Run("input required", func(t *testing.T) {
		t.Parallel()
		r := run(t, "", args("tools", "call", "simulate-research-query", "topic=python", "ambiguous=true", "--task", "--on-elicit", "decline", srv)...)
		r.wantCode(t, cmd.ExitOK)
		wantContains(t, "stderr", r.stderr, ": input_required — ", "server request elicitation/create", "→ answered: decline")
		wantContains(t, "stdout", r.stdout, "User declined - using default interpretation")
	})
}

func TestEverythingTaskCancel(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Interrupt once the task reports its second stage.
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmd.Run(ctx, args("tools", "call", "simulate-research-query", "topic=x", "--task", "--wire", srv), &cmd.IOStreams{
			In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" },
		})
	}()
	if !testwait.Poll(testwait.Bound, func() bool { return strings.Contains(errOut.String(), "Analyzing content") }) {
		t.Fatalf("the task never progressed:\n%s", errOut.String())
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("mcpx did not end after the interrupt")
	}
	t.Logf("stderr:\n%s", errOut.String())
	if code != cmd.ExitInterrupted {
		t.Errorf("exit %d, want %d", code, cmd.ExitInterrupted)
	}
	wantContains(t, "stderr", errOut.String(), `"method":"tasks/cancel"`, ": cancelled")
	if strings.Contains(errOut.String(), `"method":"notifications/cancelled"`) {
		t.Error("a task is cancelled with tasks/cancel, never notifications/cancelled")
	}
}

func TestEverythingClientTasks(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	reply := filepath.Join(t.TempDir(), "reply.json")
	if err := os.WriteFile(reply, []byte(`{"content":{"type":"text","text":"answered as a task"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", args("tools", "call", "trigger-sampling-request-async", "prompt=hi", "--on-sampling", "file:"+reply, srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "[COMPLETED] Async sampling completed!", "answered as a task", "io.modelcontextprotocol/related-task")
	// The server polls tasks/get only while the task is still working; mcpx
	// may have finished it by the time the task is created.
	wantContains(t, "stderr", r.stderr, "(as a task)", "server request tasks/result")

	r = run(t, "", args("tools", "call", "trigger-elicitation-request-async", "--on-elicit", "decline", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, `"action": "decline"`)
}

// The URLElicitationRequiredError path: consent, the browser, retry; the
// retry then goes through the request path, asked for consent again.
func TestEverythingURLElicitationRequired(t *testing.T) {
	srv := everything(t) // before t.Parallel: see everything
	t.Parallel()
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1\" >> "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runInput(t, "y\ny\ny\n", map[string]string{"BROWSER": script}, args("tools", "call", "trigger-url-elicitation", "url=https://example.com/pay", "errorPath=true", "--on-elicit", "prompt", srv)...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "User completed the URL elicitation flow", "URL: https://example.com/pay")
	wantContains(t, "stderr", r.stderr, "URL:  https://modelcontextprotocol.io", "retry the request?", "URL:  https://example.com/pay")

	// Declined by policy: the error is reported as it is.
	r = run(t, "", args("tools", "call", "trigger-url-elicitation", "url=https://example.com/other", "errorPath=true", "--on-elicit", "decline", srv)...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stderr", r.stderr, "-32042", "→ decline")
}
