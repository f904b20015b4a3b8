package transport

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

// syncBuffer is output written by one goroutine and read by another.
type syncBuffer = testwait.Buffer

func TestStreamConnFrames(t *testing.T) {
	in := "{\"a\":1}\n\n  spaced  \r\nlast without newline"
	var out syncBuffer
	c := NewStream(strings.NewReader(in), &out)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, want := range []string{`{"a":1}`, "", "  spaced  \r", "last without newline"} {
		f, err := c.Read(ctx)
		if err != nil || string(f.Data) != want {
			t.Fatalf("Read = %q, %v; want %q", f.Data, err, want)
		}
	}
	if _, err := c.Read(ctx); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v, want io.EOF", err)
	}
	if err := c.Write(ctx, Frame{Data: []byte(`{"b":2}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, Frame{Data: []byte("two\nlines")}); err == nil {
		t.Error("a frame with a newline was written")
	}
	if out.String() != "{\"b\":2}\n" {
		t.Errorf("wrote %q", out.String())
	}
	c.Close()
	c.Close()
	if err := c.Write(ctx, Frame{Data: []byte("x")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v", err)
	}
}

func TestStreamConnCloseUnblocksRead(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	c := NewStream(r, io.Discard)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("Read after Close = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
}
