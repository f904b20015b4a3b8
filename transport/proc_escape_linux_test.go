package transport

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
)

// startBystander starts a process that ignores SIGTERM in a session of
// its own, as a detached descendant of a server would be, but started by
// the test: no server's descendant, so no Close may end it. env is added
// to its environment.
func startBystander(t *testing.T, env ...string) *exec.Cmd {
	t.Helper()
	opts := helperOptions(t, "ignore-term", env...)
	cmd := exec.Command(opts.Command)
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if _, err := cmd.StdinPipe(); err != nil { // held open
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// A server's descendants that left its process group for a session of
// their own end with it, one that ignores SIGTERM included, while a
// process started beside the server in the same way is left alone.
func TestStdioCloseEndsDetachedDescendants(t *testing.T) {
	t.Parallel()
	bystander := startBystander(t)
	for _, step := range []string{"close-input", "terminate"} {
		t.Run("server exits at "+step, func(t *testing.T) {
			t.Parallel()
			opts := helperOptions(t, "detached")
			if step == "terminate" {
				// The server runs on after its input ends, so the tree is
				// followed and terminated while it runs.
				opts = helperOptions(t, "detached", helperNoExitEnv+"=1")
			}
			opts.CloseGrace, opts.TermGrace = 100*time.Millisecond, 5*time.Second
			c := startHelper(t, opts)
			f := readFrame(t, c)
			var cpid, gpid int
			if _, err := fmt.Sscanf(string(f.Data), "%d %d", &cpid, &gpid); err != nil {
				t.Fatalf("the helper's pids %q: %v", f.Data, err)
			}
			t.Cleanup(func() { syscall.Kill(cpid, syscall.SIGKILL); syscall.Kill(gpid, syscall.SIGKILL) })
			for _, pid := range []int{cpid, gpid} {
				if pgid, err := syscall.Getpgid(pid); err != nil || pgid == c.PID() {
					t.Fatalf("process %d in group %d (%v): not detached from the server's %d", pid, pgid, err, c.PID())
				}
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			waitGone(t, cpid, 10*time.Second)
			waitGone(t, gpid, 10*time.Second)
		})
	}
	t.Cleanup(func() {
		// After the subtests (parallel ones run before the parent's
		// cleanups), which signalled what they found at once.
		if processGone(bystander.Process.Pid) {
			t.Errorf("process %d, started beside the servers, was ended by their Close", bystander.Process.Pid)
		}
	})
}

// A recorded process is signalled only while its id still names the
// process recorded: one with another start time is another process.
func TestEscapeesSignalOnlyTheProcessRecorded(t *testing.T) {
	t.Parallel()
	p := startBystander(t)
	st, ok := readProcStat(p.Process.Pid)
	if !ok {
		t.Fatalf("no /proc/%d/stat", p.Process.Pid)
	}
	other := &escapees{found: []procID{{pid: p.Process.Pid, start: st.start + 1}}}
	other.signal(syscall.SIGKILL)
	if processGone(p.Process.Pid) {
		t.Fatalf("process %d was killed as a process with another start time", p.Process.Pid)
	}
	same := &escapees{found: []procID{{pid: p.Process.Pid, start: st.start}}}
	same.signal(syscall.SIGKILL)
	waitGone(t, p.Process.Pid, 10*time.Second)
}

// The fields read from /proc/PID/stat, whatever the command's name holds.
func TestParseProcStat(t *testing.T) {
	t.Parallel()
	line := "4242 (a) b (c)) S 17 4242 4242 0 -1 4194560 100 31 0 0 1 2 0 0 20 0 1 0 987654 1000 100 18446744073709551615\n"
	st, ok := parseProcStat([]byte(line))
	if want := (procStat{ppid: 17, pgid: 4242, start: 987654, cminflt: 31}); !ok || st != want {
		t.Errorf("parseProcStat = %+v, %v; want %+v", st, ok, want)
	}
	zombie := "4242 (a) Z 17 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 0 0 0\n"
	if _, ok := parseProcStat([]byte(zombie)); ok {
		t.Error("a zombie was read as a running process")
	}
	if _, ok := parseProcStat([]byte("4242 (a S 17")); ok {
		t.Error("a cut line was read")
	}
}

// What following a server costs at Close, for a server without children
// (the common case; go test -bench Follow ./transport).
func BenchmarkFollow(b *testing.B) {
	cmd := exec.Command("sleep", "60")
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	for b.Loop() {
		newEscapees(cmd.Process.Pid, serverMark(nil)).follow(cmd.Process.Pid)
	}
}

// Where the kernel keeps no children lists, every process's parent is
// read instead: both find the same child.
func TestChildrenListsAndScanAgree(t *testing.T) {
	t.Parallel()
	p := startBystander(t)
	kids, ok := listChildren(os.Getpid())
	if !ok {
		t.Skip("this kernel keeps no /proc/PID/task/TID/children lists")
	}
	if !slices.Contains(kids, p.Process.Pid) {
		t.Errorf("listChildren(%d) = %v, without the child %d", os.Getpid(), kids, p.Process.Pid)
	}
	if scanned := scanChildren()[os.Getpid()]; !slices.Contains(scanned, p.Process.Pid) {
		t.Errorf("scanChildren()[%d] = %v, without the child %d", os.Getpid(), scanned, p.Process.Pid)
	}
}

// A daemon that a server started, and that lost its parent (it forked
// twice, in a session of its own) ends with the server by the server's
// mark, whether the server exits as its stdin closes, runs on until it is
// terminated, or exited on its own before Close; while processes started
// beside the servers, without the mark or with another server's, are left
// alone.
func TestStdioCloseEndsDaemons(t *testing.T) {
	t.Parallel()
	unmarked := startBystander(t)
	otherMark := startBystander(t, serverMark(nil))
	for _, tt := range []struct {
		name string
		env  []string
	}{
		{"server exits at close-input", nil},
		{"server exits at terminate", []string{helperNoExitEnv + "=1"}},
		{"server exited before Close", []string{helperExitEnv + "=1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := helperOptions(t, "daemon", tt.env...)
			opts.CloseGrace, opts.TermGrace = 100*time.Millisecond, 5*time.Second
			c := startHelper(t, opts)
			f := readFrame(t, c)
			var cpid, dpid int
			if _, err := fmt.Sscanf(string(f.Data), "%d %d", &cpid, &dpid); err != nil {
				t.Fatalf("the helper's pids %q: %v", f.Data, err)
			}
			t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
			if st, ok := readProcStat(dpid); !ok || st.ppid == c.PID() || st.pgid == c.PID() {
				t.Fatalf("daemon %d: %+v, %v; want it running, neither the server's child nor in its group", dpid, st, ok)
			}
			if !processGone(cpid) {
				t.Fatalf("the daemon's first parent %d still runs", cpid)
			}
			if len(tt.env) > 0 && tt.env[0] == helperExitEnv+"=1" {
				select {
				case <-c.Exited():
				case <-time.After(20 * time.Second):
					t.Fatal("the server did not exit on its own")
				}
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			waitGone(t, dpid, 10*time.Second)
		})
	}
	t.Cleanup(func() {
		// After the subtests, as in TestStdioCloseEndsDetachedDescendants.
		for name, p := range map[string]*exec.Cmd{"without a mark": unmarked, "with another mark": otherMark} {
			if processGone(p.Process.Pid) {
				t.Errorf("process %d, started beside the servers %s, was ended by their Close", p.Process.Pid, name)
			}
		}
	})
}

// A server that starts a daemon only once its stdin ends, as Close
// shuts it down, after the last follow found it without children, and
// exits, is swept all the same: it waited for the daemon's first fork,
// which its remains tell.
func TestStdioCloseEndsDaemonStartedAtShutdown(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pids")
	opts := helperOptions(t, "daemon-at-eof", helperPidFileEnv+"="+pidFile)
	opts.CloseGrace = 20 * time.Second // it exits within, before any other follow
	c := startHelper(t, opts)
	if f := readFrame(t, c); string(f.Data) != "ready" {
		t.Fatalf("the helper said %q, want ready", f.Data)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the server wrote no pids: %v", err)
	}
	var cpid, dpid int
	if _, err := fmt.Sscanf(string(b), "%d %d", &cpid, &dpid); err != nil {
		t.Fatalf("the helper's pids %q: %v", b, err)
	}
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
	waitGone(t, dpid, 10*time.Second)
}

// A server that never had a child is not swept for its mark (it cannot
// have left a daemon); one that had a child, though it waited for it, is.
func TestFollowNotesChildren(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode   string
		forked bool
	}{{"exit-on-eof", false}, {"daemon", true}} {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			opts := helperOptions(t, tt.mode)
			cmd := exec.Command(opts.Command)
			cmd.Env = append(os.Environ(), opts.Env...)
			cmd.SysProcAttr = procAttr()
			if _, err := cmd.StdinPipe(); err != nil { // held open
				t.Fatal(err)
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			e := newEscapees(cmd.Process.Pid, serverMark(nil))
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("the helper's report: %v", err)
			}
			if tt.mode == "daemon" {
				var cpid, dpid int
				fmt.Sscanf(line, "%d %d", &cpid, &dpid)
				t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
			}
			e.follow(cmd.Process.Pid)
			if !e.looked || e.forked != tt.forked {
				t.Errorf("after follow: looked %v, forked %v; want true, %v", e.looked, e.forked, tt.forked)
			}
		})
	}
}

// The mark is found as one of the marks of an entry's value only,
// wherever the reads cut it.
func TestContainsMark(t *testing.T) {
	t.Parallel()
	mark := []byte("mcpx-mark-ABC")
	tests := []struct {
		environ string
		want    bool
	}{
		{"MCPX_SERVER_MARK=mcpx-mark-ABC\x00", true},
		{"A=1\x00MCPX_SERVER_MARK=mcpx-mark-ABC\x00B=2\x00", true},
		{"A=1\x00B=2\x00MCPX_SERVER_MARK=mcpx-mark-ABC\x00", true},
		{"MCPX_SERVER_MARK=mcpx-mark-XYZ:mcpx-mark-ABC\x00", true},
		{"MCPX_SERVER_MARK=mcpx-mark-XYZ:mcpx-mark-ABC:mcpx-mark-DEF\x00", true},
		{"MCPX_SERVER_MARK=mcpx-mark-ABC:mcpx-mark-DEF\x00", true},
		{"MCPX_SERVER_MARK=mcpx-mark-ABCmcpx-mark-ABC\x00", false},
		{"", false},
		{"A=1\x00MCPX_SERVER_MARK=mcpx-mark-ABCD\x00", false},
		{"A=1\x00MCPX_SERVER_MARK=mcpx-mark-AB\x00", false},
		{"A=1\x00MCPX_SERVER_MARK=xmcpx-mark-ABC\x00", false},
		{"mcpx-mark-ABC\x00", false},
		{"MCPX_SERVER_MARK=mcpx-mark-ABC", false}, // cut: not the whole entry
	}
	for _, tt := range tests {
		for _, size := range []int{len(mark) + 2, len(mark) + 3, 64} {
			for _, r := range []io.Reader{strings.NewReader(tt.environ), iotest.OneByteReader(strings.NewReader(tt.environ))} {
				if got := containsMark(r, mark, make([]byte, size)); got != tt.want {
					t.Errorf("containsMark(%q) through %d bytes = %v, want %v", tt.environ, size, got, tt.want)
				}
			}
		}
	}
}

// A server's mark entry begins with a new mark and carries on the marks
// it would otherwise inherit, given or mcpx's own, valid ones only and
// bounded in number.
func TestServerMarkCarriesInherited(t *testing.T) {
	a, b := ServerMarkPrefix+strings.Repeat("A", 26), ServerMarkPrefix+strings.Repeat("7", 26)
	own := func(entry string) string {
		v, ok := strings.CutPrefix(entry, serverMarkVar+"=")
		if !ok {
			t.Fatalf("serverMark = %q, not a %s entry", entry, serverMarkVar)
		}
		m, rest, _ := strings.Cut(v, ":")
		if !isMark(m) || m == a || m == b {
			t.Fatalf("serverMark = %q: its first mark is not a new one", entry)
		}
		return rest
	}
	t.Setenv(serverMarkVar, a)
	if rest := own(serverMark(nil)); rest != a {
		t.Errorf("inherited from mcpx's environment: carried %q, want %q", rest, a)
	}
	if rest := own(serverMark([]string{serverMarkVar + "=junk", serverMarkVar + "=" + b + ":bad:" + a})); rest != b+":"+a {
		t.Errorf("given in env: carried %q, want %q", rest, b+":"+a)
	}
	if rest := own(serverMark([]string{serverMarkVar + "="})); rest != "" {
		t.Errorf("given empty: carried %q, want nothing", rest)
	}
	t.Setenv(serverMarkVar, strings.Repeat(a+":", 100))
	if rest := own(serverMark(nil)); strings.Count(rest, ServerMarkPrefix) != maxInheritedMarks {
		t.Errorf("carried %d marks of 100, want %d", strings.Count(rest, ServerMarkPrefix), maxInheritedMarks)
	}
}

// What a sweep costs, per process on the system, when a server had
// children (go test -bench Sweep ./transport).
func BenchmarkSweep(b *testing.B) {
	names, err := procNames()
	if err != nil {
		b.Fatal(err)
	}
	e := newEscapees(0, serverMark(nil))
	e.looked, e.forked = true, true
	for b.Loop() {
		e.sweep(-1)
	}
	b.ReportMetric(float64(len(names)), "entries")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(names)), "ns/entry")
}

