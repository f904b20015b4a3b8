package sessiond

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

// validName is what a session may be called: it names a file. Compiled
// when first used: its bounded repetition makes a large program, which
// every start of mcpx would otherwise pay for (issue 13).
var validName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
})

// ErrBadName is matched by the error for a session name that cannot name a
// session.
var ErrBadName = errors.New("invalid session name")

// CheckName reports whether name can name a session: letters, digits, '.',
// '_' and '-', starting with a letter or digit, at most 64 characters.
func CheckName(name string) error {
	if !validName().MatchString(name) {
		return fmt.Errorf("%w %q: use letters, digits, '.', '_' and '-' (at most 64, starting with a letter or digit)", ErrBadName, name)
	}
	return nil
}

// ErrNotPrivate is matched by the error for a session directory or socket
// that another user owns or can reach: mcpx uses neither.
var ErrNotPrivate = errors.New("not private to this user")

// maxSocketPath is the longest path a unix socket address holds on every
// system mcpx runs on (macOS: 104 bytes with the terminating NUL).
const maxSocketPath = 103

// Dir returns the directory that holds this user's session sockets,
// creating it (mode 0700) when needed: mcpx in $XDG_RUNTIME_DIR (the
// per-user runtime directory of the XDG Base Directory Specification),
// else mcpx-UID in the temp directory ($TMPDIR). A directory that exists
// but belongs to another user, or is a symbolic link, is refused: someone
// else could then read the sockets. getenv reads the environment (nil:
// os.Getenv).
func Dir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	// from says what chose the directory, and fix how to choose another
	// (a runtime directory of a user who logged out, a temp directory
	// that is not writable, one another user took first).
	dir, from, fix := "", "", ""
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		dir, from = filepath.Join(rt, "mcpx"), " (in $XDG_RUNTIME_DIR, "+rt+")"
		fix = "set XDG_RUNTIME_DIR to a directory of yours that exists, or unset it to use the temp directory"
	} else {
		tmp := getenv("TMPDIR")
		if tmp == "" || !filepath.IsAbs(tmp) {
			tmp = os.TempDir()
			if !filepath.IsAbs(tmp) {
				// On Unix os.TempDir is $TMPDIR as it is: a relative one
				// gave every working directory sessions of its own, and
				// mcpx @NAME elsewhere did not find the session.
				tmp = "/tmp"
			}
		}
		dir, from = filepath.Join(tmp, "mcpx-"+userTag()), " (in the temp directory, "+tmp+")"
		fix = "set XDG_RUNTIME_DIR (or TMPDIR) to a directory of yours that exists"
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", &DirError{Err: fmt.Errorf("session directory%s: %w", from, err), Fix: fix}
	}
	if err := checkDir(dir, true); err != nil {
		return "", &DirError{Err: err, Fix: fix}
	}
	return dir, nil
}

// DirError reports a session directory that cannot be made or used, with
// what to do about it.
type DirError struct {
	Err error
	// Fix says how to choose another directory.
	Fix string
}

func (e *DirError) Error() string { return e.Err.Error() + "; " + e.Fix }

func (e *DirError) Unwrap() error { return e.Err }

// socketPath is where the session name listens in dir.
func socketPath(dir, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name+".sock")
	if len(p) > maxSocketPath {
		// A shorter name does when the directory leaves room for one.
		fix := "set XDG_RUNTIME_DIR (or TMPDIR) to a shorter directory"
		if n := maxSocketPath - len(filepath.Join(dir, ".sock")); n > 0 {
			fix = fmt.Sprintf("give the session a name of at most %d characters, or %s", n, fix)
		}
		return "", fmt.Errorf("session socket %s: the path is longer than the %d bytes a unix socket address holds; %s", p, maxSocketPath, fix)
	}
	return p, nil
}

// LogPath is the file a background session named name writes its log to.
func LogPath(dir, name string) string { return filepath.Join(dir, name+".log") }

// checkDir makes sure dir is a directory of this user's that nobody else
// can reach. With fix, a directory of ours with a looser mode is made 0700.
func checkDir(dir string, fix bool) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("session directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("session directory %s: %w: it is not a directory (a symbolic link?)", dir, ErrNotPrivate)
	}
	if err := ownedByMe(fi); err != nil {
		return fmt.Errorf("session directory %s: %w", dir, err)
	}
	if fi.Mode().Perm()&0o077 != 0 && privateModes {
		if !fix {
			return fmt.Errorf("session directory %s: %w: its mode is %04o", dir, ErrNotPrivate, fi.Mode().Perm())
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("session directory: %w", err)
		}
	}
	return nil
}

// checkSocket makes sure the socket at path is this user's.
func checkSocket(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if fi.Mode()&fs.ModeSocket == 0 && privateModes {
		return fmt.Errorf("%s: %w: it is not a socket", path, ErrNotPrivate)
	}
	if err := ownedByMe(fi); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
