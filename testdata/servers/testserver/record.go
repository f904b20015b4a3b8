package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// recordPID writes our PID to $TEST_PIDFILE, atomically so a test polling
// the file never reads half of it.
func recordPID() {
	name := os.Getenv("TEST_PIDFILE")
	if name == "" {
		return
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".tmp")
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err == nil {
		_ = os.Rename(tmp, name)
	}
}

// logFile is $TEST_LOG, or nil.
var logFile *os.File

func init() {
	if name := os.Getenv("TEST_LOG"); name != "" {
		logFile, _ = os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	}
}

// logEvent records something that happened to the server (not a line it
// received) in $TEST_LOG, as a line starting with "# ".
func logEvent(what string) {
	if logFile != nil {
		_, _ = logFile.WriteString("# " + what + "\n")
	}
}

// stdin is our standard input as seen by the server code: every line is
// appended to $TEST_LOG before the server reads it.
type stdin struct {
	*os.File // the read end of a pipe fed by the tee goroutine
	done     chan struct{}
}

// teeStdin starts copying os.Stdin, line by line, to $TEST_LOG and to the
// returned reader. Lines have no size limit.
func teeStdin() *stdin {
	r, w, err := os.Pipe()
	if err != nil {
		panic(err)
	}
	s := &stdin{File: r, done: make(chan struct{})}
	log := logFile
	go func() {
		defer close(s.done)
		defer w.Close()
		defer logEvent("stdin closed")
		br := bufio.NewReaderSize(os.Stdin, 64*1024)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				if log != nil {
					if line[len(line)-1] != '\n' {
						line = append(line, '\n')
					}
					_, _ = log.Write(line)
				}
				if _, werr := w.Write(line); werr != nil {
					// Nobody reads any more; keep logging what arrives.
					_, _ = io.Copy(logOrDiscard(log), br)
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return s
}

func logOrDiscard(f *os.File) io.Writer {
	if f == nil {
		return io.Discard
	}
	return f
}

// drained waits (at most d) until stdin reached EOF and everything read was
// logged.
func (s *stdin) drained(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
	}
}
