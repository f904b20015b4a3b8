package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
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
	// Session describes the session that Frame, Observe and Note record
	// to (the recorder's own, opened by its first event). Its Transport
	// and Target default to the header's.
	Session SessionInfo
	// SessionText is the description of that session's event; it
	// defaults to the header's Target.
	SessionText string
	// Overwrite lets Create replace an existing file. Without it, Create
	// refuses a file that exists and is not empty, and Append adds a
	// session to it.
	Overwrite bool
	// Stable writes the trace in the stable form (see WriteStable), so
	// that recording an unchanged session again gives the same file. The
	// recording is then held aside, in a spool file beside the trace
	// (removed by Close), and written whole by Close
	// (Create and Append; NewRecorder ignores it). Appending to a stable
	// trace keeps it stable.
	Stable bool
	// Replace, with Append, drops the trace's sessions named as the
	// recorder's own (Session.Name) when the recording is written, so
	// that a session recorded again takes the place of its old recording
	// (ModeUpdate). The recording is then held aside and written whole
	// by Close, as with Stable.
	Replace bool
}

// Recorder writes a session's traffic to a trace as it happens: frames in
// both directions (Frame, or Wrap for a connection), and transport events
// such as a server's stderr lines, HTTP exchanges and notes (Observe). Every event is redacted and
// encoded at once, in the order the events happen, then written with one
// write call by a goroutine of the recorder's own, so that the session
// never waits for the disk. The file is thus readable up to its last event
// at any moment (to a file, each batch of events is written holding the
// trace's lock, so that other processes may record into it at once; see
// Append); Close writes whatever is still queued, so an ordinary
// exit, an error or Ctrl-C loses nothing, and a process killed outright
// (SIGKILL) loses at most the events of its last moments. It is safe for
// concurrent use.
type Recorder struct {
	red   *Redactor
	start time.Time
	// told holds the values the recorder was told are secret (Secret),
	// looked for in every session; own is the memory of the recorder's
	// own session (see memory). Both are nil before rules 3.
	told, ownMem *memory

	mu     sync.Mutex
	w      io.Writer
	n      int
	err    error
	closed bool
	close  func(wrote bool) error
	// discarded makes Close leave the file as it was (see Discard).
	discarded bool

	// publish, set by Create, puts the trace in place of the old file; the
	// writer goroutine runs it before it writes the first event.
	publish   func() error
	published bool // publish ran (only the writer goroutine uses it)

	queue   []queued   // encoded events waiting to be written
	writing bool       // a writer goroutine is running
	drained *sync.Cond // signalled when the writer took or finished a batch
	enc     writer     // encodes events (its own writer is unused)

	hmu    sync.Mutex
	hidden []string // "Header: value" texts of route values redacted lately (see hide)

	// Sessions (under mu). Session numbers start after base, the last
	// session of the trace appended to; own is the recorder's own
	// session, 0 until its first event.
	base, last int
	own        int
	ownInfo    SessionInfo
	ownText    string
	// offset is added to event times: the trace appended to began
	// earlier, and t never decreases.
	offset time.Duration

	// disk, for a trace streamed to a regular file (Create, Append), is
	// what the writer goroutine knows of the file, which other processes
	// may be recording into at once: it writes holding the file's lock,
	// and gives sessions their numbers in the file then (see lock.go).
	disk *diskState
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
	if w == nil {
		return nil, nilArgument("NewRecorder", "the writer")
	}
	r, h, err := prepare(o)
	if err != nil {
		return nil, err
	}
	if _, err := newWriter(w, h); err != nil {
		return nil, err
	}
	r.w = w
	return r, nil
}

