//go:build unix

package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

func scriptOptions(t *testing.T, stdout, stderr, exit string) StdioOptions {
	return helperOptions(t, "script",
		helperStdoutEnv+"="+base64.StdEncoding.EncodeToString([]byte(stdout)),
		helperStderrEnv+"="+base64.StdEncoding.EncodeToString([]byte(stderr)),
		helperExitEnv+"="+exit)
}

func TestStdioFraming(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stdout string
		want   []string
	}{
		{"one line", `{"jsonrpc":"2.0"}` + "\n", []string{`{"jsonrpc":"2.0"}`}},
		{"several lines in order", "a\nb\nc\n", []string{"a", "b", "c"}},
		{"final line without newline", "a\nlast", []string{"a", "last"}},
		{"only an unterminated line", `{"x":1}`, []string{`{"x":1}`}},
		{"CRLF kept raw", "one\r\ntwo\r\n", []string{"one\r", "two\r"}},
		{"non-JSON lines are frames", "not json\n{\"ok\":true}\n[1,\n", []string{"not json", `{"ok":true}`, "[1,"}},
		{"empty line is an empty frame", "a\n\nb\n", []string{"a", "", "b"}},
		{"invalid UTF-8 kept", "\xff\xfe\n", []string{"\xff\xfe"}},
		{"nothing at all", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startHelper(t, scriptOptions(t, tt.stdout, "", "0"))
			got, err := readEnd(t, c)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			var pe *PeerExitError
			if !errors.As(err, &pe) {
				t.Fatalf("end of stream error = %v (%T), want *PeerExitError", err, err)
			}
			if pe.Code != 0 {
				t.Errorf("exit code = %d, want 0", pe.Code)
			}
		})
	}
}

func TestStdioStderrAndExit(t *testing.T) {
	t.Parallel()
	var lines []string
	for i := range 13 {
		lines = append(lines, fmt.Sprintf("stderr line %d", i))
	}
	// The last line has a CRLF and no final newline; both must be handled.
	stderr := strings.Join(lines[:12], "\n") + "\r\n" + lines[12]

	tests := []struct {
		name       string
		exit       string
		wantCode   int
		wantStatus string
	}{
		{"exit code", "3", 3, "exit status 3"},
		{"killed by a signal", "kill", -1, "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []string
			opts := scriptOptions(t, "out\n", stderr, tt.exit)
			opts.Observer = func(ev Event) {
				if ev.Kind != EventStderr {
					return
				}
				if ev.Time.IsZero() {
					t.Errorf("event without time: %+v", ev)
				}
				mu.Lock()
				got = append(got, ev.Text)
				mu.Unlock()
			}
			c := startHelper(t, opts)
			frames, err := readEnd(t, c)
			if diff := cmp.Diff([]string{"out"}, frames); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			var pe *PeerExitError
			if !errors.As(err, &pe) {
				t.Fatalf("error = %v (%T), want *PeerExitError", err, err)
			}
			want := &PeerExitError{Status: tt.wantStatus, Code: tt.wantCode, LastStderr: lines[len(lines)-stderrTail:]}
			if diff := cmp.Diff(want, pe); diff != "" {
				t.Errorf("PeerExitError (-want +got):\n%s", diff)
			}
			if !strings.Contains(pe.Error(), tt.wantStatus) {
				t.Errorf("Error() = %q, want it to mention %q", pe.Error(), tt.wantStatus)
			}
			mu.Lock()
			defer mu.Unlock()
			if diff := cmp.Diff(lines, got); diff != "" {
				t.Errorf("observed stderr lines (-want +got):\n%s", diff)
			}
		})
	}
}

