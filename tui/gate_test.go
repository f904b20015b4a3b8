package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
