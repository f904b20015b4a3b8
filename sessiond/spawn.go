package sessiond

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// BackgroundOptions say how to start a session process.
type BackgroundOptions struct {
	// Path is the program (mcpx itself) and Args its arguments; Env, when
	// not nil, its environment (else this process's).
	Path string
	Args []string
	Env  []string
	// Input is the one line (no newline in it) the process reads first
	// on its standard input (ReadInput). The pipe then stays open until
	// the process is ready, so that it sees the pipe's end should this
	// process go away first.
	Input []byte
	// Stderr receives what the process writes on its standard error until
	// it is ready (prompts, notes, the error that ended it).
	Stderr io.Writer
}

// StartError reports a session process that ended before it was ready:
// it reported why on its standard error already, unless Killed says it
// was killed.
type StartError struct {
	// Code is its exit status (-1 when it was killed).
	Code int
	// Killed, when set, says what killed it ("signal: killed"): it could
	// not say why it ended.
	Killed string
}

func (e *StartError) Error() string {
	if e.Killed != "" {
		return fmt.Sprintf("the session process was killed before the session was open (%s)", e.Killed)
	}
	return fmt.Sprintf("the session process ended before the session was open (exit status %d)", e.Code)
}

// StartBackground starts a session process, detached from the terminal
// (a session of its own: the terminal's Ctrl-C and hang-up do not reach
// it), and waits until it reports that the session is open (Ready), which
// it returns, or ends (*StartError). When ctx ends first the process is
// terminated and waited for.
func StartBackground(ctx context.Context, o BackgroundOptions) (*Status, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer outR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		outW.Close()
		return nil, err
	}
	defer errR.Close()
	inR, inW, err := os.Pipe()
	if err != nil {
		outW.Close()
		errW.Close()
		return nil, err
	}
	// Closed when this returns (the process is ready, or gone): written
	// in the background, in case the process does not read it.
	var wrote sync.WaitGroup
	defer wrote.Wait()
	defer inW.Close()

	cmd := exec.Command(o.Path, o.Args...)
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	cmd.SysProcAttr = detachedAttr()
	err = cmd.Start()
	closeAll(inR, outW, errW)
	if err != nil {
		return nil, fmt.Errorf("starting the session process: %w", err)
	}
	wrote.Go(func() { _, _ = inW.Write(slices.Concat(o.Input, []byte{'\n'})) })

	// Its start-up output, until it detaches (which closes the pipe).
	var copied sync.WaitGroup
	copied.Add(1)
	go func() {
		defer copied.Done()
		if o.Stderr == nil {
			o.Stderr = io.Discard
		}
		_, _ = io.Copy(o.Stderr, errR)
	}()

	ready := make(chan readyLine, 1)
	go func() {
		var r readyLine
		line, err := bufio.NewReader(outR).ReadBytes('\n')
		if err == nil {
			err = json.Unmarshal(line, &r)
		}
		r.err = err
		ready <- r
	}()

	select {
	case r := <-ready:
		if r.err == nil && r.Status != nil {
			copied.Wait()
			_ = cmd.Process.Release()
			return r.Status, nil
		}
		// No ready line: the process ended (or wrote nonsense).
		werr := cmd.Wait()
		copied.Wait()
		var ee *exec.ExitError
		if errors.As(werr, &ee) {
			if ee.ExitCode() == -1 {
				// A signal (SIGKILL, the OOM killer) ended it.
				return nil, &StartError{Code: -1, Killed: ee.ProcessState.String()}
			}
			return nil, &StartError{Code: ee.ExitCode()}
		}
		if werr != nil {
			return nil, fmt.Errorf("the session process: %w", werr)
		}
		return nil, &StartError{Code: 1}
	case <-ctx.Done():
		terminate(cmd.Process)
		waited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-waited
		}
		copied.Wait()
		return nil, ctx.Err()
	}
}

