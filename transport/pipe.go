package transport

import (
	"context"
	"sync"
)

// Pipe returns two connected in-memory Conns: frames written to one are read
// from the other, byte for byte. It is used by tests and by in-process
// servers (replay).
func Pipe() (Conn, Conn) {
	ab := make(chan Frame)
	ba := make(chan Frame)
	done := make(chan struct{})
	var once sync.Once
	closeBoth := func() { once.Do(func() { close(done) }) }
	return &pipeConn{in: ba, out: ab, done: done, close: closeBoth},
		&pipeConn{in: ab, out: ba, done: done, close: closeBoth}
}

type pipeConn struct {
	in    <-chan Frame
	out   chan<- Frame
	done  chan struct{}
	close func()
}

func (p *pipeConn) Read(ctx context.Context) (Frame, error) {
	select {
	case f := <-p.in:
		return f, nil
	case <-p.done:
		return Frame{}, ErrClosed
	case <-ctx.Done():
		return Frame{}, ctx.Err()
	}
}

func (p *pipeConn) Write(ctx context.Context, f Frame) error {
	data := append([]byte(nil), f.Data...)
	select {
	case p.out <- Frame{Data: data, Meta: f.Meta}:
		return nil
	case <-p.done:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close closes both ends.
func (p *pipeConn) Close() error {
	p.close()
	return nil
}

func (p *pipeConn) Describe() string { return "in-memory pipe" }
