package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

type listResult struct {
	res *ListResult
	err error
}

// page is one expected request (by its cursor: "" for none, emptyCursor
// for the cursor "") and the raw result to answer it with.
type page struct {
	cursor string
	result string
}

// emptyCursor, as a page's cursor, is a request with the cursor "".
const emptyCursor = "\x00empty"

// runList runs s.List against the fake server, which answers the pages in
// order, checking each request's cursor; setup, when not nil, adjusts the
// session first. The warnings are the session's.
func runList(t *testing.T, method string, cursor *string, pages []page, setup ...func(*Session)) (*ListResult, error, *warnings) {
	t.Helper()
	s, srv, w := newTestSession(t, Options{})
	for _, f := range setup {
		f(s)
	}
	ch := make(chan listResult, 1)
	go func() {
		res, err := s.List(context.Background(), method, cursor)
		ch <- listResult{res, err}
	}()
	for i, p := range pages {
		req := srv.nextRequest(method)
		checkCursor(t, i, req, p.cursor)
		srv.reply(req, p.result)
	}
	select {
	case r := <-ch:
		return r.res, r.err, w
	case <-time.After(wait):
		t.Fatal("List did not return")
	}
	return nil, nil, nil
}

// checkCursor checks that request i (req) has the cursor want.
func checkCursor(t *testing.T, i int, req *jsonrpc.Message, want string) {
	t.Helper()
	var params struct {
		Cursor *string `json:"cursor"`
	}
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &params); err != nil {
			t.Fatal(err)
		}
	}
	switch {
	case want == "" && len(req.Params) != 0:
		t.Errorf("request %d params = %s, want none", i, req.Params)
	case want == emptyCursor && (params.Cursor == nil || *params.Cursor != ""):
		t.Errorf("request %d params = %s, want the cursor \"\"", i, req.Params)
	case want != "" && want != emptyCursor && (params.Cursor == nil || *params.Cursor != want):
		t.Errorf("request %d params = %s, want cursor %q", i, req.Params, want)
	}
}

func names(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		var n struct{ Name string }
		if err := json.Unmarshal(it, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n.Name)
	}
	return out
}

