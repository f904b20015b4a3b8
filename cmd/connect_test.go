package cmd

import (
	"bytes"
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// The connector dials with the caller's context: a run interrupted before
// the server starts does not start it (here a missing program, which
// would fail to start: exit 4) and is an interruption.
func TestConnectDialsWithTheCallersContext(t *testing.T) {
	t.Parallel()
	ios, _, errOut := NewTestIOStreams(nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	code := Run(ctx, []string{"ping", "--", filepath.Join(t.TempDir(), "no-such-server")}, ios)
	if code != ExitInterrupted || strings.Contains(errOut.String(), "cannot start server") {
		t.Errorf("exit %d, %s", code, errOut.String())
	}
}

// The functions under which a session runs take its description by
// pointer: a connDesc is some 800 bytes, and a copy of it in each of
// their frames (with the frame that built it) took a one-shot HTTP
// command's main goroutine past 16 KiB of stack, which then grew to
// 32 KiB (issue 13).
func TestSessionFramesHoldNoDescription(t *testing.T) {
	ptr := reflect.TypeFor[*connDesc]()
	for name, fn := range map[string]any{
		"env.session":       (*env).session,
		"connector.connect": (*connector).connect,
		"connector.open":    (*connector).open,
		"lifecycle":         lifecycle,
		"newFeatures":       newFeatures,
	} {
		ft := reflect.TypeOf(fn)
		found := false
		for i := range ft.NumIn() {
			switch ft.In(i) {
			case ptr:
				found = true
			case ptr.Elem():
				t.Errorf("%s takes a connDesc by value", name)
			}
		}
		if !found {
			t.Errorf("%s takes no *connDesc", name)
		}
	}
}

// A message dropped for its size is told in one line whatever the
// transport and the verbosity (transport.EventDropped), its server text
// escaped; the note at its end (transport.EventNote) only with -v or
// --wire, over stdio as over HTTP. Before, HTTP showed neither without
// -v, and stdio showed both.
func TestDroppedMessageIsToldOnce(t *testing.T) {
	dropped := transport.Event{Kind: transport.EventDropped, Text: "dropping a line: begun {\"data\":\"\x1b[31mred\"}…"}
	ended := transport.Event{Kind: transport.EventNote, Text: "a line over the maximum message size ended: 200000 bytes dropped"}
	for _, verbose := range []bool{false, true} {
		var stdio, http bytes.Buffer
		observers := map[string]transport.Observer{
			"stdio": notesIf(tui.NewConsole(&stdio, false, false).Event, func() bool { return false }, verbose),
			"http":  httpObserver(tui.NewConsole(&http, false, false), func() bool { return false }, verbose),
		}
		for _, obs := range observers {
			obs(dropped)
			obs(ended)
		}
		for name, out := range map[string]string{"stdio": stdio.String(), "http": http.String()} {
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			want := 1
			if verbose {
				want = 2
			}
			if len(lines) != want || !strings.HasPrefix(lines[0], "mcpx: dropping a line: ") || strings.Contains(out, "\x1b") {
				t.Errorf("%s (verbose %v) showed:\n%q", name, verbose, out)
			}
		}
	}
}
