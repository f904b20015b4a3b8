package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

type promptArgsResult struct {
	args     json.RawMessage
	warnings []string
	err      error
}

// preparePrompt runs s.PreparePromptArguments in a goroutine.
func preparePrompt(ctx context.Context, s *Session, name string, validate bool, pairs ...string) <-chan promptArgsResult {
	ch := make(chan promptArgsResult, 1)
	go func() {
		args, w, err := s.PreparePromptArguments(ctx, name, pairs, validate)
		ch <- promptArgsResult{args, w, err}
	}()
	return ch
}

func promptResult(t *testing.T, ch <-chan promptArgsResult) promptArgsResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(wait):
		t.Fatal("PreparePromptArguments did not return")
	}
	panic("unreachable")
}

const promptsPage = `{"prompts":[
	{"name":"greet","arguments":[{"name":"name","required":true},{"name":"style"}]},
	{"name":"review","arguments":[{"name":"language","required":true},{"name":"code","required":true}]},
	{"name":"plain"}]}`

// TestPromptArgumentsChecked: a name the prompt does not declare is refused
// with the close declared names (or all of them, or none), every required
// argument missing is named, and arguments that fit go out as strings; the
// list is fetched once for all of them.
func TestPromptArgumentsChecked(t *testing.T) {
	s, srv := catalogSession(t, `{"prompts":{}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()

	for i, c := range []struct {
		prompt   string
		pairs    []string
		unknown  []UnknownArgument
		missing  []string
		contains string
	}{
		{"greet", []string{"nme=y"}, []UnknownArgument{{"nme", []string{"name"}}}, []string{"name"},
			`prompt "greet": no argument "nme" (did you mean "name"?); missing required argument "name"`},
		{"review", nil, nil, []string{"language", "code"},
			`prompt "review": missing required arguments "language", "code"`},
		{"greet", []string{"name=a", "zzz=1"}, []UnknownArgument{{"zzz", nil}}, nil,
			`no argument "zzz" (it takes "name", "style")`},
		{"plain", []string{"x=1"}, []UnknownArgument{{"x", nil}}, nil,
			`no argument "x" (it takes none)`},
	} {
		ch := preparePrompt(ctx, s, c.prompt, true, c.pairs...)
		if i == 0 {
			srv.reply(srv.nextRequest("prompts/list"), promptsPage)
		}
		r := promptResult(t, ch)
		var pe *PromptArgumentsError
		if !errors.As(r.err, &pe) {
			t.Fatalf("got %v, want a *PromptArgumentsError", r.err)
		}
		if !slices.EqualFunc(pe.Unknown, c.unknown, func(a, b UnknownArgument) bool {
			return a.Name == b.Name && slices.Equal(a.Suggestions, b.Suggestions)
		}) || !slices.Equal(pe.Missing, c.missing) {
			t.Errorf("unknown %v, missing %v; want %v, %v", pe.Unknown, pe.Missing, c.unknown, c.missing)
		}
		if msg := r.err.Error(); !strings.Contains(msg, c.contains) || strings.Contains(msg, "\n") || strings.Contains(msg, "--") {
			t.Errorf("message %q: want one line with %q, naming no flag", msg, c.contains)
		}
	}
	r := promptResult(t, preparePrompt(ctx, s, "greet", true, "name=Ann", "style=007"))
	if r.err != nil || len(r.warnings) > 0 || string(r.args) != `{"name":"Ann","style":"007"}` {
		t.Errorf("fitting arguments: %s, %v, %v", r.args, r.warnings, r.err)
	}
	// Without validation they go out as given, and nothing is listed.
	r = promptResult(t, preparePrompt(ctx, s, "greet", false, "nme=y"))
	if r.err != nil || string(r.args) != `{"nme":"y"}` {
		t.Errorf("unchecked: %s, %v", r.args, r.err)
	}
	srv.quietUntil(mark(t, s))
}

// TestPromptArgumentsUnchecked: a prompt the server does not list, and a
// prompts/list that fails, are warnings, and the arguments go out (the
// server decides).
func TestPromptArgumentsUnchecked(t *testing.T) {
	s, srv := catalogSession(t, `{"prompts":{}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()

	ch := preparePrompt(ctx, s, "greet", true, "nme=y")
	srv.send(`{"jsonrpc":"2.0","id":` + srv.nextRequest("prompts/list").ID.String() + `,"error":{"code":-32603,"message":"list broke"}}`)
	r := promptResult(t, ch)
	if r.err != nil || string(r.args) != `{"nme":"y"}` || len(r.warnings) != 1 || !containsAll(r.warnings[0], "not checked", "list broke") {
		t.Errorf("list failed: %s, %q, %v", r.args, r.warnings, r.err)
	}

	// A failed list is not kept: the next call lists again.
	ch = preparePrompt(ctx, s, "gret", true, "name=x")
	srv.reply(srv.nextRequest("prompts/list"), promptsPage)
	r = promptResult(t, ch)
	if r.err != nil || string(r.args) != `{"name":"x"}` || len(r.warnings) != 1 || !containsAll(r.warnings[0], `prompt "gret" is not in the server's prompts/list`) {
		t.Errorf("not listed: %s, %q, %v", r.args, r.warnings, r.err)
	}
	srv.quietUntil(mark(t, s))
}

// TestPromptArgumentsListOnce: the prompts are listed once for many
// checks (a REPL of prompts get lines), again after
// notifications/prompts/list_changed, and a full prompts/list made for
// another reason fills the same copy.
func TestPromptArgumentsListOnce(t *testing.T) {
	s, srv := catalogSession(t, `{"prompts":{"listChanged":true}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := s.List(ctx, ListPrompts, nil); done <- err }()
	srv.reply(srv.nextRequest("prompts/list"), promptsPage)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if r := promptResult(t, preparePrompt(ctx, s, "greet", true, "name=a")); r.err != nil {
			t.Fatal(r.err)
		}
	}
	srv.quietUntil(mark(t, s))

	// The list changed: the next check lists again, and goes by the new one.
	srv.send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed"}`)
	srv.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := srv.next(); m.ID.String() != `"p"` {
		t.Fatalf("want the ping's answer, got %s", m.Raw)
	}
	ch := preparePrompt(ctx, s, "greet", true, "name=a")
	srv.reply(srv.nextRequest("prompts/list"), `{"prompts":[{"name":"greet","arguments":[{"name":"who","required":true}]}]}`)
	var pe *PromptArgumentsError
	if r := promptResult(t, ch); !errors.As(r.err, &pe) || pe.Missing[0] != "who" {
		t.Errorf("by the new list: %v", r.err)
	}
	if r := promptResult(t, preparePrompt(ctx, s, "greet", true, "who=a")); r.err != nil {
		t.Error(r.err)
	}
	srv.quietUntil(mark(t, s))
}

// TestPromptListTTL: a prompts/list whose page carries ttlMs is fresh that
// long, as tools/list is (spec 2026-07-28: server/utilities/caching).
func TestPromptListTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, srv := modernCatalogSession(t)
		check := func() {
			t.Helper()
			if _, _, err := s.PreparePromptArguments(t.Context(), "greet", []string{"name=a"}, true); err != nil {
				t.Fatal(err)
			}
		}
		page := `{"prompts":[{"name":"greet","arguments":[{"name":"name"}]}],"ttlMs":30000}`
		go func() { srv.reply(srv.nextRequest("prompts/list"), page) }()
		check()
		time.Sleep(29 * time.Second)
		check() // fresh: nothing sent
		srv.quietUntil(mark(t, s))
		time.Sleep(2 * time.Second)
		go func() { srv.reply(srv.nextRequest("prompts/list"), page) }()
		check()
		srv.quietUntil(mark(t, s))
	})
}
