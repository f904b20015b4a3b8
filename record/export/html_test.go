package export_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/export"
)

// hostile is server text that would run if it reached the page as markup.
const hostile = `</script><script>window.pwned=1;document.title="pwned"</script><!--<img src=x onerror="window.pwned=2">&amp;` + "\u2028\u2029"

func htmlPage(t *testing.T, tr *record.Trace) string {
	t.Helper()
	var b bytes.Buffer
	if err := export.HTML(&b, tr, export.Options{Title: "t.jsonl"}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// pageData is the data the page's script reads.
type pageData struct {
	Header   struct{ Title string }
	Sessions []struct {
		N    int
		Text string
		Rows []struct {
			ID, Pair, Kind, Dir, Method, RPCID, Error, Text, Frame string
			Dur                                                    int64
			Pending                                                bool
		}
	}
}

var dataRE = regexp.MustCompile(`(?s)<script type="application/json" id="mcpx-trace">(.*?)</script>`)

func decodePage(t *testing.T, page string) pageData {
	t.Helper()
	m := dataRE.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page has no data element")
	}
	var d pageData
	if err := json.Unmarshal([]byte(m[1]), &d); err != nil {
		t.Fatalf("the page's data is not JSON: %v", err)
	}
	return d
}

// A frame holding markup cannot end the data element or start another:
// the page has exactly its own two scripts, the data escapes <, >, & and
// U+2028/9, and decodes back to the exact frame.
func TestHTMLEscapesServerText(t *testing.T) {
	frame := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":` + jsonString(hostile) + `}]}}`
	tr := stdioTrace(t,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":`+jsonString(hostile)+`}}`,
		"< "+frame,
		"< "+hostile,
	)
	page := htmlPage(t, tr)
	if n := strings.Count(strings.ToLower(page), "<script"); n != 2 {
		t.Errorf("the page has %d <script tags, want 2 (data and code)", n)
	}
	if n := strings.Count(strings.ToLower(page), "</script"); n != 2 {
		t.Errorf("the page has %d </script tags, want 2", n)
	}
	for _, s := range []string{"<!--", "<img", "\u2028", "\u2029", "&amp;"} {
		if strings.Contains(page, s) {
			t.Errorf("the page holds %q unescaped", s)
		}
	}
	d := decodePage(t, page)
	rows := d.Sessions[0].Rows
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if rows[1].Frame != frame || rows[0].Method != "tools/call" || rows[2].Kind != "invalid" || !strings.Contains(rows[2].Text, "</script>") {
		t.Errorf("rows %+v", rows)
	}
}

// jsonString quotes s as JSON without escaping markup, as a server may.
func jsonString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// The page fetches nothing: its CSP forbids every source but its own
// inline script and style, which it names by their hashes, and nothing in
// it refers to another resource.
func TestHTMLSelfContainedCSP(t *testing.T) {
	page := htmlPage(t, stdioTrace(t, stdioFrames...))
	m := regexp.MustCompile(`<meta http-equiv="Content-Security-Policy" content="([^"]*)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatal("no CSP meta element")
	}
	policy := strings.ReplaceAll(m[1], "&#39;", "'")
	hash := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
	}
	script := regexp.MustCompile(`(?s)<script>(.*)</script>`).FindStringSubmatch(page)
	style := regexp.MustCompile(`(?s)<style>(.*)</style>`).FindStringSubmatch(page)
	if script == nil || style == nil {
		t.Fatal("no inline script or style")
	}
	for _, want := range []string{"default-src 'none'", "script-src " + hash(script[1]) + ";", "style-src " + hash(style[1]) + ";",
		"connect-src 'none'", "img-src 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(policy, want) {
			t.Errorf("the CSP %q lacks %q", policy, want)
		}
	}
	if strings.Contains(policy, "unsafe") {
		t.Errorf("the CSP %q allows unsafe sources", policy)
	}
	if i, j := strings.Index(page, "Content-Security-Policy"), strings.Index(page, "<style>"); i < 0 || i > j {
		t.Error("the CSP does not come before the style and scripts")
	}
	code := page[:strings.Index(page, `<script type="application/json"`)] + script[1]
	for _, ref := range []string{"src=", "href=", "url(", "@import", "fetch(", "XMLHttpRequest", "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("} {
		if strings.Contains(code, ref) {
			t.Errorf("the page's own markup or code uses %q", ref)
		}
	}
}

// Requests are paired with their responses by id within a session, in
// either direction, with their latency; errors and unanswered requests are
// marked.
func TestHTMLPairing(t *testing.T) {
	tr := stdioTrace(t, stdioFrames...)
	fr := tr.Frames() // one message each: row i is frame i
	d := decodePage(t, htmlPage(t, tr))
	if d.Header.Title != "t.jsonl" || len(d.Sessions) != 1 {
		t.Fatalf("data %+v", d)
	}
	rows := d.Sessions[0].Rows
	byID := map[string]int{}
	for i, r := range rows {
		byID[r.ID] = i
	}
	type want struct {
		kind, dir, method, rpcID string
		pairedWith               int // row index, -1 for none
		err                      bool
		pending                  bool
	}
	wants := []want{
		{"request", "c2s", "initialize", "1", 1, false, false},
		{"response", "s2c", "initialize", "1", 0, false, false},
		{"notification", "c2s", "notifications/initialized", "", -1, false, false},
		{"request", "s2c", "roots/list", `"r1"`, 4, false, false},
		{"response", "c2s", "roots/list", `"r1"`, 3, false, false},
		{"notification", "s2c", "notifications/message", "", -1, false, false},
		{"request", "c2s", "tools/call", "3", 7, false, false},
		{"response", "s2c", "tools/call", "3", 6, true, false},
		{"request", "c2s", "tools/call", "4", 9, false, false},
		{"response", "s2c", "tools/call", "4", 8, true, false},
		{"request", "c2s", "tools/call", "5", -1, false, true},
		{"invalid", "s2c", "", "", -1, true, false},
	}
	if len(rows) != len(wants) {
		t.Fatalf("%d rows, want %d", len(rows), len(wants))
	}
	for i, w := range wants {
		r := rows[i]
		pair := -1
		if r.Pair != "" {
			p, ok := byID[r.Pair]
			if !ok {
				t.Errorf("row %d pairs with %q, which is not a row", i, r.Pair)
			}
			pair = p
		}
		if r.Kind != w.kind || r.Dir != w.dir || r.Method != w.method || r.RPCID != w.rpcID || pair != w.pairedWith ||
			(r.Error != "") != w.err || r.Pending != w.pending {
			t.Errorf("row %d: %+v (paired with %d), want %+v", i, r, pair, w)
		}
		if pair >= 0 {
			if want := (fr[max(i, pair)].Time - fr[min(i, pair)].Time).Microseconds(); r.Dur != want {
				t.Errorf("row %d: duration %dµs, want %dµs", i, r.Dur, want)
			}
		}
	}
	if !strings.Contains(rows[7].Error, "-32602") || rows[9].Error != "isError: true" {
		t.Errorf("errors %q, %q", rows[7].Error, rows[9].Error)
	}
}