func closeAll(files ...*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// ReadInput reads the line StartBackground gave the session process as
// BackgroundOptions.Input from r, its standard input, at most limit
// bytes. The returned context, derived from ctx, ends if r ends before
// the session is open (Ready): the mcpx connect that waits for it went
// away (killed: when interrupted, it ends the session process itself),
// and nobody would learn of the session. The session process must not
// outlive it, whatever the server's start and handshake take.
func ReadInput(ctx context.Context, r io.Reader, out *Output, limit int64) ([]byte, context.Context, error) {
	br := bufio.NewReader(r)
	var line []byte
	for {
		frag, err := br.ReadSlice('\n')
		line = append(line, frag...)
		if int64(len(line)) > limit+1 {
			return nil, ctx, fmt.Errorf("the session's input is longer than %d bytes", limit)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return nil, ctx, fmt.Errorf("reading the session's input: %w", err)
		}
		break
	}
	line = line[:len(line)-1]
	ctx, cancel := context.WithCancelCause(ctx)
	// It ends with the input: mcpx connect closes its end once it has
	// read that the session is open, or goes away.
	go func() {
		_, _ = io.Copy(io.Discard, br)
		if !out.ready() {
			cancel(ErrStarterGone)
		}
	}()
	return line, ctx, nil
}

// ErrStarterGone is why a session process stops when the mcpx connect
// that started it went away before the session was open.
var ErrStarterGone = errors.New("mcpx connect went away before the session was open")

// readyLine is what a session process writes on its standard output once
// the session is open.
type readyLine struct {
	Status *Status `json:"ready"`
	err    error
}

// Output is the standard error of a session process: the parent's pipe
// until Ready, then the session's log file, which holds at most maxLog
// bytes (a chatty server must not fill the disk): once full, it starts
// over, so that it keeps what came last, the note of how the session
// ended with it (see EndedIn), however long the session lived.
type Output struct {
	mu      sync.Mutex
	w       io.Writer
	log     *os.File
	written int64
	cut     bool
}

// maxLog bounds a session's log file. (A variable for the tests.)
var maxLog int64 = 4 << 20

// NewOutput returns an Output writing to w (the process's standard error)
// until Ready.
func NewOutput(w io.Writer) *Output { return &Output{w: w} }

// ready reports whether Ready switched o to the log.
func (o *Output) ready() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.log != nil
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.log == nil {
		return o.w.Write(p)
	}
	if o.cut {
		return len(p), nil
	}
	if o.written+int64(len(p)) > maxLog {
		o.startOver()
		if o.cut {
			return len(p), nil
		}
	}
	q := p
	if int64(len(q)) > maxLog/2 {
		q = append(q[:maxLog/2:maxLog/2], "…\n"...)
	}
	n, err := o.log.Write(q)
	o.written += int64(n)
	if err != nil {
		// A log that cannot be written must not end the session.
		return len(p), nil
	}
	return len(p), nil
}

// startOver empties the full log and says so in its first line. The
// process's standard error is the same open file (Ready), which goes on
// at its start too. Where the log cannot be emptied, nothing more is
// written.
func (o *Output) startOver() {
	err := o.log.Truncate(0)
	if err == nil {
		_, err = o.log.Seek(0, io.SeekStart)
	}
	if err != nil {
		o.cut = true
		_, _ = o.log.WriteString("mcpx: the log reached its size limit; nothing more is written\n")
		return
	}
	n, _ := fmt.Fprintf(o.log, "mcpx: %s the log reached its size limit (%s) and started over: what came before is gone\n", time.Now().Format(time.TimeOnly), transport.FormatSize(maxLog))
	o.written = int64(n)
}

// Ready tells the parent (StartBackground) that the session is open and
// detaches the process from it: out switches to the log file at logPath
// (created 0600, replacing an older one), the process's own standard
// error goes there too (a crash's report), and its standard output and
// input go to the null device.
func Ready(st Status, out *Output, logPath string) error {
	log, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	out.mu.Lock()
	out.log = log
	out.mu.Unlock()
	if err := redirectStderr(log); err != nil {
		return fmt.Errorf("session log: %w", err)
	}
	b, err := json.Marshal(readyLine{Status: &st})
	if err != nil {
		return err
	}
	if _, err := os.Stdout.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("telling mcpx connect that the session is open: %w", err)
	}
	return detachStdout()
}
