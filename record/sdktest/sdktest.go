// Package sdktest records, replays and verifies MCP sessions of the
// official Go SDK (github.com/modelcontextprotocol/go-sdk) in `go test`,
// with the traces of package record, so that a test needs no adapter code
// of its own:
//
//   - Transport and ServerTransport give the SDK client of a test an
//     mcp.Transport that, by the record mode (record.Mode: the MCPX_RECORD
//     environment variable, or Options.Mode), talks to the live server and
//     records the session, or replays its recording;
//   - Replay gives a client under test the recorded server alone;
//   - Verify checks an in-process *mcp.Server against a trace (and with
//     MCPX_RECORD=update records the trace again from it).
//
// Traces are written in record's stable form unless Options.Unstable is
// set: recording an unchanged session again gives the same file, and a
// change is a small diff. A session is found in its trace by its name,
// the test's name unless Options.Name says otherwise, so tests may share
// a trace file, in parallel too: each recording is added to the file
// when its test ends (record such a file in mode new: mode once records
// a trace that is missing, not a session a trace lacks) (in mode update, Verify writes the whole file). A
// test that fails leaves its trace as it was.
//
// With the server under test in package greeter:
//
//	// The first run records testdata/greet.jsonl from the server; later
//	// runs replay it without the server; MCPX_RECORD=update records it again.
//	func TestGreet(t *testing.T) {
//		tr := sdktest.ServerTransport(t, "testdata/greet.jsonl", greeter.New(), sdktest.Options{})
//		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1.0"}, nil).Connect(t.Context(), tr, nil)
//		if err != nil {
//			t.Fatal(err)
//		}
//		defer cs.Close()
//		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
//		...
//	}
//
//	// The server still answers as recorded.
//	func TestGreeterMatchesTrace(t *testing.T) {
//		sdktest.Verify(t, "testdata/greet.jsonl", greeter.New(), sdktest.Options{})
//	}
//
// Conn connects the functions of package record to an in-process server,
// for a test that calls them itself.
//
// Package record itself does not depend on the SDK; this package does.
package sdktest

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/recordtest"
	"github.com/mcpx-dev/mcpx/transport"
)

// Options configure the helpers. The zero value records in the stable
// form, in the mode MCPX_RECORD names (record.ModeOnce when it is unset),
// a session named after the test.
type Options struct {
	// Mode overrides MCPX_RECORD.
	Mode record.Mode
	// Name is the session's name in the trace (record.SessionInfo.Name);
	// the test's name (t.Name()) by default.
	Name string
	// Unstable writes ordinary traces (with times, frames byte for byte)
	// instead of stable ones.
	Unstable bool
	// Ignore and Normalize are stored in a trace when it is recorded, and
	// applied by every later replay and verification of it (see
	// record.Header).
	Ignore    []string
	Normalize []record.Normalizer
	// Redact lists JSONPath expressions whose values are redacted when
	// recording, besides the default sensitive keys.
	Redact []string
	// Replay configures replays. Without an OnDeviation, a departure from
	// the recording fails the test when Replay.Strict is set and is
	// logged otherwise.
	Replay record.ReplayOptions
	// Verify configures verifications.
	Verify record.VerifyOptions
}

// mode returns the mode in force.
func (o Options) mode(t testing.TB) record.Mode {
	t.Helper()
	if o.Mode != "" {
		return o.Mode
	}
	m, err := record.EnvMode(record.ModeOnce)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	return m
}

func (o Options) name(t testing.TB) string {
	if o.Name != "" {
		return o.Name
	}
	return t.Name()
}

// Transport returns the transport for the SDK client of a test, by the
// record mode: one that records the session with the live server into
// file (a trace missing, or missing the session, in modes once and new;
// always in mode update, where the new recording takes the old one's
// place), or one that replays the recorded session without reaching the
// server (live may then be nil: a nil live fails the test only when the
// mode would record). The recording is written when the test ends, unless it failed;
// file's directory (testdata) is created if need be.
// A missing recording the mode may not make fails the test.
func Transport(t testing.TB, file string, live mcp.Transport, o Options) mcp.Transport {
	t.Helper()
	name := o.name(t)
	plan, err := o.mode(t).Plan(file, name)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	if !plan.Record {
		return replayTransport(t, file, plan.Session, o)
	}
	if st, ok := live.(*serverTransport); live == nil || ok && st.server == nil {
		t.Fatalf("sdktest: recording %s: the live server is nil", file)
	}
	return recordTransport(t, file, name, live, o)
}

