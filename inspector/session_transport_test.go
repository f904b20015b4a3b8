package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// expiringConn wraps one end of a pipe the way the HTTP transport behaves:
// it implements transport.Negotiator, and after expire() the next request
// fails with transport.ErrSessionExpired (the server's 404) until the next
// initialize. block makes the Write of a method hang until its context ends.
type expiringConn struct {
	transport.Conn
	mu         sync.Mutex
	negotiated []string
	expired    bool
	block      string
	writes     []string
	// expireOn expires the session when a frame of this method is first
	// written, failing that frame.
	expireOn string
}

func (c *expiringConn) Negotiated(_ context.Context, v string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.negotiated = append(c.negotiated, v)
	return nil
}

func (c *expiringConn) Write(ctx context.Context, f transport.Frame) error {
	var m struct {
		Method string `json:"method"`
	}
	json.Unmarshal(f.Data, &m)
	c.mu.Lock()
	c.writes = append(c.writes, m.Method)
	if m.Method == "initialize" {
		c.expired = false
	}
	if m.Method != "" && m.Method == c.expireOn {
		c.expireOn, c.expired = "", true
	}
	expired := c.expired && m.Method != ""
	block := m.Method != "" && m.Method == c.block
	c.mu.Unlock()
	if expired {
		return fmt.Errorf("POST: %w", transport.ErrSessionExpired)
	}
	if block {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.Conn.Write(ctx, f)
}

func (c *expiringConn) expire() {
	c.mu.Lock()
	c.expired = true
	c.mu.Unlock()
}

func (c *expiringConn) methods() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.writes...)
}

