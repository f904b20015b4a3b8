//go:build unix

package record

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestStdioProxyStopsTheServerWhenCancelled(t *testing.T) {
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
