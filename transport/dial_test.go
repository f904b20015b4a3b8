//go:build unix || windows

package transport

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A dial whose context has ended starts nothing: the error is the
// context's, not a failure to start the (here missing) program.
func TestDialStdioEndedContextStartsNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := DialStdio(ctx, StdioOptions{Command: filepath.Join(t.TempDir(), "no-such-server")})
	if err == nil {
		c.Close()
		t.Fatal("DialStdio succeeded with an ended context")
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrConnect) {
		t.Errorf("error = %v, want context.Canceled and no start attempt", err)
	}
}

// The context bounds the start only: a connection dialed with it outlives
// it, as a net.Conn outlives its dial's context.
func TestDialStdioConnOutlivesContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var d Dialer = helperOptions(t, "echo")
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	cancel()
	wctx, wcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer wcancel()
	if err := c.Write(wctx, Frame{Data: []byte(`{"jsonrpc":"2.0","method":"x"}`)}); err != nil {
		t.Fatalf("Write after the dial's context ended: %v", err)
	}
	if f := readFrame(t, c); string(f.Data) != `{"jsonrpc":"2.0","method":"x"}` {
		t.Errorf("echoed %q", f.Data)
	}
}

func TestDialHTTP(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var d Dialer = HTTPOptions{URL: "http://127.0.0.1:1/mcp?token=SECRET"}
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatalf("Dial (nothing is sent yet): %v", err)
	}
	c.Close()
	cancel()
	_, err = d.Dial(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Dial with an ended context: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the error quotes the URL's secret: %v", err)
	}
}