// ServerTransport is Transport for a server in the test's own process:
// recording reaches it over an in-memory connection.
func ServerTransport(t testing.TB, file string, server *mcp.Server, o Options) mcp.Transport {
	t.Helper()
	return Transport(t, file, &serverTransport{t: t, server: server}, o)
}

// Replay returns a transport for the SDK client of a test that serves
// the session of file named o.Name (or the test's name; the first
// session when the trace has none of that name) as the recorded server
// did. Each Connect starts the session again. A missing trace fails the
// test, whatever the mode.
func Replay(t testing.TB, file string, o Options) mcp.Transport {
	t.Helper()
	tf, err := record.OpenTrace(file)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	n := record.FindSession(tf.Index, o.name(t))
	if n == 0 {
		n = record.FindSession(tf.Index, "")
	}
	tf.Close()
	return replayTransport(t, file, n, o)
}

// Verify checks server against the trace in file: every session of the
// trace is sent to it again, on an in-memory connection of its own, and
// the test fails with a readable account of each difference (see
// record.VerifySessions and recordtest.Report). In mode update it records
// the trace again from server instead (record.UpdateTrace: the header's
// ignores, normalizers and redactions kept; a trace the server matches
// is left as it was) and logs what changed. A missing trace fails the
// test.
func Verify(t testing.TB, file string, server *mcp.Server, o Options) *record.VerifyResult {
	t.Helper()
	if server == nil {
		t.Fatalf("sdktest: verifying %s: the server is nil", file)
	}
	dial := func(ctx context.Context) (transport.Conn, error) { return Conn(ctx, server) }
	if o.mode(t) == record.ModeUpdate {
		res, err := record.UpdateTrace(t.Context(), file, record.UpdateOptions{
			Verify: o.Verify,
			Mcpx:   "sdktest",
			Stable: !o.Unstable,
			Dial: func(ctx context.Context, _ int, _ record.SessionInfo, _ transport.Observer) (transport.Conn, error) {
				return dial(ctx)
			},
		})
		if err != nil {
			t.Fatalf("sdktest: recording %s again: %v", file, err)
		}
		if !res.OK() {
			t.Logf("sdktest: recorded %s again; what changed:\n%s", file, recordtest.Report(res))
		}
		return res
	}
	vo := o.Verify
	vo.Dial = func(ctx context.Context, _ int, _ record.SessionInfo) (transport.Conn, error) { return dial(ctx) }
	return recordtest.Verify(t, file, nil, vo)
}

// Conn connects to server, in the test's own process, and returns the
// client's end of the connection as a transport.Conn: what the functions
// of package record take, for a test that calls them itself, such as one
// that reads record.Verify's result of a server it changed on purpose
// rather than failing on it (as Verify does). Closing the connection ends
// the server's session.
func Conn(ctx context.Context, server *mcp.Server) (transport.Conn, error) {
	if server == nil {
		return nil, fmt.Errorf("sdktest.Conn: the server is %w", record.ErrNilArgument)
	}
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	conn := transport.NewStream(cr, cw)
	ss, err := server.Connect(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("connecting to the server: %w", err)
	}
	return &closing{Conn: conn, close: func() { ss.Close(); sr.Close(); sw.Close() }}, nil
}

// closing is a connection that closes more with it.
type closing struct {
	transport.Conn
	close func()
	once  sync.Once
}

func (c *closing) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.close)
	return err
}

// Unwrap returns the connection.
func (c *closing) Unwrap() transport.Conn { return c.Conn }

// serverTransport connects to an in-process server.
type serverTransport struct {
	t      testing.TB
	server *mcp.Server
}

