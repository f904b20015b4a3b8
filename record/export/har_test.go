package export_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/export"
	"github.com/mcpx-dev/mcpx/transport"
)

// harDoc exports tr as HAR and decodes it twice: generically, to check
// the fields HAR 1.2 requires, and into har, for the tests' own checks.
func harDoc(t *testing.T, tr *record.Trace) (string, map[string]any, har) {
	t.Helper()
	var b bytes.Buffer
	if err := export.HAR(&b, tr, export.Options{Version: "1.2.3"}); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("the HAR is not JSON: %v", err)
	}
	var h har
	if err := json.Unmarshal(b.Bytes(), &h); err != nil {
		t.Fatal(err)
	}
	checkRequired(t, doc)
	return b.String(), doc, h
}

type har struct {
	Log struct {
		Version string
		Creator struct{ Name, Version string }
		Pages   []struct{ ID, Title string }
		Entries []harEntry
	}
}

type harEntry struct {
	Pageref   string
	Time      float64
	Session   int    `json:"_session"`
	Direction string `json:"_direction"`
	SSE       []struct {
		ID, Data, Comment, Stream string
		Retry                     int64
	} `json:"_sse"`
	Request struct {
		Method, URL string
		Headers     []struct{ Name, Value string }
		QueryString []struct{ Name, Value string }
		PostData    *struct{ MimeType, Text string }
		BodySize    int
	}
	Response struct {
		Status     int
		StatusText string
		Headers    []struct{ Name, Value string }
		Content    struct {
			Size           int
			MimeType, Text string
		}
		BodySize int
	}
	Timings struct{ Send, Wait, Receive float64 }
}

func (e harEntry) header(name string) string {
	for _, h := range e.Request.Headers {
		if strings.EqualFold(h.Name, name) {
			return h.Value
		}
	}
	return ""
}

func (e harEntry) body() string {
	if e.Request.PostData == nil {
		return ""
	}
	return e.Request.PostData.Text
}