// What a server wrote on stderr just before it exited is reported whole,
// even when Close comes while the reader is still behind: Close lets the
// reader take the pipe to its end before closing it. (It used to close
// the pipe at once, losing the server's last words, such as a proxy's
// "the trace is incomplete", whenever the reader was slow.)
func TestStdioCloseKeepsTheLastStderrLines(t *testing.T) {
	t.Parallel()
	// More than the reader's buffer (16 KiB), less than a pipe holds
	// (64 KiB): the helper writes it all and exits at once.
	var lines []string
	for i := range 1200 {
		lines = append(lines, fmt.Sprintf("last words, line %04d", i))
	}
	opts := scriptOptions(t, "", strings.Join(lines, "\n")+"\n", "0")
	var c *StdioConn
	started := make(chan struct{})
	var mu sync.Mutex
	var got []string
	opts.Observer = func(ev Event) {
		if ev.Kind != EventStderr {
			return
		}
		mu.Lock()
		got = append(got, ev.Text)
		first := len(got) == 1
		mu.Unlock()
		if first {
			// A slow reader: the rest is still in the pipe when Close
			// begins.
			<-started
			<-c.closing
		}
	}
	c = startHelper(t, opts)
	close(started)
	select {
	case <-c.Exited():
	case <-time.After(20 * time.Second):
		t.Fatal("the helper did not exit")
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatalf("Close = %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not return")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(lines) {
		t.Fatalf("%d stderr lines reported, want %d", len(got), len(lines))
	}
	if diff := cmp.Diff(lines, got); diff != "" {
		t.Errorf("stderr lines (-want +got):\n%s", diff)
	}
}

// pattern returns n bytes without a newline that vary enough to catch
// reordering or truncation.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte((i/7+i)%26)
	}
	return b
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestStdioLargeLineBothWays(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("50 MiB round trip")
	}
	c := startHelper(t, helperOptions(t, "echo"))
	big := pattern(50 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Write(ctx, Frame{Data: big}); err != nil {
		t.Fatalf("Write 50 MiB: %v", err)
	}
	if err := c.Write(ctx, Frame{Data: []byte("after")}); err != nil {
		t.Fatalf("Write after the big frame: %v", err)
	}
	f := readFrame(t, c)
	if !bytes.Equal(f.Data, big) {
		t.Fatalf("echoed frame: %d bytes, want %d; first difference at byte %d", len(f.Data), len(big), firstDifference(f.Data, big))
	}
	if f := readFrame(t, c); string(f.Data) != "after" {
		t.Fatalf("frame after the big one = %q, want %q", f.Data, "after")
	}
}

func TestStdioManyFramesKeepOrder(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "echo"))
	const n = 500
	errc := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for i := range n {
			if err := c.Write(ctx, Frame{Data: []byte(strconv.Itoa(i))}); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	for i := range n {
		if f := readFrame(t, c); string(f.Data) != strconv.Itoa(i) {
			t.Fatalf("frame %d = %q", i, f.Data)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestStdioWriteRejectsNewline(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "echo"))
	ctx := context.Background()
	for _, data := range []string{"a\nb", "trailing\n", "\n"} {
		if err := c.Write(ctx, Frame{Data: []byte(data)}); err == nil {
			t.Errorf("Write(%q) succeeded, want an error", data)
		}
	}
	// Nothing of the refused frames reached the server.
	if err := c.Write(ctx, Frame{Data: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, c); string(f.Data) != "ok" {
		t.Fatalf("first echoed frame = %q, want %q", f.Data, "ok")
	}
}

func TestStdioWriteHonoursContext(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "noread"))
	readFrame(t, c) // ready
	// Far more than a pipe holds: the write blocks until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- c.Write(ctx, Frame{Data: pattern(8 << 20)}) }()
	select {
	case err := <-errc:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Write = %v, want context.DeadlineExceeded", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Write ignored its context")
	}
	// A write with a context that is already done does not block either.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	go func() { errc <- c.Write(done, Frame{Data: pattern(8 << 20)}) }()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Write = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Write ignored its cancelled context")
	}
}

// A server that closes its stdin but keeps running fails mcpx's writes:
// a transport failure (a command exits 4 for it, not 1 as for an
// unexpected error), saying what happened in words rather than naming
// Go's internal name of the pipe ("write |1: broken pipe").
func TestStdioWriteToClosedStdinIsTransportFailure(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "close-stdin"))
	readFrame(t, c) // ready: stdin is closed
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c.Write(ctx, Frame{Data: []byte("{}")})
	if !errors.Is(err, ErrTransport) || !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("Write = %v, want ErrTransport wrapping EPIPE", err)
	}
	if msg := err.Error(); strings.Contains(msg, "|") || !strings.Contains(msg, "the server closed its stdin") {
		t.Errorf("Write = %q, want it to say the server closed its stdin", msg)
	}
}

