package transport

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// A server started suspended (to join its job first) runs and is shut
// down in order: it echoes, then exits by itself when its stdin closes.
func TestStdioWindowsRoundTrip(t *testing.T) {
	opts := helperOptions(t, "echo")
	opts.CloseGrace = 10 * time.Second
	c := startHelper(t, opts)
	if err := c.Write(context.Background(), Frame{Data: []byte("hello")}); err != nil {
		t.Fatal(err)
	}
	if f := readFrame(t, c); string(f.Data) != "hello" {
		t.Fatalf("echoed %q, want %q", f.Data, "hello")
	}
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v: the server was not let exit on EOF", d)
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("server exit code = %d, want 0 (it exits on EOF)", code)
	}
}

// jobPIDs lists the processes in the server's job object, if it has one.
func jobPIDs(t *testing.T, c *StdioConn) []int {
	t.Helper()
	job, ok := c.tree.(jobObject)
	if !ok {
		t.Errorf("the server's tree is a %T, want a jobObject", c.tree)
		return nil
	}
	// JOBOBJECT_BASIC_PROCESS_ID_LIST with room for 32 ids.
	var list struct {
		assigned, listed uint32
		ids              [32]uintptr
	}
	if err := windows.QueryInformationJobObject(windows.Handle(job), windows.JobObjectBasicProcessIdList,
		uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil); err != nil {
		t.Fatalf("QueryInformationJobObject: %v", err)
	}
	var pids []int
	for _, id := range list.ids[:list.listed] {
		pids = append(pids, int(id))
	}
	return pids
}

// A process the server starts is in its job, and Close ends it even when
// the server itself exits on EOF and leaves it behind.
func TestStdioJobEndsLeftBehindChildren(t *testing.T) {
	opts := helperOptions(t, "spawn")
	opts.CloseGrace = 10 * time.Second
	c := startHelper(t, opts)
	gpid, err := strconv.Atoi(string(readFrame(t, c).Data))
	if err != nil {
		t.Fatal(err)
	}
	grandchild := openProcess(t, gpid)
	if !running(t, grandchild) {
		t.Fatal("the server's child exited before Close")
	}
	pids := jobPIDs(t, c)
	if !slices.Contains(pids, c.PID()) || !slices.Contains(pids, gpid) {
		t.Errorf("job holds %v, want the server %d and its child %d", pids, c.PID(), gpid)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if code := c.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("server exit code = %d, want 0 (it exits on EOF)", code)
	}
	waitExited(t, grandchild, "the server's child", 10*time.Second)
}

// A server behind a launcher (cmd /c, or a .cmd file found on PATH the way
// npx.cmd is, which Windows runs through cmd.exe) does not outlive Close:
// the launcher does not exit on EOF, so Close ends the job, and the job
// holds the real server too. Ending only the launcher would leave it.
func TestStdioJobEndsLauncherTree(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	launcher := filepath.Join(dir, "mcpx-test-server.cmd")
	if err := os.WriteFile(launcher, []byte("@\""+exe+"\" %*\r\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	comspec := os.Getenv("ComSpec")
	if comspec == "" {
		comspec = "cmd.exe"
	}
	tests := []struct {
		name    string
		command string
		args    []string
	}{
		{"cmd /c", comspec, []string{"/c", exe}},
		{".cmd on PATH", "mcpx-test-server", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := helperOptions(t, "ignore-eof")
			opts.Command, opts.Args = tt.command, tt.args
			opts.CloseGrace = 50 * time.Millisecond
			c := startHelper(t, opts)
			line := strings.TrimSpace(string(readFrame(t, c).Data))
			pid, err := strconv.Atoi(line)
			if err != nil {
				t.Fatalf("server pid line %q: %v", line, err)
			}
			if pid == c.PID() {
				t.Fatalf("the server runs as mcpx's direct child (pid %d), not behind a launcher", pid)
			}
			server := openProcess(t, pid)
			if !running(t, server) {
				t.Fatal("the server exited before Close")
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close = %v", err)
			}
			waitExited(t, server, "the server behind "+tt.name, 10*time.Second)
		})
	}
}

// When mcpx dies without Close (killed, crashed), Windows closes its
// handle to the job, and the job's limit kills every process in it.
func TestStdioJobDiesWithMcpx(t *testing.T) {
	c := startHelper(t, helperOptions(t, "mcpx"))
	var procs []windows.Handle
	for _, what := range []string{"server", "server's child"} {
		line := strings.TrimSpace(string(readFrame(t, c).Data))
		pid, err := strconv.Atoi(line)
		if err != nil {
			t.Fatalf("%s pid line %q: %v", what, line, err)
		}
		procs = append(procs, openProcess(t, pid))
	}
	for _, h := range procs {
		if !running(t, h) {
			t.Fatal("a process exited before mcpx was killed")
		}
	}
	// Kill the process playing mcpx alone, not its own job.
	if err := c.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	waitExited(t, procs[0], "the server of a killed mcpx", 10*time.Second)
	waitExited(t, procs[1], "the server's child of a killed mcpx", 10*time.Second)
}