// checkRequired checks every member HAR 1.2 requires, with its type
// (http://www.softwareishard.com/blog/har-12-spec/).
func checkRequired(t *testing.T, doc map[string]any) {
	t.Helper()
	type want struct{ path, kind string }
	check := func(where string, obj any, wants ...want) {
		t.Helper()
		m, ok := obj.(map[string]any)
		if !ok {
			t.Fatalf("%s is %T, not an object", where, obj)
		}
		for _, w := range wants {
			v, ok := m[w.path]
			if !ok {
				t.Errorf("%s.%s is missing", where, w.path)
				continue
			}
			var got string
			switch v.(type) {
			case string:
				got = "string"
			case float64:
				got = "number"
			case []any:
				got = "array"
			case map[string]any:
				got = "object"
			default:
				got = fmt.Sprintf("%T", v)
			}
			if got != w.kind {
				t.Errorf("%s.%s is a %s, want a %s", where, w.path, got, w.kind)
			}
		}
	}
	check("root", doc, want{"log", "object"})
	log := doc["log"].(map[string]any)
	check("log", log, want{"version", "string"}, want{"creator", "object"}, want{"entries", "array"})
	if log["version"] != "1.2" {
		t.Errorf("log.version = %v, want 1.2", log["version"])
	}
	check("log.creator", log["creator"], want{"name", "string"}, want{"version", "string"})
	if pages, ok := log["pages"].([]any); ok {
		for i, p := range pages {
			where := fmt.Sprintf("log.pages[%d]", i)
			check(where, p, want{"startedDateTime", "string"}, want{"id", "string"}, want{"title", "string"}, want{"pageTimings", "object"})
		}
	}
	entries := log["entries"].([]any)
	if len(entries) == 0 {
		t.Fatal("the HAR has no entries")
	}
	for i, e := range entries {
		where := fmt.Sprintf("log.entries[%d]", i)
		check(where, e, want{"startedDateTime", "string"}, want{"time", "number"}, want{"request", "object"},
			want{"response", "object"}, want{"cache", "object"}, want{"timings", "object"})
		em := e.(map[string]any)
		if s, _ := em["startedDateTime"].(string); s != "" {
			if _, err := time.Parse(time.RFC3339Nano, s); err != nil {
				t.Errorf("%s.startedDateTime %q is not ISO 8601: %v", where, s, err)
			}
		}
		check(where+".request", em["request"], want{"method", "string"}, want{"url", "string"}, want{"httpVersion", "string"},
			want{"cookies", "array"}, want{"headers", "array"}, want{"queryString", "array"},
			want{"headersSize", "number"}, want{"bodySize", "number"})
		req := em["request"].(map[string]any)
		if pd, ok := req["postData"]; ok {
			check(where+".request.postData", pd, want{"mimeType", "string"}, want{"params", "array"}, want{"text", "string"})
		}
		for _, list := range []string{"headers", "queryString"} {
			for j, nv := range req[list].([]any) {
				check(fmt.Sprintf("%s.request.%s[%d]", where, list, j), nv, want{"name", "string"}, want{"value", "string"})
			}
		}
		check(where+".response", em["response"], want{"status", "number"}, want{"statusText", "string"},
			want{"httpVersion", "string"}, want{"cookies", "array"}, want{"headers", "array"}, want{"content", "object"},
			want{"redirectURL", "string"}, want{"headersSize", "number"}, want{"bodySize", "number"})
		resp := em["response"].(map[string]any)
		check(where+".response.content", resp["content"], want{"size", "number"}, want{"mimeType", "string"})
		for j, nv := range resp["headers"].([]any) {
			check(fmt.Sprintf("%s.response.headers[%d]", where, j), nv, want{"name", "string"}, want{"value", "string"})
		}
		check(where+".timings", em["timings"], want{"send", "number"}, want{"wait", "number"}, want{"receive", "number"})
		tm := em["timings"].(map[string]any)
		total := 0.0
		for _, k := range []string{"send", "wait", "receive"} {
			v := tm[k].(float64)
			if v < 0 {
				t.Errorf("%s.timings.%s = %v: send, wait and receive may not be -1", where, k, v)
			}
			total += v
		}
		for _, k := range []string{"blocked", "dns", "connect", "ssl"} {
			if v, ok := tm[k].(float64); ok && v < 0 && v != -1 {
				t.Errorf("%s.timings.%s = %v, want -1 or more", where, k, v)
			}
		}
		if got := em["time"].(float64); fmt.Sprintf("%.3f", got) != fmt.Sprintf("%.3f", total) {
			t.Errorf("%s.time = %v, want the sum of its timings %v", where, got, total)
		}
	}
}

// Every kind of session exports to a HAR with every member HAR 1.2
// requires (checked in harDoc).
func TestHARRequiredFields(t *testing.T) {
	for name, tr := range map[string]func(*testing.T) *record.Trace{
		"sse":   func(t *testing.T) *record.Trace { return recordHTTP(t, false) },
		"json":  func(t *testing.T) *record.Trace { return recordHTTP(t, true) },
		"proxy": recordProxyRefusal,
		"stdio": func(t *testing.T) *record.Trace { return stdioTrace(t, stdioFrames...) },
		"nothing": func(t *testing.T) *record.Trace {
			return &record.Trace{Header: record.Header{Format: record.Format, Version: 1}}
		},
	} {
		t.Run(name, func(t *testing.T) {
			tr := tr(t)
			if name == "nothing" {
				var b bytes.Buffer
				if err := export.HAR(&b, tr, export.Options{}); err != nil {
					t.Fatal(err)
				}
				var h har
				if err := json.Unmarshal(b.Bytes(), &h); err != nil || h.Log.Version != "1.2" ||
					!strings.Contains(b.String(), `"entries": []`) || len(h.Log.Pages) != 1 {
					t.Errorf("an empty trace exports as %s (%v), want version 1.2, one page, no entries", b.String(), err)
				}
				return
			}
			_, _, h := harDoc(t, tr)
			if h.Log.Creator.Name != "mcpx" || h.Log.Creator.Version != "1.2.3" {
				t.Errorf("creator = %+v", h.Log.Creator)
			}
			if len(h.Log.Pages) != len(tr.Sessions()) || h.Log.Pages[0].ID != "session-1" {
				t.Errorf("pages = %+v, want one per session", h.Log.Pages)
			}
			for _, e := range h.Log.Entries {
				if e.Pageref != fmt.Sprintf("session-%d", e.Session) || e.Session < 1 {
					t.Errorf("entry %s %s: pageref %q, _session %d", e.Request.Method, e.Request.URL, e.Pageref, e.Session)
				}
			}
		})
	}
}

