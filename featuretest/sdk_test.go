package featuretest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cmd"
	"github.com/mcpx-dev/mcpx/internal/testwait"
)

func TestSDKRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := run(t, "", args("tools", "call", "roots", "--root", dir, "--root", "/", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "roots: file://"+filepath.ToSlash(dir)+" ("+filepath.Base(dir)+"), file:/// (/)")
	wantContains(t, "stderr", r.stderr, "server request roots/list", "→ answered: 2 roots: file://")

	// Without --root the capability is not declared: asked anyway, mcpx
	// answers "method not found" (spec: client/roots, "Error Handling").
	r = run(t, "", args("tools", "call", "roots", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stderr", r.stderr, "→ answered: error -32601")

	r = run(t, "", args("tools", "call", "roots", "--root", filepath.Join(dir, "nope"), sdkServer())...)
	r.wantCode(t, cmd.ExitUsage)
	wantContains(t, "stderr", r.stderr, "--root")
}

func TestSDKSampling(t *testing.T) {
	t.Parallel()
	reply := filepath.Join(t.TempDir(), "reply.json")
	if err := os.WriteFile(reply, []byte(`{"model":"file-model","content":{"type":"text","text":"Paris, from the file"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, "", args("tools", "call", "sample", "--on-sampling", "file:"+reply, "--json", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, `sampled by file-model`, `Paris, from the file`)
	wantContains(t, "stderr", r.stderr, `server request sampling/createMessage: 1 message, last: "What is the capital of France?", max 50 tokens`, `→ answered: assistant "Paris, from the file" (model file-model)`)

	// The person answers on the terminal, and sends the reply once
	// reviewed.
	r = run(t, "Paris, typed.\n\ns\n", args("tools", "call", "sample", "--on-sampling", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "sampled by mcpx-human", "Paris, typed.")
	wantContains(t, "stderr", r.stderr, "sdk-features 1.0.0 asks for an LLM completion", "System prompt: You are terse.", "Model preferences: hints claude; speed 0.9")

	// Declined on review: the server gets the spec's refusal (-1).
	r = run(t, "Paris, typed.\n\nd\n", args("tools", "call", "sample", "--on-sampling", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stderr", r.stderr, "Send it to the server? [s]end, [e]dit or [d]ecline:", "(declined)", "→ answered: error -1: User rejected sampling request")

	// Declined: the tool fails with the refusal, mcpx exits with 5.
	r = run(t, "", args("tools", "call", "sample", "--on-sampling", "decline", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stderr", r.stderr, "→ answered: error -1: User rejected sampling request")

	// Without a terminal, prompt is refused before anything starts.
	r = run(t, "", args("tools", "call", "sample", "--on-sampling", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitUsage)
	wantContains(t, "stderr", r.stderr, "--on-sampling prompt needs a terminal")

	// --no-sampling: not declared, so the SDK server cannot ask.
	r = run(t, "", args("tools", "call", "sample", "--no-sampling", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
}

func TestSDKSamplingWithTools(t *testing.T) {
	t.Parallel()
	r := run(t, "/tool get_weather {\"city\":\"Paris\"}\n\ns\n", args("tools", "call", "sample-tools", "--on-sampling", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "Tools (choice auto): get_weather (Get the weather)")
	wantContains(t, "stdout", r.stdout, "stop toolUse", `"name":"get_weather"`, `"city":"Paris"`)
}

func TestSDKElicitation(t *testing.T) {
	t.Parallel()
	// The SDK validates the answer against its schema.
	r := run(t, "", args("tools", "call", "elicit", "--on-elicit", "accept-defaults", sdkServer())...)
	// name is required and has no default: the SDK server rejects the
	// answer, and mcpx said why it was incomplete.
	wantContains(t, "stderr", r.stderr, "required field(s) name have no default")

	content := filepath.Join(t.TempDir(), "content.json")
	if err := os.WriteFile(content, []byte(`{"name":"Ada","age":36}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, "", args("tools", "call", "elicit", "--on-elicit", "file:"+content, sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, `action accept content {"age":36,"color":"g","name":"Ada","ok":true}`)

	if err := os.WriteFile(content, []byte(`{"name":"A"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, "", args("tools", "call", "elicit", "--on-elicit", "file:"+content, sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
	wantContains(t, "stderr", r.stderr, "does not match the requested schema")

	for _, p := range []string{"decline", "cancel"} {
		r = run(t, "", args("tools", "call", "elicit", "--on-elicit", p, sdkServer())...)
		r.wantCode(t, cmd.ExitOK)
		wantContains(t, "stdout", r.stdout, "action "+p)
		wantContains(t, "stderr", r.stderr, "→ answered: "+p)
	}

	// Field by field on the terminal: a too-short name is asked again,
	// Enter keeps defaults, the colour is chosen by its title.
	r = run(t, "\nA\nAda\n\nred\nn\n\n", args("tools", "call", "elicit", "--on-elicit", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, `action accept content {"age":30,"color":"r","name":"Ada","ok":false}`)
	wantContains(t, "stderr", r.stderr, "sdk-features 1.0.0 asks for information", "Who are you?", "✗", "Red  [r]")
}

func TestSDKURLElicitation(t *testing.T) {
	t.Parallel()
	// Consent is asked for; the browser is $BROWSER, here a command that
	// records the URL it was given (mcpx never fetches it itself).
	dir := t.TempDir()
	opened := filepath.Join(dir, "opened")
	script := filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"$1\" > "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runInput(t, "y\n", map[string]string{"BROWSER": script}, args("tools", "call", "elicit-url", "--on-elicit", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "url elicitation: accept")
	wantContains(t, "stderr", r.stderr, "URL:  https://example.com/connect", "Host: example.com", "elicitation el-1 completed (https://example.com/connect)")
	testwait.For(t, "the browser command to be given the URL", func() bool {
		b, _ := os.ReadFile(opened)
		return strings.TrimSpace(string(b)) == "https://example.com/connect"
	})

	r = run(t, "n\n", args("tools", "call", "elicit-url", "--on-elicit", "prompt", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stdout", r.stdout, "url elicitation: decline")

	// Pinned to 2025-06-18, elicitation is form-only: the URL request is
	// refused by the SDK before it reaches mcpx, or by mcpx with -32602.
	r = run(t, "", args("tools", "call", "elicit-url", "--protocol-version", "2025-06-18", "--on-elicit", "accept-defaults", sdkServer())...)
	r.wantCode(t, cmd.ExitServerError)
}

func TestSDKLoggingAndLinger(t *testing.T) {
	t.Parallel()
	r := run(t, "", args("tools", "call", "log", "--log-level", "error", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "[error] sdk: a error line")
	if strings.Contains(r.stderr, "a debug line") {
		t.Error("--log-level error must filter out debug lines")
	}

	r = run(t, "", args("tools", "call", "log", "--log-level", "debug", "--linger", "1s", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "[debug] sdk: a debug line", "[warning] sdk: a late line")

	r = run(t, "", args("tools", "call", "log", "--log-level", "loud", sdkServer())...)
	r.wantCode(t, cmd.ExitUsage)
}

func TestSDKSubscribe(t *testing.T) {
	t.Parallel()
	r := run(t, "", args("resources", "subscribe", "test://counter", "--read", "--for", "500ms", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	if n := strings.Count(r.stdout, "resource updated: test://counter"); n < 2 {
		t.Errorf("want several updates in half a second, got %d", n)
	}
	wantContains(t, "stdout", r.stdout, "counter value ")
	wantContains(t, "stderr", r.stderr, "subscribed to test://counter", "server| unsubscribed test://counter")

	r = run(t, "", args("resources", "subscribe", "test://counter", "--json", "--for", "500ms", "--server-stderr", "hide", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	if strings.TrimSpace(r.stdout) == "" {
		t.Fatal("no update in half a second")
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if line != `{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://counter"}}` {
			t.Errorf("--json line %q", line)
		}
	}
}

// An interrupt ends watching normally (exit 0), unsubscribing first.
func TestSDKSubscribeInterrupt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- cmd.Run(ctx, args("resources", "subscribe", "test://counter", sdkServer()), &cmd.IOStreams{
			In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(string) string { return "" },
		})
	}()
	// Interrupt once the first update has been shown.
	if !testwait.Poll(testwait.Bound, func() bool { return strings.Contains(out.String(), "resource updated: test://counter") }) {
		t.Fatalf("no update arrived:\n%s", errOut.String())
	}
	cancel()
	select {
	case code := <-done:
		t.Logf("stderr:\n%s", errOut.String())
		if code != cmd.ExitOK {
			t.Errorf("exit %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mcpx did not end after the interrupt")
	}
	wantContains(t, "stderr", errOut.String(), "server| unsubscribed test://counter")
}

func TestSDKWatch(t *testing.T) {
	t.Parallel()
	r := run(t, "", args("watch", "--for", "300ms", "--json", sdkServer())...)
	r.wantCode(t, cmd.ExitOK)
	wantContains(t, "stderr", r.stderr, "watching notifications from sdk-features 1.0.0")
}