func (s *serverTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.server.Connect(ctx, st, nil)
	if err != nil {
		return nil, fmt.Errorf("connecting to the server: %w", err)
	}
	s.t.Cleanup(func() { ss.Close() })
	return ct.Connect(ctx)
}

// replayTransport serves session n of file (0: each connection the
// session that matches it).
func replayTransport(t testing.TB, file string, n int, o Options) mcp.Transport {
	t.Helper()
	ro := o.Replay
	ro.Session = n
	ro.Ignore = append(ro.Ignore, o.Ignore...)
	ro.Normalize = append(ro.Normalize, o.Normalize...)
	if ro.OnDeviation == nil {
		ro.OnDeviation = func(d record.Deviation) {
			if ro.Strict {
				t.Errorf("replay of %s: %s", file, d.Message)
			} else {
				t.Logf("replay of %s: %s", file, d.Message)
			}
		}
	}
	tr := recordtest.Read(t, file)
	rp, err := record.NewReplayer(tr, ro)
	if err != nil {
		t.Fatalf("sdktest: replaying %s: %v", file, err)
	}
	return &replayer{t: t, rp: rp}
}

type replayer struct {
	t  testing.TB
	rp *record.Replayer
}

// Connect serves the recording on in-memory pipes, as a stdio server
// would, until the connection or the test ends.
func (r *replayer) Connect(ctx context.Context) (mcp.Connection, error) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	conn := transport.NewStream(sr, sw)
	ctx, cancel := context.WithCancel(r.t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.rp.Serve(ctx, conn)
		conn.Close()
		sw.Close() // the client sees the end
	}()
	r.t.Cleanup(func() {
		cancel()
		conn.Close()
		<-done
	})
	return (&mcp.IOTransport{Reader: cr, Writer: cw}).Connect(ctx)
}

// recordTransport records the sessions the client opens through live.
func recordTransport(t testing.TB, file, name string, live mcp.Transport, o Options) mcp.Transport {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatalf("sdktest: recording to %s: %v", file, err)
	}
	rec, err := record.Append(t.Context(), file, record.RecorderOptions{
		Header:  record.Header{Mcpx: "sdktest", Transport: "pipe", Target: "go-sdk", Ignore: o.Ignore, Normalize: o.Normalize},
		Redact:  record.RedactOptions{Paths: o.Redact},
		Session: record.SessionInfo{Name: name, Transport: "pipe", Target: "go-sdk"},
		Stable:  !o.Unstable,
		Replace: true,
	})
	if err != nil {
		t.Fatalf("sdktest: recording to %s: %v", file, err)
	}
	rt := &recorder{live: live, rec: rec}
	t.Cleanup(func() {
		rt.closeConns()
		if t.Failed() {
			rec.Discard()
		}
		if err := rec.Close(); err != nil {
			t.Errorf("sdktest: %v", err)
		}
	})
	return rt
}

type recorder struct {
	live  mcp.Transport
	rec   *record.Recorder
	mu    sync.Mutex
	conns []mcp.Connection
}

func (r *recorder) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := r.live.Connect(ctx)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.conns = append(r.conns, c)
	r.mu.Unlock()
	return &recConn{Connection: c, rec: r.rec}, nil
}

// closeConns closes the live connections the test left open, so that
// the recording holds everything that was said before it is written.
func (r *recorder) closeConns() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
}

// recConn records the messages of an SDK connection as frames: each
// message as the SDK encodes it.
type recConn struct {
	mcp.Connection
	rec *record.Recorder
}

func (c *recConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if err == nil {
		c.frame(transport.Incoming, m)
	}
	return m, err
}

func (c *recConn) Write(ctx context.Context, m jsonrpc.Message) error {
	c.frame(transport.Outgoing, m)
	return c.Connection.Write(ctx, m)
}

func (c *recConn) frame(dir transport.Direction, m jsonrpc.Message) {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		c.rec.Note(fmt.Sprintf("a message could not be encoded: %v", err))
		return
	}
	c.rec.Frame(time.Now(), dir, transport.Frame{Data: data})
}
