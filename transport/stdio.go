package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// StdioOptions describes a server to launch as a child process and talk to
// over its standard streams (spec: basic/transports, "stdio").
type StdioOptions struct {
	// Command is the program to run; Args are its arguments.
	Command string
	Args    []string
	// Env holds extra KEY=VALUE entries added to mcpx's own environment
	// (later entries win). On Linux the server's mark (serverMark) comes
	// after them.
	Env []string
	// Dir is the working directory of the server; empty means mcpx's own.
	Dir string
	// Observer receives the server's stderr lines and transport notes.
	Observer Observer
	// CloseGrace is how long Close waits for the server to exit after its
	// stdin is closed before sending SIGTERM (on Windows: before ending its
	// job object). Zero means DefaultCloseGrace.
	CloseGrace time.Duration
	// TermGrace is how long Close waits after SIGTERM before SIGKILL.
	// Zero means 500ms. Windows ends the server at once instead of SIGTERM.
	TermGrace time.Duration
	// MaxMessageSize bounds a line of the server's stdout (a frame), in
	// bytes; zero means DefaultMaxMessageSize. A longer line is read past
	// without being held: when it is a response whose id it gives
	// (wherever it is: see memberScanner), the request it answers is lost
	// (see LossReporter) with a *FrameTooLargeError; a request of the
	// server's whose id it gives is answered with an error (see
	// DropReporter); anything else is told of (EventDropped, its end
	// EventNote); the connection goes on. Without a LossReporter listener
	// such a line ends the connection with a *FrameTooLargeError. (A
	// stderr line longer than 1 MiB is passed on in pieces.)
	MaxMessageSize int64
}

// DefaultCloseGrace is StdioOptions.CloseGrace when none is set: short,
// so that a one-shot command never waits on a server's idle timers (many
// Node servers do not exit at the end of their input while a timer is
// set). A server that saves its state once its input ends needs longer;
// the spec leaves the time to the client ("within a reasonable time",
// basic/lifecycle, "Shutdown").
const DefaultCloseGrace = 20 * time.Millisecond

// stderrTail is how many of the server's last stderr lines are kept for
// error reports.
const stderrTail = 10