// A write cut short by its context after part of the frame went out must
// not glue that fragment to the next frame: the next write ends the broken
// line first, so the server sees one bad line and then intact frames.
func TestStdioPartialWriteDoesNotCorruptNextFrame(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "echo-after-usr1"))
	readFrame(t, c) // ready
	big := pattern(8 << 20)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := c.Write(ctx, Frame{Data: big}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write = %v, want context.DeadlineExceeded", err)
	}
	if err := syscall.Kill(c.PID(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(context.Background(), Frame{Data: []byte("next")}); err != nil {
		t.Fatalf("Write after a partial write: %v", err)
	}
	fragment := readFrame(t, c)
	if len(fragment.Data) == 0 || len(fragment.Data) >= len(big) || !bytes.HasPrefix(big, fragment.Data) {
		t.Errorf("first echoed line: %d bytes, want a strict prefix of the cut frame (%d bytes)", len(fragment.Data), len(big))
	}
	if f := readFrame(t, c); string(f.Data) != "next" {
		t.Errorf("frame after the fragment = %q..., want %q", f.Data[:min(len(f.Data), 20)], "next")
	}
}

// A write whose context ends around the time the write completes must not
// leave a deadline behind that fails the next write.
func TestStdioWriteAfterCancelledWrite(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "echo"))
	for i := range 2000 {
		ctx, cancel := context.WithCancel(context.Background())
		go cancel()
		_ = c.Write(ctx, Frame{Data: []byte("maybe")})
		want := "sure" + strconv.Itoa(i)
		if err := c.Write(context.Background(), Frame{Data: []byte(want)}); err != nil {
			t.Fatalf("iteration %d: Write with a live context after a cancelled one: %v", i, err)
		}
		for {
			f := readFrame(t, c)
			if string(f.Data) == want {
				break
			}
			if string(f.Data) != "maybe" {
				t.Fatalf("unexpected frame %q", f.Data)
			}
		}
	}
}

func TestStdioConcurrentWritesDoNotInterleave(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "echo"))
	const writers, each = 4, 20
	frames := map[string]bool{}
	var wg sync.WaitGroup
	for w := range writers {
		payload := bytes.Repeat([]byte{byte('A' + w)}, 200<<10) // larger than a pipe's buffer
		for i := range each {
			frames[fmt.Sprintf("%d-%d-", w, i)+string(payload[:8])] = false
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				data := append([]byte(fmt.Sprintf("%d-%d-", w, i)), payload...)
				if err := c.Write(context.Background(), Frame{Data: data}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range writers * each {
		f := readFrame(t, c)
		parts := strings.SplitN(string(f.Data), "-", 3)
		if len(parts) != 3 || len(parts[2]) != 200<<10 || strings.Trim(parts[2], parts[2][:1]) != "" {
			t.Fatalf("mangled frame of %d bytes starting %q", len(f.Data), f.Data[:min(len(f.Data), 20)])
		}
		frames[parts[0]+"-"+parts[1]+"-"+parts[2][:8]] = true
	}
	wg.Wait()
	for k, seen := range frames {
		if !seen {
			t.Errorf("frame %s never echoed", k)
		}
	}
}

func TestStdioEnvAndDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := helperOptions(t, "env", "MCPX_HELPER_VALUE=from-env")
	opts.Dir = dir
	c := startHelper(t, opts)
	wantDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, c); string(f.Data) != "from-env" {
		t.Errorf("env value = %q", f.Data)
	}
	f := readFrame(t, c)
	if gotDir, _ := filepath.EvalSymlinks(string(f.Data)); gotDir != wantDir {
		t.Errorf("working directory = %q, want %q", f.Data, wantDir)
	}
	if !strings.Contains(c.Describe(), opts.Command) {
		t.Errorf("Describe() = %q, want the command in it", c.Describe())
	}
}

