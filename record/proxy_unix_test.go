//go:build unix

package record

import (
	"context"
	"errors"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestStdioProxyStopsTheServerWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := startStdioProxy(t, ctx, helper("echo-lines"))
	p.readLine(t) // the server is up
	// Its stderr travels on another pipe: poll (bounded) for its pid.
	var m []string
	for deadline := time.Now().Add(10 * time.Second); m == nil; time.Sleep(5 * time.Millisecond) {
		if m = regexp.MustCompile(`echo-lines: pid (\d+)`).FindStringSubmatch(p.stderr.String()); m == nil && time.Now().After(deadline) {
			t.Fatalf("no pid in %q", p.stderr.String())
		}
	}
	pid, _ := strconv.Atoi(m[1])
	cancel()
	if err := p.wait(t); !errors.Is(err, context.Canceled) {
		t.Fatalf("ProxyStdio = %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server (pid %d) still runs after the proxy ended: %v", pid, err)
	}
}

// A host that stops reading (its end of our stdout is closed) has ended
// the session: the proxy returns nil, not the broken pipe, and the server
// is shut down.
func TestStdioProxyEndsWhenTheHostStopsReading(t *testing.T) {
	t.Parallel()
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outW.Close()
	outR.Close() // the host is gone: the server's first frame hits EPIPE
	trace := t.TempDir() + "/p.jsonl"
	rec, err := Create(context.Background(), trace, RecorderOptions{Header: Header{Transport: "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- ProxyStdio(context.Background(), StdioProxyOptions{Server: helper("echo-lines"), In: inR, Out: outW, OnFrame: rec.Frame, OnEvent: rec.Observe})
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ProxyStdio = %v, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy did not end within 15s")
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(trace)
	if err != nil || !strings.Contains(string(b), "the host stopped reading") {
		t.Errorf("the trace does not say why the session ended: %v\n%s", err, b)
	}
}
