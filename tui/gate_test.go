package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/inspector"
)

// TestGateHoldsDuringConversation: what is written through a gate while
// a conversation is in progress waits for its end, in order, and the
// conversation's own lines are not held.
func TestGateHoldsDuringConversation(t *testing.T) {
	var out bytes.Buffer
	p := NewPrompter(strings.NewReader(""), &out, true)
	g := p.Gate(&out)
	g.Write([]byte("before\n"))
	end, err := p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.Println("Your name:")
	g.Write([]byte("progress 1\n"))
	g.Write([]byte("log line\n"))
	p.Println("> Ada")
	if got, want := out.String(), "before\nYour name:\n> Ada\n"; got != want {
		t.Fatalf("during the conversation: %q, want %q", got, want)
	}
	end()
	g.Write([]byte("after\n"))
	if got, want := out.String(), "before\nYour name:\n> Ada\nprogress 1\nlog line\nafter\n"; got != want {
		t.Fatalf("after the conversation: %q, want %q", got, want)
	}
}

// TestGateBounded: a gate holds at most maxHeld bytes and says how much
// it dropped.
func TestGateBounded(t *testing.T) {
	var out bytes.Buffer
	p := NewPrompter(strings.NewReader(""), &out, true)
	g := p.Gate(&out)
	end, err := p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), maxHeld)
	g.Write(big)
	g.Write([]byte("one more line\n"))
	end()
	if !strings.HasSuffix(out.String(), "(14 bytes of output that arrived during the conversation were dropped)\n") || out.Len() < maxHeld {
		t.Fatalf("got %d bytes ending %q", out.Len(), out.String()[max(0, out.Len()-100):])
	}
}

// TestGateErasesTheProgressBar: a progress bar on the terminal when a
// conversation begins is erased before its first line, and drawn again
// when it ends (then what was held, the bar's updates among it). Left
// there, the conversation was printed below it, and the bar stayed in
// the transcript, never redrawn where it stood.
func TestGateErasesTheProgressBar(t *testing.T) {
	var out bytes.Buffer
	p := NewPrompter(strings.NewReader(""), &out, true)
	c := NewConsole(p.Gate(&out), true, false)
	total := 2.0
	c.Progress("ask", inspector.Progress{Progress: 1, Total: &total})
	bar := out.String()
	end, err := p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p.Println("Your name:")
	c.Progress("ask", inspector.Progress{Progress: 2, Total: &total})
	if got, want := out.String(), bar+"\r\x1b[K"+"Your name:\n"; got != want {
		t.Fatalf("during the conversation: %q, want %q", got, want)
	}
	out.Reset()
	end()
	if got := out.String(); !strings.HasPrefix(got, "\r"+bar) || !strings.HasSuffix(got, "2/2 (100%)") {
		t.Fatalf("after the conversation: %q", got)
	}
	// A conversation with no bar on the terminal erases nothing.
	c.ClearProgress()
	out.Reset()
	end, err = p.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	end()
	if out.Len() != 0 {
		t.Fatalf("without a bar: %q", out.String())
	}
}