// prepare makes a recorder for o (without its writer) and the header of a
// new trace.
func prepare(o RecorderOptions) (*Recorder, Header, error) {
	red, err := NewRedactor(o.Redact)
	if err != nil {
		return nil, Header{}, err
	}
	if _, err := ParseIgnores(o.Header.Ignore); err != nil {
		return nil, Header{}, err
	}
	if _, err := CompileNormalizers(o.Header.Normalize, nil); err != nil {
		return nil, Header{}, err
	}
	h := o.Header
	h.Redacted = red.Enabled()
	if h.Redacted {
		h.Redact = o.Redact.Paths
	} else {
		h.Redact = nil
	}
	h.RedactRules = red.Rules()
	h.Target = red.Text(h.Target)
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	info := o.Session
	if info.Transport == "" {
		info.Transport = h.Transport
	}
	if info.Target == "" {
		info.Target = h.Target
	}
	info.Target, info.Name = red.Text(info.Target), red.Text(info.Name)
	text := o.SessionText
	if text == "" {
		text = h.Target
	}
	r := &Recorder{red: red, start: time.Now(), ownInfo: info, ownText: red.Text(text)}
	r.told = red.newMemory(nil)
	r.ownMem = red.newMemory(r.told)
	r.drained = sync.NewCond(&r.mu)
	return r, h, nil
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
//
// Without o.Overwrite, a regular file that exists and is not empty is
// refused with an error matching ErrExists (also when another process
// puts one in place before the first event): use Append to add a session
// to a trace. The trace is written holding its lock, as Append's is, so
// that a process appending to it at the same time loses nothing.
func Create(ctx context.Context, name string, o RecorderOptions) (*Recorder, error) {
	if !o.Overwrite {
		if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
			return nil, fmt.Errorf("%s: %w", name, ErrExists)
		}
	}
	if o.Stable {
		return createHeld(ctx, name, o, false, nil)
	}
	existing := refuseExisting
	if o.Overwrite {
		existing = replaceExisting
	}
	return create(ctx, name, o, existing)
}

// What create does with a trace that another process put in place after
// it began (it is done when the new trace is published, under the lock).
const (
	refuseExisting  = iota // fail with ErrExists (Create)
	replaceExisting        // replace it (Create with Overwrite)
	appendExisting         // add the session to it (Append to a missing file)
)

