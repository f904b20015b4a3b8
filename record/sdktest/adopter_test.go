package sdktest_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// adopterServer is the server of the adopter's module (example.com/greeter):
// GREETING picks its greeting, and each call it answers adds a line to
// the file GREETER_CALLS names, so that the test can tell a replay (no
// call) from a recording.
const adopterServer = `package greeter

import (
	"context"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// New returns the greeter server.
func New() *mcp.Server {
	greeting := os.Getenv("GREETING")
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string ` + "`json:\"name\"`" + `
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "greet someone"},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			if f, err := os.OpenFile(os.Getenv("GREETER_CALLS"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				f.WriteString("call\n")
				f.Close()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: greeting + ", " + in.Name + "!"}}}, nil, nil
		})
	return s
}
`

// An external module whose test is the one the README shows (taken from
// README.md as it is) records a go-sdk server once, replays it on the
// next run without reaching the server, fails its verification when the
// server changed, and records the trace again with MCPX_RECORD=update.
// go test runs offline, from the module cache.
func TestAdopterModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs an external module's tests")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(package greeter_test\n.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no ```go block with package greeter_test")
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sdk := regexp.MustCompile(`github.com/modelcontextprotocol/go-sdk (v\S+)`).FindSubmatch(gomod)
	if sdk == nil {
		t.Fatal("go.mod does not require the go-sdk")
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/greeter\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/mcpx-dev/mcpx v0.0.0\n\tgithub.com/modelcontextprotocol/go-sdk "+string(sdk[1])+
		"\n)\n\nreplace github.com/mcpx-dev/mcpx => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	write("greeter.go", adopterServer)
	write("greeter_test.go", string(m[1]))
	calls := filepath.Join(dir, "calls.txt")
	trace := filepath.Join(dir, "testdata", "greet.jsonl")

	// The go command builds the module's test binary once (offline); each
	// step then runs it, as go test would, with the step's environment.
	// (Linking it again for each step cost seconds and tested nothing more.)
	testBin := filepath.Join(t.TempDir(), "greeter.test")
	{
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		build := exec.CommandContext(ctx, "go", "test", "-c", "-o", testBin, ".")
		build.Dir = dir
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
		out, err := build.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("go test -c: %v\n%s", err, out)
		}
	}
	goTest := func(wantOK bool, env ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, testBin, "-test.count=1", "-test.v")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "MCPX_RECORD=", "GREETER_CALLS="+calls)
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if (err == nil) != wantOK {
			t.Fatalf("the module's tests %v (want success %v): %v\n%s", env, wantOK, err, out)
		}
		return string(out)
	}
	nCalls := func() int {
		b, _ := os.ReadFile(calls)
		return bytes.Count(b, []byte("call\n"))
	}
	readTrace := func() []byte {
		t.Helper()
		b, err := os.ReadFile(trace)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// 1. No trace: TestGreet records it from the server; the verification
	// then passes against it.
	out := goTest(true, "GREETING=Hello")
	first := readTrace()
	if !bytes.Contains(first, []byte("Hello, Ada!")) || !bytes.Contains(first, []byte(`"stable":true`)) || nCalls() != 2 {
		t.Fatalf("first run: %d calls, trace:\n%s\n%s", nCalls(), first, out)
	}
	// 2. The next run replays: the server answers only the verification.
	out = goTest(true, "GREETING=Hello")
	if !bytes.Equal(readTrace(), first) || nCalls() != 3 || !strings.Contains(out, "Hello, Ada!") {
		t.Fatalf("second run: %d calls, trace changed %v\n%s", nCalls(), !bytes.Equal(readTrace(), first), out)
	}
	// 3. The server changed: TestGreet still replays the recording, the
	// verification fails and says what changed.
	out = goTest(false, "GREETING=Howdy")
	if !strings.Contains(out, "--- PASS: TestGreet ") || !strings.Contains(out, "--- FAIL: TestGreeterMatchesTrace") ||
		!strings.Contains(out, `live:     "Howdy, Ada!"`) || !bytes.Equal(readTrace(), first) {
		t.Fatalf("third run:\n%s", out)
	}
	// 4. MCPX_RECORD=update records the trace again from the changed server.
	goTest(true, "GREETING=Howdy", "MCPX_RECORD=update")
	updated := readTrace()
	if !bytes.Contains(updated, []byte("Howdy, Ada!")) || bytes.Contains(updated, []byte("Hello, Ada!")) {
		t.Fatalf("after MCPX_RECORD=update:\n%s", updated)
	}
	// 5. And it passes from then on.
	goTest(true, "GREETING=Howdy")
}