// An HTTP session's exchanges: each request with its body, status,
// headers and timings; SSE responses as their events.
func TestHARStreamableSSE(t *testing.T) {
	_, _, h := harDoc(t, recordHTTP(t, false))
	var posts []harEntry
	for _, e := range h.Log.Entries {
		if e.Request.Method == "POST" {
			posts = append(posts, e)
		}
		if !strings.HasPrefix(e.Request.URL, "http://127.0.0.1:") {
			t.Errorf("entry URL %q", e.Request.URL)
		}
	}
	if len(posts) != 4 {
		t.Fatalf("%d POST entries, want 4 (initialize, initialized, tools/call echo, tools/call nosuch)", len(posts))
	}
	for i, want := range []string{`"method":"initialize"`, `"method":"notifications/initialized"`, `"method":"tools/call"`, `"name":"nosuch"`} {
		if !strings.Contains(posts[i].body(), want) {
			t.Errorf("POST %d body %q, want it to hold %s", i, posts[i].body(), want)
		}
		if posts[i].Request.PostData != nil && posts[i].Request.PostData.MimeType != "application/json" {
			t.Errorf("POST %d mimeType %q", i, posts[i].Request.PostData.MimeType)
		}
	}
	if posts[1].Response.Status != 202 || posts[1].Response.StatusText != "Accepted" {
		t.Errorf("the notification's POST: %d %q, want 202 Accepted", posts[1].Response.Status, posts[1].Response.StatusText)
	}
	call := posts[2]
	if call.Response.Status != 200 || call.Response.StatusText != "OK" {
		t.Errorf("tools/call: %d %q", call.Response.Status, call.Response.StatusText)
	}
	if call.header("Mcp-Session-Id") == "" || call.header("Authorization") != record.Placeholder {
		t.Errorf("tools/call request headers %+v, want Mcp-Session-Id and Authorization: [redacted]", call.Request.Headers)
	}
	c := call.Response.Content
	if !strings.HasPrefix(c.MimeType, "text/event-stream") {
		t.Fatalf("tools/call content type %q", c.MimeType)
	}
	var data []string
	for _, ev := range call.SSE {
		if ev.Data != "" {
			data = append(data, ev.Data)
		}
	}
	if len(data) != 1 || !strings.Contains(data[0], `"text":"Echo: hi"`) || !strings.Contains(data[0], `"id":2`) {
		t.Fatalf("tools/call _sse data %q, want the echo response", data)
	}
	if !strings.Contains(c.Text, "data: "+data[0]+"\n\n") || c.Size != len(c.Text) {
		t.Errorf("tools/call content text %q (size %d), want the SSE events", c.Text, c.Size)
	}
	if call.Timings.Wait <= 0 || call.Time < call.Timings.Wait {
		t.Errorf("tools/call timings %+v, time %v", call.Timings, call.Time)
	}
	if !strings.Contains(posts[3].Response.Content.Text, `"error":{"code":`) {
		t.Errorf("tools/call nosuch response %q, want the JSON-RPC error", posts[3].Response.Content.Text)
	}
}

