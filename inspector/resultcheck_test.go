package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// weatherTools is a tools/list result: weather declares an outputSchema,
// plain does not.
const weatherTools = `{"tools":[
	{"name":"weather","inputSchema":{"type":"object"},"outputSchema":{"type":"object","properties":{"temp":{"type":"number"},"sky":{"enum":["clear","cloudy"]}},"required":["temp"]}},
	{"name":"plain","inputSchema":{"type":"object"}},
	{"name":"broken","inputSchema":{"type":"object"},"outputSchema":{"type":"objekt"}}]}`

// listTools fills the session's copy of tools/list with result.
func listTools(t *testing.T, s *Session, srv *fakeServer, result string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	done := make(chan error, 1)
	go func() { _, err := s.List(ctx, ListTools, nil); done <- err }()
	srv.reply(srv.nextRequest("tools/list"), result)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestToolResultProblems: each way a tools/call result departs from
// CallToolResult (schema.json) is said in one line; a result that keeps
// the rules has none; structuredContent is held to the tool's outputSchema
// from the session's copy of tools/list (spec server/tools, "Output
// Schema"), never when isError is set, and a result is never checked
// against a list the session does not have.
func TestToolResultProblems(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{}}`)
	// Before any tools/list: the block checks, no outputSchema check, and
	// nothing listed for it.
	if got := s.ToolResultProblems("weather", []byte(`{"content":[]}`)); len(got) != 0 {
		t.Errorf("without a list: %q", got)
	}
	srv.quietUntil(mark(t, s))
	listTools(t, s, srv, weatherTools)

	many := strings.Repeat(`{"type":"text"},`, 7)
	tests := []struct {
		tool, result string
		want         []string // words of each problem, in order
	}{
		{"plain", `{"content":[{"type":"text","text":"hi"}]}`, nil},
		{"plain", `{"content":[],"isError":false,"_meta":{}}`, nil},
		{"plain", `5`, []string{"not a JSON object"}},
		{"plain", `[]`, []string{"not a JSON object"}},
		{"plain", `{}`, []string{`no "content"`}},
		{"plain", `{"Content":[]}`, []string{`no "content"`}},
		{"plain", `{"content":{}}`, []string{`"content" is not an array`}},
		{"plain", `{"content":null}`, []string{`"content" is not an array`}},
		{"plain", `{"content":[1,{"text":"x"},{"type":"text","text":5}]}`, []string{
			"content[0] is not an object", `content[1] has no string "type"`, `content[2] (text) has no string "text"`}},
		{"plain", `{"content":[{"type":"image","data":"AA=="},{"type":"audio","mimeType":"audio/wav"}]}`, []string{
			`content[0] (image) has no string "mimeType"`, `content[1] (audio) has no string "data"`}},
		{"plain", `{"content":[{"type":"resource_link","uri":"file:///a"},{"type":"resource","resource":{"uri":"a:b"}},{"type":"resource"}]}`, []string{
			`content[0] (resource_link) has no string "name"`, `content[1] (resource) has no "resource" with`, `content[2] (resource) has no "resource" object`}},
		{"plain", `{"content":[{"type":"resource","resource":{"uri":"a:b","blob":"AA=="}},{"type":"future-kind"},{"type":"resource_link","uri":"a:b","name":"b"}]}`, nil},
		{"plain", `{"content":[{"type":"image","data":"AAE","mimeType":"image/png"},{"type":"audio","data":"AA\nAA==","mimeType":"audio/wav"}]}`, nil},
		{"plain", `{"content":[{"type":"image","data":"-_-_","mimeType":"image/png"},{"type":"audio","data":"A","mimeType":"audio/wav"},{"type":"resource","resource":{"uri":"a:b","blob":"!"}},{"type":"resource","resource":{"uri":"a:b","text":"t","blob":"AA=="}}]}`, []string{
			`content[0] (image) has a "data" that is not valid base64 (illegal base64 data at input byte 0)`, `content[1] (audio) has a "data" that is not valid base64`,
			`content[2] (resource) has a "blob" that is not valid base64`, `content[3] (resource) has both a "text" and a "blob"`}},
		{"plain", `{"content":[` + many + `{"type":"text","text":""}]}`, []string{
			"content[0]", "content[1]", "content[2]", "content[3]", "and 3 more content blocks"}},
		{"plain", `{"content":[],"isError":"yes"}`, []string{`"isError" is not a boolean`}},
		{"plain", `{"content":[],"structuredContent":[1]}`, []string{`"structuredContent" is not an object`}},
		{"plain", `{"content":[],"structuredContent":{"any":"thing"}}`, nil},
		{"weather", `{"content":[],"structuredContent":{"temp":21.5,"sky":"clear"}}`, nil},
		{"weather", `{"content":[]}`, []string{"the tool declares an outputSchema, but the result has no structuredContent"}},
		{"weather", `{"content":[],"structuredContent":null}`, []string{`"structuredContent" is not an object`, "no structuredContent"}},
		{"weather", `{"content":[],"structuredContent":{"temp":"hot","sky":"rain"}}`, []string{
			"structuredContent does not match the tool's outputSchema: at /"}},
		{"weather", `{"content":[],"structuredContent":{"sky":"clear"}}`, []string{"does not match the tool's outputSchema: missing property 'temp'"}},
		{"weather", `{"content":[{"type":"text","text":"no weather today"}],"isError":true}`, nil},
		{"weather", `{"content":[],"isError":true,"structuredContent":{"temp":"hot"}}`, nil},
		{"broken", `{"content":[],"structuredContent":{}}`, []string{"structuredContent is not checked: the tool's outputSchema: invalid schema"}},
		{"unlisted", `{"content":[],"structuredContent":{"temp":"hot"}}`, nil},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got := s.ToolResultProblems(tt.tool, []byte(tt.result))
			if len(got) != len(tt.want) {
				t.Fatalf("%s %s: problems %q, want %d like %q", tt.tool, tt.result, got, len(tt.want), tt.want)
			}
			for j, w := range tt.want {
				if !strings.Contains(got[j], w) {
					t.Errorf("%s %s: problem %q lacks %q", tt.tool, tt.result, got[j], w)
				}
			}
		})
	}
	// One compile per tool per list, however many results are checked.
	if got := s.tools.outputCompiles; got != 2 {
		t.Errorf("outputSchema compiled %d times, want 2 (weather and broken, once each)", got)
	}
	srv.quietUntil(mark(t, s))
}

// TestToolResultProblemsModern: from 2026-07-28 structuredContent may be
// any JSON value, null included, as long as it matches the outputSchema.
func TestToolResultProblemsModern(t *testing.T) {
	s, srv, _, _ := newModernSession(t, &Modern{Reason: "test"}, false, Options{})
	openModern(t, s, srv)
	listTools(t, s, srv, `{"resultType":"complete","tools":[{"name":"count","inputSchema":{"type":"object"},"outputSchema":{"type":"array","items":{"type":"integer"}}},{"name":"plain","inputSchema":{"type":"object"}}]}`)
	for _, tt := range []struct {
		tool, result string
		want         string
	}{
		{"count", `{"resultType":"complete","content":[],"structuredContent":[1,2]}`, ""},
		{"count", `{"resultType":"complete","content":[],"structuredContent":[1,"two"]}`, "does not match the tool's outputSchema: at /1"},
		{"count", `{"resultType":"complete","content":[]}`, "no structuredContent"},
		{"plain", `{"resultType":"complete","content":[],"structuredContent":null}`, ""},
		{"plain", `{"resultType":"complete","content":[],"structuredContent":"text"}`, ""},
	} {
		got := s.ToolResultProblems(tt.tool, []byte(tt.result))
		if tt.want == "" && len(got) != 0 || tt.want != "" && (len(got) != 1 || !strings.Contains(got[0], tt.want)) {
			t.Errorf("%s %s: problems %q, want %q", tt.tool, tt.result, got, tt.want)
		}
	}
}

// TestPromptAndResourceResultProblems: prompts/get and resources/read
// results that depart from GetPromptResult and ReadResourceResult are
// returned as they came, with a warning for each departure.
func TestPromptAndResourceResultProblems(t *testing.T) {
	for _, tt := range []struct {
		prompt bool
		result string
		want   []string
	}{
		{true, `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}},{"role":"assistant","content":{"type":"resource_link","uri":"a:b","name":"b"}}]}`, nil},
		{true, `{"messages":[]}`, nil},
		{true, `{"description":"no messages"}`, []string{`it has no "messages" (a GetPromptResult must have one)`}},
		{true, `{"messages":"hello"}`, []string{`"messages" is not an array`}},
		{true, `[]`, []string{"not a JSON object"}},
		{true, `{"messages":[7,{"content":{"type":"text","text":"x"}},{"role":"robot","content":{"type":"text","text":"x"}},{"role":"user"},{"role":"user","content":{"type":"image","data":"AA=="}}]}`, []string{
			"messages[0] is not an object", `messages[1] has no "role"`, `messages[2] has the role "robot", which is neither`, `messages[3] has no "content"`,
			`and 1 more messages`}},
		{true, `{"messages":[{"role":"user","content":{"type":"image","data":"AA=="}}]}`, []string{`messages[0] content (image) has no string "mimeType"`}},
		{false, `{"contents":[{"uri":"a:b","text":"x"},{"uri":"a:c","blob":"AA==","mimeType":"image/png"}]}`, nil},
		{false, `{"contents":[]}`, nil},
		{false, `{}`, []string{`it has no "contents" (a ReadResourceResult must have one)`}},
		{false, `{"contents":{}}`, []string{`"contents" is not an array`}},
		{false, `{"contents":[null,{"text":"x"},{"uri":"a:b"},{"uri":"a:b","text":5}]}`, []string{
			"contents[0] is not an object", `contents[1] has no string "uri"`, `contents[2] has neither a string "text" nor a string "blob"`, "contents[3] has neither"}},
		{false, `{"contents":[{"uri":"a:b","blob":"not base64"},{"uri":"a:c","text":"","blob":""}]}`, []string{
			`contents[0] has a "blob" that is not valid base64 (illegal base64 data at input byte 3)`, `contents[1] has both a "text" and a "blob"`}},
		{true, `{"messages":[{"role":"user","content":{"type":"audio","data":"*","mimeType":"audio/wav"}}]}`, []string{`messages[0] content (audio) has a "data" that is not valid base64`}},
	} {
		check := ResourceResultProblems
		if tt.prompt {
			check = PromptResultProblems
		}
		got := check([]byte(tt.result))
		if len(got) != len(tt.want) {
			t.Errorf("%s: problems %q, want %d like %q", tt.result, got, len(tt.want), tt.want)
			continue
		}
		for j, w := range tt.want {
			if !strings.Contains(got[j], w) {
				t.Errorf("%s: problem %q lacks %q", tt.result, got[j], w)
			}
		}
	}

	// The session says them as warnings and returns the result as it came.
	ch, srv, w := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), `{"protocolVersion":"2025-11-25","capabilities":{"prompts":{},"resources":{}},"serverInfo":{"name":"srv","version":"1"}}`)
	srv.next() // notifications/initialized
	s := waitConnect(t, ch).s
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	got := make(chan string, 2)
	go func() {
		res, err := s.GetPrompt(ctx, "greet", nil)
		got <- fmt.Sprintf("%s %v", res, err)
		res, err = s.ReadResource(ctx, "test://a")
		got <- fmt.Sprintf("%s %v", res, err)
	}()
	srv.reply(srv.nextRequest("prompts/get"), `{"messages":[{"role":"robot","content":{"type":"text","text":"x"}}]}`)
	w.expect(`the result of prompt "greet" departs from the spec (server/prompts): messages[0] has the role "robot"`)
	if r := <-got; r != `{"messages":[{"role":"robot","content":{"type":"text","text":"x"}}]} <nil>` {
		t.Errorf("prompts/get returned %s", r)
	}
	srv.reply(srv.nextRequest("resources/read"), `{"contents":[{"uri":"test://a"}]}`)
	w.expect(`the result of reading test://a departs from the spec (server/resources): contents[0] has neither`)
	if r := <-got; r != `{"contents":[{"uri":"test://a"}]} <nil>` {
		t.Errorf("resources/read returned %s", r)
	}
}

