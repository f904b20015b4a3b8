package sdktest_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/sdktest"
)

// counting is greeter counting the calls it answers.
func counting(greeting string, calls *atomic.Int32) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	type args struct {
		Name string `json:"name"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "greet", Description: "greet someone"},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: greeting + ", " + in.Name + "!"}}}, nil, nil
		})
	return s
}

// fakeTB collects what a helper reports instead of failing the test.
type fakeTB struct {
	testing.TB
	name           string
	errors, fatals []string
}

func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (f *fakeTB) Failed() bool { return len(f.errors)+len(f.fatals) > 0 }

// inSubtest runs fn as a test of its own, so that its cleanups (which
// write recordings) run before the caller looks at the file.
func inSubtest(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, fn) {
		t.FailNow()
	}
}

// The record modes: once records a missing trace and replays it
// afterwards (the server is not reached); update records it again;
// new adds a session not yet in the trace; replay-only never records.
func TestModes(t *testing.T) {
	t.Setenv(record.ModeEnv, "") // the modes these tests choose, whatever the caller's
	file := filepath.Join(t.TempDir(), "greet.jsonl")
	var calls atomic.Int32
	run := func(mode record.Mode, name, greeting, want string) {
		inSubtest(t, string(mode)+"/"+name, func(t *testing.T) {
			tr := sdktest.ServerTransport(t, file, counting(greeting, &calls), sdktest.Options{Mode: mode, Name: name})
			if got := greet(t, tr); got != want {
				t.Errorf("greet = %q, want %q", got, want)
			}
		})
	}
	run(record.ModeOnce, "a", "Hello", "Hello, Ada!")
	first, _ := os.ReadFile(file)
	if calls.Load() != 1 || !bytes.Contains(first, []byte(`"stable":true`)) {
		t.Fatalf("once without a trace: %d calls, trace:\n%s", calls.Load(), first)
	}
	run(record.ModeOnce, "a", "Howdy", "Hello, Ada!") // replayed
	if again, _ := os.ReadFile(file); calls.Load() != 1 || !bytes.Equal(again, first) {
		t.Fatalf("once with a trace reached the server (%d calls) or changed the trace", calls.Load())
	}
	run(record.ModeUpdate, "a", "Hello", "Hello, Ada!")
	if same, _ := os.ReadFile(file); !bytes.Equal(same, first) {
		t.Errorf("recording an unchanged server again changed the trace:\n%s\n---\n%s", first, same)
	}
	run(record.ModeUpdate, "a", "Howdy", "Howdy, Ada!")
	if changed, _ := os.ReadFile(file); !bytes.Contains(changed, []byte("Howdy, Ada!")) || bytes.Contains(changed, []byte("Hello, Ada!")) {
		t.Errorf("update did not record the change:\n%s", changed)
	}
	run(record.ModeNew, "b", "Hi", "Hi, Ada!")
	run(record.ModeNew, "a", "Hello", "Howdy, Ada!") // replayed
	tr, err := record.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range tr.Sessions() {
		names = append(names, s.Info.Name)
	}
	if strings.Join(names, ",") != "a,b" {
		t.Errorf("sessions %q", names)
	}

	// replay-only and once do not record a session the trace lacks.
	for _, mode := range []record.Mode{record.ModeReplayOnly, record.ModeOnce} {
		tb := &fakeTB{TB: t, name: "c"}
		done := make(chan struct{})
		go func() {
			defer close(done)
			sdktest.ServerTransport(tb, file, counting("Hello", &calls), sdktest.Options{Mode: mode})
		}()
		<-done
		if len(tb.fatals) != 1 || !strings.Contains(tb.fatals[0], `holds no session named "c"`) {
			t.Errorf("%s: %q", mode, tb.fatals)
		}
	}
	// MCPX_RECORD picks the mode.
	t.Setenv(record.ModeEnv, "replay-only")
	tb := &fakeTB{TB: t, name: "a"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sdktest.ServerTransport(tb, filepath.Join(t.TempDir(), "none.jsonl"), counting("Hello", &calls), sdktest.Options{})
	}()
	<-done
	if len(tb.fatals) != 1 || !strings.Contains(tb.fatals[0], "does not exist") {
		t.Errorf("MCPX_RECORD=replay-only without a trace: %q", tb.fatals)
	}
}

// A test that fails leaves its trace as it was.
func TestFailedTestKeepsTrace(t *testing.T) {
	t.Setenv(record.ModeEnv, "") // the modes these tests choose, whatever the caller's
	file := filepath.Join(t.TempDir(), "greet.jsonl")
	var calls atomic.Int32
	tb := &fakeTB{TB: t, name: "a"}
	inSubtest(t, "failing", func(t *testing.T) {
		tb.TB = t
		tr := sdktest.ServerTransport(tb, file, counting("Hello", &calls), sdktest.Options{})
		greet(t, tr)
		tb.Errorf("the test failed")
	})
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a failed test wrote its trace: %v", err)
	}
}

// Verify reports a changed server, and in mode update records the trace
// again from it.
func TestVerifyModes(t *testing.T) {
	t.Setenv(record.ModeEnv, "") // the modes these tests choose, whatever the caller's
	file := filepath.Join(t.TempDir(), "greet.jsonl")
	var calls atomic.Int32
	inSubtest(t, "record", func(t *testing.T) {
		greet(t, sdktest.ServerTransport(t, file, counting("Hello", &calls), sdktest.Options{}))
	})
	tb := &fakeTB{TB: t, name: "v"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sdktest.Verify(tb, file, counting("Howdy", &calls), sdktest.Options{})
	}()
	<-done
	if len(tb.errors) != 1 || !strings.Contains(tb.errors[0], `recorded: "Hello, Ada!"`) || !strings.Contains(tb.errors[0], `live:     "Howdy, Ada!"`) {
		t.Fatalf("verify of a changed server: errors %q fatals %q", tb.errors, tb.fatals)
	}
	inSubtest(t, "update", func(t *testing.T) {
		sdktest.Verify(t, file, counting("Howdy", &calls), sdktest.Options{Mode: record.ModeUpdate})
	})
	inSubtest(t, "verify", func(t *testing.T) {
		if res := sdktest.Verify(t, file, counting("Howdy", &calls), sdktest.Options{}); res.Exchanges == 0 {
			t.Errorf("nothing verified: %+v", res)
		}
	})
	if b, _ := os.ReadFile(file); !bytes.Contains(b, []byte(`"stable":true`)) || !bytes.Contains(b, []byte(`"name":"TestVerifyModes/record"`)) {
		t.Errorf("the updated trace:\n%s", b)
	}
}

// Tests that record into one trace file at the same time (mode new: once
// records a trace that is missing, not a session a trace lacks) each add
// their session; a test may record and verify the same file.
func TestSharedTraceFile(t *testing.T) {
	t.Setenv(record.ModeEnv, "") // the modes these tests choose, whatever the caller's
	file := filepath.Join(t.TempDir(), "shared.jsonl")
	var calls atomic.Int32
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{"a", "b", "c"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				greet(t, sdktest.ServerTransport(t, file, counting("Hello", &calls), sdktest.Options{Mode: record.ModeNew}))
			})
		}
	})
	tr, err := record.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Sessions()); n != 3 {
		t.Errorf("%d sessions, want 3", n)
	}
	inSubtest(t, "record and verify", func(t *testing.T) {
		other := filepath.Join(filepath.Dir(file), "other.jsonl")
		greet(t, sdktest.ServerTransport(t, other, counting("Hello", &calls), sdktest.Options{}))
		if _, err := os.Stat(other); err == nil {
			t.Error("the recording was written before the test ended")
		}
		sdktest.Verify(t, file, counting("Hello", &calls), sdktest.Options{})
	})
}

// A nil server fails the test with a line that says so where it is
// needed (recording, verifying), and is an error of Conn; a replay does
// not need it.
func TestNilServer(t *testing.T) {
	t.Setenv(record.ModeEnv, "") // the modes these tests choose, whatever the caller's
	file := filepath.Join(t.TempDir(), "greet.jsonl")
	fatal := func(name string, fn func(tb testing.TB)) {
		t.Helper()
		tb := &fakeTB{TB: t, name: "a"}
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn(tb)
		}()
		<-done
		if len(tb.fatals) != 1 || !strings.HasSuffix(tb.fatals[0], "is nil") {
			t.Errorf("%s with a nil server: fatals %q", name, tb.fatals)
		}
	}
	fatal("ServerTransport", func(tb testing.TB) { sdktest.ServerTransport(tb, file, nil, sdktest.Options{}) })
	fatal("Transport", func(tb testing.TB) { sdktest.Transport(tb, file, nil, sdktest.Options{}) })
	var calls atomic.Int32
	inSubtest(t, "a", func(t *testing.T) {
		greet(t, sdktest.ServerTransport(t, file, counting("Hello", &calls), sdktest.Options{Name: "a"}))
	})
	fatal("Verify", func(tb testing.TB) { sdktest.Verify(tb, file, nil, sdktest.Options{}) })
	if _, err := sdktest.Conn(t.Context(), nil); !errors.Is(err, record.ErrNilArgument) {
		t.Errorf("Conn with a nil server: %v", err)
	}
	inSubtest(t, "replay", func(t *testing.T) {
		if got := greet(t, sdktest.ServerTransport(t, file, nil, sdktest.Options{Name: "a", Mode: record.ModeReplayOnly})); got != "Hello, Ada!" {
			t.Errorf("replayed %q", got)
		}
	})
}
