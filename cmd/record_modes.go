package cmd

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// ownCommand returns the command's path below mcpx and its own
// arguments (those before --).
func ownCommand(c *cobra.Command, args []string) (string, []string) {
	own := args
	if n := c.ArgsLenAtDash(); n >= 0 && n <= len(args) {
		own = args[:n]
	}
	return strings.TrimPrefix(c.CommandPath(), c.Root().Name()+" "), own
}

// sessionName names the session a command records, its key for the
// record modes: the command and its own arguments ("tools call echo
// message=hi"), secret-looking options removed. With --redact, which may
// remove an argument from the frames, the arguments are a digest
// instead ("tools call echo args:1f2e3d4c5b6a"): the same arguments, the
// same name, without their values.
func (d recordDesc) sessionName() string {
	if len(d.args) == 0 {
		return d.command
	}
	if len(d.redact) > 0 {
		h := sha256.Sum256([]byte(strings.Join(d.args, "\x00")))
		return d.command + " args:" + hex.EncodeToString(h[:6])
	}
	return d.command + " " + commandLine(d.args)
}

// recordedName is the session name as the recorder writes it (redacted).
func recordedName(o record.RecorderOptions) string {
	red, err := record.NewRedactor(o.Redact)
	if err != nil {
		return o.Session.Name
	}
	return red.Text(o.Session.Name)
}

// recordModeError reports a record mode that cannot go on (a session the
// mode may not record is missing; its message names the modes that do).
func recordModeError(err error) error {
	return usageErrorf("--record: %v", err)
}

// keepTrace leaves the trace of a record mode as it was when the session
// could not talk to the server (err is a connection failure or a timeout:
// the server could not be started or reached, its connection ended, a
// request got no answer): such a session is no recording of the server,
// and must neither take the place of one (mode update) nor be replayed as
// one later (once, new). Without a mode the session is appended as it
// went, failure and all.
func keepTrace(con *tui.Console, rec *record.Recorder, d recordDesc, err error) {
	if rec == nil || d.mode == "" || err == nil || rec.Events() == 0 {
		return // (closeRecorder says when nothing was recorded)
	}
	if code, _ := classify(err); code != ExitConnect && code != ExitTimeout {
		return
	}
	rec.Discard()
	con.Note(fmt.Sprintf("the session could not talk to the server: %s was left as it was (record mode %s)", d.file, d.mode))
}

// replayDialer serves session n of the trace of --record, in process,
// instead of starting the server: a record mode that replays (once,
// new, replay-only) with the session recorded. The recorded server's
// stderr lines go to stderr, as the live server's would.
func (d connDesc) replayDialer(n int, warn func(string), stderr transport.Observer) transport.Dialer {
	return replayDialer{d: d, n: n, warn: warn, stderr: stderr}
}

type replayDialer struct {
	d      connDesc
	n      int
	warn   func(string)
	stderr transport.Observer
}

// Dial opens the trace and serves its session on an in-memory pipe until
// the connection is closed.
func (r replayDialer) Dial(ctx context.Context) (transport.Conn, error) {
	d := r.d
	tf, err := record.ReadOptions{MaxMessageSize: d.session.maxMessageSize}.Open(d.rec.file)
	if err != nil {
		return nil, &usageError{err: err}
	}
	if err := tf.Header.Check(); err != nil {
		tf.Close()
		return nil, usageErrorf("--record: %s: %w", d.rec.file, err)
	}
	rc := &replayConn{}
	rp, err := record.NewReplayerSource(tf, record.ReplayOptions{
		Session:        r.n,
		Ignore:         d.rec.ignore,
		Normalize:      d.rec.normalizers,
		MaxMessageSize: d.session.maxMessageSize,
		OnDeviation:    func(dv record.Deviation) { r.warn("replay: " + dv.Message) },
		OnStderr: func(line string) {
			if r.stderr != nil {
				r.stderr(transport.Event{Time: time.Now(), Kind: transport.EventStderr, Text: line})
			}
		},
		OnServerEnd: func(end record.ServerEnd) { rc.end.Store(recordedExit(end)) },
	})
	if err != nil {
		tf.Close()
		return nil, usageErrorf("--record: %s: %w", d.rec.file, err)
	}
	// The replay lives as long as the connection, not the dial.
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	conn, done := rp.ServePipe(sctx)
	rc.Conn = conn
	rc.stop = sync.OnceFunc(func() {
		cancel()
		<-done
		tf.Close()
	})
	return rc, nil
}

// replayConn is the client's end of an in-process replay.
type replayConn struct {
	transport.Conn
	stop func()
	// end is how the recorded server went away, once the replay got there:
	// the connection then ends as the live server's did.
	end atomic.Pointer[transport.PeerExitError]
}