// TestCompleteResultProblems: a completion/complete result that departs
// from CompleteResult is said, one line per departure.
func TestCompleteResultProblems(t *testing.T) {
	hundred := strings.Repeat(`"v",`, 100)
	for _, tt := range []struct {
		result string
		want   []string
	}{
		{`{"completion":{"values":["a","b"],"total":2,"hasMore":false}}`, nil},
		{`{"completion":{"values":[],"total":1.0}}`, nil},
		{`{"completion":{"values":[],"total":12345678901234567890}}`, nil},
		{`[]`, []string{"not a JSON object"}},
		{`{"values":[]}`, []string{`no "completion" object`}},
		{`{"completion":{}}`, []string{`no "values" array`}},
		{`{"completion":{"values":[1,"a",null],"total":"3","hasMore":"no"}}`, []string{
			"2 of its completion values are not strings", `total "3" is not an integer`, `hasMore "no" is not a boolean`}},
		{`{"completion":{"values":[` + hundred + `"v"],"total":1.5}}`, []string{"101 completion values, more than the 100 allowed", "total 1.5 is not an integer"}},
	} {
		got := CompleteResultProblems([]byte(tt.result))
		if len(got) != len(tt.want) {
			t.Errorf("%.80s: problems %q, want %d like %q", tt.result, got, len(tt.want), tt.want)
			continue
		}
		for j, w := range tt.want {
			if !strings.Contains(got[j], w) {
				t.Errorf("%.80s: problem %q lacks %q", tt.result, got[j], w)
			}
		}
	}
}

