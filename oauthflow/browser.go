package oauthflow

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/pkg/browser"
)

// Browser shows the authorization URL to the person. It returns once the
// URL is handed over; exited, when not nil, receives an error if the
// browser program failed before the authorization completed (so the wait
// for the callback ends at once instead of timing out).
type Browser func(url string) (exited <-chan error, err error)

// CommandBrowser runs the browser named by a BROWSER environment variable:
// a list of commands separated by the system's path list separator (':',
// ';' on Windows, where ':' is in every absolute path), each split on
// spaces, with %s
// replaced by the URL (or the URL appended as the last argument). The first
// command that starts is used; it is not waited for (a browser may run for
// long), but a non-zero exit is reported on exited with its last stderr
// lines.
func CommandBrowser(spec string) Browser {
	return func(u string) (<-chan error, error) {
		var errs []error
		for _, entry := range strings.Split(spec, string(os.PathListSeparator)) {
			fields := strings.Fields(entry)
			if len(fields) == 0 {
				continue
			}
			args := make([]string, 0, len(fields)+1)
			substituted := false
			for _, f := range fields[1:] {
				if strings.Contains(f, "%s") {
					f = strings.ReplaceAll(f, "%s", u)
					substituted = true
				}
				args = append(args, f)
			}
			if !substituted {
				args = append(args, u)
			}
			cmd := exec.Command(fields[0], args...)
			tail := &tailBuffer{max: 2048}
			cmd.Stdout = io.Discard
			cmd.Stderr = tail
			if err := cmd.Start(); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", fields[0], err))
				continue
			}
			exited := make(chan error, 1)
			go func() {
				if err := cmd.Wait(); err != nil {
					msg := fmt.Sprintf("the browser command %s (from BROWSER) failed: %v", fields[0], err)
					if t := tail.last(3); t != "" {
						msg += "; its stderr: " + t
					}
					exited <- errors.New(msg)
				}
			}()
			return exited, nil
		}
		if len(errs) == 0 {
			return nil, errors.New("BROWSER names no command")
		}
		return nil, fmt.Errorf("cannot run the browser from BROWSER: %w", errors.Join(errs...))
	}
}

var browserOutput sync.Once

// SystemBrowser opens the URL in the desktop's default browser
// (github.com/pkg/browser: xdg-open and friends, open, start).
func SystemBrowser() Browser {
	return func(u string) (<-chan error, error) {
		browserOutput.Do(func() {
			// The opener's own output must not reach mcpx's stdout.
			browser.Stdout, browser.Stderr = io.Discard, io.Discard
		})
		if err := browser.OpenURL(u); err != nil {
			return nil, fmt.Errorf("cannot open a browser: %w", err)
		}
		return nil, nil
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = t.buf[len(t.buf)-t.max:]
	}
	return len(p), nil
}

func (t *tailBuffer) last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := bytes.Split(bytes.TrimSpace(t.buf), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var parts []string
	for _, l := range lines {
		if s := strings.TrimSpace(string(l)); s != "" {
			parts = append(parts, s)
		}
	}
	return strings.Join(parts, " | ")
}
