package transport

import (
	"context"
	"time"
)

// Direction says which way a frame travelled.
type Direction string

// Directions, from mcpx's point of view as the client.
const (
	Outgoing Direction = "send" // client → server
	Incoming Direction = "recv" // server → client
)

// FrameFunc observes one frame and the direction it travelled in.
type FrameFunc func(t time.Time, dir Direction, f Frame)

// Tap decorates a Conn so that every frame read or written is reported to fn
// (just before it is written, and as soon as it is read). Decorators like
// this show the wire (--wire) and record traces without the session knowing.
func Tap(c Conn, fn FrameFunc) Conn {
	return &tapConn{Conn: c, fn: fn}
}

type tapConn struct {
	Conn
	fn FrameFunc
}

func (t *tapConn) Read(ctx context.Context) (Frame, error) {
	f, err := t.Conn.Read(ctx)
	if err == nil {
		t.fn(time.Now(), Incoming, f)
	}
	return f, err
}

func (t *tapConn) Write(ctx context.Context, f Frame) error {
	// Report before writing: over HTTP the answer can be read before Write
	// returns, and the observer must see the request first.
	t.fn(time.Now(), Outgoing, f)
	return t.Conn.Write(ctx, f)
}

// Describe forwards to the wrapped connection.
func (t *tapConn) Describe() string {
	if d, ok := t.Conn.(Describer); ok {
		return d.Describe()
	}
	return ""
}

// Unwrap returns the wrapped connection.
func (t *tapConn) Unwrap() Conn { return t.Conn }