// TestListProblems: items that lack what their type requires, names
// listed twice and (from 2025-11-25) tool names outside the recommended
// form are each said once, in the order of the list.
func TestListProblems(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{}}`)
	items := func(raw ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, r := range raw {
			out = append(out, json.RawMessage(r))
		}
		return out
	}
	long := strings.Repeat("n", 129)
	for _, tt := range []struct {
		method string
		items  []json.RawMessage
		want   []string
	}{
		{ListTools, items(`{"name":"get_user.v2-x","inputSchema":{"type":"object"}}`, `{"name":"b","inputSchema":{"type":"object","properties":{}}}`), nil},
		{ListTools, items(`5`, `{"inputSchema":{"type":"object"}}`, `{"name":"a"}`, `{"name":"b","inputSchema":{"type":"array"}}`, `{"name":"","inputSchema":{"type":"object"}}`), []string{
			"tool 1 of the list is not an object", `tool 2 of the list has no string "name"`, `tool "a" has no inputSchema`,
			`tool "b" has an inputSchema whose type is not "object"`, "tool 5 of the list has an empty name"}},
		{ListTools, items(`{"name":"a b","inputSchema":{"type":"object"}}`, `{"name":"`+long+`","inputSchema":{"type":"object"}}`, `{"name":"é","inputSchema":{"type":"object"}}`), []string{
			`tool name "a b" has characters other than`, "is 129 characters long, not 1 to 128", `tool name "é" has characters`}},
		{ListTools, items(`{"name":"x","inputSchema":{"type":"object"}}`, `{"name":"y","inputSchema":{"type":"object"}}`, `{"name":"x","inputSchema":{"type":"object"}}`, `{"name":"x","inputSchema":{"type":"object"}}`), []string{
			`tool "x" is listed 3 times`}},
		{ListPrompts, items(`{"name":"p"}`, `{"name":"p"}`, `{"description":"d"}`), []string{`prompt 3 of the list has no string "name"`, `prompt "p" is listed 2 times`}},
		{ListResources, items(`{"name":"r","uri":"a:b"}`, `{"name":"r","uri":"a:b"}`, `{"uri":"a:c"}`, `{"name":"n"}`), []string{
			`resource 3 of the list has no string "name"`, `resource "n" has no string "uri"`}},
		{ListResourceTemplates, items(`{"name":"t","uriTemplate":"a:{b}"}`, `{"name":"t","uri":"a:b"}`), []string{`resource template "t" has no string "uriTemplate"`}},
		// Optional members of another type than the schema's; null is
		// taken as left out.
		{ListTools, items(`{"name":"a","inputSchema":{"type":"object"},"title":5,"description":null,"annotations":"junk","_meta":[1],"outputSchema":true}`,
			`{"name":"b","inputSchema":{"type":"object"},"icons":[{"src":"data:,x"},{"src":5}]}`, `{"name":"c","inputSchema":{"type":"object"},"icons":"x"}`), []string{
			`tool "a" has a "title" that is a number, not a string`, `tool "a" has "annotations" that is a string, not an object`,
			`tool "a" has "_meta" that is an array, not an object`, `tool "a" has "outputSchema" that is a boolean, not an object`,
			`tool "b" has an icon (2 of "icons") that is not an object with a string "src"`, `tool "c" has "icons" that is a string, not an array`}},
		{ListPrompts, items(`{"name":"p","arguments":[{"name":"a","required":true},{"name":5}]}`, `{"name":"q","arguments":"none"}`,
			`{"name":"r","arguments":[{"name":"a","required":"yes"}]}`, `{"name":"s","arguments":null}`), []string{
			`prompt "p" has an argument (2 of "arguments") that is not an object with a string "name"`, `prompt "q" has "arguments" that is a string, not an array`,
			`prompt "r" has an argument (1 of "arguments") whose "required" is not a boolean`}},
		// An icon's src is an http:, https: or data: URI (basic, "icons";
		// Security considerations: unsafe schemes are rejected); the
		// first icon that is not is named.
		{ListPrompts, items(`{"name":"ok","icons":[{"src":"HTTPS://a.example/i.png"},{"src":"data:image/png;base64,AA=="}]}`,
			`{"name":"js","icons":[{"src":"https://a.example/i.png"},{"src":"javascript:alert(1)"},{"src":"file:///x"}]}`,
			`{"name":"file","icons":[{"src":"file:///etc/passwd"}]}`, `{"name":"http","icons":[{"src":"http://a.example/i.png"}]}`,
			`{"name":"rel","icons":[{"src":"icon.png"}]}`, `{"name":"ws","icons":[{"src":"ws://a.example/"}]}`), []string{
			`prompt "js" has an icon (2 of "icons") whose "src" is a javascript: URI, which clients must reject`,
			`prompt "file" has an icon (1 of "icons") whose "src" is a file: URI, which clients must reject`,
			`prompt "rel" has an icon (1 of "icons") whose "src" is not a URI with a scheme`,
			`prompt "ws" has an icon (1 of "icons") whose "src" is a ws: URI, which clients must reject`}},
		{ListResources, items(`{"name":"r","uri":"a:b","size":1.5,"mimeType":{},"icons":[]}`), []string{
			`resource "r" has a "size" that is 1.5, not an integer`, `resource "r" has a "mimeType" that is an object, not a string`}},
		{ListTools, items(strings.Split(strings.Repeat(`{"name":"a b"},`, 12), ",")[:12]...), []string{
			"", "", "", "", "", "", "", "", "", "", "and 15 more problems"}},
	} {
		got, n := s.ListProblems(tt.method, tt.items)
		if len(got) != len(tt.want) {
			t.Errorf("%s %s: problems %q, want %d like %q", tt.method, tt.items, got, len(tt.want), tt.want)
			continue
		}
		// The last line counts the rest: 10 and 15 are 25 problems.
		wantN := len(tt.want)
		if len(tt.want) == 11 {
			wantN = 25
		}
		if n != wantN {
			t.Errorf("%s %s: %d problems in all, want %d", tt.method, tt.items, n, wantN)
		}
		for j, w := range tt.want {
			if !strings.Contains(got[j], w) {
				t.Errorf("%s: problem %q lacks %q", tt.method, got[j], w)
			}
		}
	}
	srv.quietUntil(mark(t, s))
}

// TestListProblemsBefore20251125: tool names are held to the form only
// from the revision that recommends it.
func TestListProblemsBefore20251125(t *testing.T) {
	ch, srv, _ := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), `{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}`)
	srv.next() // notifications/initialized
	s := waitConnect(t, ch).s
	if got, _ := s.ListProblems(ListTools, []json.RawMessage{json.RawMessage(`{"name":"look up","inputSchema":{"type":"object"},"icons":"x"}`)}); len(got) != 0 {
		t.Errorf("2025-06-18: %q", got)
	}
}

// TestCallToolParams: a call passed on as another client wrote it (an MCP
// Apps view's) is checked as a person's is: each departure a warning, the
// result returned as it came.
func TestCallToolParams(t *testing.T) {
	ch, srv, w := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"1"}}`)
	srv.next() // notifications/initialized
	s := waitConnect(t, ch).s
	listTools(t, s, srv, weatherTools)
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	got := make(chan string, 1)
	go func() {
		res, err := s.CallToolParams(ctx, json.RawMessage(`{"name":"weather","arguments":{},"_meta":{"x":1}}`))
		got <- fmt.Sprintf("%s %v", res, err)
	}()
	req := srv.nextRequest("tools/call")
	if string(req.Params) != `{"name":"weather","arguments":{},"_meta":{"x":1}}` {
		t.Errorf("params %s, want them as given", req.Params)
	}
	srv.reply(req, `{"content":[],"structuredContent":{"temp":"hot"}}`)
	w.expect(`the result of tool "weather" departs from the spec (server/tools): structuredContent does not match the tool's outputSchema`)
	if r := <-got; r != `{"content":[],"structuredContent":{"temp":"hot"}} <nil>` {
		t.Errorf("returned %s", r)
	}
}

