package repl

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Two REPLs share the history file: one that trims it (it holds more
// than the limit) replaces it, and the other's commands, appended after
// that, are kept — they went into the replaced file, and were lost.
func TestHistorySharedByTwoREPLs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	var old []string
	for i := range 20 {
		old = append(old, "ping "+strings.Repeat("x", i))
	}
	if err := os.WriteFile(path, []byte(strings.Join(old, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newFakeTerm(t, EditorOptions{HistoryFile: path, HistoryLimit: 100})
	a.ed.AddHistory("tools list")
	b := newFakeTerm(t, EditorOptions{HistoryFile: path, HistoryLimit: 10})
	a.ed.AddHistory("prompts list")
	b.ed.AddHistory("resources list")
	a.ed.Close()
	b.ed.Close()
	got, _ := os.ReadFile(path)
	want := strings.Join(append(old[11:], "tools list", "prompts list", "resources list"), "\n") + "\n"
	if string(got) != want {
		t.Errorf("history file:\n%s\nwant:\n%s", got, want)
	}
}

// Many commands appended at once by several REPLs are all kept, whole.
func TestHistoryConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	var eds []*Editor
	for range 4 {
		eds = append(eds, newFakeTerm(t, EditorOptions{HistoryFile: path}).ed)
	}
	var wg sync.WaitGroup
	for i, ed := range eds {
		wg.Go(func() {
			for j := range 25 {
				ed.AddHistory(strings.Repeat(string(rune('a'+i)), 100+j))
			}
		})
	}
	wg.Wait()
	got, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if len(lines) != 100 {
		t.Fatalf("%d lines, want 100", len(lines))
	}
	for _, l := range lines {
		if strings.Trim(l, l[:1]) != "" {
			t.Fatalf("a line mixes two commands: %q", l)
		}
	}
}

// A line too long to keep (longer than a command the history keeps) is
// skipped: the commands after it are read, and nothing is trimmed away
// for it. (The reader stopped at it, and a trim then dropped them.)
func TestHistoryLongLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	content := "ping\n" + strings.Repeat("x", historyLineMax+10) + "\ntools list\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeTerm(t, EditorOptions{HistoryFile: path})
	ch := f.read()
	f.typeKeys(t, "\x1b[A\r")
	if r := wait(t, ch); r.text != "tools list" {
		t.Errorf("up arrow gave %q, want tools list", r.text)
	}
	f.ed.AddHistory(strings.Repeat("y", historyLineMax+1)) // not kept
	f.ed.AddHistory("prompts list")
	f.ed.Close()
	got, _ := os.ReadFile(path)
	if string(got) != content+"prompts list\n" {
		t.Errorf("history file changed to %d bytes: %.80q…", len(got), got)
	}

	lines, total, err := readHistory(path, 2)
	if err != nil || total != 4 || strings.Join(lines, ",") != "tools list,prompts list" {
		t.Errorf("readHistory = %q, %d, %v", lines, total, err)
	}
}

// A history file that cannot be written is said once, and the editor
// works (the commands are kept for the session).
func TestHistoryUnwritable(t *testing.T) {
	path := t.TempDir() // a directory
	var errs []error
	f := newFakeTerm(t, EditorOptions{HistoryFile: path, OnHistoryError: func(err error) { errs = append(errs, err) }})
	ch := f.read()
	f.typeKeys(t, "ping\r")
	r := wait(t, ch)
	f.ed.AddHistory(r.text)
	f.ed.AddHistory("tools list")
	ch = f.read()
	f.typeKeys(t, "\x1b[A\x1b[A\r")
	if r := wait(t, ch); r.err != nil || r.text != "ping" {
		t.Errorf("up arrow twice gave %q, %v; want ping", r.text, r.err)
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), path) {
		t.Errorf("history errors %v; want one naming %s", errs, path)
	}

	// A file whose directory cannot be made.
	errs = nil
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	g := newFakeTerm(t, EditorOptions{HistoryFile: filepath.Join(file, "history"), OnHistoryError: func(err error) { errs = append(errs, err) }})
	g.ed.AddHistory("ping")
	if len(errs) != 1 {
		t.Errorf("history errors %v; want one", errs)
	}
}