// Read reads the replayed server's next frame; where the recorded server
// went away, the error says how, as the live connection's did.
func (c *replayConn) Read(ctx context.Context) (transport.Frame, error) {
	f, err := c.Conn.Read(ctx)
	if err != nil && ctx.Err() == nil {
		if end := c.end.Load(); end != nil {
			return f, end
		}
	}
	return f, err
}

// Close ends the replay.
func (c *replayConn) Close() error {
	err := c.Conn.Close()
	c.stop()
	return err
}

// Describe says what the connection reaches.
func (c *replayConn) Describe() string { return "replay of a recorded session" }

// Unwrap returns the pipe.
func (c *replayConn) Unwrap() transport.Conn { return c.Conn }

// recordedExit is the error of a connection whose server went away as the
// recorded one did (see recordedExitCode).
func recordedExit(end record.ServerEnd) *transport.PeerExitError {
	code := recordedExitCode(end)
	status := end.Status
	if status == "" {
		status = fmt.Sprintf("exit status %d", code)
	}
	if strings.HasPrefix(status, "signal: ") {
		code = -1
	}
	return &transport.PeerExitError{Status: status, Code: code, LastStderr: end.LastStderr}
}

// tee sends transport events to both observers (either may be nil).
func tee(a, b transport.Observer) transport.Observer {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(ev transport.Event) {
		a(ev)
		b(ev)
	}
}

// updating says whether verify records the trace again: --update, or
// MCPX_RECORD=update (unless verify records a trace of its own with
// --record, whose mode that is).
func (o *verifyOptions) updating(d connDesc) (bool, error) {
	if o.update {
		if d.rec.file != "" {
			return false, usageErrorf("--update writes the trace it verifies; give no --record with it")
		}
		return true, nil
	}
	if d.rec.file != "" {
		return false, nil
	}
	v := o.e.ios.Getenv(record.ModeEnv)
	if v == "" {
		return false, nil
	}
	m, err := record.ParseMode(v)
	if err != nil {
		return false, usageErrorf("%s: %v", record.ModeEnv, err)
	}
	return m == record.ModeUpdate, nil
}

// runUpdate is verify --update: the trace recorded again from the live
// server (record.UpdateTrace), the differences shown.
//
// sum, when not nil, is the SHA-256 of the trace when verify checked it:
// one that has changed since is not recorded again.
func (o *verifyOptions) runUpdate(ctx context.Context, e *env, file string, sum *[sha256.Size]byte, d connDesc, out output) (kept bool, err error) {
	timeout := d.session.timeout
	if timeout == 0 {
		timeout = d.session.maxTimeout
	}
	var closeErr error
	known := d.knownSecrets()
	res, err := record.UpdateTrace(ctx, file, record.UpdateOptions{
		Verify: record.VerifyOptions{Ignore: d.rec.ignore, Normalize: d.rec.normalizers, Timeout: timeout, Secrets: known},
		Dial: func(ctx context.Context, _ int, _ record.SessionInfo, observe transport.Observer) (transport.Conn, error) {
			return e.sessionConn(ctx, d, out, attachments{events: observe, secrets: known}, &closeErr)
		},
		Mcpx:           Version(),
		Stable:         d.rec.stable,
		MaxMessageSize: d.session.maxMessageSize,
		Always:         d.rec.force,
		Sum:            sum,
	})
	if res != nil && err == nil && res.Exchanges == 0 {
		return false, usageErrorf("%s holds no request with a recorded response: nothing to record again", file)
	}
	if res != nil {
		if perr := e.printVerify(res, out.json); perr != nil {
			return false, perr
		}
	}
	if errors.Is(err, record.ErrChangedSinceRead) {
		return false, changedSinceRead(file)
	}
	if err != nil {
		var perr *fs.PathError
		var merr *record.MinorError
		if errors.As(err, &perr) || errors.Is(err, record.ErrNotTrace) || errors.As(err, &merr) {
			return false, &usageError{err: err}
		}
		return false, err
	}
	if closeErr != nil {
		return false, closeErr
	}
	if res.Kept {
		e.console().Note(fmt.Sprintf("left %s as it was: the live server matches it (%s); --force records it again anyway", file, updateCounts(res)))
		return true, nil
	}
	e.console().Note(fmt.Sprintf("recorded %s again from the live server (%s)", file, updateCounts(res)))
	return false, nil
}

// updateCounts says what verify --update recorded again and what of it
// changed: the exchanges (each once, however many of its parts differ),
// and apart from them what differs outside any exchange.
func updateCounts(res *record.VerifyResult) string {
	changed, other := res.Changed()
	s := fmt.Sprintf("%d exchange(s), %d changed", res.Exchanges, changed)
	if other > 0 {
		s += fmt.Sprintf(", and %d difference(s) outside them", other)
	}
	return s
}