// script writes a server script with the given content and mode.
func script(t *testing.T, content string, mode os.FileMode) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(name, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestStartStdioFailureWrapsErrConnect(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(t.TempDir(), "gone")
	closed := filepath.Join(t.TempDir(), "closed")
	if err := os.Mkdir(closed, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts StdioOptions
		want string // in the message, when set
	}{
		{"no command", StdioOptions{}, ""},
		{"missing binary", StdioOptions{Command: filepath.Join(t.TempDir(), "no-such-server")}, ""},
		{"a directory", StdioOptions{Command: t.TempDir()}, `: it is a directory`},
		{"not executable", StdioOptions{Command: script(t, "#!/bin/sh\n", 0o644)}, ": permission denied (the file is not executable)"},
		// It said "no such file or directory", about a file that is there.
		{"missing interpreter", StdioOptions{Command: script(t, "#! /no/such/interpreter -x\n", 0o755)},
			`: its interpreter "/no/such/interpreter", named on its #! line, was not found`},
		{"Windows line endings", StdioOptions{Command: script(t, "#!/bin/sh\r\nexit 0\r\n", 0o755)},
			`: its interpreter "/bin/sh\r", named on its #! line, was not found (the line ends in a carriage return: the file has Windows line endings)`},
		// It said "cannot start server \"<exe>\": no such file or
		// directory", as if the command were missing.
		{"missing working directory", StdioOptions{Command: exe, Dir: gone}, "in directory " + gone + ": "},
		// It said "cannot start server \"<exe>\": permission denied".
		{"working directory without search permission", StdioOptions{Command: exe, Dir: closed},
			"in directory " + closed + ": permission denied (no search permission)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.opts.Dir == closed && os.Geteuid() == 0 {
				t.Skip("root enters any directory")
			}
			c, err := StartStdio(tt.opts)
			if err == nil {
				c.Close()
				t.Fatal("StartStdio succeeded")
			}
			if !errors.Is(err, ErrConnect) {
				t.Errorf("error %v does not wrap ErrConnect", err)
			}
			if tt.want != "" && !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
		})
	}
}

func TestStdioCloseUnblocksReadAndIsIdempotent(t *testing.T) {
	t.Parallel()
	opts := helperOptions(t, "noread")
	opts.CloseGrace = 10 * time.Millisecond
	c := startHelper(t, opts)
	readFrame(t, c) // ready
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	closed := make(chan error, 2)
	go func() { closed <- c.Close() }()
	go func() { closed <- c.Close() }()
	for range 2 {
		select {
		case err := <-closed:
			if err != nil {
				t.Errorf("Close = %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("Close did not return")
		}
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Read returned %v, want ErrClosed", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
	if err := c.Close(); err != nil {
		t.Errorf("third Close = %v", err)
	}
	if _, err := c.Read(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if err := c.Write(context.Background(), Frame{Data: []byte("{}")}); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if !processGone(c.PID()) {
		t.Errorf("server %d still running after Close", c.PID())
	}
}

func TestStdioCloseUnblocksWrite(t *testing.T) {
	t.Parallel()
	opts := helperOptions(t, "noread")
	opts.CloseGrace = 10 * time.Millisecond
	c := startHelper(t, opts)
	readFrame(t, c) // ready
	errc := make(chan error, 1)
	go func() { errc <- c.Write(context.Background(), Frame{Data: pattern(8 << 20)}) }()
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("blocked Write returned %v, want ErrClosed", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close did not unblock Write")
	}
}

// A write waiting behind one that blocks (the server does not read its
// stdin) gives up when its own context ends, not when the other's does:
// a cancellation must not wait out the answers queued before it.
func TestStdioWriteQueuedHonoursContext(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "noread"))
	readFrame(t, c) // ready
	short := func() <-chan error {
		errc := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			errc <- c.Write(ctx, Frame{Data: []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)})
		}()
		return errc
	}
	wait := func(errc <-chan error) error {
		select {
		case err := <-errc:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("a queued write waited past its context for the write before it")
		}
		return nil
	}
	// Fill the pipe: short writes until one times out on it.
	for i := 0; ; i++ {
		if err := wait(short()); errors.Is(err, context.DeadlineExceeded) {
			break
		} else if err != nil || i > 100000 {
			t.Fatalf("filling the pipe: %v after %d writes", err, i)
		}
	}
	// A write with no deadline now blocks on the full pipe (1 MiB is more
	// than any pipe holds, so it blocks even if a loaded machine made a
	// short write time out before the pipe was full), holding the
	// connection's writing; each short write after it must still end
	// with its own deadline. Short writes that come before it may still
	// go through; once one has timed out, the next ones must all time out.
	long, cancelLong := context.WithCancel(context.Background())
	defer cancelLong()
	blocked := make(chan error, 1)
	go func() { blocked <- c.Write(long, Frame{Data: pattern(1 << 20)}) }()
	timedOut := 0
	for i := 0; timedOut < 5; i++ {
		err := wait(short())
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			timedOut++
		case err == nil && timedOut == 0 && i < 2000:
		default:
			t.Fatalf("queued Write %d = %v after %d timed out, want context.DeadlineExceeded", i, err, timedOut)
		}
	}
	cancelLong()
	select {
	case err := <-blocked:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("blocking Write = %v, want context.Canceled", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the blocking write ignored its context")
	}
}

