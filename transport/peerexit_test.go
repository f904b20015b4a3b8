package transport

import (
	"slices"
	"testing"
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
