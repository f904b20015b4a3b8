package transport

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func boundedCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestPipeBothDirections(t *testing.T) {
	a, b := Pipe()
	defer a.Close()
	ctx := boundedCtx(t)
	tests := []struct {
		name     string
		from, to Conn
		frame    Frame
	}{
		{"a to b", a, b, Frame{Data: []byte(`{"jsonrpc":"2.0","method":"x"}`)}},
		{"b to a", b, a, Frame{Data: []byte("not json \r\x00")}},
		{"meta travels", a, b, Frame{Data: []byte("{}"), Meta: &Meta{HTTPStatus: 202, SessionID: "s"}}},
		{"empty frame", b, a, Frame{Data: []byte{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errc := make(chan error, 1)
			go func() { errc <- tt.from.Write(ctx, tt.frame) }()
			got, err := tt.to.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.frame, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("frame (-sent +read):\n%s", diff)
			}
		})
	}
}

func TestPipeCopiesData(t *testing.T) {
	a, b := Pipe()
	defer a.Close()
	ctx := boundedCtx(t)
	data := []byte("original")
	errc := make(chan error, 1)
	go func() { errc <- a.Write(ctx, Frame{Data: data}) }()
	got, err := b.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	<-errc
	copy(data, "mutated!")
	if string(got.Data) != "original" {
		t.Errorf("read frame changed with the writer's buffer: %q", got.Data)
	}
}

func TestPipeCloseEndsBothSides(t *testing.T) {
	a, b := Pipe()
	ctx := boundedCtx(t)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); _, errs[0] = b.Read(ctx) }()
	go func() { defer wg.Done(); errs[1] = b.Write(ctx, Frame{Data: []byte("{}")}) }()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close of the other end = %v", err)
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("blocked call %d returned %v, want ErrClosed", i, err)
		}
	}
	if _, err := a.Read(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close = %v", err)
	}
}

func TestPipeHonoursContext(t *testing.T) {
	a, b := Pipe()
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Read(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Read = %v, want context.Canceled", err)
	}
	if err := b.Write(ctx, Frame{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with nobody reading = %v, want context.Canceled", err)
	}
}

func TestTap(t *testing.T) {
	a, b := Pipe()
	defer a.Close()
	type seen struct {
		Dir  Direction
		Data string
	}
	var mu sync.Mutex
	var got []seen
	tapped := Tap(a, func(ts time.Time, dir Direction, f Frame) {
		if ts.IsZero() {
			t.Error("zero time")
		}
		mu.Lock()
		got = append(got, seen{dir, string(f.Data)})
		mu.Unlock()
	})
	ctx := boundedCtx(t)
	errc := make(chan error, 1)
	go func() {
		if _, err := b.Read(ctx); err != nil {
			errc <- err
			return
		}
		errc <- b.Write(ctx, Frame{Data: []byte("answer")})
	}()
	if err := tapped.Write(ctx, Frame{Data: []byte("request")}); err != nil {
		t.Fatal(err)
	}
	if f, err := tapped.Read(ctx); err != nil || string(f.Data) != "answer" {
		t.Fatalf("Read = %q, %v", f.Data, err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// A failed read is not reported as a frame.
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := tapped.Read(short); err == nil {
		t.Fatal("Read with a cancelled context succeeded")
	}
	mu.Lock()
	want := []seen{{Outgoing, "request"}, {Incoming, "answer"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observed frames (-want +got):\n%s", diff)
	}
	mu.Unlock()

	if d, ok := tapped.(Describer); !ok || d.Describe() != a.(Describer).Describe() {
		t.Errorf("Describe not forwarded")
	}
	if u, ok := tapped.(interface{ Unwrap() Conn }); !ok || u.Unwrap() != a {
		t.Errorf("Unwrap does not return the wrapped Conn")
	}
	if err := tapped.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Read(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Close not forwarded: Read on the other end = %v", err)
	}
}

// answeringConn is a Conn that answers a frame before Write returns, as an
// HTTP connection does when the response comes in the POST's own body: the
// answer is readable at once, and Write returns only after it was read.
type answeringConn struct {
	answers chan Frame
	read    chan struct{} // closed by the test once the answer was read
}

func (c *answeringConn) Write(ctx context.Context, f Frame) error {
	select {
	case c.answers <- Frame{Data: []byte("answer to " + string(f.Data))}:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-c.read:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *answeringConn) Read(ctx context.Context) (Frame, error) {
	select {
	case f := <-c.answers:
		return f, nil
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

func (c *answeringConn) Close() error { return nil }

// Tap reports an outgoing frame before it is written: an observer (--wire,
// a trace) must see a request before its response even when the response
// is read before Write returns.
func TestTapReportsBeforeWriting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		conn := &answeringConn{answers: make(chan Frame), read: make(chan struct{})}
		var mu sync.Mutex
		var got []string
		tapped := Tap(conn, func(_ time.Time, dir Direction, f Frame) {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(dir)+" "+string(f.Data))
		})
		ctx := t.Context()
		go func() {
			if _, err := tapped.Read(ctx); err != nil {
				t.Errorf("Read: %v", err)
			}
			close(conn.read)
		}()
		if err := tapped.Write(ctx, Frame{Data: []byte("request")}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		want := []string{"send request", "recv answer to request"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("observed frames (-want +got):\n%s", diff)
		}
	})
}
