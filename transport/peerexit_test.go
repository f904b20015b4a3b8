package transport

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// The lines an exit message quotes: the last non-blank ones, trimmed,
// oldest first, at most n.
func TestPeerExitLastLines(t *testing.T) {
	e := &PeerExitError{LastStderr: []string{"one", "  two ", "", "three", "   ", "four"}}
	if got, want := e.LastLines(3), []string{"two", "three", "four"}; !slices.Equal(got, want) {
		t.Errorf("LastLines(3) = %q, want %q", got, want)
	}
	if got := (&PeerExitError{LastStderr: []string{" ", ""}}).LastLines(3); len(got) != 0 {
		t.Errorf("blank lines only: %q", got)
	}
}

// A stderr line is kept whole up to a megabyte (stderr is passed on in
// pieces no longer than that), but the lines an exit message quotes are
// cut: three such lines made mcpx's one-line error three megabytes long.
func TestPeerExitLastLinesAreCut(t *testing.T) {
	long := strings.Repeat("é", 1<<19) // 1 MiB of two-byte characters
	got := (&PeerExitError{LastStderr: []string{long, "short"}}).LastLines(3)
	if len(got) != 2 || got[1] != "short" {
		t.Fatalf("LastLines = %d lines, want the long one and %q", len(got), "short")
	}
	if len(got[0]) > 400 {
		t.Errorf("a 1 MiB line is quoted in %d bytes", len(got[0]))
	}
	if !utf8.ValidString(got[0]) || !strings.HasPrefix(got[0], "éé") || !strings.HasSuffix(got[0], "… (1048576 bytes)") {
		t.Errorf("cut line = %q…%q, want valid UTF-8 ending with the length it had", got[0][:10], got[0][len(got[0])-30:])
	}
}
