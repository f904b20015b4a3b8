package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
)

// fakeLines is a LineSource (the REPL's editor) with scripted answers.
type fakeLines struct {
	mu       sync.Mutex
	answers  []string
	err      error // after the answers
	prompts  []string
	holding  int
	holds    int
	readFree int // reads made while no conversation held the terminal
}

func (f *fakeLines) ReadLine(_ context.Context, prompt string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prompts = append(f.prompts, prompt)
	if f.holding == 0 {
		f.readFree++
	}
	if len(f.answers) == 0 {
		return "", f.err
	}
	a := f.answers[0]
	f.answers = f.answers[1:]
	return a, nil
}

func (f *fakeLines) Hold(context.Context) (func(), error) {
	f.mu.Lock()
	f.holding++
	f.holds++
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.holding--
		f.mu.Unlock()
	}, nil
}

// A Prompter with a line source reads through it (never its own reader),
// holding the terminal for the whole conversation.
func TestPrompterLineSource(t *testing.T) {
	var out bytes.Buffer
	p := NewPrompter(errReader{}, &out, true)
	src := &fakeLines{answers: []string{"", "Ada", "", "", "", "s"}, err: io.EOF}
	p.UseLineSource(src)
	pol, _ := inspector.ParseElicitPolicy("prompt")
	e, err := inspector.NewElicitor(context.Background(), pol, NewPerson(p, nil))
	if err != nil {
		t.Fatal(err)
	}
	(&inspector.ClientFeatures{Elicitor: e}).Capabilities()
	params := json.RawMessage(`{"message":"Who?","requestedSchema":{"type":"object","properties":{
		"name":{"type":"string"},"age":{"type":"integer","default":3}},"required":["name"]}}`)
	raw, err := e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	action, content := decodeAnswer(t, raw)
	if action != "accept" || content["name"] != "Ada" || content["age"] != float64(3) {
		t.Errorf("answer %s", raw)
	}
	if src.holds != 1 || src.readFree != 0 || src.holding != 0 {
		t.Errorf("holds %d, reads without a hold %d, still holding %d", src.holds, src.readFree, src.holding)
	}
	if len(src.prompts) == 0 || src.prompts[0] != "[a]nswer, [d]ecline or [c]ancel? [a] " {
		t.Errorf("prompts %q", src.prompts)
	}

	// Dismissed (Ctrl-C): the elicitation is cancelled.
	src.err = inspector.ErrDismissed
	raw, err = e.Handle(testCtx(t), "elicitation/create", params)
	if err != nil {
		t.Fatal(err)
	}
	if action, _ := decodeAnswer(t, raw); action != "cancel" {
		t.Errorf("dismissed: answer %s", raw)
	}
	if !errors.Is(inspector.ErrDismissed, io.EOF) {
		t.Error("ErrDismissed does not match io.EOF")
	}
}

// errReader fails the test's expectations if a Prompter with a line
// source ever reads its own reader.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("the prompter read stdin itself") }

func TestPrompterSerialisesConversations(t *testing.T) {
	p := NewPrompter(strings.NewReader("one\ntwo\n"), io.Discard, true)
	ctx := testCtx(t)
	end, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan string, 1)
	go func() {
		end2, err := p.Begin(ctx)
		if err != nil {
			second <- err.Error()
			return
		}
		defer end2()
		line, _ := p.ReadLine(ctx, "")
		second <- line
	}()
	line, err := p.ReadLine(ctx, "")
	if err != nil || line != "one" {
		t.Fatalf("first: %q %v", line, err)
	}
	select {
	case s := <-second:
		t.Fatalf("a second conversation ran during the first: %q", s)
	default:
	}
	end()
	select {
	case s := <-second:
		if s != "two" {
			t.Errorf("second: %q", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the second conversation never started")
	}
	if _, err := p.ReadLine(ctx, ""); !errors.Is(err, io.EOF) {
		t.Errorf("after the input: %v, want EOF", err)
	}
	if _, err := p.ReadLine(ctx, ""); !errors.Is(err, io.EOF) {
		t.Errorf("EOF must stick: %v", err)
	}

	// Begin gives up when its context ends.
	end, _ = p.Begin(ctx)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Begin(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Begin on a cancelled context: %v", err)
	}
	end()
	end, err = p.Begin(ctx)
	if err != nil {
		t.Fatalf("the lock was lost: %v", err)
	}
	end()
}