func TestListFollowsCursors(t *testing.T) {
	tests := []struct {
		name      string
		method    string
		pages     []page
		wantRaw   string
		wantNames []string
		// wantPages is how many pages the items come from, when not all.
		wantPages int
		// warnings, each a list of substrings of one.
		warnings [][]string
	}{
		{
			name:   "three pages merged into the first, member order kept",
			method: "tools/list",
			pages: []page{
				{"", `{"_meta":{"m":1},"tools":[{"name":"a"}],"nextCursor":"c1","extra":true}`},
				{"c1", `{"tools":[{"name":"b"},{"name":"c"}],"nextCursor":"c2"}`},
				{"c2", `{"tools":[{"name":"d"}],"other":"page 3 members are dropped"}`},
			},
			wantRaw:   `{"_meta":{"m":1},"tools":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}],"extra":true}`,
			wantNames: []string{"a", "b", "c", "d"},
		},
		{
			name:      "single page kept exactly as received",
			method:    "prompts/list",
			pages:     []page{{"", `{ "prompts" : [ {"name":"p"} ] }`}},
			wantRaw:   `{ "prompts" : [ {"name":"p"} ] }`,
			wantNames: []string{"p"},
		},
		{
			name:      "a null nextCursor ends the list, with a warning",
			method:    "prompts/list",
			pages:     []page{{"", `{ "prompts" : [ {"name":"p"} ] ,"nextCursor":null}`}},
			wantRaw:   `{ "prompts" : [ {"name":"p"} ] ,"nextCursor":null}`,
			wantNames: []string{"p"},
			warnings:  [][]string{{"prompts/list: nextCursor is null", "end of the list"}},
		},
		{
			name:   "empty pages give an empty list, not null",
			method: "resources/list",
			pages: []page{
				{"", `{"resources":[],"nextCursor":"x"}`},
				{"x", `{"resources":null}`},
			},
			wantRaw: `{"resources":[]}`,
			// null is not the empty list the spec asks for.
			warnings: [][]string{{`resources/list page 2 (cursor "x"): the result has no "resources" array`}},
		},
		{
			name:   "a page without its list is warned about, once",
			method: "resources/templates/list",
			pages: []page{
				{"", `{"nextCursor":"x"}`},
				{"x", `{"resourceTemplates":[{"name":"t","uriTemplate":"a://{b}"}],"nextCursor":"y"}`},
				{"y", `{}`},
			},
			wantRaw:   `{"resourceTemplates":[{"name":"t","uriTemplate":"a://{b}"}]}`,
			wantNames: []string{"t"},
			warnings:  [][]string{{`resources/templates/list: the result has no "resourceTemplates" array, which the spec requires`}},
		},
		{
			name:   "bytes kept as the server sent them: escapes, <>&, numbers, white space in items, duplicate members",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[],"k\u00e9":"<b> & \u00e9","tools":[{"name":"a<b>", "n": 1.50}],"nextCursor":"c1","big":12345678901234567890,"nextCursor":"c1"}`},
				{"c1", `{"tools":[ {"name":"\u0062"} ]}`},
			},
			wantRaw:   `{"tools":[],"k\u00e9":"<b> & \u00e9","tools":[{"name":"a<b>", "n": 1.50},{"name":"\u0062"}],"big":12345678901234567890}`,
			wantNames: []string{"a<b>", "b"},
		},
		{
			name:   "templates use their own member",
			method: "resources/templates/list",
			pages: []page{
				{"", `{"resourceTemplates":[{"name":"t1"}],"nextCursor":"n"}`},
				{"n", `{"resourceTemplates":[{"name":"t2"}]}`},
			},
			wantRaw:   `{"resourceTemplates":[{"name":"t1"},{"name":"t2"}]}`,
			wantNames: []string{"t1", "t2"},
		},
		{
			// Spec 2026-07-28: an empty string is a valid cursor and MUST
			// NOT be treated as the end of results.
			name:   "an empty cursor is sent back",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":""}`},
				{emptyCursor, `{"tools":[{"name":"b"}]}`},
			},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"}]}`,
			wantNames: []string{"a", "b"},
			warnings:  [][]string{{`tools/list: the server sent an empty nextCursor ("")`, "valid cursor"}},
		},
		{
			name:   "the first page again for the empty cursor ends the list there",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"c1"}`},
				{"c1", `{"tools":[{"name":"b"}],"nextCursor":""}`},
				{emptyCursor, `{"tools":[{"name":"a"}],"nextCursor":"c1","ttlMs":5}`},
			},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"}]}`,
			wantNames: []string{"a", "b"},
			wantPages: 2,
			warnings: [][]string{
				{`tools/list page 2 (cursor "c1"): the server sent an empty nextCursor ("")`},
				{`tools/list: the server answered cursor "" with the first page again`, "end of the list"},
			},
		},
		{
			name:   "a single page ended by an empty cursor loses it",
			method: "prompts/list",
			pages: []page{
				{"", `{"prompts":[{"name":"p"}],"nextCursor":""}`},
				{emptyCursor, `{"prompts":[{"name":"p"}],"nextCursor":""}`},
			},
			wantRaw:   `{"prompts":[{"name":"p"}]}`,
			wantNames: []string{"p"},
			wantPages: 1,
			warnings:  [][]string{{"empty nextCursor"}, {"first page again"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err, w := runList(t, tt.method, nil, tt.pages)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.JSON()); got != tt.wantRaw {
				t.Errorf("JSON =\n%s\nwant\n%s", got, tt.wantRaw)
			}
			if diff := cmp.Diff(tt.wantNames, names(t, res.Items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			want := tt.wantPages
			if want == 0 {
				want = len(tt.pages)
			}
			if res.Pages != want || res.NextCursor != nil || res.Incomplete() {
				t.Errorf("Pages = %d, NextCursor = %v, Incomplete %v; want %d, none, false", res.Pages, res.NextCursor, res.Incomplete(), want)
			}
			for _, subs := range tt.warnings {
				w.expect(subs...)
			}
			w.none()
		})
	}
}