func TestStdioReadHonoursContext(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "noread"))
	readFrame(t, c) // ready
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read = %v, want context.DeadlineExceeded", err)
	}
}

func TestStdioShutdownEscalation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode       string
		closeGrace time.Duration
		termGrace  time.Duration
		// wantSignal is the signal that ended the server, 0 for a normal exit.
		wantSignal syscall.Signal
	}{
		// Generous grace: the server exits by itself on EOF, Close returns
		// as soon as it does.
		{"exit-on-eof", 10 * time.Second, 10 * time.Second, 0},
		{"ignore-eof", 20 * time.Millisecond, 10 * time.Second, syscall.SIGTERM},
		{"ignore-term", 20 * time.Millisecond, 50 * time.Millisecond, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			opts := helperOptions(t, tt.mode)
			opts.CloseGrace, opts.TermGrace = tt.closeGrace, tt.termGrace
			c := startHelper(t, opts)
			readFrame(t, c) // ready: signal handling is in place
			if err := c.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			select {
			case <-c.Exited():
			default:
				t.Fatal("Close returned before the server exited")
			}
			if !processGone(c.PID()) {
				t.Fatalf("server %d still running", c.PID())
			}
			ws := c.cmd.ProcessState.Sys().(syscall.WaitStatus)
			switch {
			case tt.wantSignal == 0 && (!ws.Exited() || ws.ExitStatus() != 0):
				t.Errorf("server ended with %v, want a clean exit", c.cmd.ProcessState)
			case tt.wantSignal != 0 && (!ws.Signaled() || ws.Signal() != tt.wantSignal):
				t.Errorf("server ended with %v, want signal %v", c.cmd.ProcessState, tt.wantSignal)
			}
		})
	}
}

func TestStdioCloseKillsProcessGroup(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"spawn"} {
		t.Run(mode, func(t *testing.T) {
			opts := helperOptions(t, mode)
			opts.CloseGrace, opts.TermGrace = 5*time.Second, 100*time.Millisecond
			c := startHelper(t, opts)
			f := readFrame(t, c)
			gpid, err := strconv.Atoi(string(f.Data))
			if err != nil {
				t.Fatalf("grandchild pid line %q: %v", f.Data, err)
			}
			t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
			if processGone(gpid) {
				t.Fatalf("grandchild %d not running before Close", gpid)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			if !processGone(c.PID()) {
				t.Errorf("server %d still running", c.PID())
			}
			waitGone(t, gpid, 10*time.Second)
		})
	}
}

// mcpx killed outright (no Close runs) still takes the server's whole
// process group with it, a grandchild that ignores SIGTERM included: the
// group's watchdog sees its input end when the kernel closes mcpx's files.
// (On Linux the parent-death signal ends the server itself, but not what
// it started.)
func TestStdioTreeEndsWhenMcpxIsKilled(t *testing.T) {
	t.Parallel()
	mcpx, pid, gpid := startHelperMcpx(t, "tree-parent")
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL); syscall.Kill(gpid, syscall.SIGKILL) })
	if processGone(gpid) {
		t.Fatalf("grandchild %d not running before mcpx was killed", gpid)
	}
	mcpx.Process.Kill()
	mcpx.Wait()
	waitGone(t, pid, 10*time.Second)
	waitGone(t, gpid, 10*time.Second)
}