// serveFake answers initialize and tools/list on the server end of a pipe
// and reports every method it receives.
func serveFake(t *testing.T, conn transport.Conn) <-chan string {
	got := make(chan string, 64)
	go func() {
		for {
			f, err := conn.Read(context.Background())
			if err != nil {
				return
			}
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(f.Data, &m)
			got <- m.Method
			var result string
			switch m.Method {
			case "initialize":
				result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"fake","version":"1"}}`
			case "tools/list":
				result = `{"tools":[]}`
			case "resources/subscribe", "resources/unsubscribe":
				result = `{}`
			default:
				continue
			}
			conn.Write(context.Background(), transport.Frame{Data: []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result))})
		}
	}()
	return got
}

func connectFake(t *testing.T, opts Options) (*Session, *expiringConn, <-chan string) {
	t.Helper()
	client, server := transport.Pipe()
	got := serveFake(t, server)
	ec := &expiringConn{Conn: client}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// The Tap hides Negotiated; the session must find it underneath.
	s, err := Connect(ctx, transport.Tap(ec, func(time.Time, transport.Direction, transport.Frame) {}), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ec, got
}

func TestNegotiatedThroughDecorators(t *testing.T) {
	_, ec, _ := connectFake(t, Options{})
	w := ec.methods()
	if len(ec.negotiated) != 1 || ec.negotiated[0] != "2025-06-18" {
		t.Errorf("Negotiated calls %v, want [2025-06-18]", ec.negotiated)
	}
	// Told before notifications/initialized, so that it carries the header.
	if len(w) != 2 || w[0] != "initialize" || w[1] != "notifications/initialized" {
		t.Errorf("writes %v", w)
	}
}

func TestSessionExpiryReinitializesAndRetriesOnce(t *testing.T) {
	var notes []string
	var mu sync.Mutex
	s, ec, _ := connectFake(t, Options{OnNote: func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() }})
	ec.expire()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want := []string{"initialize", "notifications/initialized", "tools/list", "initialize", "notifications/initialized", "tools/list"}
	if got := ec.methods(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("writes %v, want %v", got, want)
	}
	if len(ec.negotiated) != 2 {
		t.Errorf("Negotiated %d times, want 2 (once per session)", len(ec.negotiated))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || !strings.Contains(notes[0], "session expired") || !strings.Contains(notes[0], "tools/list") {
		t.Errorf("notes %q", notes)
	}
}

// Concurrent calls that hit the same expiry start one new session, not one
// each.
func TestSessionExpiryConcurrentCallsRenewOnce(t *testing.T) {
	s, ec, _ := connectFake(t, Options{OnNote: func(string) {}})
	ec.expire()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Call(ctx, "tools/list", nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call: %v", err)
		}
	}
	n := 0
	for _, m := range ec.methods() {
		if m == "initialize" {
			n++
		}
	}
	// Renewals are serialized and deduplicated by generation: the calls
	// that failed together share one new session.
	if n != 2 {
		t.Errorf("initialize sent %d times, want 2", n)
	}
}

// A Write that takes as long as the server (an HTTP JSON answer arrives
// with its headers) is bounded by the request's timeout, and the server is
// told the request was cancelled.
func TestWriteBoundedByTimeout(t *testing.T) {
	s, ec, got := connectFake(t, Options{})
	ec.mu.Lock()
	ec.block = "tools/call"
	ec.mu.Unlock()
	start := time.Now()
	_, err := s.Call(context.Background(), "tools/call", map[string]any{"name": "slow"}, WithTimeout(100*time.Millisecond, time.Minute))
	var te *TimeoutError
	if !errors.As(err, &te) || te.After != 100*time.Millisecond || te.Max {
		t.Fatalf("err = %v, want a 100ms timeout", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
	deadline := time.After(5 * time.Second)
	for {
		select {
		case m := <-got:
			if m == "notifications/cancelled" {
				return
			}
		case <-deadline:
			t.Fatal("no notifications/cancelled reached the server")
		}
	}
}

// A notification's Write is bounded by the session's timeout: over HTTP it
// returns once the server's answer to its POST was read, and a server that
// never finishes that answer held mcpx for good, --timeout or not.
func TestNotifyBoundedByTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, ec, _ := connectFake(t, Options{Timeout: 2 * time.Second})
		ec.mu.Lock()
		ec.block = "notifications/custom"
		ec.mu.Unlock()
		start := time.Now()
		err := s.Notify(context.Background(), "notifications/custom", map[string]any{})
		if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "notifications/custom") || !strings.Contains(err.Error(), "2s") {
			t.Fatalf("err = %v, want a timeout after 2s", err)
		}
		// (peer.WriteError gives the read loop 50ms to report a broken
		// connection first.)
		if d := time.Since(start); d < 2*time.Second || d > 2*time.Second+100*time.Millisecond {
			t.Errorf("returned after %s, want 2s", d)
		}
	})
}

// A session that expires on notifications/initialized is initialized
// again, and that new session hears notifications/initialized once: the
// lost frame was the one the renewal itself sends, and resending it made
// the server hear it twice (spec 2025-11-25: basic/lifecycle,
// "Initialization").
func TestSessionExpiryOnInitializedSendsItOnce(t *testing.T) {
	client, server := transport.Pipe()
	serveFake(t, server)
	ec := &expiringConn{Conn: client, expireOn: "notifications/initialized"}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var notes []string
	s, err := Connect(ctx, ec, Options{OnNote: func(n string) { notes = append(notes, n) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want := []string{"initialize", "notifications/initialized", "initialize", "notifications/initialized", "tools/list"}
	if got := ec.methods(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("writes %v, want %v", got, want)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "re-initialized a new session") || strings.Contains(notes[0], "again") {
		t.Errorf("notes %q", notes)
	}
}

// OnRenew, when set, gets the note of a renewal in place of OnNote.
func TestSessionExpiryToldToOnRenew(t *testing.T) {
	var mu sync.Mutex
	var notes, renewals []string
	s, ec, _ := connectFake(t, Options{
		OnNote:  func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() },
		OnRenew: func(n string) { mu.Lock(); renewals = append(renewals, n); mu.Unlock() },
	})
	ec.expire()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := s.Call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 0 || len(renewals) != 1 || !strings.Contains(renewals[0], "re-initialized a new session and sent tools/list again") {
		t.Errorf("notes %q, renewals %q", notes, renewals)
	}
}

// A new session after the old one expired is subscribed again to the
// resources the old one was (the server's subscriptions are its
// session's), not to one unsubscribed since, and the note says so.
func TestSessionExpiryResubscribes(t *testing.T) {
	var mu sync.Mutex
	var notes []string
	s, ec, _ := connectFake(t, Options{OnNote: func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() }})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, uri := range []string{"test://a", "test://gone"} {
		if err := s.Subscribe(ctx, uri); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Unsubscribe(ctx, "test://gone"); err != nil {
		t.Fatal(err)
	}
	ec.expire()
	if _, err := s.Call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want := "initialize,notifications/initialized,resources/subscribe,resources/subscribe,resources/unsubscribe,tools/list,initialize,notifications/initialized,resources/subscribe,tools/list"
	if got := strings.Join(ec.methods(), ","); got != want {
		t.Errorf("writes %v, want %v", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || !strings.Contains(notes[0], "re-initialized a new session; subscribed to test://a again and sent tools/list again") {
		t.Errorf("notes %q", notes)
	}
}

// forgetting400Conn is a connection to a server built on the TypeScript
// SDK's examples that restarted (it answers 400 to the sessions it no
// longer knows), where something else — the stream for the server's own
// messages — found the session gone and forgot it just as a request was
// refused: the request's 400 names the old session, and the ping that
// would tell goes without one (400 too, naming none).
type forgetting400Conn struct {
	transport.Conn
	mu      sync.Mutex
	session string
	n       int
	// forgetOn is the method whose first write finds the session gone.
	forgetOn string
	writes   []string
}

func (c *forgetting400Conn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

func (c *forgetting400Conn) ForgetSession(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == id {
		c.session = ""
	}
}

func (c *forgetting400Conn) Write(ctx context.Context, f transport.Frame) error {
	var m struct {
		Method string `json:"method"`
	}
	json.Unmarshal(f.Data, &m)
	c.mu.Lock()
	c.writes = append(c.writes, m.Method)
	var refuse *transport.HTTPError
	switch {
	case m.Method == "initialize":
		c.n++
		c.session = fmt.Sprintf("s%d", c.n)
	case m.Method != "" && m.Method == c.forgetOn:
		c.forgetOn = ""
		refuse = &transport.HTTPError{Method: "POST", URL: "http://127.0.0.1/mcp", Status: 400, SessionID: c.session}
		c.session = "" // forgotten elsewhere, at this moment
	case c.session == "":
		refuse = &transport.HTTPError{Method: "POST", URL: "http://127.0.0.1/mcp", Status: 400}
	}
	c.mu.Unlock()
	if refuse != nil {
		return refuse
	}
	return c.Conn.Write(ctx, f)
}

// A request refused with 400 in a session that something else found gone
// and forgot meanwhile is sent again in the new session, not failed
// because its ping, sent without the old session, could not confirm it
// (e2e everything_restart failed so under load: the GET stream's renewal
// raced a command's request).
func TestSession400ForgottenElsewhereRenews(t *testing.T) {
	client, server := transport.Pipe()
	serveFake(t, server)
	fc := &forgetting400Conn{Conn: client}
	var notes []string
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := Connect(ctx, transport.Tap(fc, func(time.Time, transport.Direction, transport.Frame) {}),
		Options{OnNote: func(n string) { mu.Lock(); notes = append(notes, n); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fc.mu.Lock()
	fc.forgetOn = "tools/list"
	fc.mu.Unlock()
	if _, err := s.Call(ctx, "tools/list", nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	fc.mu.Lock()
	got := strings.Join(fc.writes, ",")
	fc.mu.Unlock()
	if want := "initialize,notifications/initialized,tools/list,initialize,notifications/initialized,tools/list"; got != want {
		t.Errorf("writes %s, want %s", got, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) != 1 || !strings.Contains(notes[0], "another request found out first") || !strings.Contains(notes[0], "re-initialized a new session") {
		t.Errorf("notes %q", notes)
	}
}