func TestListSinglePageWithCursor(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name   string
		cursor string
		page   page
		next   *string
		err    string
	}{
		{"first page only", "", page{"", `{"tools":[{"name":"a"}],"nextCursor":"more"}`}, str("more"), ""},
		{"page at a cursor", "c7", page{"c7", `{"tools":[{"name":"z"}], "nextCursor":"c8"}`}, str("c8"), ""},
		{"last page", "c9", page{"c9", `{"tools":[]}`}, nil, ""},
		{"an empty next cursor", "c9", page{"c9", `{"tools":[],"nextCursor":""}`}, str(""), ""},
		{"a next cursor that is not a string", "c9", page{"c9", `{"tools":[{"name":"y"}],"nextCursor":[1]}`}, nil, "tools/list: nextCursor is [1], not a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cursor := tt.cursor
			res, err, _ := runList(t, "tools/list", &cursor, []page{tt.page})
			if (err == nil) != (tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
				t.Fatalf("err = %v, want %q", err, tt.err)
			}
			if string(res.JSON()) != tt.page.result {
				t.Errorf("JSON = %s, want the page exactly: %s", res.JSON(), tt.page.result)
			}
			if diff := cmp.Diff(tt.next, res.NextCursor); diff != "" || res.Pages != 1 || len(res.Items) != strings.Count(tt.page.result, "name") {
				t.Errorf("NextCursor (-want +got): %s; Pages = %d, %d items", diff, res.Pages, len(res.Items))
			}
		})
	}
}

