package transport

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// procAttr starts the server suspended, so that startTree can put it in
// its job object before it runs a single instruction (and so before it can
// start a process outside the job), and in a console process group of its
// own, so that a Ctrl-C in the console reaches mcpx alone: mcpx then
// shuts the server down in order. (A launcher's cmd.exe would otherwise
// also stop and ask "Terminate batch job (Y/N)?".)
//
// Go's syscall.SysProcAttr has no field for a job list
// (PROC_THREAD_ATTRIBUTE_JOB_LIST), so start-suspended, assign, resume is
// the race-free way with os/exec.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED | windows.CREATE_NEW_PROCESS_GROUP}
}

// canEnter checks nothing on Windows, whose directories have no search
// permission bit to lack.
func canEnter(string) error { return nil }

// startTree puts the server p, just started suspended by procAttr, in a
// new job object that kills every process in it when its last handle is
// closed, then lets the server run. Processes the server starts belong to
// the job too, so a launcher (npx.cmd, which Windows runs through cmd.exe;
// cmd /c) cannot leave the real server behind, and if mcpx dies, Windows
// closes the handle and the whole tree ends with it. On error the server
// is still suspended and the caller kills it. There is no mark (see
// serverMark): the job holds every descendant already.
func startTree(p *os.Process, _ string) (procTree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("creating a job object: %w", err)
	}
	if err := setupJob(job, p); err != nil {
		windows.CloseHandle(job)
		return nil, err
	}
	return jobObject(job), nil
}

func setupJob(job windows.Handle, p *os.Process) error {
	var limits windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	limits.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&limits)), uint32(unsafe.Sizeof(limits))); err != nil {
		return fmt.Errorf("setting up the job object: %w", err)
	}
	// The child is suspended and not yet waited for, so its pid cannot
	// have been reused: opening it by pid reaches this very process.
	// (os.Process.WithHandle would avoid the lookup but needs Go 1.26.)
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return fmt.Errorf("putting the server in its job object: %w", err)
	}
	assignErr := windows.AssignProcessToJobObject(job, h)
	windows.CloseHandle(h)
	if assignErr != nil {
		return fmt.Errorf("putting the server in its job object: %w", assignErr)
	}
	if err := resumeProcess(uint32(p.Pid)); err != nil {
		return fmt.Errorf("resuming the server: %w", err)
	}
	return nil
}

// resumeProcess resumes the threads of the process pid, which was created
// suspended. os/exec closes the main thread's handle and does not keep its
// id, so the thread is found in a snapshot of the system's threads; a
// process created suspended has no other thread until it runs.
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("listing threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	resumed := 0
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		if err := resumeThread(te.ThreadID); err != nil {
			return err
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("listing threads: %w", err)
	}
	if resumed == 0 {
		return fmt.Errorf("no thread of process %d found", pid)
	}
	return nil
}

func resumeThread(tid uint32) error {
	h, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, tid)
	if err != nil {
		return fmt.Errorf("opening thread %d: %w", tid, err)
	}
	defer windows.CloseHandle(h)
	if _, err := windows.ResumeThread(h); err != nil {
		return fmt.Errorf("resuming thread %d: %w", tid, err)
	}
	return nil
}

// jobObject is the handle of a server's job object.
type jobObject windows.Handle

// killedExitCode is the exit status of processes ended with their job,
// the one os.Process.Kill gives on Windows too.
const killedExitCode = 1

// terminate ends the job: Windows cannot ask a console program to
// terminate the way SIGTERM does.
// follow has nothing to do: the job object holds every process the
// server starts, however it detaches.
func (jobObject) follow() {}

func (jobObject) exiting() {}

func (j jobObject) terminate() { j.kill() }

func (j jobObject) kill() { _ = windows.TerminateJobObject(windows.Handle(j), killedExitCode) }

// release ends what is left in the job and closes the handle; closing the
// last handle alone would do (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE), but
// terminating first does not depend on no other handle being open.
func (j jobObject) release() {
	j.kill()
	_ = windows.CloseHandle(windows.Handle(j))
}
