package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/transport"
)

// RecorderOptions configure a Recorder.
type RecorderOptions struct {
	// Header describes the recording (Transport, Target, Mcpx); Format,
	// Version, Created and the redaction fields are filled in.
	Header Header
	// Redact says what to remove before anything is written.
	Redact RedactOptions
}

// Recorder writes a session's traffic to a trace as it happens: frames in
// both directions (Frame, or Wrap for a connection), and transport events
// such as a server's stderr lines, HTTP exchanges and notes (Observe). Every event is redacted and
// encoded at once, in the order the events happen, then written with one
// write call by a goroutine of the recorder's own, so that the session
// never waits for the disk. The file is thus readable up to its last event
// at any moment; Close writes whatever is still queued, so an ordinary
// exit, an error or Ctrl-C loses nothing, and a process killed outright
// (SIGKILL) loses at most the events of its last moments. It is safe for
// concurrent use.
type Recorder struct {
	red   *Redactor
	start time.Time

	mu     sync.Mutex
	w      io.Writer
	n      int
	err    error
	closed bool
	close  func(wrote bool) error

	// publish, set by Create, puts the trace in place of the old file; the
	// writer goroutine runs it before it writes the first event.
	publish   func() error
	published bool // publish ran (only the writer goroutine uses it)

	queue   [][]byte   // encoded events waiting to be written
	writing bool       // a writer goroutine is running
	drained *sync.Cond // signalled when the writer took or finished a batch
	enc     writer     // encodes events (its own writer is unused)

	hmu    sync.Mutex
	hidden []string // "Header: value" texts of route values redacted lately (see hide)
}

// maxHidden bounds the redacted route headers remembered for the HTTP
// events that follow their frames.
const maxHidden = 64

// maxQueued bounds the events waiting for the disk: past it, recording
// waits for the writer (a slow disk slows the session, it never grows
// memory without bound).
const maxQueued = 4096

// NewRecorder starts a trace on w, writing its header at once.
func NewRecorder(w io.Writer, o RecorderOptions) (*Recorder, error) {
	red, err := NewRedactor(o.Redact)
	if err != nil {
		return nil, err
	}
	h := o.Header
	h.Redacted = red.Enabled()
	if h.Redacted {
		h.Redact = o.Redact.Paths
	} else {
		h.Redact = nil
	}
	h.Target = red.Text(h.Target)
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	if _, err := newWriter(w, h); err != nil {
		return nil, err
	}
	r := &Recorder{red: red, start: time.Now(), w: w}
	r.drained = sync.NewCond(&r.mu)
	return r, nil
}

// Create records to the named file, written as mcpx writes every
// output file (internal/outfile): a regular file is replaced through a
// temporary file beside it, which takes name's place when the first event
// is recorded, so that an existing file is never left half-overwritten:
// if nothing is recorded (the server could not be started), or the trace
// could not be written up to then, name is left as it was. A symbolic link
// is followed; a FIFO or a device is written through. The file is
// readable by its owner only (0600, whatever the old file's mode): traces
// show everything a session said. Close syncs and closes it. ctx bounds
// the wait of a FIFO's open for its reader.
func Create(ctx context.Context, name string, o RecorderOptions) (*Recorder, error) {
	f, err := outfile.Create(ctx, name, outfile.Options{Perm: 0o600})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r, err := NewRecorder(f, o)
	if err != nil {
		f.Abort()
		return nil, err
	}
	r.publish = func() error {
		if err := f.Publish(); err != nil {
			return fmt.Errorf("replacing %s with the new trace: %w", name, err)
		}
		return nil
	}
	r.close = func(wrote bool) error {
		if !wrote {
			f.Abort()
			return nil
		}
		return f.Close()
	}
	return r, nil
}

// Redactor returns the redactor the recorder applies.
func (r *Recorder) Redactor() *Redactor { return r.red }

func (r *Recorder) write(e Event) { r.writeScanned(e, nil) }

// writeScanned queues one event (encoded now, so its time and place in the
// trace are those of the moment it happened) for the writer goroutine.
func (r *Recorder) writeScanned(e Event, scan *scanResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) >= maxQueued && r.err == nil && !r.closed {
		r.drained.Wait()
	}
	if r.closed || r.err != nil {
		return
	}
	e.Time = time.Since(r.start)
	buf := make([]byte, 0, len(e.Data)+len(e.Text)+96)
	r.queue = append(r.queue, r.enc.appendEvent(buf, e, scan))
	r.n++
	if !r.writing {
		r.writing = true
		go r.writeQueued()
	}
}

// writeQueued writes the queued events, one write call each, until the
// queue is empty.
func (r *Recorder) writeQueued() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) > 0 && r.err == nil {
		batch := r.queue
		r.queue = nil
		r.drained.Broadcast()
		r.mu.Unlock()
		var err error
		if !r.published && r.publish != nil {
			r.published = true
			err = r.publish()
		}
		for i := 0; err == nil && i < len(batch); i++ {
			if _, werr := r.w.Write(batch[i]); werr != nil {
				err = fmt.Errorf("writing the trace: %w", werr)
			}
		}
		r.mu.Lock()
		if err != nil && r.err == nil {
			r.err = err
		}
	}
	r.queue = nil
	r.writing = false
	r.drained.Broadcast()
}