// TestListStopsEarly: a walk that cannot go on returns what it read and
// why it stopped, naming the page; its JSON ends with the cursor of the
// page it lacks, as the server sent it.
func TestListStopsEarly(t *testing.T) {
	tests := []struct {
		name   string
		method string
		pages  []page
		// last answers the last request, when not by a page.
		last     string
		maxPages int
		want     []string // in the error
		// cursor is the IncompleteListError's (the page not read); nil
		// when it is not a string.
		cursor    *string
		wantNames []string
		wantRaw   string
		warnings  [][]string
	}{
		{
			name:   "a JSON-RPC error on page 3",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"c1","ttlMs":9}`},
				{"c1", `{"tools":[{"name":"b"}],"nextCursor":"c2"}`},
			},
			last:      `{"code":-32603,"message":"the database is down"}`,
			want:      []string{`tools/list page 3 (cursor "c2"): server error -32603`, "the database is down", "the list stops after 2 items from 2 pages"},
			cursor:    ptr("c2"),
			wantNames: []string{"a", "b"},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"}],"ttlMs":9,"nextCursor":"c2"}`,
		},
		{
			name:   "a JSON-RPC error on page 2 keeps page 1 as received but for its cursor",
			method: "prompts/list",
			pages: []page{
				{"", `{"prompts":[{"name":"a"}],"nextCursor":"c\u0031"}`},
			},
			last:      `{"code":-32602,"message":"bad cursor"}`,
			want:      []string{`prompts/list page 2 (cursor "c1"): server error -32602`, "the list stops after 1 item from 1 page"},
			cursor:    ptr("c1"),
			wantNames: []string{"a"},
			wantRaw:   `{"prompts":[{"name":"a"}],"nextCursor":"c\u0031"}`,
		},
		{
			name:   "page 2 not an object",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"c1"}`},
				{"c1", `[1]`},
			},
			want:      []string{`tools/list page 2 (cursor "c1"): result is not an object`},
			cursor:    ptr("c1"),
			wantNames: []string{"a"},
			wantRaw:   `{"tools":[{"name":"a"}],"nextCursor":"c1"}`,
		},
		{
			name:   "page 2's list not an array",
			method: "resources/list",
			pages: []page{
				{"", `{"resources":[{"name":"a"}],"nextCursor":"c1"}`},
				{"c1", `{"resources":{"name":"b"}}`},
			},
			want:      []string{`resources/list page 2 (cursor "c1"): result member "resources" is {"name":"b"}, not an array`},
			cursor:    ptr("c1"),
			wantNames: []string{"a"},
			wantRaw:   `{"resources":[{"name":"a"}],"nextCursor":"c1"}`,
		},
		{
			name:   "a nextCursor that is a number: the page's items count, the next page cannot be asked for",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"c1"}`},
				{"c1", `{"tools":[{"name":"b"}],"nextCursor":5}`},
			},
			want:      []string{`tools/list page 2 (cursor "c1"): nextCursor is 5, not a string`, "the list stops after 2 items from 2 pages"},
			wantNames: []string{"a", "b"},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":5}`,
		},
		{
			name:      "a nextCursor that is an object on the first page",
			method:    "tools/list",
			pages:     []page{{"", `{"nextCursor":{"page":2},"tools":[{"name":"a"}]}`}},
			want:      []string{`tools/list: nextCursor is {"page":2}, not a string`, "after 1 item from 1 page"},
			wantNames: []string{"a"},
			wantRaw:   `{"tools":[{"name":"a"}],"nextCursor":{"page":2}}`,
		},
		{
			name:   "repeated cursor",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"same"}`},
				{"same", `{"tools":[{"name":"b"}],"nextCursor":"same"}`},
			},
			want:      []string{`tools/list: server returned cursor "same" twice; stopping to avoid a loop`, "after 2 items from 2 pages"},
			cursor:    ptr("same"),
			wantNames: []string{"a", "b"},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"same"}`,
		},
		{
			name:   "cycle through two cursors",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[],"nextCursor":"a"}`},
				{"a", `{"tools":[],"nextCursor":"b"}`},
				{"b", `{"tools":[],"nextCursor":"a"}`},
			},
			want:    []string{`"a" twice`, "after 0 items from 3 pages"},
			cursor:  ptr("a"),
			wantRaw: `{"tools":[],"nextCursor":"a"}`,
		},
		{
			name:   "the empty cursor returned again, with another page than the first, is a loop too",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":""}`},
				{emptyCursor, `{"tools":[{"name":"b"}],"nextCursor":""}`},
			},
			want:      []string{`cursor "" twice`},
			cursor:    ptr(""),
			wantNames: []string{"a", "b"},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":""}`,
			warnings:  [][]string{{"empty nextCursor"}},
		},
		{
			name:   "more pages than the cap",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"1"}`},
				{"1", `{"tools":[{"name":"b"}],"nextCursor":"2"}`},
				{"2", `{"tools":[{"name":"c"}],"nextCursor":"3"}`},
			},
			maxPages:  3,
			want:      []string{"tools/list: more than 3 pages; stopping; the list stops after 3 items from 3 pages"},
			cursor:    ptr("3"),
			wantNames: []string{"a", "b", "c"},
			wantRaw:   `{"tools":[{"name":"a"},{"name":"b"},{"name":"c"}],"nextCursor":"3"}`,
		},
		{
			name:   "a long cursor is cut in the message, kept whole in the JSON",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[{"name":"a"}],"nextCursor":"` + strings.Repeat("x", 100) + `\u001b"}`},
			},
			last:      `{"code":-32603,"message":"no"}`,
			want:      []string{`tools/list page 2 (cursor "` + strings.Repeat("x", 59) + "…)"},
			cursor:    ptr(strings.Repeat("x", 100) + "\x1b"),
			wantNames: []string{"a"},
			wantRaw:   `{"tools":[{"name":"a"}],"nextCursor":"` + strings.Repeat("x", 100) + `\u001b"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, srv, w := newTestSession(t, Options{})
			s.maxPages = tt.maxPages
			ch := make(chan listResult, 1)
			go func() {
				res, err := s.List(context.Background(), tt.method, nil)
				ch <- listResult{res, err}
			}()
			for i, p := range tt.pages {
				req := srv.nextRequest(tt.method)
				checkCursor(t, i, req, p.cursor)
				srv.reply(req, p.result)
			}
			if tt.last != "" {
				req := srv.nextRequest(tt.method)
				srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":` + tt.last + `}`)
			}
			var r listResult
			select {
			case r = <-ch:
			case <-time.After(wait):
				t.Fatal("List did not return")
			}
			var inc *IncompleteListError
			if !errors.As(r.err, &inc) || !containsAll(r.err.Error(), tt.want...) {
				t.Fatalf("err = %v, want an *IncompleteListError with %q", r.err, tt.want)
			}
			if diff := cmp.Diff(tt.cursor, inc.Cursor); diff != "" {
				t.Errorf("the error's Cursor (-want +got):\n%s", diff)
			}
			if r.res == nil {
				t.Fatal("no result")
			}
			if diff := cmp.Diff(tt.wantNames, names(t, r.res.Items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if got := string(r.res.JSON()); got != tt.wantRaw {
				t.Errorf("JSON =\n%s\nwant\n%s", got, tt.wantRaw)
			}
			if !r.res.Incomplete() || inc.Pages != r.res.Pages || inc.Items != len(r.res.Items) {
				t.Errorf("Incomplete %v; error's Pages %d, Items %d; result's %d, %d", r.res.Incomplete(), inc.Pages, inc.Items, r.res.Pages, len(r.res.Items))
			}
			for _, subs := range tt.warnings {
				w.expect(subs...)
			}
			// A page that cannot be read, a cursor that is not a string
			// and a loop are the server's departures from the protocol;
			// its JSON-RPC error and mcpx's cap on pages are not.
			if want := tt.last == "" && tt.maxPages == 0; errors.Is(r.err, ErrProtocolViolation) != want {
				t.Errorf("err = %v: errors.Is(ErrProtocolViolation) = %v, want %v", r.err, !want, want)
			}
			// The loop's and the cap's cause is typed too.
			if tt.cursor != nil && tt.last == "" && !strings.Contains(tt.name, "page 2") {
				var pe *PaginationError
				if !errors.As(r.err, &pe) {
					t.Errorf("err = %v, want a *PaginationError inside", r.err)
				}
			}
		})
	}
}