// StdioConn is a Conn to a child process speaking newline-delimited JSON-RPC
// on stdin/stdout. The child runs in its own process group (on Windows, in
// its own job object) so that Close can end it together with any children
// it spawned.
type StdioConn struct {
	opts   StdioOptions
	cmd    *exec.Cmd
	tree   procTree // the server and the processes it starts
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	// toServer writes stdin (newPipeIO: without waking the runtime's
	// monitor thread, as stdout is read).
	toServer io.Writer

	// writeLock, a token taken by each write, serializes writes. It is a
	// channel, not a mutex, so that waiting for it honours the write's
	// context: while a server does not read its stdin, a write holding it
	// blocks until its deadline, and a queue of writes behind it (answers
	// to a flood of the server's requests) must not make a short-lived
	// write, such as a cancellation, wait for all of theirs.
	writeLock chan struct{}
	// partial is set when a write was cut short (its context ended) after
	// some bytes of the frame went out: the next write first ends that
	// broken line so the frames after it stay intact. Guarded by writeLock.
	partial bool

	lines   *lineReader   // the server's stdout, as frames
	unended *unendedWatch // what it wrote after its last newline

	exited   chan struct{} // closed when the process has been waited for
	exitErr  error         // result of cmd.Wait, valid after exited
	stderrWG sync.WaitGroup

	tailMu sync.Mutex
	tail   []string

	// stopErr is set when the server was stopped for using the terminal
	// (terminalStopped), before its stdout is closed under the reader.
	stopErr atomic.Pointer[error]

	// treeMu orders the end of the server's leftovers when it exits on
	// its own (see StartStdio) before Close, which closes closing under
	// it: on Windows the tree is a handle that Close's release closes.
	treeMu sync.Mutex

	closing   chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// StartStdio launches the server described by opts. The returned connection
// owns the process: Close ends it. Failures to start wrap ErrConnect.
func StartStdio(opts StdioOptions) (*StdioConn, error) {
	if opts.Command == "" {
		return nil, fmt.Errorf("%w: no server command given", ErrConnect)
	}
	if opts.CloseGrace == 0 {
		opts.CloseGrace = DefaultCloseGrace
	}
	if opts.TermGrace == 0 {
		opts.TermGrace = 500 * time.Millisecond
	}
	cmd := exec.Command(opts.Command, opts.Args...)
	cmd.Dir = opts.Dir
	env := opts.Env
	// The mark goes last, so that it wins over the one the server would
	// otherwise inherit (mcpx run by another mcpx's server), which it
	// carries on.
	mark := serverMark(env)
	if mark != "" {
		env = append(slices.Clip(env), mark)
	}
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.SysProcAttr = procAttr()

	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConnect, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("%w: %v", ErrConnect, err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("%w: %v", ErrConnect, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		// A working directory that is not there fails the same way as a
		// missing command: say which of the two it was.
		if opts.Dir != "" {
			if fi, serr := os.Stat(opts.Dir); serr != nil {
				return nil, fmt.Errorf("%w: cannot start server %q in directory %s: %v", ErrConnect, opts.Command, opts.Dir, unwrapExec(serr))
			} else if !fi.IsDir() {
				return nil, fmt.Errorf("%w: cannot start server %q in directory %s: not a directory", ErrConnect, opts.Command, opts.Dir)
			} else if aerr := canEnter(opts.Dir); aerr != nil {
				return nil, fmt.Errorf("%w: cannot start server %q in directory %s: %v", ErrConnect, opts.Command, opts.Dir, aerr)
			}
		}
		return nil, fmt.Errorf("%w: cannot start server %q: %v", ErrConnect, opts.Command, startProblem(cmd.Path, unwrapExec(err)))
	}
	tree, err := startTree(cmd.Process, mark)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		closeAll(inR, inW, outR, outW, errR, errW)
		return nil, fmt.Errorf("%w: cannot start server %q: %v", ErrConnect, opts.Command, err)
	}
	// The child has its copies; ours must go so that EOF is seen.
	closeAll(inR, outW, errW)

	c := &StdioConn{
		opts:      opts,
		cmd:       cmd,
		tree:      tree,
		stdin:     inW,
		stdout:    outR,
		stderr:    errR,
		exited:    make(chan struct{}),
		closing:   make(chan struct{}),
		writeLock: make(chan struct{}, 1),
	}
	// Everything the readers use is in place before they start.
	c.stderrWG.Add(1)
	go c.readStderr()
	c.toServer = newPipeIO(c.stdin)
	c.unended = &unendedWatch{r: newPipeIO(c.stdout)}
	c.lines = startLineReader(c.unended, opts.MaxMessageSize, "a line the server wrote on stdout", c.closing, c.endError)
	c.lines.note = func(kind EventKind, text string) { c.observe(Event{Time: time.Now(), Kind: kind, Text: text}) }
	unwatch := watchTerminalStops(cmd.Process.Pid, c.terminalStopped)
	go func() {
		tree.exiting()
		c.exitErr = cmd.Wait()
		unwatch()
		close(c.exited)
		// A process the server left behind may still hold its stdout, so EOF
		// never comes. The server is gone: end the connection after a moment
		// for the last frames to drain.
		t := time.NewTimer(time.Second)
		defer t.Stop()
		held := false
		select {
		case <-c.lines.done:
		case <-c.closing:
			return
		case <-t.C:
			held = true
		}
		// What the server left behind in its tree ends with it, as Close
		// would end it, rather than running on for as long as whoever
		// holds the connection keeps it (a REPL, until it reconnects or
		// exits), and so does what still holds its stdout. Close releases
		// the tree later; once it has begun, it alone touches the tree,
		// and stdout, which it looks for holders of before it closes it.
		c.treeMu.Lock()
		select {
		case <-c.closing:
		default:
			c.tree.kill()
			if held {
				endPipeHolders(pipeHoldWait, c.stdout)
				c.stdout.Close()
			}
		}
		c.treeMu.Unlock()
	}()
	return c, nil
}

func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// startProblem returns err, the reason the program at path could not be
// started, with what the file says about it: the system's error names
// neither a directory nor a script's interpreter, and a script whose
// interpreter is missing fails with "no such file or directory" although
// the script is there.
func startProblem(path string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrPermission) {
		return err
	}
	fi, serr := os.Stat(path)
	switch {
	case serr != nil:
		return err
	case fi.IsDir():
		return errors.New("it is a directory")
	case errors.Is(err, fs.ErrPermission) && fi.Mode()&0o111 == 0:
		return fmt.Errorf("%w (the file is not executable)", err)
	case errors.Is(err, fs.ErrNotExist):
		if interp, ok := interpreter(path); ok {
			msg := fmt.Sprintf("its interpreter %q, named on its #! line, was not found", interp)
			if strings.HasSuffix(interp, "\r") {
				msg += " (the line ends in a carriage return: the file has Windows line endings)"
			}
			return errors.New(msg)
		}
	}
	return err
}