// A daemon started by the server of an mcpx that is itself a server
// (mcpx run by a server, a proxy's mcpx) ends with the outer server even
// when the inner mcpx is killed before it can end it: the daemon holds
// the outer server's mark beside the inner one's.
func TestStdioCloseEndsNestedDaemons(t *testing.T) {
	t.Parallel()
	opts := helperOptions(t, "nest")
	opts.CloseGrace, opts.TermGrace = 100*time.Millisecond, 5*time.Second
	c := startHelper(t, opts)
	f := readFrame(t, c)
	var cpid, dpid int
	if _, err := fmt.Sscanf(string(f.Data), "%d %d", &cpid, &dpid); err != nil {
		t.Fatalf("the helper's pids %q: %v", f.Data, err)
	}
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	waitGone(t, dpid, 10*time.Second)
}

// A daemon that cleared its environment (no mark) and lost its chain of
// parents, but kept the server's stdout and stderr, ends with the server
// all the same, found by the pipes it holds, at Close (which does not
// wait for those pipes to end) or once the server has exited on its own.
func TestStdioCloseEndsBareDaemonsHoldingThePipes(t *testing.T) {
	t.Parallel()
	for _, exits := range []bool{false, true} {
		t.Run(fmt.Sprintf("server exits on its own %v", exits), func(t *testing.T) {
			t.Parallel()
			opts := helperOptions(t, "bare-daemon")
			if exits {
				opts = helperOptions(t, "bare-daemon", helperExitEnv+"=1")
			}
			c := startHelper(t, opts)
			f := readFrame(t, c)
			var cpid, dpid int
			if _, err := fmt.Sscanf(string(f.Data), "%d %d", &cpid, &dpid); err != nil {
				t.Fatalf("the helper's pids %q: %v", f.Data, err)
			}
			t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", dpid)); err != nil || strings.Contains(string(b), serverMarkVar) {
				t.Fatalf("daemon %d's environment %q (%v): want it readable, without the mark", dpid, b, err)
			}
			if exits {
				// No Close: the daemon ends with the server.
				waitGone(t, dpid, 20*time.Second)
				return
			}
			if st, ok := readProcStat(dpid); !ok || st.ppid == c.PID() || st.pgid == c.PID() {
				t.Fatalf("daemon %d: %+v, %v; want it running, neither the server's child nor in its group", dpid, st, ok)
			}
			// (Close returns once the daemon is ended: what held the
			// server's stderr no longer keeps it waiting. Not timed: a
			// loaded machine must not fail it.)
			if err := c.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			waitGone(t, dpid, 10*time.Second)
		})
	}
}

