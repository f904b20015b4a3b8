package repl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/filelock"
	"github.com/mcpx-dev/mcpx/internal/outfile"
)

// historyLineMax is the longest command the history keeps (a longer one is
// left out, and skipped when the file is read): what is read back is held
// in memory, HistoryLimit commands of it.
const historyLineMax = 1 << 20

// historyLockWait bounds the wait for another REPL's hold on the history
// file (it holds it for one append, or to trim the file).
const historyLockWait = 2 * time.Second

// historyFile is the history on disk, which every mcpx REPL of the person
// shares. A regular file is appended to by a write of its own for each
// command, under the file's lock (internal/filelock), and trimmed to the
// limit — replaced — under the same lock: an append held open from the
// start would go on into the file another REPL has just replaced (and be
// lost with it), and a trim between another's read and its replacement
// would drop what was appended meanwhile. Something that is not a regular
// file (/dev/null, a FIFO) is written through, as outfile does, and not
// read.
type historyFile struct {
	path    string
	limit   int
	onError func(error)

	mu     sync.Mutex
	direct *outfile.File // written through (not a regular file)
	failed bool          // onError was called
	closed bool
}

var privateFile = outfile.Options{Perm: 0o600} // commands can hold secrets

// openHistory opens the history file path (in a private directory, made if
// missing) and returns the commands it holds, the newest limit of them;
// when it holds more, it is trimmed to those.
func openHistory(path string, limit int, onError func(error)) (*historyFile, []string) {
	h := &historyFile{path: path, limit: limit, onError: onError}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		h.fail(err)
		return h, nil
	}
	ctx := context.Background()
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		f, err := outfile.Append(ctx, path, privateFile)
		if err != nil {
			h.fail(err)
			return h, nil
		}
		h.direct = f
		return h, nil
	}
	release, err := filelock.Acquire(ctx, path, historyLockWait)
	if err != nil {
		h.fail(err)
		return h, nil
	}
	defer release()
	lines, total, err := readHistory(path, limit)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		h.fail(err)
		return h, lines
	}
	if total > limit {
		var b bytes.Buffer
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		if err := outfile.WriteFile(ctx, path, b.Bytes(), privateFile); err != nil {
			h.fail(err)
		}
	}
	return h, lines
}

// readHistory returns the newest limit commands of the file, and how many
// lines it has. A line longer than historyLineMax counts, but is not
// returned.
func readHistory(path string, limit int) (lines []string, total int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64*1024)
	var long bool // inside a line too long to keep
	var cur []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(chunk) > 0 && !long {
			cur = append(cur, chunk...)
			if len(cur) > historyLineMax {
				long, cur = true, cur[:0]
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(chunk) > 0 || len(cur) > 0 {
			if l := strings.TrimSpace(string(cur)); l != "" || long {
				total++
				if !long {
					lines = append(lines, l)
					if len(lines) > 2*limit {
						lines = append(lines[:0], lines[len(lines)-limit:]...)
					}
				}
			}
		}
		long, cur = false, cur[:0]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	if len(lines) > limit {
		lines = lines[len(lines)-limit:]
	}
	return lines, total, nil
}

// add appends a command.
func (h *historyFile) add(line string) {
	if len(line) > historyLineMax {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	b := []byte(line + "\n")
	if h.direct != nil {
		if _, err := h.direct.Write(b); err != nil {
			h.fail(err)
		}
		return
	}
	if h.failed {
		return // said once; not tried again for each command
	}
	ctx := context.Background()
	release, err := filelock.Acquire(ctx, h.path, historyLockWait)
	if err != nil {
		h.fail(err)
		return
	}
	defer release()
	f, err := outfile.Append(ctx, h.path, privateFile)
	if err != nil {
		h.fail(err)
		return
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		h.fail(err)
	}
}

// fail reports the first failure to read or write the file.
func (h *historyFile) fail(err error) {
	if h.failed {
		return
	}
	h.failed = true
	if h.onError != nil {
		h.onError(fmt.Errorf("%s: %w", h.path, err))
	}
}

func (h *historyFile) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	if h.direct != nil {
		h.direct.Close()
	}
}
