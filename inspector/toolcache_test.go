package inspector

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"
)

type argsResult struct {
	args json.RawMessage
	err  error
}

// TestToolArgumentsListOnce: typing key=value arguments lists the tools
// once per session, not before every call, and again only after the
// server says the list changed (notifications/tools/list_changed).
func TestToolArgumentsListOnce(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{"listChanged":true}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	typed := func() <-chan argsResult {
		ch := make(chan argsResult, 1)
		go func() {
			args, _, err := s.ToolArguments(ctx, "add", []string{"a=2"}, nil)
			ch <- argsResult{args, err}
		}()
		return ch
	}
	want := func(ch <-chan argsResult, args string) {
		t.Helper()
		r := <-ch
		if r.err != nil || string(r.args) != args {
			t.Fatalf("arguments %s, %v; want %s", r.args, r.err, args)
		}
	}

	ch := typed()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"echo"}],"nextCursor":"2"}`)
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}]}`)
	want(ch, `{"a":2}`)

	// Cached: typed the same way, nothing sent.
	want(typed(), `{"a":2}`)
	srv.quietUntil(mark(t, s))

	// The list changed: the next call lists again and types by the new schema.
	toolsChanged(t, srv)
	ch = typed()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}]}`)
	want(ch, `{"a":"2"}`)
	want(typed(), `{"a":"2"}`)
	srv.quietUntil(mark(t, s))
}

// TestToolsListFillsCache: a full tools/list (the tools list command)
// fills the cache that key=value typing reads; a single page does not.
func TestToolsListFillsCache(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	cursor := ""
	go func() { _, _ = s.List(ctx, ListTools, &cursor) }()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}],"nextCursor":"2"}`)
	done := make(chan error, 1)
	go func() { _, err := s.List(ctx, ListTools, nil); done <- err }()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}]}`)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	args, _, err := s.ToolArguments(ctx, "add", []string{"a=2"}, nil)
	if err != nil || string(args) != `{"a":2}` {
		t.Fatalf("arguments %s, %v", args, err)
	}
	srv.quietUntil(mark(t, s))
}

// TestToolResultIsError reads isError as encoding/json would, without
// decoding the rest of the result.
func TestToolResultIsError(t *testing.T) {
	for _, raw := range []string{
		`{"content":[],"isError":true}`, `{"isError":false}`, `{"IsError":true}`, `{"isError":true,"isError":false}`,
		`{"isError":false,"ISERROR":true}`, `{"content":[{"isError":true}]}`, `{"isError":"true"}`, `{"isError":null}`,
		`{"content":[{"type":"text","text":"\"isError\":true"}]}`, `{"is\u0045rror":true}`, `[]`, `{}`,
	} {
		var r struct {
			IsError bool `json:"isError"`
		}
		want := json.Unmarshal([]byte(raw), &r) == nil && r.IsError
		if got := ToolResultIsError(json.RawMessage(raw)); got != want {
			t.Errorf("%s: %v, want %v", raw, got, want)
		}
	}
}

// TestArgumentCheckCompilesOnce: the argument check compiles a tool's
// inputSchema once per cached list, not for every call, and again after
// the server says the list changed (then by the new schema).
func TestArgumentCheckCompilesOnce(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{"listChanged":true}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	check := func(pairs ...string) <-chan error {
		ch := make(chan error, 1)
		go func() {
			_, _, err := s.PrepareToolArguments(ctx, "add", ToolInput{Pairs: pairs, Validate: true})
			ch <- err
		}()
		return ch
	}
	ch := check("a=2")
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number","maximum":5}}}}]}`)
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := <-check("a=2"); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-check("a=9"); err == nil {
		t.Error("a=9 is above the maximum")
	}
	if got := s.tools.compiles; got != 1 {
		t.Errorf("compiled %d times for five calls, want once", got)
	}
	srv.quietUntil(mark(t, s))

	toolsChanged(t, srv)
	ch = check("a=9")
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number","maximum":10}}}}]}`)
	if err := <-ch; err != nil {
		t.Errorf("by the new schema a=9 is fine: %v", err)
	}
	if got := s.tools.compiles; got != 2 {
		t.Errorf("compiled %d times, want twice (once per list)", got)
	}
	srv.quietUntil(mark(t, s))
}

// TestArgumentTypingReadsTheSchemaOnce: key=value typing reads a tool's
// properties once per cached list, not for every call, and again after
// the server says the list changed (then types by the new schema).
func TestArgumentTypingReadsTheSchemaOnce(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{"listChanged":true}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	type built struct {
		args string
		err  error
	}
	build := func() <-chan built {
		ch := make(chan built, 1)
		go func() {
			args, _, err := s.PrepareToolArguments(ctx, "add", ToolInput{Pairs: []string{"a=2"}})
			ch <- built{string(args), err}
		}()
		return ch
	}
	ch := build()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}]}`)
	for i := range 4 {
		if i > 0 {
			ch = build()
		}
		if b := <-ch; b.err != nil || b.args != `{"a":2}` {
			t.Fatalf("call %d: %s, %v; want {\"a\":2}", i, b.args, b.err)
		}
	}
	if got := s.tools.propsReads; got != 1 {
		t.Errorf("read the properties %d times for four calls, want once", got)
	}
	srv.quietUntil(mark(t, s))

	toolsChanged(t, srv)
	ch = build()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}]}`)
	if b := <-ch; b.err != nil || b.args != `{"a":"2"}` {
		t.Errorf("by the new schema: %s, %v; want {\"a\":\"2\"}", b.args, b.err)
	}
	if got := s.tools.propsReads; got != 2 {
		t.Errorf("read the properties %d times, want twice (once per list)", got)
	}
	srv.quietUntil(mark(t, s))
}