// A process that holds mcpx's own end of the server's output is not the
// server's: only the writers of the pipes are ended. (A child mcpx is
// starting holds every descriptor of mcpx's between its fork and its
// exec: another server, a watchdog, a browser.)
func TestStdioCloseSparesReadersOfThePipes(t *testing.T) {
	t.Parallel()
	c := startHelper(t, helperOptions(t, "bare-daemon"))
	f := readFrame(t, c)
	var cpid, dpid int
	if _, err := fmt.Sscanf(string(f.Data), "%d %d", &cpid, &dpid); err != nil {
		t.Fatalf("the helper's pids %q: %v", f.Data, err)
	}
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reader := exec.Command(exe)
	reader.Env = append(os.Environ(), helperEnv+"=ignore-term", "GORACE=atexit_sleep_ms=0")
	// mcpx's ends, opened anew: exec makes what it passes on blocking,
	// which the raw reads of mcpx's own descriptions must never be.
	for _, f := range []*os.File{c.stdout, c.stderr} {
		var name string
		rc, err := f.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		rc.Control(func(fd uintptr) { name = fmt.Sprintf("/proc/self/fd/%d", fd) })
		end, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer end.Close()
		reader.ExtraFiles = append(reader.ExtraFiles, end)
	}
	out, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reader.Process.Kill(); reader.Wait() })
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		t.Fatalf("the reader's first line: %q, %v", line, err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	waitGone(t, dpid, 10*time.Second)
	if processGone(reader.Process.Pid) {
		t.Errorf("process %d, which held only mcpx's ends of the server's pipes, was ended", reader.Process.Pid)
	}
}