// A server answering with JSON bodies: the body is the response content.
func TestHARStreamableJSON(t *testing.T) {
	tr := recordHTTP(t, true)
	_, _, h := harDoc(t, tr)
	var call *harEntry
	for i, e := range h.Log.Entries {
		if strings.Contains(e.body(), `"name":"echo"`) {
			call = &h.Log.Entries[i]
		}
	}
	if call == nil {
		t.Fatal("no tools/call entry")
	}
	var frame string
	for _, e := range tr.Frames() {
		if e.Dir == record.ServerToClient && strings.Contains(string(e.Data), "Echo: hi") {
			frame = string(e.Data)
		}
	}
	c := call.Response.Content
	if c.MimeType != "application/json" || c.Text != frame || c.Size != len(frame) || call.Response.BodySize != len(frame) {
		t.Errorf("tools/call content %+v, body size %d; want the frame %q", c, call.Response.BodySize, frame)
	}
	if len(call.SSE) != 0 {
		t.Errorf("a JSON response has _sse %+v", call.SSE)
	}
}

// A refusal recorded by the proxy: the status and the excerpt of its
// body; the frame recorded after the request is its body.
func TestHARProxyRefusal(t *testing.T) {
	_, _, h := harDoc(t, recordProxyRefusal(t))
	if len(h.Log.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(h.Log.Entries))
	}
	refused, ok := h.Log.Entries[0], h.Log.Entries[1]
	if refused.Response.Status != 400 || refused.Response.StatusText != "Bad Request" ||
		!strings.Contains(refused.Response.Content.Text, "the <b>first</b> try is refused") ||
		!strings.HasPrefix(refused.Response.Content.MimeType, "text/plain") {
		t.Errorf("refusal: %+v", refused.Response)
	}
	for _, e := range []harEntry{refused, ok} {
		if e.body() != initialize {
			t.Errorf("request body %q, want the initialize frame", e.body())
		}
	}
	if ok.Response.Status != 200 || !strings.Contains(ok.Response.Content.Text, `"serverInfo"`) {
		t.Errorf("accepted: %+v", ok.Response)
	}
}