// interpreter returns the program the #! line of the script at path
// names, if it has one.
func interpreter(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	b := make([]byte, 256)
	n, _ := io.ReadFull(f, b)
	line, ok := bytes.CutPrefix(b[:n], []byte("#!"))
	if !ok {
		return "", false
	}
	line, _, _ = bytes.Cut(line, []byte("\n"))
	// The kernel ends the name at a blank: a carriage return stays in it.
	name := strings.TrimLeft(string(line), " \t")
	if i := strings.IndexAny(name, " \t"); i >= 0 {
		name = name[:i]
	}
	return name, name != ""
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// Describe reports the server command line.
func (c *StdioConn) Describe() string {
	return "stdio: " + strings.Join(append([]string{c.opts.Command}, c.opts.Args...), " ")
}

// PID returns the server process id.
func (c *StdioConn) PID() int { return c.cmd.Process.Pid }

func (c *StdioConn) observe(ev Event) {
	if c.opts.Observer != nil {
		ev.Time = time.Now()
		c.opts.Observer(ev)
	}
}

// terminalStopped ends the connection to a server the kernel stopped for
// using the terminal (see watchTerminalStops): it would never answer.
func (c *StdioConn) terminalStopped(signal string) {
	err := fmt.Errorf("%w: the server was stopped (%s) for using the terminal, to ask for a password perhaps: "+
		"the servers mcpx starts run apart from the terminal and cannot use it (give it what it asks for another way)", ErrTransport, signal)
	c.stopErr.Store(&err)
	go func() {
		// What the server wrote before it stopped is read first. Its whole
		// process group is stopped (the kernel stops the group), so no
		// more comes: the pipe is closed under the reader once it is empty.
		waitPipeEmpty(c.stdout, time.Second, c.closing)
		c.stdout.Close()
	}()
}

// endError explains why stdout ended: usually because the process exited.
func (c *StdioConn) endError(readErr error) error {
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	if err := c.stopErr.Load(); err != nil {
		return *err
	}
	if !errors.Is(readErr, io.EOF) && !errors.Is(readErr, os.ErrClosed) {
		return fmt.Errorf("reading server stdout: %w", readErr)
	}
	// The server closed stdout; it is normally exiting. Give it a moment so
	// the error can carry its exit status and last stderr lines.
	select {
	case <-c.exited:
	case <-c.closing:
		return ErrClosed
	case <-time.After(2 * time.Second):
		return errStdoutClosed{}
	}
	waitTimeout(&c.stderrWG, 500*time.Millisecond)
	return c.exitError()
}

// errStdoutClosed is the end of a server that closed its stdout but
// still runs. Still a transport failure for the caller, it matches io.EOF;
// its text leaves Go's "EOF" out, which tells a person nothing more.
type errStdoutClosed struct{}

func (errStdoutClosed) Error() string { return "server closed its stdout but is still running" }

func (errStdoutClosed) Unwrap() error { return io.EOF }

func (c *StdioConn) exitError() *PeerExitError {
	e := &PeerExitError{Status: "exit status 0", Code: 0}
	if c.cmd.ProcessState != nil {
		e.Status = c.cmd.ProcessState.String()
		e.Code = c.cmd.ProcessState.ExitCode()
	}
	c.tailMu.Lock()
	e.LastStderr = append([]string(nil), c.tail...)
	c.tailMu.Unlock()
	return e
}

func (c *StdioConn) readStderr() {
	defer c.stderrWG.Done()
	r := bufio.NewReaderSize(c.stderr, 16*1024)
	// A line longer than this is passed on in pieces: stderr is text for
	// people, and memory stays bounded whatever the server writes.
	piece := int(min(maxSize(c.opts.MaxMessageSize), maxStderrLine))
	var long []byte // a line longer than r's buffer, so far
	for {
		frag, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(frag) > piece {
				c.stderrLine(string(long))
				long = long[:0]
			}
			long = append(long, frag...)
			continue
		}
		line := string(long) + string(frag)
		long = long[:0]
		if line != "" {
			c.stderrLine(strings.TrimRight(line, "\r\n"))
		}
		if err != nil {
			return
		}
	}
}

// maxStderrLine is the longest stderr line passed on whole.
const maxStderrLine = 1 << 20

// stderrLine keeps line among the last stderr lines and reports it.
func (c *StdioConn) stderrLine(line string) {
	c.tailMu.Lock()
	c.tail = append(c.tail, line)
	if len(c.tail) > stderrTail {
		c.tail = c.tail[len(c.tail)-stderrTail:]
	}
	c.tailMu.Unlock()
	c.observe(Event{Kind: EventStderr, Text: line})
}

var _ UnendedLineReporter = (*StdioConn)(nil)