// toolsChanged has srv say that its tools changed, and waits until the
// session has handled it: the notification is handled on the read loop
// before the answer to a ping sent after it.
func toolsChanged(t *testing.T, srv *fakeServer) {
	t.Helper()
	srv.send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	srv.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := srv.next(); string(m.ID.String()) != `"p"` {
		t.Fatalf("want the ping's answer, got %s", m.Raw)
	}
}

// A tools/list whose pages carry ttlMs is fresh for the shortest of them
// (each page's clock starts when it is received), then listed again when
// next needed; ttlMs 0 (or negative) is stale at once; a list without
// ttlMs lives until the server says it changed (spec 2026-07-28:
// server/utilities/caching).
func TestToolListTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, srv := modernCatalogSession(t)
		typed := func(want string) {
			t.Helper()
			args, _, err := s.ToolArguments(t.Context(), "add", []string{"a=2"}, nil)
			if err != nil || string(args) != want {
				t.Fatalf("arguments %s, %v; want %s", args, err, want)
			}
		}
		listed := func(pages ...string) {
			t.Helper()
			for _, p := range pages {
				srv.reply(srv.nextRequest("tools/list"), p)
			}
		}
		number := `{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}`
		text := `{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`

		go listed(`{"tools":[{"name":"echo"}],"nextCursor":"2","ttlMs":60000}`, `{"tools":[`+number+`],"ttlMs":30000}`)
		typed(`{"a":2}`)
		time.Sleep(29 * time.Second)
		typed(`{"a":2}`) // fresh: nothing sent
		srv.quietUntil(mark(t, s))

		time.Sleep(2 * time.Second) // past the second page's 30 s
		go listed(`{"tools":[` + text + `],"ttlMs":0}`)
		typed(`{"a":"2"}`)
		go listed(`{"tools":[` + number + `],"ttlMs":-5}`)
		typed(`{"a":2}`) // ttlMs 0 was stale at once
		go listed(`{"tools":[` + text + `]}`)
		typed(`{"a":"2"}`) // so was -5

		time.Sleep(time.Hour)
		typed(`{"a":"2"}`) // no ttlMs: kept
		srv.quietUntil(mark(t, s))
	})
}

// Before 2026-07-28 there is no ttlMs: a "ttlMs":0 that an SDK writes into
// every result (the Go SDK does) does not make the copy stale.
func TestToolListTTLIsModern(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	go func() {
		srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"number"}}}}],"ttlMs":0}`)
	}()
	for range 2 {
		if args, _, err := s.ToolArguments(ctx, "add", []string{"a=2"}, nil); err != nil || string(args) != `{"a":2}` {
			t.Fatalf("arguments %s, %v", args, err)
		}
	}
	srv.quietUntil(mark(t, s))
}

// ListedResource (an MCP Apps view's listing-level _meta.ui) lists the
// resources once, answers from that copy (nil for a URI it lacks), and
// lists again after notifications/resources/list_changed.
func TestListedResourceListsOnce(t *testing.T) {
	s, srv := catalogSession(t, `{"resources":{"listChanged":true}}`)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	type result struct {
		it  json.RawMessage
		err error
	}
	listed := func(uri string) <-chan result {
		ch := make(chan result, 1)
		go func() {
			it, err := s.ListedResource(ctx, uri)
			ch <- result{it, err}
		}()
		return ch
	}
	want := func(ch <-chan result, it string) {
		t.Helper()
		r := <-ch
		if r.err != nil || string(r.it) != it {
			t.Fatalf("entry %s, %v; want %s", r.it, r.err, it)
		}
	}
	a1 := `{"uri":"ui://a","name":"a","_meta":{"ui":{"prefersBorder":true}}}`
	ch := listed("ui://a")
	srv.reply(srv.nextRequest("resources/list"), `{"resources":[{"uri":"file:///x","name":"x"}],"nextCursor":"2"}`)
	srv.reply(srv.nextRequest("resources/list"), `{"resources":[`+a1+`]}`)
	want(ch, a1)
	want(listed("ui://a"), a1)
	want(listed("ui://b"), "")
	srv.quietUntil(mark(t, s))

	srv.send(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
	srv.send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if m := srv.next(); m.ID.String() != `"p"` {
		t.Fatalf("want the ping's answer, got %s", m.Raw)
	}
	a2 := `{"uri":"ui://a","name":"a","_meta":{"ui":{"prefersBorder":false}}}`
	ch = listed("ui://a")
	srv.reply(srv.nextRequest("resources/list"), `{"resources":[`+a2+`]}`)
	want(ch, a2)
	want(listed("ui://a"), a2)
	srv.quietUntil(mark(t, s))
}