func ptr(s string) *string { return &s }

func TestListErrors(t *testing.T) {
	tests := []struct {
		name   string
		method string
		pages  []page
		want   []string
		// violation: the server's departure from the protocol, not
		// the caller's mistake.
		violation bool
	}{
		{"list member not an array", "tools/list", []page{{"", `{"tools":{"a":1}}`}}, []string{`"tools"`, "not an array"}, true},
		{"result not an object", "tools/list", []page{{"", `[1]`}}, []string{"not an object"}, true},
		{"not a list method", "tools/call", nil, []string{"not a paginated list"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err, _ := runList(t, tt.method, nil, tt.pages)
			var inc *IncompleteListError
			if err == nil || !containsAll(err.Error(), tt.want...) || errors.As(err, &inc) || res != nil {
				t.Fatalf("err = %v, result %v; want no result and an error with %q", err, res, tt.want)
			}
			if errors.Is(err, ErrProtocolViolation) != tt.violation {
				t.Errorf("err = %v: errors.Is(ErrProtocolViolation) = %v", err, !tt.violation)
			}
		})
	}
	t.Run("an error on the first page is the error alone", func(t *testing.T) {
		s, srv, _ := newTestSession(t, Options{})
		ch := make(chan listResult, 1)
		go func() { res, err := s.List(context.Background(), "prompts/list", nil); ch <- listResult{res, err} }()
		req := srv.nextRequest("prompts/list")
		srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32601,"message":"no prompts"}}`)
		select {
		case r := <-ch:
			var rpcErr *jsonrpc.Error
			if !errors.As(r.err, &rpcErr) || r.res != nil || !strings.HasPrefix(r.err.Error(), "prompts/list: server error") {
				t.Fatalf("List = %v, %v", r.res, r.err)
			}
		case <-time.After(wait):
			t.Fatal("List did not return")
		}
	})
}

// TestListConnectionLostOnALaterPage: the connection ends while page 2 is
// asked for; page 1 is kept, and the error is the connection's.
func TestListConnectionLostOnALaterPage(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := make(chan listResult, 1)
	go func() { res, err := s.List(context.Background(), "tools/list", nil); ch <- listResult{res, err} }()
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"a"}],"nextCursor":"c1"}`)
	srv.nextRequest("tools/list")
	srv.conn.Close()
	select {
	case r := <-ch:
		var inc *IncompleteListError
		if !errors.Is(r.err, transport.ErrClosed) || !errors.As(r.err, &inc) || r.res == nil || len(r.res.Items) != 1 ||
			!strings.HasPrefix(r.err.Error(), `tools/list page 2 (cursor "c1"): `) {
			t.Fatalf("List = %v, %v; want page 1 and the connection's error", r.res, r.err)
		}
	case <-time.After(wait):
		t.Fatal("List did not return")
	}
}

