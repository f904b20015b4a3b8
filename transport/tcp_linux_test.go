package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pairTCP returns a connection dialTCP made and the listener's end of it.
func pairTCP(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	c, err := dial(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c, s
}

// The raw connection behaves as net's: bytes through whole both ways, EOF
// when the peer closes, a deadline that ends a blocked read as a timeout,
// a close that ends one with net.ErrClosed, a reset as ECONNRESET — each
// error what net's own connection says, word for word.
func TestRawTCPIsNetsConn(t *testing.T) {
	c, s := pairTCP(t, dialTCP)
	if _, ok := c.(*rawTCP); !ok {
		t.Fatalf("dialTCP gave %T, want raw reads and writes", c)
	}
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // more than the socket buffers hold
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(data)
		done <- err
	}()
	got := make([]byte, len(data))
	if _, err := io.ReadFull(s, got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("server read: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("write: %v", err)
	}
	go func() {
		_, err := s.Write(data)
		done <- err
	}()
	if _, err := io.ReadFull(c, got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("client read: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Each error beside net's own in the same situation.
	for _, tc := range []struct {
		name  string
		setup func(c, s net.Conn)
		check func(error) bool
	}{
		{"deadline", func(c, s net.Conn) { c.SetReadDeadline(time.Now().Add(20 * time.Millisecond)) }, func(err error) bool {
			var ne net.Error
			return errors.As(err, &ne) && ne.Timeout() && errors.Is(err, os.ErrDeadlineExceeded)
		}},
		{"closed", func(c, s net.Conn) { time.AfterFunc(20*time.Millisecond, func() { c.Close() }) }, func(err error) bool { return errors.Is(err, net.ErrClosed) }},
		{"peer closed", func(c, s net.Conn) { s.Close() }, func(err error) bool { return err == io.EOF }},
		{"reset", func(c, s net.Conn) {
			s.(*net.TCPConn).SetLinger(0)
			s.Close()
		}, func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }},
	} {
		var msgs []string
		for _, dial := range []func(context.Context, string, string) (net.Conn, error){dialTCP, defaultDialer.DialContext} {
			c, s := pairTCP(t, dial)
			tc.setup(c, s)
			_, err := c.Read(make([]byte, 10))
			if !tc.check(err) {
				t.Errorf("%s (%T): read error %v (%T)", tc.name, c, err, err)
			}
			if err != nil {
				// The addresses differ between the two connections.
				msg := strings.ReplaceAll(err.Error(), c.LocalAddr().String(), "LOCAL")
				msgs = append(msgs, strings.ReplaceAll(msg, c.RemoteAddr().String(), "REMOTE"))
			}
		}
		if len(msgs) == 2 && msgs[0] != msgs[1] {
			t.Errorf("%s: raw says %q, net says %q", tc.name, msgs[0], msgs[1])
		}
	}
}

// A write to a connection the peer reset fails with EPIPE or ECONNRESET,
// as net's does (SIGPIPE, which the kernel also sends, is not fatal to a
// Go program for a socket).
func TestRawTCPWriteAfterReset(t *testing.T) {
	c, s := pairTCP(t, dialTCP)
	s.(*net.TCPConn).SetLinger(0)
	s.Close()
	var err error
	for range 100 {
		if _, err = c.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" || !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("write after a reset: %v (%T)", err, err)
	}
}

// What the client did before a request happens before what the server's
// handler does with it, for the race detector too, as over net's own
// connections: package syscall annotates its reads and writes, and the
// raw ones must say the same (rawsync_race.go).
func TestRawTCPOrdersForTheRaceDetector(t *testing.T) {
	var seen int // set by the test before each request, read by the handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, seen)
	}))
	t.Cleanup(ts.Close)
	client, err := NewHTTPClient(HTTPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		seen = i
		resp, err := client.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != fmt.Sprint(i) {
			t.Fatalf("request %d: the handler saw %q (%v)", i, body, err)
		}
	}
}