func create(ctx context.Context, name string, o RecorderOptions, existing int) (*Recorder, error) {
	f, err := outfile.Create(ctx, name, outfile.Options{Perm: 0o600})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r, h, err := prepare(o)
	if err != nil {
		f.Abort()
		return nil, err
	}
	if _, err := newWriter(f, h); err != nil {
		f.Abort()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.w = f
	out := f // the file written (another one when the session joins a trace)
	done := false
	r.publish = func() error {
		if r.disk != nil && existing != replaceExisting {
			// Under the lock: a trace another process started meanwhile
			// is not replaced.
			if fi, err := os.Stat(name); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
				f.Abort()
				if existing == refuseExisting {
					return fmt.Errorf("%s: %w", name, ErrExists)
				}
				af, err := r.join(name, h)
				if err != nil {
					return err
				}
				out, done = af, true
				return nil
			}
		}
		if err := f.Publish(); err != nil {
			f.Abort()
			return fmt.Errorf("replacing %s with the new trace: %w", name, err)
		}
		done = true
		return nil
	}
	if !f.Direct() {
		fi, err := f.Stat()
		if err != nil {
			f.Abort()
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.disk = &diskState{name: name, lock: newTraceLock(name), file: f, scanned: fi.Size()}
	}
	r.close = func(wrote bool) error {
		defer r.closeLock()
		if !wrote || !done {
			// Nothing recorded, or the trace never put in place: the
			// file is left as it was.
			out.Abort()
			f.Abort()
			return nil
		}
		return out.Close()
	}
	return r, nil
}

// closeLock lets go of the trace's lock for good.
func (r *Recorder) closeLock() {
	if r.disk != nil {
		r.disk.lock.close()
	}
}

// Redactor returns the redactor the recorder applies.
func (r *Recorder) Redactor() *Redactor { return r.red }

// Secret tells the recorder that value is secret wherever it appears:
// from now on it is replaced in every frame and text of every session (a
// value of a secret option on the server's command line, the access token
// OAuth got, a credential the caller holds), and in the name and
// description of the recorder's own session when its first event, which
// writes them, comes later. Tell it before the value is sent, so that
// nothing that echoes it comes first. Values shorter than 8
// bytes, which would match innocent text, are ignored; so is everything
// with --no-redact, and before redaction rules 3.
func (r *Recorder) Secret(value string) { r.told.learn(value) }

// Credential is Secret for a credential the caller sends that it learns
// once the recording began (those of a held session, handed to a command
// as it attaches): like RedactOptions.Secrets, it is looked for from 4
// bytes on, so that it is redacted as it would be had the caller been
// given it from the start.
func (r *Recorder) Credential(value string) { r.told.learnFrom(value, minSecret) }

// ErrExists is matched by the error of Create for a file that exists
// (and may be a trace worth keeping) when overwriting was not asked for.
var ErrExists = errors.New("the file exists")

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
	e.Time = r.offset + time.Since(r.start)
	if e.Session == 0 {
		if r.own == 0 {
			// The session's name holds the command's arguments: the
			// values told secret by now (Secret) are redacted from it
			// too, not only those of RecorderOptions.
			info := r.ownInfo
			info.Name, info.Target = r.red.textMem(info.Name, r.ownMem), r.red.textMem(info.Target, r.ownMem)
			r.own = r.newSessionLocked(info, r.red.textMem(r.ownText, r.ownMem), e.Time)
		}
		e.Session = r.own
	}
	if len(e.Data) >= bigFrame {
		// Queued as it is, not copied into its line (see queued).
		r.enc.split = true
		line := r.enc.appendEvent(make([]byte, 0, len(e.Text)+256), e, scan)
		q := queued{line: line}
		if r.enc.splitData != nil {
			q.line, q.data, q.tail = line[:r.enc.splitAt], r.enc.splitData, line[r.enc.splitAt:]
		}
		r.enc.split, r.enc.splitData = false, nil
		r.queue = append(r.queue, q)
	} else {
		buf := make([]byte, 0, len(e.Data)+len(e.Text)+96)
		r.queue = append(r.queue, queued{line: r.enc.appendEvent(buf, e, scan)})
	}
	r.n++
	r.kick()
}

// bigFrame is the size from which a frame written verbatim is queued
// apart from its line rather than copied into it: --record cost a large
// result's size once more (a 100 MiB result: 225 MB peak, 121 MB without
// --record). Frames are never changed once read or sent.
const bigFrame = 1 << 20

// queued is an event waiting to be written: line, or, for a large frame
// written verbatim, line (up to where the frame goes), data (the frame)
// and tail (the rest of the line).
type queued struct {
	line, data, tail []byte
}

