package cmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestReadJSONArgIsBounded: @- and @file read at most the message size
// limit; more is a usage error that names the limit (before, @/dev/zero
// grew until the kernel killed mcpx).
func TestReadJSONArgIsBounded(t *testing.T) {
	const limit = 64
	big := `{"s":"` + strings.Repeat("x", limit) + `"}`
	file := filepath.Join(t.TempDir(), "args.json")
	if err := os.WriteFile(file, []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"@-", "@" + file} {
		_, err := readJSONArg(context.Background(), "--args", v, argSource{stdin: strings.NewReader(big), limit: limit})
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "is larger than the maximum message size (64 bytes); raise --max-message-size") {
			t.Errorf("%s of %d bytes with a limit of %d: %v", v, len(big), limit, err)
		}
	}
	// At the limit it is read.
	fits := `{"s":"` + strings.Repeat("x", limit-8) + `"}`
	if b, err := readJSONArg(context.Background(), "--args", "@-", argSource{stdin: strings.NewReader(fits), limit: int64(len(fits))}); err != nil || string(b) != fits {
		t.Errorf("%d bytes at a limit of %d: %q, %v", len(fits), len(fits), b, err)
	}
}

// TestReadJSONArgHonoursContext: a read that waits (here a pipe whose
// writer never writes) ends when the context does, as an interruption
// (before, Ctrl-C waited for the writer).
func TestReadJSONArgHonoursContext(t *testing.T) {
	r, w := io.Pipe()
	defer w.Close()
	err := readEndsWithContext(t, func(ctx context.Context) error {
		_, err := readJSONArg(ctx, "--args", "@-", argSource{stdin: r, limit: 1 << 20})
		return err
	})
	if code, _ := classify(err); code != ExitInterrupted {
		t.Errorf("exit %d, want %d", code, ExitInterrupted)
	}
}

// readEndsWithContext runs read with a context it cancels and returns its
// error, which must be context.Canceled; the test fails if read does not
// return within a bound.
func readEndsWithContext(t *testing.T, read func(context.Context) error) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- read(ctx) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the read did not end with its context")
		return nil
	}
}

// On the BSDs and macOS, /dev/stdin and /dev/fd/0 are standard input
// itself (dup(0)), whatever it is: a script the REPL reads from a file
// would be read on from where the REPL is. On Linux, and for any other
// name, a regular file is opened anew.
func TestDupsStdin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		goos, name string
		want       bool
	}{
		{"darwin", "/dev/stdin", true},
		{"darwin", "/dev/fd/0", true},
		{"freebsd", "/dev//stdin", true},
		{"darwin", "/dev/fd/3", false},
		{"darwin", "script.txt", false},
		{"linux", "/dev/stdin", false},
		{"linux", "/dev/fd/0", false},
	} {
		if got := dupsStdin(tc.goos, tc.name); got != tc.want {
			t.Errorf("dupsStdin(%q, %q) = %v, want %v", tc.goos, tc.name, got, tc.want)
		}
	}
}
