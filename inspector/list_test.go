package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

type listResult struct {
	res *ListResult
	err error
}

// page is one expected request (by its cursor, "" for none) and the raw
// result to answer it with.
type page struct {
	cursor string
	result string
}

// runList runs s.List against the fake server, which answers the pages in
// order, checking each request's cursor.
func runList(t *testing.T, method string, cursor *string, pages []page) (*ListResult, error) {
	t.Helper()
	s, srv, _ := newTestSession(t, Options{})
	ch := make(chan listResult, 1)
	go func() {
		res, err := s.List(context.Background(), method, cursor)
		ch <- listResult{res, err}
	}()
	for i, p := range pages {
		req := srv.nextRequest(method)
		var params struct {
			Cursor *string `json:"cursor"`
		}
		if len(req.Params) > 0 {
			if err := json.Unmarshal(req.Params, &params); err != nil {
				t.Fatal(err)
			}
		}
		switch {
		case p.cursor == "" && len(req.Params) != 0:
			t.Errorf("request %d params = %s, want none", i, req.Params)
		case p.cursor != "" && (params.Cursor == nil || *params.Cursor != p.cursor):
			t.Errorf("request %d params = %s, want cursor %q", i, req.Params, p.cursor)
		}
		srv.reply(req, p.result)
	}
	select {
	case r := <-ch:
		return r.res, r.err
	case <-time.After(wait):
		t.Fatal("List did not return")
	}
	return nil, nil
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
			pages:     []page{{"", `{ "prompts" : [ {"name":"p"} ] ,"nextCursor":null}`}},
			wantRaw:   `{ "prompts" : [ {"name":"p"} ] ,"nextCursor":null}`,
			wantNames: []string{"p"},
		},
		{
			name:   "empty pages give an empty list, not null",
			method: "resources/list",
			pages: []page{
				{"", `{"resources":[],"nextCursor":"x"}`},
				{"x", `{"resources":null}`},
			},
			wantRaw: `{"resources":[]}`,
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := runList(t, tt.method, nil, tt.pages)
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Raw) != tt.wantRaw {
				t.Errorf("Raw =\n%s\nwant\n%s", res.Raw, tt.wantRaw)
			}
			if diff := cmp.Diff(tt.wantNames, names(t, res.Items)); diff != "" {
				t.Errorf("items (-want +got):\n%s", diff)
			}
			if res.Pages != len(tt.pages) || res.NextCursor != "" {
				t.Errorf("Pages = %d, NextCursor = %q; want %d, none", res.Pages, res.NextCursor, len(tt.pages))
			}
		})
	}
}

func TestListSinglePageWithCursor(t *testing.T) {
	tests := []struct {
		name   string
		cursor string
		page   page
		next   string
	}{
		{"first page only", "", page{"", `{"tools":[{"name":"a"}],"nextCursor":"more"}`}, "more"},
		{"page at a cursor", "c7", page{"c7", `{"tools":[{"name":"z"}], "nextCursor":"c8"}`}, "c8"},
		{"last page", "c9", page{"c9", `{"tools":[]}`}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cursor := tt.cursor
			res, err := runList(t, "tools/list", &cursor, []page{tt.page})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Raw) != tt.page.result {
				t.Errorf("Raw = %s, want the page exactly: %s", res.Raw, tt.page.result)
			}
			if res.NextCursor != tt.next || res.Pages != 1 {
				t.Errorf("NextCursor = %q, Pages = %d; want %q, 1", res.NextCursor, res.Pages, tt.next)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	tests := []struct {
		name   string
		method string
		pages  []page
		want   []string
	}{
		{
			name:   "repeated cursor",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[],"nextCursor":"same"}`},
				{"same", `{"tools":[],"nextCursor":"same"}`},
			},
			want: []string{"same", "twice"},
		},
		{
			name:   "cycle through two cursors",
			method: "tools/list",
			pages: []page{
				{"", `{"tools":[],"nextCursor":"a"}`},
				{"a", `{"tools":[],"nextCursor":"b"}`},
				{"b", `{"tools":[],"nextCursor":"a"}`},
			},
			want: []string{`"a"`, "twice"},
		},
		{"list member not an array", "tools/list", []page{{"", `{"tools":{"a":1}}`}}, []string{`"tools"`, "not an array"}},
		{"result not an object", "tools/list", []page{{"", `[1]`}}, []string{"not an object"}},
		{"cursor not a string", "tools/list", []page{{"", `{"tools":[],"nextCursor":5}`}}, []string{"nextCursor"}},
		{"not a list method", "tools/call", nil, []string{"not a paginated list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runList(t, tt.method, nil, tt.pages)
			if err == nil || !containsAll(err.Error(), tt.want...) {
				t.Fatalf("err = %v, want one with %q", err, tt.want)
			}
		})
	}
	t.Run("error on a later page", func(t *testing.T) {
		s, srv, _ := newTestSession(t, Options{})
		ch := make(chan error, 1)
		go func() { _, err := s.List(context.Background(), "prompts/list", nil); ch <- err }()
		srv.reply(srv.nextRequest("prompts/list"), `{"prompts":[],"nextCursor":"p2"}`)
		req := srv.nextRequest("prompts/list")
		srv.send(`{"jsonrpc":"2.0","id":` + req.ID.String() + `,"error":{"code":-32602,"message":"bad cursor"}}`)
		select {
		case err := <-ch:
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || !strings.Contains(err.Error(), "prompts/list") {
				t.Fatalf("err = %v", err)
			}
		case <-time.After(wait):
			t.Fatal("List did not return")
		}
	})
}

func TestListKey(t *testing.T) {
	for method, key := range map[string]string{"tools/list": "tools", "prompts/list": "prompts", "resources/list": "resources", "resources/templates/list": "resourceTemplates", "ping": ""} {
		if got := ListKey(method); got != key {
			t.Errorf("ListKey(%q) = %q, want %q", method, got, key)
		}
	}
}