// UnendedLine says what the server wrote on stdout after its last
// newline, if anything (see UnendedLineReporter).
func (c *StdioConn) UnendedLine() string {
	return c.unended.describe("the server wrote %d bytes on stdout")
}

// Read returns the next line the server wrote on stdout.
func (c *StdioConn) Read(ctx context.Context) (Frame, error) { return c.lines.read(ctx) }

// OnRequestLost registers fn to learn about requests whose response was
// dropped for its size (see StdioOptions.MaxMessageSize and
// LossReporter).
func (c *StdioConn) OnRequestLost(fn func(id string, err error)) { c.lines.setOnLost(fn) }

// OnRequestDropped registers fn to answer the server's requests that
// were dropped for their size (see DropReporter).
func (c *StdioConn) OnRequestDropped(fn func(id jsonrpc.ID, method string, err error)) {
	c.lines.setOnDropped(fn)
}

// Write sends one frame followed by a newline. Frames must not contain a
// newline: stdio framing forbids it (spec: basic/transports, stdio).
func (c *StdioConn) Write(ctx context.Context, f Frame) error {
	if bytes.IndexByte(f.Data, '\n') >= 0 {
		return errNewline
	}
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	select {
	case c.writeLock <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.closing:
		return ErrClosed
	}
	defer func() { <-c.writeLock }()
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.stdin.SetWriteDeadline(time.Now())
		close(fired)
	})
	defer func() {
		if !stop() {
			// The deadline may still be being set: wait, then clear it, so
			// that it cannot fail the next write.
			<-fired
			c.stdin.SetWriteDeadline(time.Time{})
		}
	}()
	var err error
	var n int
	if c.partial {
		if _, err = c.toServer.Write([]byte{'\n'}); err == nil {
			c.partial = false
		}
	}
	if err == nil {
		n, err = writeLine(c.toServer, f.Data)
	}
	if err == nil {
		return nil
	}
	if n > 0 {
		c.partial = true
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	select {
	case <-c.closing:
		return ErrClosed
	case <-c.exited:
		return c.exitError()
	case <-time.After(100 * time.Millisecond):
	}
	return stdinWriteError(err)
}

// stdinWriteError is the error of a write to the server's stdin that
// failed while the server still runs: a transport failure (the command
// exits as for a lost connection, not as for an unexpected error), in
// words: the file's name is Go's internal "|1", which tells nobody
// anything.
func stdinWriteError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, syscall.EPIPE) {
		return fmt.Errorf("%w: the server closed its stdin (%w)", ErrTransport, err)
	}
	return fmt.Errorf("%w: writing to server stdin: %w", ErrTransport, err)
}

// Close ends the session as the spec describes for stdio (basic/lifecycle,
// "Shutdown"): close the server's stdin, give it a brief grace period to
// exit, then SIGTERM, then SIGKILL (on Windows, after the grace period the
// server's job object is ended). Anything left in the server's process
// group (job object) is killed too, so no process outlives mcpx. Close is
// idempotent.
func (c *StdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.treeMu.Lock()
		close(c.closing)
		c.treeMu.Unlock()
		graces := shutdownGraces{close: c.opts.CloseGrace, term: c.opts.TermGrace, kill: killWait}
		if !shutdownTree(c.tree, c.exited, func() { c.stdin.Close() }, graces) {
			c.closeErr = fmt.Errorf("server process %d did not exit after it was killed", c.cmd.Process.Pid)
		}
		// A process of the tree that neither its group, nor its chain of
		// parents, nor its mark let mcpx reach may still hold the
		// server's output (Linux).
		endPipeHolders(pipeHoldWait, c.stdout, c.stderr)
		c.stdout.Close()
		// The reader takes what the server wrote on stderr before it
		// exited, to its end, before the pipe is closed under it (bounded:
		// a process that escaped the tree may hold the pipe open).
		waitTimeout(&c.stderrWG, time.Second)
		c.stderr.Close()
	})
	return c.closeErr
}

// CloseWrite closes the server's stdin, telling it no more input comes,
// while its output can still be read. The stdio recording proxy uses it to
// pass on the end of its host's input; Close still ends the process.
func (c *StdioConn) CloseWrite() error {
	c.writeLock <- struct{}{}
	defer func() { <-c.writeLock }()
	return c.stdin.Close()
}

// Exited is closed once the server process has ended.
func (c *StdioConn) Exited() <-chan struct{} { return c.exited }

// pipeHoldWait is how long the processes of a server's tree, just
// killed, are given to let go of its stdout and stderr before those
// that still hold them are looked for (endPipeHolders).
const pipeHoldWait = 100 * time.Millisecond

func waitTimeout(wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