// Frame records one frame; it is a transport.FrameFunc, the one plug that
// records frames wherever they are seen: Wrap taps a connection with it,
// the proxies' OnFrame takes it, and so can anything else that observes
// frames (the REPL's :record). transport.Outgoing is the client's frame
// (client to server), transport.Incoming the server's. A frame the client
// sent in the stateless 2026-07-28 style is recorded with its route,
// redacted like the frame (see Redactor.FrameRoute). Events are stamped
// with the time they are recorded (t is not used), so the trace keeps
// the order they happened in.
func (r *Recorder) Frame(_ time.Time, dir transport.Direction, f transport.Frame) {
	d := ServerToClient
	if dir == transport.Outgoing {
		d = ClientToServer
	}
	data, res, route := r.red.frameRoute(f.Data, f.Route)
	if route != f.Route && route != nil {
		r.hide(f.Route, route)
	}
	r.writeScanned(Event{Kind: KindFrame, Dir: d, Data: data, Meta: r.red.Meta(f.Meta), Route: route}, &res)
}

// hide remembers the header lines of route values that were redacted:
// the transport names the headers of each request in an HTTP event
// (as --wire shows them), which must not give the values away.
func (r *Recorder) hide(orig, red *transport.Route) {
	var lines []string
	if orig.Name != red.Name {
		lines = append(lines, "Mcp-Name: "+transport.EncodeHeaderValue(orig.Name))
	}
	for i, p := range orig.Params {
		if i < len(red.Params) && red.Params[i].Value != p.Value {
			lines = append(lines, http.CanonicalHeaderKey("Mcp-Param-"+p.Name)+": "+transport.EncodeHeaderValue(p.Value))
		}
	}
	if len(lines) == 0 {
		return
	}
	r.hmu.Lock()
	defer r.hmu.Unlock()
	r.hidden = append(r.hidden, lines...)
	if n := len(r.hidden); n > maxHidden {
		r.hidden = append([]string(nil), r.hidden[n-maxHidden:]...)
	}
}

// text redacts the text of a transport event.
func (r *Recorder) text(s string) string {
	s = r.red.Text(s)
	r.hmu.Lock()
	defer r.hmu.Unlock()
	for _, line := range r.hidden {
		if strings.Contains(s, line) {
			name, _, _ := strings.Cut(line, ": ")
			s = strings.ReplaceAll(s, line, name+": "+Placeholder)
		}
	}
	return s
}

// Note records a note about the session or transport.
func (r *Recorder) Note(text string) {
	r.write(Event{Kind: KindNote, Text: r.text(text)})
}

// Observe records a transport event; it is a transport.Observer.
func (r *Recorder) Observe(ev transport.Event) {
	switch ev.Kind {
	case transport.EventStderr:
		r.write(Event{Kind: KindStderr, Dir: ServerToClient, Text: r.red.Text(ev.Text)})
	case transport.EventHTTP:
		r.write(Event{Kind: KindHTTP, Text: r.text(ev.Text), Meta: r.red.Meta(ev.Meta)})
	default:
		r.write(Event{Kind: KindNote, Text: r.text(ev.Text), Meta: r.red.Meta(ev.Meta)})
	}
}

// Flush waits until every event recorded so far is written (not synced:
// in the file as far as other processes are concerned).
func (r *Recorder) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for r.writing {
		r.drained.Wait()
	}
	return r.err
}

// Events returns how many events have been recorded.
func (r *Recorder) Events() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Err returns the first error writing the trace, if any.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Close ends the recording: it waits until every queued event is written,
// drops later events, and syncs and closes a file made by Create. It returns the first error the recording
// met. It is idempotent.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return r.err
	}
	r.closed = true
	for r.writing {
		r.drained.Wait()
	}
	if r.close != nil {
		if err := r.close(r.n > 0); err != nil && r.err == nil {
			r.err = err
		}
	}
	return r.err
}

// Wrap returns c decorated so that every frame read or written is
// recorded with Frame (a frame written is recorded just before it goes
// out, as with transport.Tap), and a frame that could not be sent is
// noted. Closing the returned Conn closes c, not the recorder.
func (r *Recorder) Wrap(c transport.Conn) transport.Conn {
	return &recConn{Conn: c, r: r}
}

type recConn struct {
	transport.Conn
	r *Recorder
}

func (c *recConn) Read(ctx context.Context) (transport.Frame, error) {
	f, err := c.Conn.Read(ctx)
	if err == nil {
		c.r.Frame(time.Now(), transport.Incoming, f)
	}
	return f, err
}

func (c *recConn) Write(ctx context.Context, f transport.Frame) error {
	c.r.Frame(time.Now(), transport.Outgoing, f)
	err := c.Conn.Write(ctx, f)
	if err != nil && !errors.Is(err, transport.ErrClosed) && !errors.Is(err, context.Canceled) {
		c.r.Note("the frame above could not be sent: " + err.Error())
	}
	return err
}

// Describe forwards to the wrapped connection.
func (c *recConn) Describe() string {
	if d, ok := c.Conn.(transport.Describer); ok {
		return d.Describe()
	}
	return ""
}

// Unwrap returns the wrapped connection.
func (c *recConn) Unwrap() transport.Conn { return c.Conn }