// When mcpx is killed, the server's watchdog ends what holds the
// server's mark outside its group too: a daemon that lost its parent.
func TestKilledMcpxWatchdogEndsDaemons(t *testing.T) {
	t.Parallel()
	mcpx, _, dpid := startHelperMcpx(t, "mcpx-daemon")
	t.Cleanup(func() { syscall.Kill(dpid, syscall.SIGKILL) })
	if processGone(dpid) {
		t.Fatalf("daemon %d not running before mcpx was killed", dpid)
	}
	mcpx.Process.Kill()
	mcpx.Wait()
	waitGone(t, dpid, 10*time.Second)
}

// containsMark agrees with a plain reading of the whole environment,
// whatever the environment and wherever the reads cut it.
func FuzzContainsMark(f *testing.F) {
	f.Add([]byte("A=1\x00MCPX_SERVER_MARK=mcpx-mark-AB:mcpx-mark-CD\x00"), uint8(0), false)
	f.Add([]byte("MCPX_SERVER_MARK=mcpx-mark-CD:mcpx-mark-AB\x00"), uint8(3), true)
	f.Add([]byte("X=:mcpx-mark-ABmcpx-mark-AB\x00"), uint8(1), false)
	mark := []byte("mcpx-mark-AB")
	f.Fuzz(func(t *testing.T, environ []byte, extra uint8, oneByte bool) {
		want := false
		entries := bytes.Split(environ, []byte{0})
		for n, e := range entries {
			ended := n < len(entries)-1 // the last has no NUL after it
			for i := 1; i+len(mark) <= len(e); i++ {
				end := i + len(mark)
				if bytes.Equal(e[i:end], mark) && (e[i-1] == '=' || e[i-1] == ':') && (end == len(e) && ended || end < len(e) && e[end] == ':') {
					want = true
				}
			}
		}
		var r io.Reader = bytes.NewReader(environ)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		if got := containsMark(r, mark, make([]byte, len(mark)+2+int(extra%40))); got != want {
			t.Errorf("containsMark(%q) = %v, want %v", environ, got, want)
		}
	})
}
