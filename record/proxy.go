package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// StdioProxyOptions configure ProxyStdio.
type StdioProxyOptions struct {
	// Server is the server to launch. Its Observer, if any, still receives
	// the server's events.
	Server transport.StdioOptions
	// In and Out are the host's side: the proxy reads the host's frames
	// from In and writes the server's to Out (normally mcpx's own stdin and
	// stdout).
	In  io.Reader
	Out io.Writer
	// Stderr receives the server's stderr lines as they are; nil drops them.
	Stderr io.Writer
	// OnFrame, when set, is told about every frame forwarded, just before
	// it goes on (a Recorder's Frame records them; --wire shows them).
	// transport.Outgoing is the host's frame.
	OnFrame transport.FrameFunc
	// OnEvent, when set, is told about the server's events (its stderr
	// lines and the transport's notes) and the proxy's own notes (a
	// Recorder's Observe records them).
	OnEvent transport.Observer
	// DrainGrace is how long the proxy keeps forwarding the server's output
	// after the host closed its input, before it shuts the server down.
	// Zero means 2s.
	DrainGrace time.Duration
}

// ProxyStdio stands in for a stdio server: a host (an IDE, a desktop
// assistant) launches it in place of the server, and it launches the real
// one and forwards every line in both directions unchanged, recording
// each. The server's stderr is passed through. It returns when either side
// ends, never leaving the server running: nil when the host closed its
// input (the server then gets DrainGrace to finish, as when the host talks
// to it directly) or stopped reading (a closed pipe: the host went away),
// the server's *transport.PeerExitError when the server ended first, a
// *transport.FrameTooLargeError when the host or the server sent a line
// over Server.MaxMessageSize (noted in the trace: the proxy can neither
// forward nor record it), ctx's error when ctx ended.
//
// Lines are forwarded exactly, except that a last line the host sends
// without a newline reaches the server with one.
//
// A host that stops reading (closes its end of Out) but keeps In open is
// noticed at the next write to it, when the server next sends a line,
// not at once: there is no portable way to wait for the reader of Out to
// go away without writing. Linux would say so (poll(2) reports POLLERR on
// the write end of a pipe left without a reader, even with no events
// asked for, and POLLHUP on a socket whose peer closed), but Go's
// poller offers no such wait (and a blocking stdout is not in it), so it
// would be a thread parked in poll(2) per platform that has one; Windows'
// anonymous pipes signal nothing until a write fails; and Out need not
// be a pipe at all (a file, a terminal). A host that goes away closes both
// ends, and the end of In is seen at once.
func ProxyStdio(ctx context.Context, o StdioProxyOptions) error {
	if o.DrainGrace <= 0 {
		o.DrainGrace = 2 * time.Second
	}
	var errMu sync.Mutex
	obs := o.Server.Observer
	o.Server.Observer = func(ev transport.Event) {
		if ev.Kind == transport.EventStderr && o.Stderr != nil {
			errMu.Lock()
			_, _ = io.WriteString(o.Stderr, ev.Text+"\n")
			errMu.Unlock()
		}
		if o.OnEvent != nil {
			o.OnEvent(ev)
		}
		if obs != nil {
			obs(ev)
		}
	}
	note := func(text string) {
		if o.OnEvent != nil {
			o.OnEvent(transport.Event{Time: time.Now(), Kind: transport.EventNote, Text: text})
		}
	}
	child, err := transport.StartStdio(o.Server)
	if err != nil {
		return err
	}
	defer child.Close()
	// The host's lines have the same limit as the server's.
	host := transport.NewStreamLimit(o.In, o.Out, o.Server.MaxMessageSize)
	defer host.Close()

	// hostEnded is set once the host closed its input: the server's end
	// that follows is the session's normal end.
	var hostEnded atomic.Bool
	// Each pump reports at most once on each channel, and both may.
	hostDone := make(chan error, 2)
	serverDone := make(chan error, 2)
	go func() {
		for {
			f, err := host.Read(ctx)
			if err != nil {
				hostDone <- err
				return
			}
			if o.OnFrame != nil {
				o.OnFrame(time.Now(), transport.Outgoing, f)
			}
			if err := child.Write(ctx, f); err != nil {
				serverDone <- err
				return
			}
		}
	}()
	go func() {
		for {
			f, err := child.Read(ctx)
			if err != nil {
				var tl *transport.FrameTooLargeError
				if text, ok := serverEnded(err); ok && !hostEnded.Load() {
					// The server went away while the host still used it.
					note(text)
				} else if errors.As(err, &tl) && !hostEnded.Load() {
					// A line the proxy cannot forward, nor record: the
					// session ends with it, the host seeing its server's
					// output close. Replay ends the connection here as
					// the server's end.
					note(fmt.Sprintf("%s (%s); shut the server down", serverTooLargeNote, transport.FormatSize(tl.Limit)))
				}
				serverDone <- err
				return
			}
			if o.OnFrame != nil {
				o.OnFrame(time.Now(), transport.Incoming, f)
			}
			if err := host.Write(ctx, f); err != nil {
				// The host stopped reading: the session is over.
				hostDone <- err
				return
			}
		}
	}()

	select {
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), syscall.EPIPE) {
			// Stopped (Ctrl-C, or the host signalled the proxy without
			// closing its input): the server did not go away, and the
			// trace says so, lest a replay read a request left
			// unanswered as the server's end.
			why := "interrupted"
			if err := context.Cause(ctx); !errors.Is(err, context.Canceled) {
				why = err.Error()
			}
			note(proxyStoppedNote + " (" + why + "); shut the server down")
			return ctx.Err()
		}
		// Whoever writes to the host saw its pipe close and ended ctx
		// for it: the host stopped reading, as below.
		note(hostGoneNote + " (closed pipe); shut the server down")
		return nil
	case err := <-serverDone:
		return serverEnd(err)
	case err := <-hostDone:
		if errors.Is(err, syscall.EPIPE) {
			// The host stopped reading: it ended the session (went away)
			// without closing its end of our input first.
			note(hostGoneNote + " (closed pipe); shut the server down")
			return nil
		}
		var tl *transport.FrameTooLargeError
		if errors.As(err, &tl) {
			// A line the proxy cannot forward, nor record: the host ended
			// the session with it (it sees its server's output close), and
			// the server did not go away. Replay stays silent here.
			note(fmt.Sprintf("%s (%s); shut the server down", hostTooLargeNote, transport.FormatSize(tl.Limit)))
			return err
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
	}
	// The host is done sending: pass that on, and let the server finish
	// what it was saying.
	hostEnded.Store(true)
	child.CloseWrite()
	note(hostClosedNote + "; closed the server's stdin")
	t := time.NewTimer(o.DrainGrace)
	defer t.Stop()
	select {
	case <-serverDone:
	case <-t.C:
	case <-ctx.Done():
		// Hosts end a server by closing its input and then signalling it:
		// that is the session's normal end, not an interruption.
	}
	return nil
}

// serverEnd explains why the server side ended.
func serverEnd(err error) error {
	var pe *transport.PeerExitError
	if errors.As(err, &pe) {
		return pe
	}
	return err
}