// TestReadInitializeResult: only a result that is not an object is an
// error; a protocolVersion that names no version is kept as received for
// the handshake to refuse; what else the spec requires of an
// InitializeResult and is missing or mistyped is a problem, and the
// session goes on with the rest.
func TestReadInitializeResult(t *testing.T) {
	for _, tt := range []struct {
		raw     string
		want    []string
		wantErr string
		name    string
		bad     string
	}{
		{raw: `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":null},"serverInfo":{"name":"s","version":"1","title":"S"},"instructions":"hi"}`, name: "s"},
		{raw: `{"protocolVersion":"2025-11-25","capabilities":{}}`, want: []string{`it has no "serverInfo"`}},
		{raw: `{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}`, want: []string{`it has no "capabilities"`}, name: "s"},
		{raw: `{"protocolVersion":"2025-11-25","capabilities":["tools"],"serverInfo":{"name":"s","version":"1"}}`, want: []string{`its "capabilities" is not an object`}, name: "s"},
		{raw: `{"protocolVersion":"2025-11-25","capabilities":{"tools":true,"logging":{}},"serverInfo":{"version":1}}`, want: []string{
			`capability "tools" is true, not an object`, `its serverInfo lacks a string "name" or "version"`}},
		{raw: `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"},"instructions":42}`, want: []string{`its "instructions" is not a string (ignored)`}, name: "s"},
		{raw: `{"protocolVersion":2025,"capabilities":{},"serverInfo":{"name":"s","version":"1"}}`, name: "s", bad: "2025"},
		{raw: `{"protocolVersion":"","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`, name: "s", bad: `""`},
		{raw: `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1","icons":[{"src":"javascript:alert(1)"}]}}`, name: "s",
			want: []string{`its serverInfo has an icon (1 of "icons") whose "src" is a javascript: URI, which clients must reject`}},
		{raw: `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1","icons":[{"src":"javascript:alert(1)"}]}}`, name: "s"},
		{raw: `[]`, wantErr: "it is not a JSON object"},
	} {
		res, problems, err := readInitializeResult(json.RawMessage(tt.raw))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrProtocolViolation) {
				t.Errorf("%s: error %v, want %q", tt.raw, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(problems) != len(tt.want) || res.ServerInfo.Name != tt.name || res.BadVersion != tt.bad {
			t.Errorf("%s: %+v, problems %q, %v; want %d like %q", tt.raw, res, problems, err, len(tt.want), tt.want)
			continue
		}
		for i, w := range tt.want {
			if !strings.Contains(problems[i], w) {
				t.Errorf("%s: problem %q lacks %q", tt.raw, problems[i], w)
			}
		}
	}
}

// TestParseDiscoverResultShapes: a discover result mcpx cannot use is an
// error that says why in the spec's terms (not a decoder's); a member of
// another type than the schema's is left out.
func TestParseDiscoverResultShapes(t *testing.T) {
	for raw, want := range map[string]string{
		`5`:                                      "the result is not a DiscoverResult: it is not a JSON object",
		`{}`:                                     "the result lists no supportedVersions",
		`{"supportedVersions":null}`:             "the result lists no supportedVersions",
		`{"supportedVersions":"2026-07-28"}`:     `its supportedVersions is "2026-07-28", not an array of strings`,
		`{"supportedVersions":["2026-07-28",7]}`: `its supportedVersions is ["2026-07-28",7], not an array of strings`,
	} {
		if _, err := ParseDiscoverResult(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "json:") {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	d, err := ParseDiscoverResult(json.RawMessage(`{"supportedVersions":["2026-07-28"],"capabilities":[],"ttlMs":"soon","cacheScope":1,` +
		`"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":2}},"instructions":"hi"}`))
	if err != nil || d.Capabilities != nil || d.TTLMs != nil || d.CacheScope != "" || d.Meta.ServerInfo == nil ||
		d.Meta.ServerInfo.Name != "s" || d.Meta.ServerInfo.Version != "" || d.Instructions != "hi" || len(d.SupportedVersions) != 1 {
		t.Errorf("lenient read: %+v, %v", d, err)
	}
}

// TestSkillListProblemsCount: a skills/list's problems are counted in
// all, and Check's report (max 0) names every one, as other lists' are.
func TestSkillListProblemsCount(t *testing.T) {
	items := make([]json.RawMessage, 12)
	for i := range items {
		items[i] = json.RawMessage(`{}`) // no uri
	}
	if lines, n := skillListProblems(items, maxListProblems); len(lines) != 11 || lines[10] != "and 2 more problems" || n != 12 {
		t.Errorf("at most %d: %q, %d in all", maxListProblems, lines, n)
	}
	if lines, n := skillListProblems(items, 0); len(lines) != 12 || n != 12 {
		t.Errorf("every one: %q, %d in all", lines, n)
	}
}
