package record

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Mode says whether a test (or an mcpx command run with --record-mode)
// talks to the live server and records the session, or is served the
// recording of it, as HTTP cassettes do. One switch for the command line
// and the Go API: --record-mode MODE, or the environment variable
// MCPX_RECORD (ModeEnv), so that MCPX_RECORD=update go test ./...
// records every trace of a repository again.
//
// A session is found in a trace by its name (SessionInfo.Name: a test's
// name, a command line); a lookup without a name takes the trace's first
// session.
type Mode string

// The record modes.
const (
	// ModeReplayOnly replays the recorded session; a missing trace, or a
	// trace without the session, is a failure. For CI, where nothing may
	// reach a live server.
	ModeReplayOnly Mode = "replay-only"
	// ModeOnce records the session when the trace is missing, and
	// otherwise replays it; a trace without the session is a failure.
	// The default of the Go API.
	ModeOnce Mode = "once"
	// ModeUpdate records the session again from the live server, in
	// place of its old recording (sessions of other names are kept).
	ModeUpdate Mode = "update"
	// ModeNew keeps what is recorded: it replays sessions the trace has
	// and records (adds) those it has not.
	ModeNew Mode = "new"
)

// ModeEnv names the environment variable that sets the record mode of
// every test and command (its value is a Mode).
const ModeEnv = "MCPX_RECORD"

// modes lists the record modes.
var modes = []Mode{ModeReplayOnly, ModeOnce, ModeUpdate, ModeNew}

// ParseMode reads a record mode's name.
func ParseMode(s string) (Mode, error) {
	for _, m := range modes {
		if string(m) == s {
			return m, nil
		}
	}
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return "", fmt.Errorf("%w %q (want %s)", ErrBadMode, s, strings.Join(names, ", "))
}

// ErrBadMode is matched by the error of ParseMode for an unknown mode.
var ErrBadMode = errors.New("unknown record mode")

// EnvMode returns the mode MCPX_RECORD sets, or def when it is unset or
// empty; a value that is no mode is an error naming the variable.
func EnvMode(def Mode) (Mode, error) {
	v := os.Getenv(ModeEnv)
	if v == "" {
		return def, nil
	}
	m, err := ParseMode(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", ModeEnv, err)
	}
	return m, nil
}

// Plan is what a mode decides for one session of one trace file.
type Plan struct {
	// Record is true when the session is to be recorded from the live
	// server; false when it is to be replayed (or verified) from the
	// trace.
	Record bool
	// Exists says the trace file exists (and is a trace).
	Exists bool
	// Session is the number of the recorded session to replay (when
	// !Record), or of the one a recording replaces (ModeUpdate), 0 when
	// none.
	Session int
}

// ErrNotRecorded is matched by the error of Mode.Plan when the mode may
// not record and the trace, or the session in it, is missing, and by that
// of NewReplayer when ReplayOptions.Session names a session the trace
// does not hold.
var ErrNotRecorded = errors.New("not recorded")

// NotRecordedError reports a session a mode may not record and that the
// trace does not hold.
type NotRecordedError struct {
	// File is the trace; Name the session looked for ("" for any).
	File, Name string
	// Mode is the mode in force.
	Mode Mode
	// Missing is true when the trace file itself is missing.
	Missing bool
}

func (e *NotRecordedError) Error() string {
	if e.Missing {
		return fmt.Sprintf("the trace %s does not exist, and record mode %s does not record it (modes %s, %s and %s do)", e.File, e.Mode, ModeOnce, ModeNew, ModeUpdate)
	}
	return fmt.Sprintf("the trace %s holds no session named %q, and record mode %s does not record it (modes %s and %s do)", e.File, e.Name, e.Mode, ModeNew, ModeUpdate)
}

// Is makes errors.Is(err, ErrNotRecorded) true.
func (e *NotRecordedError) Is(target error) bool { return target == ErrNotRecorded }

// Plan decides, for the session named name of the trace in file, whether
// to record it or replay it (see the modes). It reads the trace's index
// only. A session to replay from a trace whose header holds a setting that
// cannot be used (see Header.Check) is an error naming file that wraps
// the *HeaderError.
func (m Mode) Plan(file, name string) (Plan, error) {
	if _, err := ParseMode(string(m)); err != nil {
		return Plan{}, err
	}
	tf, err := OpenTrace(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if m == ModeReplayOnly {
			return Plan{}, &NotRecordedError{File: file, Name: name, Mode: m, Missing: true}
		}
		return Plan{Record: true}, nil
	case err != nil:
		return Plan{}, err
	}
	defer tf.Close()
	n := FindSession(tf.Index, name)
	p := Plan{Exists: true, Session: n}
	switch {
	case m == ModeUpdate:
		p.Record = true
	case n > 0:
	case m == ModeNew:
		p.Record = true
	default:
		return Plan{}, &NotRecordedError{File: file, Name: name, Mode: m}
	}
	if !p.Record {
		// The session is replayed with the header's settings: one that
		// cannot be used fails now, naming the file (a *HeaderError).
		if err := tf.Header.Check(); err != nil {
			return Plan{}, fmt.Errorf("%s: %w", file, err)
		}
	}
	return p, nil
}

// FindSession returns the number of the session named name in an
// index, the first session when name is "", 0 when there is none.
func FindSession(index []SessionIndex, name string) int {
	for _, x := range index {
		if name == "" && x.Events > 0 || name != "" && x.Info.Name == name {
			return x.N
		}
	}
	return 0
}