// TestListTimeoutOnALaterPage: page 2 is never answered; the request's
// timeout ends the walk with page 1 kept.
func TestListTimeoutOnALaterPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, srv, _ := newTestSession(t, Options{Timeout: 5 * time.Second})
		ch := make(chan listResult, 1)
		go func() { res, err := s.List(context.Background(), "tools/list", nil); ch <- listResult{res, err} }()
		srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"a"}],"nextCursor":"c1"}`)
		srv.nextRequest("tools/list")
		r := <-ch
		var inc *IncompleteListError
		if !errors.Is(r.err, ErrTimeout) || !errors.As(r.err, &inc) || r.res == nil || len(r.res.Items) != 1 {
			t.Fatalf("List = %v, %v; want page 1 and a timeout", r.res, r.err)
		}
		srv.next() // notifications/cancelled
	})
}

// TestIncompleteToolsListNotCached: a tools/list that stopped early is not
// the session's copy of the tools; the next use lists them again. A tool
// on the pages it read is typed by its definition there, with a warning.
func TestIncompleteToolsListNotCached(t *testing.T) {
	s, srv, w := newTestSession(t, Options{})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	typed := func(name string) <-chan argsResult {
		ch := make(chan argsResult, 1)
		go func() {
			args, _, err := s.ToolArguments(ctx, name, []string{"a=2"}, nil)
			ch <- argsResult{args, err}
		}()
		return ch
	}
	failPage2 := func() {
		srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"add","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}],"nextCursor":"c1"}`)
		req := srv.nextRequest("tools/list")
		srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32603,"message":"down"}}`)
	}
	ch := typed("add")
	failPage2()
	if r := <-ch; r.err != nil || string(r.args) != `{"a":"2"}` {
		t.Fatalf("arguments %s, %v; want a typed by page 1", r.args, r.err)
	}
	w.expect(`tool "add" is taken from the pages tools/list read before it stopped`, "down")
	// Not cached: listed again; a tool not on page 1 is the list's error.
	ch = typed("other")
	failPage2()
	if r := <-ch; r.err == nil || !strings.Contains(r.err.Error(), `tools/list page 2 (cursor "c1"): server error -32603`) {
		t.Fatalf("arguments %s, %v; want the list's error", r.args, r.err)
	}
}

func TestListKey(t *testing.T) {
	for method, key := range map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates", "ping": ""} {
		if got := ListKey(method); got != key {
			t.Errorf("ListKey(%q) = %q, want %q", method, got, key)
		}
	}
}

// TestListKeepsNoCursorItFollowed: a walk remembers the cursors it
// followed (to stop at a loop) by digest, so a server that answers each
// page with a new cursor of megabytes and no items does not make mcpx
// hold every cursor until the page cap.
func TestListKeepsNoCursorItFollowed(t *testing.T) {
	const pages, size = 33, 1 << 20
	s, srv, _ := newTestSession(t, Options{})
	cursor := func(i int) string { return fmt.Sprintf("%04d", i) + strings.Repeat("c", size) }
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	ch := make(chan listResult, 1)
	go func() {
		res, err := s.List(context.Background(), ListTools, nil)
		ch <- listResult{res, err}
	}()
	var grew uint64
	for i := range pages {
		req := srv.nextRequest(ListTools)
		if i == pages-1 {
			var now runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&now)
			grew = now.HeapAlloc - min(now.HeapAlloc, before.HeapAlloc)
			srv.reply(req, `{"tools":[{"name":"last","inputSchema":{"type":"object"}}]}`)
			break
		}
		srv.reply(req, `{"tools":[],"nextCursor":"`+cursor(i)+`"}`)
	}
	var r listResult
	select {
	case r = <-ch:
	case <-time.After(wait):
		t.Fatal("List did not return")
	}
	if r.err != nil || len(r.res.Items) != 1 {
		t.Fatalf("List = %v, %v; want the one item of the last page", r.res, r.err)
	}
	// The cursors followed are (pages-1)*size bytes; a walk holds one or
	// two of them at a time (and the frames that carry them).
	if limit := uint64(16 * size); grew > limit {
		t.Errorf("the heap grew by %d MiB during a walk of %d pages with %d MiB cursors, want at most %d MiB", grew>>20, pages, size>>20, limit>>20)
	}
}