// A group's watchdog waits in the group, and release ends the group with
// it and reaps it; a group released before its watchdog was due never
// starts one.
func TestProcessGroupWatchdog(t *testing.T) {
	t.Parallel()
	opts := helperOptions(t, "ignore-term")
	server := exec.Command(opts.Command)
	server.Env = append(os.Environ(), opts.Env...)
	server.SysProcAttr = procAttr()
	if _, err := server.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })

	g := newProcessGroup(server.Process.Pid, "", 0)
	<-g.started
	if g.watchdog == nil {
		t.Fatal("no watchdog started")
	}
	wpid := g.watchdog.Process.Pid
	if pgid, err := syscall.Getpgid(wpid); err != nil || pgid != g.id {
		t.Fatalf("watchdog %d in group %d (%v), want %d", wpid, pgid, err, g.id)
	}
	g.release()
	// Reaped: a zombie would still answer signal 0.
	if err := syscall.Kill(wpid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("watchdog %d still there after release (kill 0: %v)", wpid, err)
	}
	waitGone(t, server.Process.Pid, 10*time.Second)

	late := newProcessGroup(server.Process.Pid, "", time.Hour)
	late.release()
	if late.watchdog != nil {
		t.Error("a watchdog was started for a group released before it was due")
	}
}

// The server's own exit (not Close) is reported with its status even when
// nothing was read yet.
func TestStdioServerExitWhileReading(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "echo"))
	errc := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		errc <- err
	}()
	// Closing only stdin (what Close does first) makes echo exit 0.
	c.stdin.Close()
	select {
	case err := <-errc:
		var pe *PeerExitError
		if !errors.As(err, &pe) || pe.Code != 0 {
			t.Fatalf("Read = %v, want *PeerExitError with code 0", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Read did not report the server's exit")
	}
	// Writing to a server that has exited fails with a clear error.
	if err := c.Write(context.Background(), Frame{Data: []byte("{}")}); err == nil {
		t.Error("Write to an exited server succeeded")
	}
}

// A server that exits while a process it left behind holds its stdout is
// still reported as exited, instead of leaving Read blocked until a timeout.
func TestStdioServerExitWithStdoutHeldOpen(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "orphan-stdout"))
	f := readFrame(t, c)
	gpid, err := strconv.Atoi(string(f.Data))
	if err != nil {
		t.Fatalf("grandchild pid line %q: %v", f.Data, err)
	}
	t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
	_, err = readEnd(t, c)
	var pe *PeerExitError
	if !errors.As(err, &pe) || pe.Code != 3 {
		t.Fatalf("Read = %v, want *PeerExitError with code 3", err)
	}
	c.Close()
	waitGone(t, gpid, 10*time.Second)
}

// A server that exits on its own takes what it left behind in its
// process group with it, without waiting for Close: a connection kept
// after the server's end (the REPL's, until :reconnect or exit) would
// otherwise leave those processes running for as long.
func TestStdioServerExitEndsWhatItLeftBehind(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "spawn"))
	f := readFrame(t, c)
	gpid, err := strconv.Atoi(string(f.Data))
	if err != nil {
		t.Fatalf("grandchild pid line %q: %v", f.Data, err)
	}
	t.Cleanup(func() { syscall.Kill(gpid, syscall.SIGKILL) })
	c.stdin.Close() // the server exits at the end of its input; no Close
	if _, err := readEnd(t, c); !errors.As(err, new(*PeerExitError)) {
		t.Fatalf("Read = %v, want *PeerExitError", err)
	}
	testwait.Within(t, 5*time.Second, fmt.Sprintf("grandchild %d to end with the server", gpid), func() bool { return processGone(gpid) })
}

// startHelperMcpx runs the test binary as the helper mode (an mcpx
// with a server, see helper_test.go) and returns it with the two pids it
// reports on its first line; the test's cleanup kills it.
func startHelperMcpx(t *testing.T, mode string) (mcpx *exec.Cmd, pid1, pid2 int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	mcpx = exec.Command(exe)
	mcpx.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	mcpx.Stdout = w
	if err := mcpx.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { mcpx.Process.Kill(); mcpx.Wait() })
	r.SetReadDeadline(time.Now().Add(20 * time.Second))
	line, err := bufio.NewReader(r).ReadString('\n')
	if _, serr := fmt.Sscanf(line, "%d %d", &pid1, &pid2); err != nil || serr != nil {
		t.Fatalf("the helper's pids: %q, %v", line, err)
	}
	return mcpx, pid1, pid2
}