// A stdio session becomes synthetic entries, one per request with its
// response and one per notification, at stdio://session-N/<method>.
func TestHARStdio(t *testing.T) {
	tr := stdioTrace(t, stdioFrames...)
	_, _, h := harDoc(t, tr)
	type row struct {
		url, dir   string
		status     int
		statusText string
		req, resp  string
	}
	var got []row
	for _, e := range h.Log.Entries {
		got = append(got, row{e.Request.URL, e.Direction, e.Response.Status, e.Response.StatusText, e.body(), e.Response.Content.Text})
	}
	want := []row{
		{"stdio://session-1/initialize", "c2s", 200, "OK", initialize, strings.TrimPrefix(stdioFrames[1], "< ")},
		{"stdio://session-1/notifications/initialized", "c2s", 202, "Accepted", initialized, ""},
		{"stdio://session-1/roots/list", "s2c", 200, "OK", strings.TrimPrefix(stdioFrames[3], "< "), strings.TrimPrefix(stdioFrames[4], "> ")},
		{"stdio://session-1/notifications/message", "s2c", 202, "Accepted", strings.TrimPrefix(stdioFrames[5], "< "), ""},
		{"stdio://session-1/tools/call", "c2s", 200, `JSON-RPC error -32602: unknown tool "nosuch"`, noSuch, strings.TrimPrefix(stdioFrames[7], "< ")},
		{"stdio://session-1/tools/call", "c2s", 200, "OK", strings.TrimPrefix(stdioFrames[8], "> "), strings.TrimPrefix(stdioFrames[9], "< ")},
		{"stdio://session-1/tools/call", "c2s", 0, "", strings.TrimPrefix(stdioFrames[10], "> "), ""},
		{"stdio://session-1/", "s2c", 200, "OK", "", "this is not JSON"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d entries, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
	// The wait is the time from the request to its response.
	fr := tr.Frames()
	want0 := float64((fr[1].Time - fr[0].Time).Microseconds()) / 1000
	if w := h.Log.Entries[0].Timings.Wait; w != want0 || h.Log.Entries[0].Time != want0 {
		t.Errorf("initialize wait = %vms, time %v, want %v", w, h.Log.Entries[0].Time, want0)
	}
}

// What the trace redacted stays redacted: the URL's api_key, the bearer
// token, a password argument; the placeholders are where they were.
func TestHARRedactionKept(t *testing.T) {
	tr := recordHTTP(t, false)
	text, _, h := harDoc(t, tr)
	for _, s := range []string{secretQuery, secretBearer, secretArg} {
		if strings.Contains(text, s) {
			t.Errorf("the HAR holds the secret %q", s)
		}
	}
	e := h.Log.Entries[0]
	if !strings.Contains(e.Request.URL, "api_key=%5Bredacted%5D") && !strings.Contains(e.Request.URL, "api_key=[redacted]") {
		t.Errorf("URL %q, want api_key redacted", e.Request.URL)
	}
	var q string
	for _, nv := range e.Request.QueryString {
		if nv.Name == "api_key" {
			q = nv.Value
		}
	}
	if q != record.Placeholder {
		t.Errorf("queryString api_key = %q, want %q", q, record.Placeholder)
	}
	if !strings.Contains(text, `\"password\":\"[redacted]\"`) {
		t.Error("the password argument is not shown redacted")
	}
}

// streamsTrace is a Streamable HTTP session as mcpx records it: a POST
// refused with 401 and sent again with a token (no frame of its own), an
// SSE response with a priming event (an id and a retry delay, no data),
// and a GET stream carrying a notification.
const streamsTrace = `{"format":"mcpx-trace","version":1,"minor":2,"created":"2026-01-02T03:04:05Z","transport":"http","target":"http: http://127.0.0.1:1/mcp","redacted":true}
{"t":0,"s":1,"kind":"session","text":"http: http://127.0.0.1:1/mcp","session":{"transport":"http","target":"http://127.0.0.1:1/mcp"}}
{"t":100,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}
{"t":200,"s":1,"kind":"http","text":"POST http://127.0.0.1:1/mcp","meta":{"httpMethod":"POST","url":"http://127.0.0.1:1/mcp"}}
{"t":1200,"s":1,"kind":"http","text":"401 Unauthorized ← POST http://127.0.0.1:1/mcp (WWW-Authenticate: Bearer error=\"invalid_token\", scope=\"a b\")","meta":{"httpMethod":"POST","url":"http://127.0.0.1:1/mcp","httpStatus":401}}
{"t":2200,"s":1,"kind":"http","text":"POST http://127.0.0.1:1/mcp (Authorization: [redacted])","meta":{"httpMethod":"POST","url":"http://127.0.0.1:1/mcp"}}
{"t":5200,"s":1,"kind":"http","text":"200 OK text/event-stream ← POST http://127.0.0.1:1/mcp (Mcp-Session-Id: abc)","meta":{"httpMethod":"POST","url":"http://127.0.0.1:1/mcp","httpStatus":200,"contentType":"text/event-stream","sessionId":"abc"}}
{"t":5300,"s":1,"kind":"stream","text":"SSE post-1: event id=\"e0\" with no data (priming)","meta":{"httpMethod":"POST","url":"http://127.0.0.1:1/mcp","httpStatus":200,"contentType":"text/event-stream","sessionId":"abc","streamId":"post-1","eventId":"e0"},"retry":1000}
{"t":6200,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}},"meta":{"httpMethod":"POST","url":"http://127.0.0.1:1/mcp","httpStatus":200,"contentType":"text/event-stream","sessionId":"abc","streamId":"post-1","eventId":"e1"}}
{"t":7000,"s":1,"kind":"http","text":"GET http://127.0.0.1:1/mcp (Mcp-Session-Id: abc, Mcp-Protocol-Version: 2025-11-25)","meta":{"httpMethod":"GET","url":"http://127.0.0.1:1/mcp","sessionId":"abc"}}
{"t":8000,"s":1,"kind":"http","text":"200 OK text/event-stream ← GET http://127.0.0.1:1/mcp","meta":{"httpMethod":"GET","url":"http://127.0.0.1:1/mcp","httpStatus":200,"contentType":"text/event-stream","sessionId":"abc"}}
{"t":9000,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","method":"notifications/tools/list_changed"},"meta":{"httpMethod":"GET","url":"http://127.0.0.1:1/mcp","httpStatus":200,"contentType":"text/event-stream","sessionId":"abc","streamId":"get-2","eventId":"g1"}}
`

func TestHARStreamEvents(t *testing.T) {
	tr, err := record.Read(strings.NewReader(streamsTrace))
	if err != nil {
		t.Fatal(err)
	}
	_, _, h := harDoc(t, tr)
	if len(h.Log.Entries) != 3 {
		t.Fatalf("%d entries, want 3", len(h.Log.Entries))
	}
	refused, post, get := h.Log.Entries[0], h.Log.Entries[1], h.Log.Entries[2]
	if refused.Response.Status != 401 || refused.Response.StatusText != "Unauthorized" {
		t.Errorf("refused: %d %q", refused.Response.Status, refused.Response.StatusText)
	}
	var challenge string
	for _, hd := range refused.Response.Headers {
		if hd.Name == "WWW-Authenticate" {
			challenge = hd.Value
		}
	}
	if challenge != `Bearer error="invalid_token", scope="a b"` {
		t.Errorf("WWW-Authenticate %q (headers %+v)", challenge, refused.Response.Headers)
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
	if refused.body() != init || post.body() != init {
		t.Errorf("bodies %q and %q, want the initialize frame for both (the second is sent again)", refused.body(), post.body())
	}
	if post.header("Authorization") != record.Placeholder {
		t.Errorf("the retry's headers %+v", post.Request.Headers)
	}
	if len(post.SSE) != 2 || post.SSE[0].ID != "e0" || post.SSE[0].Retry != 1000 || post.SSE[0].Data != "" ||
		!strings.Contains(post.SSE[0].Comment, "priming") || post.SSE[1].ID != "e1" || post.SSE[1].Data != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("POST _sse %+v", post.SSE)
	}
	wantText := "id: e0\nretry: 1000\n\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	if post.Response.Content.Text != wantText {
		t.Errorf("POST content text %q, want %q", post.Response.Content.Text, wantText)
	}
	if post.Timings.Wait != 3 || post.Timings.Receive != 1 || post.Time != 4 {
		t.Errorf("POST timings %+v time %v, want wait 3ms, receive 1ms", post.Timings, post.Time)
	}
	if len(get.SSE) != 1 || get.SSE[0].Stream != "get-2" || !strings.Contains(get.SSE[0].Data, "list_changed") {
		t.Errorf("GET _sse %+v", get.SSE)
	}
	if get.header("Mcp-Protocol-Version") != "2025-11-25" || get.header("Mcp-Session-Id") != "abc" {
		t.Errorf("GET headers %+v", get.Request.Headers)
	}
}

// The legacy HTTP+SSE transport, reached after Streamable HTTP was
// refused: the initialize sent again to the message endpoint carries its
// frame, and the responses are events of the GET stream.
func TestHARLegacySSE(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := testservers.SSE(t, echoServer(), nil)
	var buf bytes.Buffer
	rec, err := record.NewRecorder(&buf, record.RecorderOptions{Header: record.Header{Transport: "http", Target: u}})
	if err != nil {
		t.Fatal(err)
	}
	hc, err := transport.NewHTTP(transport.HTTPOptions{URL: u, Observer: rec.Observe})
	if err != nil {
		t.Fatal(err)
	}
	c := rec.Wrap(hc)
	roundTrip(ctx, t, c, initialize, "1")
	roundTrip(ctx, t, c, initialized, "")
	roundTrip(ctx, t, c, echoCall, "2")
	c.Close()
	_, _, h := harDoc(t, finish(t, rec, &buf))
	var posts []string
	var get *harEntry
	for i, e := range h.Log.Entries {
		switch e.Request.Method {
		case "POST":
			if e.Response.Status < 400 {
				posts = append(posts, e.body())
			} else if e.body() != initialize {
				t.Errorf("the refused POST's body %q", e.body())
			}
		case "GET":
			get = &h.Log.Entries[i]
		}
	}
	if len(posts) != 3 || posts[0] != initialize || posts[1] != initialized || !strings.Contains(posts[2], `"name":"echo"`) {
		t.Errorf("POST bodies %q", posts)
	}
	if get == nil || len(get.SSE) < 2 || !strings.Contains(get.SSE[len(get.SSE)-1].Data, "Echo: hi") {
		t.Fatalf("GET entry %+v", get)
	}
}

// A frame that is not valid UTF-8 keeps its bytes in the HAR: a response
// body as base64 content (encoding "base64", as HAR 1.2 provides), a
// request body, which HAR cannot encode, with a comment saying its
// invalid bytes show as U+FFFD. Before, both silently held U+FFFD.
func TestHARBinaryFrames(t *testing.T) {
	binary := "\xff\xfe\x00 not UTF-8 <b>"
	badReq := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e` + "\xff" + `"}}`
	badResp := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + "\xc3" + `"}]}}`
	tr := stdioTrace(t, "> "+badReq, "< "+badResp, "< "+binary)
	_, doc, h := harDoc(t, tr)
	if len(h.Log.Entries) != 2 {
		t.Fatalf("%d entries, want 2: %+v", len(h.Log.Entries), h.Log.Entries)
	}
	entries := doc["log"].(map[string]any)["entries"].([]any)
	content := func(i int) []byte {
		c := entries[i].(map[string]any)["response"].(map[string]any)["content"].(map[string]any)
		if c["encoding"] != "base64" {
			t.Errorf("entry %d: content encoding %v, want base64", i, c["encoding"])
		}
		b, err := base64.StdEncoding.DecodeString(c["text"].(string))
		if err != nil {
			t.Fatalf("entry %d: content %q: %v", i, c["text"], err)
		}
		if int(c["size"].(float64)) != len(b) {
			t.Errorf("entry %d: content size %v, want %d", i, c["size"], len(b))
		}
		return b
	}
	if got := content(0); string(got) != badResp {
		t.Errorf("response content %q, want the bytes recorded %q", got, badResp)
	}
	if got := content(1); string(got) != binary {
		t.Errorf("invalid frame content %q, want the bytes recorded %q", got, binary)
	}
	pd := entries[0].(map[string]any)["request"].(map[string]any)["postData"].(map[string]any)
	if c, _ := pd["comment"].(string); !strings.Contains(c, "not valid UTF-8") {
		t.Errorf("postData %v: want a comment that the body is not valid UTF-8", pd)
	}
	if h.Log.Entries[0].Request.BodySize != len(badReq) {
		t.Errorf("request bodySize %d, want %d", h.Log.Entries[0].Request.BodySize, len(badReq))
	}
	// A body that is valid UTF-8 stays text.
	_, doc, _ = harDoc(t, stdioTrace(t, stdioFrames...))
	for i, e := range doc["log"].(map[string]any)["entries"].([]any) {
		if enc, ok := e.(map[string]any)["response"].(map[string]any)["content"].(map[string]any)["encoding"]; ok {
			t.Errorf("entry %d of a UTF-8 trace has content encoding %v", i, enc)
		}
	}
}

// sessionWatch is a SessionSource that records how much the export had
// written when each session was read.
type sessionWatch struct {
	record.SessionSource
	out     *bytes.Buffer
	written map[int]int
}

func (s *sessionWatch) ReadSession(n int) (*record.Session, error) {
	s.written[n] = s.out.Len()
	return s.SessionSource.ReadSession(n)
}

// The HAR is written a session at a time: a session's entries (and their
// bodies) are out before the next session is read, so that exporting a
// large trace does not hold every session's bodies at once. Before, every
// entry of every session was built in memory and written at the end.
func TestHARWritesSessionBySession(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + big + `"}}`
	var events []record.Event
	for s := 1; s <= 3; s++ {
		events = append(events,
			record.Event{Session: s, Kind: record.KindSession, SessionInfo: &record.SessionInfo{Transport: "stdio", Target: fmt.Sprint("server ", s)}},
			record.Event{Session: s, Time: time.Duration(s) * time.Millisecond, Kind: record.KindFrame, Dir: record.ClientToServer, Data: []byte(call)},
			record.Event{Session: s, Time: time.Duration(s)*time.Millisecond + 500*time.Microsecond, Kind: record.KindFrame, Dir: record.ServerToClient,
				Data: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)})
	}
	tr := &record.Trace{Header: record.Header{Format: record.Format, Version: 1, Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, Events: events}
	var b bytes.Buffer
	src := &sessionWatch{SessionSource: tr, out: &b, written: map[int]int{}}
	if err := export.HAR(&b, src, export.Options{}); err != nil {
		t.Fatal(err)
	}
	for s := 2; s <= 3; s++ {
		if src.written[s] < (s-1)*len(big) {
			t.Errorf("when session %d was read, %d bytes were written; want sessions 1..%d's entries (%d bytes or more) out already",
				s, src.written[s], s-1, (s-1)*len(big))
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("the HAR is not JSON: %v", err)
	}
	checkRequired(t, doc)
	var h har
	json.Unmarshal(b.Bytes(), &h)
	if len(h.Log.Entries) != 3 || len(h.Log.Pages) != 3 {
		t.Fatalf("%d entries, %d pages, want 3 of each", len(h.Log.Entries), len(h.Log.Pages))
	}
	for i, e := range h.Log.Entries {
		if e.Pageref != fmt.Sprintf("session-%d", i+1) || e.body() != call {
			t.Errorf("entry %d: pageref %q, body of %d bytes", i, e.Pageref, len(e.body()))
		}
	}
}

// A trace whose times go backwards within a session (edited by hand, or
// joined from pieces) still gives HAR timings that are never negative:
// a response recorded before its request waits 0. Before, its wait was
// negative, which HAR 1.2 forbids and viewers draw wrongly.
func TestHARTimesGoingBackwards(t *testing.T) {
	const trace = `{"format":"mcpx-trace","version":1,"minor":2,"created":"2026-11-21T20:08:18.668Z","transport":"http","target":"x","redacted":true}
{"t":100,"s":1,"kind":"session","session":{"transport":"http","target":"http://h/mcp"}}
{"t":400,"s":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"ping"}}
{"t":401,"s":1,"kind":"http","text":"POST http://h/mcp","meta":{"httpMethod":"POST","url":"http://h/mcp"}}
{"t":150,"s":1,"kind":"http","text":"200 OK application/json ← POST http://h/mcp","meta":{"httpMethod":"POST","url":"http://h/mcp","httpStatus":200,"contentType":"application/json"}}
{"t":151,"s":1,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{}},"meta":{"httpMethod":"POST","url":"http://h/mcp","httpStatus":200,"contentType":"application/json"}}
{"t":1000,"s":2,"kind":"session","session":{"transport":"stdio","target":"server"}}
{"t":1500,"s":2,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}
{"t":1200,"s":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{}}}
`
	tr, err := record.Read(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	_, _, h := harDoc(t, tr) // checkRequired: no negative send, wait or receive
	if len(h.Log.Entries) != 2 {
		t.Fatalf("%d entries, want 2", len(h.Log.Entries))
	}
	for i, e := range h.Log.Entries {
		if e.Timings.Wait != 0 || e.Time != 0 {
			t.Errorf("entry %d (%s): wait %v, time %v; want 0 for a response recorded before its request", i, e.Request.URL, e.Timings.Wait, e.Time)
		}
	}
}
