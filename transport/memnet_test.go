package transport_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// The HTTP tests' in-memory network. A server started with serveMem
// listens on an address of its own, 127.0.0.1:N with a small N that no
// real socket uses, and dial (http_helpers_test.go) gives a connection to
// such a URL a client whose connections are net.Pipe ends. Nothing blocks
// on the operating system, so a test can run inside a testing/synctest
// bubble, where retry delays, reconnect waits and timeouts pass on the
// fake clock: at once, and exactly as long as the code under test says.
// Outside a bubble the network works the same, in real time.

// bubble makes a subtest run in a synctest bubble (T.Run cannot be called
// inside one): t.Run(name, bubble(func(t *testing.T) { ... })).
func bubble(f func(*testing.T)) func(*testing.T) {
	return func(t *testing.T) { synctest.Test(t, f) }
}

// memListeners maps a memnet address to its listener.
var (
	memMu        sync.Mutex
	memListeners = map[string]*memListener{}
	memPorts     atomic.Int32
)

type memListener struct {
	addr   memAddr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

type memAddr string

func (a memAddr) Network() string { return "mem" }
func (a memAddr) String() string  { return string(a) }

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() {
		close(l.closed)
		memMu.Lock()
		delete(memListeners, string(l.addr))
		memMu.Unlock()
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return l.addr }

// serveMem serves h on the in-memory network until the test ends, and
// returns its base URL (http://127.0.0.1:N). Called inside a synctest
// bubble, the server belongs to the bubble.
func serveMem(t testing.TB, h http.Handler) string {
	t.Helper()
	l := &memListener{
		addr:   memAddr(fmt.Sprintf("127.0.0.1:%d", memPorts.Add(1))),
		conns:  make(chan net.Conn),
		closed: make(chan struct{}),
	}
	memMu.Lock()
	memListeners[string(l.addr)] = l
	memMu.Unlock()
	srv := &http.Server{Handler: h}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
	})
	return "http://" + string(l.addr)
}

// memClient returns a client for URLs on the in-memory network, or nil
// when rawURL is elsewhere. Its idle connections are closed when the test
// ends.
func memClient(t testing.TB, rawURL string) *http.Client {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	memMu.Lock()
	_, ok := memListeners[u.Host]
	memMu.Unlock()
	if !ok {
		return nil
	}
	tr := &http.Transport{DialContext: memDial}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// memDial connects to a listener of the in-memory network.
func memDial(ctx context.Context, _, addr string) (net.Conn, error) {
	memMu.Lock()
	l := memListeners[addr]
	memMu.Unlock()
	if l == nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused (in-memory network)")}
	}
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused (in-memory network)")}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