// write writes q to w.
func (q queued) write(w io.Writer) error {
	for _, b := range [][]byte{q.line, q.data, q.tail} {
		if len(b) == 0 {
			continue
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// size is q's length in bytes.
func (q queued) size() int { return len(q.line) + len(q.data) + len(q.tail) }

// newSessionLocked numbers a new session and queues its session event.
// Called with r.mu held.
func (r *Recorder) newSessionLocked(info SessionInfo, text string, t time.Duration) int {
	r.last = max(r.last, r.base) + 1
	n := r.last
	ev := Event{Time: t, Session: n, Kind: KindSession, Text: text, SessionInfo: &info}
	r.queue = append(r.queue, queued{line: r.enc.appendEvent(nil, ev, nil)})
	r.n++
	return n
}

// kick starts the writer goroutine if it is not running. Called with
// r.mu held.
func (r *Recorder) kick() {
	if !r.writing {
		r.writing = true
		go r.writeQueued()
	}
}

// writeQueued writes the queued events, one write call each (three for
// a large frame: see queued), until the queue is empty.
func (r *Recorder) writeQueued() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) > 0 && r.err == nil {
		batch := r.queue
		r.queue = nil
		r.drained.Broadcast()
		r.mu.Unlock()
		var err error
		if r.disk != nil {
			err = r.writeBatch(batch)
		} else {
			if !r.published && r.publish != nil {
				r.published = true
				err = r.publish()
			}
			for i := 0; err == nil && i < len(batch); i++ {
				if werr := batch[i].write(r.w); werr != nil {
					err = fmt.Errorf("writing the trace: %w", werr)
				}
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
//
// A frame of 1 MiB or more is kept as it is until it is written, not
// copied: f.Data must not change after Frame returns, as no frame a
// transport reads or writes does (transport.Frame).
func (r *Recorder) Frame(_ time.Time, dir transport.Direction, f transport.Frame) {
	r.frame(0, r.ownMem, false, dir, f)
}

// frame records a frame in session n (0: the recorder's own), whose
// memory of secret values is mem: the client's frames teach it theirs,
// the server's the tokens it hands out (see learnFrom). (A client frame
// is recorded before it is sent, so its values are known before the
// server can echo them, on whichever stream; a server's frame before the
// client has it.)
func (r *Recorder) frame(n int, mem *memory, prelude bool, dir transport.Direction, f transport.Frame) {
	d := ServerToClient
	if dir == transport.Outgoing {
		d = ClientToServer
	}
	data, res, route := r.red.frameRouteMem(f.Data, f.Route, mem, learnDir(d))
	if route != f.Route && route != nil {
		r.hide(f.Route, route)
	}
	r.writeScanned(Event{Session: n, Kind: KindFrame, Dir: d, Data: data, Meta: r.red.metaMem(f.Meta, mem), Route: route, Prelude: prelude}, &res)
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

// text redacts the text of a transport event of the session whose
// memory is mem.
func (r *Recorder) text(s string, mem *memory) string {
	s = r.red.textMem(s, mem)
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

// View records one message between mcpx as an MCP Apps host and one of
// its views (a view event, minor 3): dir is HostToView or ViewToHost,
// data the message as sent or received, redacted like a frame (and kept
// as Frame keeps a large frame's data: unchanged after View returns).
func (r *Recorder) View(dir Direction, v ViewInfo, data []byte) {
	red, res, _ := r.red.frameMem(data, r.ownMem, learnNone, false)
	r.writeScanned(Event{Kind: KindView, Dir: dir, Data: red, View: &v}, &res)
}

// Note records a note about the session or transport.
func (r *Recorder) Note(text string) {
	r.write(Event{Kind: KindNote, Text: r.text(text, r.ownMem)})
}

func (r *Recorder) noteRe(text string, re json.RawMessage) {
	r.write(Event{Kind: KindNote, Text: r.text(text, r.ownMem), Re: re})
}

// Observe records a transport event; it is a transport.Observer. SSE
// stream metadata (transport.EventStream: priming events) is recorded as
// a stream event, not as a frame.
func (r *Recorder) Observe(ev transport.Event) { r.observe(0, r.ownMem, ev) }

func (r *Recorder) observe(n int, mem *memory, ev transport.Event) {
	switch ev.Kind {
	case transport.EventStderr:
		r.write(Event{Session: n, Kind: KindStderr, Dir: ServerToClient, Text: r.red.textMem(ev.Text, mem)})
	case transport.EventHTTP:
		r.write(Event{Session: n, Kind: KindHTTP, Text: r.text(ev.Text, mem), Meta: r.red.metaMem(ev.Meta, mem)})
	case transport.EventStream:
		r.write(Event{Session: n, Kind: KindStream, Text: r.text(ev.Text, mem), Meta: r.red.metaMem(ev.Meta, mem), Retry: ev.Retry})
	default:
		r.write(Event{Session: n, Kind: KindNote, Text: r.text(ev.Text, mem), Meta: r.red.metaMem(ev.Meta, mem)})
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
		if err := r.close(r.n > 0 && !r.discarded); err != nil && r.err == nil {
			r.err = err
		}
	}
	return r.err
}

// Wrap returns c decorated so that every frame read or written is
// recorded with Frame (a frame written is recorded just before it goes
// out, as with transport.Tap), and a frame that could not be sent is
// noted (over HTTP, its requests then count as failed, not unanswered:
// their client got an error). The end of the session is noted where it says something a replay
// needs: the server going away while the client used it
// (ServerEndedNote), the client closing the connection while a request of
// its was unanswered (ClientEndedNote). Closing the returned Conn closes
// c, not the recorder.
func (r *Recorder) Wrap(c transport.Conn) transport.Conn {
	return &recConn{Conn: c, r: r}
}

// frameNoter is what a wrapped connection records to: a Recorder, or one
// session of it (SessionRecorder).
type frameNoter interface {
	Frame(t time.Time, dir transport.Direction, f transport.Frame)
	Note(text string)
	// noteRe records a note about the request whose id is re (Event.Re).
	noteRe(text string, re json.RawMessage)
}

type recConn struct {
	transport.Conn
	r     frameNoter
	ended sync.Once

	mu sync.Mutex
	// pending holds the ids (keys) of the client's requests not answered
	// yet, and their methods, for the note of a client that closes the
	// connection without their answers; gone says the server went away.
	pending map[string]string
	gone    bool
}

// maxPending bounds the unanswered requests a recConn keeps track of.
const maxPending = 1024

func (c *recConn) Read(ctx context.Context) (transport.Frame, error) {
	f, err := c.Conn.Read(ctx)
	if err == nil {
		c.r.Frame(time.Now(), transport.Incoming, f)
		c.answered(f.Data)
	} else if text, ok := serverEnded(err); ok {
		c.ended.Do(func() {
			c.mu.Lock()
			c.gone = true
			c.mu.Unlock()
			c.r.Note(text)
		})
	}
	return f, err
}

// ServerEndedNote begins the text of the note a recording holds where the
// server closed the connection while the client still used it (a stdio
// server that exited or closed its stdout): a replay closes the connection
// at that point, as the recorded server did, instead of leaving its client
// waiting for an answer that never came.
const ServerEndedNote = "the server closed the connection"

// ClientEndedNote begins the text of the note a recording holds where the
// client closed the connection while a request of its was still
// unanswered (it gave up waiting, or was interrupted): the recorded
// server did not go away, it stayed silent, and a replay stays silent
// too. (A recording proxy notes the host's end with notes of its own,
// which replay reads the same way.) Traces written before these notes
// existed say neither; replay then reads a session that ends on a
// request never answered as a server that went away (see Replayer).
const ClientEndedNote = "the client closed the connection"

// sendFailedNote begins the note that follows a client frame that could
// not be sent (an HTTP POST whose connection failed or was closed without
// an answer).
const sendFailedNote = "the frame above could not be sent"

// Notes of the stdio proxy where the host ended the session, or the
// proxy was stopped (interrupted) while the server still ran, or a line
// over the maximum message size ended it.
const (
	hostClosedNote   = "the host closed its input"
	hostGoneNote     = "the host stopped reading"
	proxyStoppedNote = "the proxy was stopped"
	// hostTooLargeNote: the host sent a line over the maximum message
	// size, which the proxy cannot forward; it ends the session.
	hostTooLargeNote = "the host sent a line over the maximum message size"
	// serverTooLargeNote: the server did, which ends the session too,
	// the host seeing its server's output close; unlike the notes
	// above, replay reads it as the server's end (see buildScript).
	serverTooLargeNote = "the server sent a line over the maximum message size"
)

// serverEnded reports whether err, from reading a connection the client
// had not closed, says the server went away (its output ended, its
// process exited), and returns the text of the note to record for it
// (ServerEndedNote and why).
func serverEnded(err error) (string, bool) {
	var pe *transport.PeerExitError
	switch {
	case errors.As(err, &pe):
		return ServerEndedNote + ": " + pe.Error(), true
	case errors.Is(err, io.EOF) && !errors.Is(err, transport.ErrClosed) && !errors.Is(err, context.Canceled):
		return ServerEndedNote + ": " + err.Error(), true
	}
	return "", false
}

func (c *recConn) Write(ctx context.Context, f transport.Frame) error {
	c.r.Frame(time.Now(), transport.Outgoing, f)
	c.asked(f.Data)
	err := c.Conn.Write(ctx, f)
	if err != nil && !errors.Is(err, transport.ErrClosed) && !errors.Is(err, context.Canceled) {
		text := sendFailedNote + ": " + err.Error()
		if _, stdio := transport.Find[*transport.StdioConn](c.Conn); stdio {
			// A stdio trace keeps the frame's requests pending, as
			// before.
			c.r.Note(text)
			return err
		}
		// Over HTTP, the request's POST failed: its client got an
		// error, and waits for no answer (replay fails the POST too).
		// Other POSTs may be in flight, and recorded since this frame:
		// the note names each request it is about (Event.Re), not
		// leaving replay to take it for the latest frame's.
		if ids := c.forget(f.Data); len(ids) > 0 {
			for _, id := range ids {
				c.r.noteRe(text, id)
			}
		} else {
			c.r.Note(text)
		}
	}
	return err
}

// forget drops the requests of a frame the client could not send from
// those unanswered, and returns their ids.
func (c *recConn) forget(data []byte) []json.RawMessage {
	var ids []json.RawMessage
	eachMessage(data, func(m []byte) {
		if sp, ok := topMember(m, "id"); ok && hasTopMember(m, "method") {
			id := m[sp.start:sp.end]
			ids = append(ids, slices.Clone(id))
			c.mu.Lock()
			delete(c.pending, idKey(id))
			c.mu.Unlock()
		}
	})
	return ids
}

// Close notes the client leaving with requests unanswered
// (ClientEndedNote), then closes the connection.
func (c *recConn) Close() error {
	c.mu.Lock()
	var note string
	if !c.gone && len(c.pending) > 0 {
		methods := make([]string, 0, len(c.pending))
		for _, m := range c.pending {
			methods = append(methods, m)
		}
		slices.Sort(methods)
		methods = slices.Compact(methods)
		note = fmt.Sprintf("%s with %d request(s) unanswered (%s)", ClientEndedNote, len(c.pending), strings.Join(methods, ", "))
		c.pending = nil
	}
	c.mu.Unlock()
	if note != "" {
		c.r.Note(note)
	}
	return c.Conn.Close()
}

// asked keeps track of the requests in a frame the client sends.
func (c *recConn) asked(data []byte) {
	eachMessage(data, func(m []byte) {
		ms, isReq := topMember(m, "method")
		sp, hasID := topMember(m, "id")
		if !isReq || !hasID {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending == nil {
			c.pending = map[string]string{}
		}
		if len(c.pending) < maxPending {
			c.pending[idKey(m[sp.start:sp.end])] = decodeKey(m[ms.start:ms.end])
		}
	})
}

// answered forgets the requests a frame of the server answers.
func (c *recConn) answered(data []byte) {
	c.mu.Lock()
	none := len(c.pending) == 0
	c.mu.Unlock()
	if none {
		return
	}
	eachMessage(data, func(m []byte) {
		// (Read before the result, so that a large one is not read twice.)
		if !hasTopMember(m, "result") && !hasTopMember(m, "error") {
			return
		}
		if sp, ok := topMember(m, "id"); ok {
			c.mu.Lock()
			delete(c.pending, idKey(m[sp.start:sp.end]))
			c.mu.Unlock()
		}
	})
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

// SessionRecorder records one session of a trace that holds several: a
// proxy starts one per host connection (Recorder.StartSession). Its
// methods are those of Recorder, for its own session. It is safe for
// concurrent use.
type SessionRecorder struct {
	r   *Recorder
	n   int
	mem *memory // the session's secret values
}

// StartSession opens a new session in the trace (its session event is
// written at once) and returns the recorder of its events. info.Target and
// text are redacted like every text.
func (r *Recorder) StartSession(info SessionInfo, text string) *SessionRecorder {
	info.Target, info.Name = r.red.textMem(info.Target, r.told), r.red.textMem(info.Name, r.told)
	text = r.red.textMem(text, r.told)
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(r.queue) >= maxQueued && r.err == nil && !r.closed {
		r.drained.Wait()
	}
	if r.closed || r.err != nil {
		return &SessionRecorder{r: r, n: -1}
	}
	n := r.newSessionLocked(info, text, r.offset+time.Since(r.start))
	r.kick()
	return &SessionRecorder{r: r, n: n, mem: r.red.newMemory(r.told)}
}

// N returns the session's number in the trace (-1 when the recorder was
// closed before it started). When another process records into the same
// file at once, the number the session gets in the file is given when its
// first line is written, after the other process's sessions, and may be
// higher.
func (s *SessionRecorder) N() int { return s.n }

// Frame records one frame of the session (see Recorder.Frame).
func (s *SessionRecorder) Frame(t time.Time, dir transport.Direction, f transport.Frame) {
	if s.n < 0 {
		return
	}
	s.r.frame(s.n, s.mem, false, dir, f)
}

// Observe records a transport event of the session (see Recorder.Observe).
func (s *SessionRecorder) Observe(ev transport.Event) {
	if s.n < 0 {
		return
	}
	s.r.observe(s.n, s.mem, ev)
}

// Secret tells the recorder that value is secret in this session (a
// bearer token its client sends in a header): see Recorder.Secret.
func (s *SessionRecorder) Secret(value string) {
	if s.n >= 0 {
		s.mem.learn(value)
	}
}

// Note records a note about the session.
func (s *SessionRecorder) Note(text string) {
	if s.n < 0 {
		return
	}
	s.r.write(Event{Session: s.n, Kind: KindNote, Text: s.r.text(text, s.mem)})
}

func (s *SessionRecorder) noteRe(text string, re json.RawMessage) {
	if s.n < 0 {
		return
	}
	s.r.write(Event{Session: s.n, Kind: KindNote, Text: s.r.text(text, s.mem), Re: re})
}

// Refusal records an HTTP answer to request id that carried no JSON-RPC
// message (a 400 text/plain, a 401): an http event with the status, the
// content type and an excerpt of the body, tied to the request by Re.
func (s *SessionRecorder) Refusal(id json.RawMessage, meta *transport.Meta, body []byte) {
	if s.n < 0 {
		return
	}
	s.r.refusal(s.n, s.mem, id, meta, body)
}

// Refusal records an HTTP refusal in the recorder's own session (see
// SessionRecorder.Refusal); body is kept as Frame keeps a large frame's
// data.
func (r *Recorder) Refusal(id json.RawMessage, meta *transport.Meta, body []byte) {
	r.refusal(0, r.ownMem, id, meta, body)
}

// maxRefusalText bounds the excerpt of a refusal's body kept in a trace.
const maxRefusalText = 512

func (r *Recorder) refusal(n int, mem *memory, id json.RawMessage, meta *transport.Meta, body []byte) {
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if len(text) > maxRefusalText {
		text = strings.ToValidUTF8(text[:maxRefusalText], "") + "…"
	}
	text = strings.TrimSpace(text)
	if text == "" {
		text = "(no body)"
	}
	r.write(Event{Session: n, Kind: KindHTTP, Text: r.text(text, mem), Meta: r.red.metaMem(meta, mem), Re: id})
}

// Prelude writes frames the session exchanged before the recording began
// (its handshake, kept by a Handshake) at the start of the recorder's own
// session, marked as written from memory: the session event says so, and
// each frame carries Prelude. Call it before anything else is recorded;
// later it is ignored.
func (r *Recorder) Prelude(frames []HeldFrame) {
	r.mu.Lock()
	if r.own != 0 || len(frames) == 0 {
		r.mu.Unlock()
		return
	}
	r.ownInfo.Prelude = true
	r.mu.Unlock()
	for _, f := range frames {
		r.frame(0, r.ownMem, true, f.Dir, f.Frame)
	}
}
