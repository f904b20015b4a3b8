package record

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// zeros is /dev/zero: a trace whose first line never ends. It counts
// what it gave.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	clear(p)
	z.n += int64(len(p))
	return len(p), nil
}

func wantTooLarge(t *testing.T, err error, limit int64, what string) {
	t.Helper()
	var tl *transport.FrameTooLargeError
	if !errors.Is(err, transport.ErrFrameTooLarge) || !errors.As(err, &tl) || tl.Limit != limit || !strings.Contains(err.Error(), what) {
		t.Fatalf("error = %v, want a *FrameTooLargeError for %d bytes naming %q", err, limit, what)
	}
}

const header = `{"format":"mcpx-trace","version":1,"created":"2026-01-01T00:00:00Z","transport":"stdio","redacted":true}` + "\n"

func TestReadTraceLimit(t *testing.T) {
	t.Parallel()
	const limit = 100 << 10
	t.Run("a first line that never ends", func(t *testing.T) {
		z := &zeros{}
		_, err := ReadOptions{MaxMessageSize: limit}.Read(z)
		wantTooLarge(t, err, limit, "trace line 1 exceeds the maximum message size (100 KiB)")
		if z.n > 2*limit+64<<10 {
			t.Errorf("read %d bytes of an endless line with a limit of %d", z.n, limit)
		}
	})
	frame := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"text":"` + strings.Repeat("x", n-len(`{"jsonrpc":"2.0","id":1,"result":{"text":""}}`)) + `"}}`
	}
	event := func(f string) string { return `{"t":1,"kind":"frame","dir":"s2c","msg":` + f + "}\n" }
	t.Run("a frame exactly at the limit", func(t *testing.T) {
		f := frame(limit)
		tr, err := ReadOptions{MaxMessageSize: limit}.Read(strings.NewReader(header + event(`{"jsonrpc":"2.0","method":"x"}`) + event(f)))
		if err != nil || len(tr.Events) != 2 || string(tr.Events[1].Data) != f {
			t.Fatalf("Read: %v", err)
		}
	})
	t.Run("a line longer than the limit and its room", func(t *testing.T) {
		_, err := ReadOptions{MaxMessageSize: limit}.Read(strings.NewReader(header + event(`{}`) + event(frame(limit+64<<10))))
		wantTooLarge(t, err, limit, "trace line 3 exceeds")
	})
	t.Run("small limits give little room", func(t *testing.T) {
		_, err := ReadOptions{MaxMessageSize: 100}.Read(strings.NewReader(header + event(frame(250))))
		wantTooLarge(t, err, 100, "trace line 2 exceeds the maximum message size (100 bytes)")
	})
	t.Run("the file name", func(t *testing.T) {
		name := t.TempDir() + "/t.jsonl"
		if err := writeFile(name, header+event(frame(limit+64<<10))); err != nil {
			t.Fatal(err)
		}
		_, err := ReadOptions{MaxMessageSize: limit}.ReadFile(name)
		wantTooLarge(t, err, limit, name+": trace line 2 exceeds")
		if _, err := ReadFile(name); err != nil {
			t.Errorf("with the default limit: %v", err)
		}
	})
}

// A frame stored verbatim (msg) is a slice of the line it was read from:
// reading a trace with a large frame costs about the frame, once.
func TestReadTraceDoesNotCopyFrames(t *testing.T) {
	f := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("y", 8<<20) + `"}]}}`
	input := header + `{"t":0,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big"}}}` + "\n" +
		`{"t":1,"kind":"frame","dir":"s2c","msg":` + f + "}\n"
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	tr, err := Read(strings.NewReader(input))
	runtime.ReadMemStats(&after)
	if err != nil || string(tr.Events[1].Data) != f {
		t.Fatalf("Read: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > uint64(len(input))+1<<20 {
		t.Errorf("reading a trace of %d bytes allocated %d", len(input), n)
	}
}

func TestReplayHandlerRefusesLargeBodies(t *testing.T) {
	t.Parallel()
	tr := mkTrace(
		`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
	)
	rp, err := NewReplayer(tr, ReplayOptions{MaxMessageSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rp.Handler())
	defer srv.Close()
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("x", 2<<10) + `"}}`
	if r := post(t, srv.URL, "", big); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: %d", r.StatusCode)
	}
	// Without a length: read up to the limit only.
	req, _ := http.NewRequest("POST", srv.URL, io.MultiReader(strings.NewReader(big), &zeros{}))
	req.ContentLength = -1
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("an endless body: %d", resp.StatusCode)
	}
	// The handler lives on.
	if r := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`); r.StatusCode != http.StatusOK {
		t.Errorf("initialize after: %d", r.StatusCode)
	}
}

func TestHTTPProxyLimits(t *testing.T) {
	t.Parallel()
	const limit = 4 << 10
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case bytes.Contains(body, []byte("bigjson")):
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"x":"`+strings.Repeat("j", 2*limit)+`"}}`)
		case bytes.Contains(body, []byte("bigsse")):
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"small\"}\n\n")
			io.WriteString(w, "event: message\ndata: ")
			for range 100 {
				if _, err := io.WriteString(w, strings.Repeat("s", 1<<10)); err != nil {
					return
				}
			}
			io.WriteString(w, "\n\n")
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	defer up.Close()
	proxyURL, readTrace := startHTTPProxyWith(t, HTTPProxyOptions{Upstream: up.URL, MaxMessageSize: limit})

	if r := post(t, proxyURL, "", `{"jsonrpc":"2.0","method":"n","params":{"x":"`+strings.Repeat("x", limit)+`"}}`); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a request body over the limit: %d", r.StatusCode)
	}
	if r := post(t, proxyURL, "", `{"jsonrpc":"2.0","id":1,"method":"bigjson"}`); r.StatusCode != http.StatusBadGateway {
		t.Errorf("an answer over the limit: %d", r.StatusCode)
	}
	// The trace records the 502 the host got, as the request's refusal.
	tr, err := readTrace()
	if err != nil {
		t.Fatal(err)
	}
	refused := false
	for _, e := range tr.Events {
		refused = refused || e.Kind == KindHTTP && string(e.Re) == "1" && e.Meta.HTTPStatus == http.StatusBadGateway && strings.HasPrefix(e.Text, "mcpx proxy: ")
	}
	if !refused {
		t.Errorf("no refusal of the answer over the limit in the trace: %+v", tr.Events)
	}
	r := post(t, proxyURL, "", `{"jsonrpc":"2.0","id":1,"method":"bigsse"}`)
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(string(body), `"method":"small"`) || strings.Contains(string(body), "sss") {
		t.Errorf("an SSE stream with an event over the limit: %d %q", r.StatusCode, body)
	}
}

// diffResponses compares in place as the decoded comparison does.
func TestDiffResponsesMatchesDecodedDiff(t *testing.T) {
	t.Parallel()
	ignore, err := ParsePaths([]string{"$.result.skip", "$..volatile", "$.result.list[1]"})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{"sess-1": true, "sess-2": true}
	values := []string{
		`null`, `true`, `false`, `0`, `1`, `1.0`, `1e0`, `-2`, `""`, `"a"`, `"\u0061"`, `"b"`,
		`"[redacted]"`, `"2026-01-02T03:04:05Z"`, `"2027-11-12T13:14:15.5+01:00"`, `"sess-1"`, `"sess-2"`,
		`"\ud800"`, `"\ufffd"`, `[]`, `[1]`, `[1,2]`, `[2,1]`, `{}`, `{"a":1}`, `{"a":2}`, `{"b":1}`,
		`{"a":{"volatile":1,"x":2}}`, `{"a":{"volatile":3,"x":2}}`, `[{"volatile":1},{"volatile":2}]`,
	}
	rng := rand.New(rand.NewSource(1))
	pick := func() string { return values[rng.Intn(len(values))] }
	message := func() string {
		var members []string
		for _, k := range []string{"skip", "list", "text", "nested", "extra"} {
			if rng.Intn(4) > 0 {
				v := pick()
				if k == "list" {
					v = "[" + pick() + "," + pick() + "," + pick() + "]"
				}
				if k == "nested" {
					v = `{"k":` + pick() + `,"v":[` + pick() + `]}`
				}
				members = append(members, fmt.Sprintf("%q:%s", k, v))
			}
		}
		rng.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
		return `{"jsonrpc":"2.0","id":` + fmt.Sprint(rng.Intn(3)) + `,"result":{` + strings.Join(members, ", ") + `}}`
	}
	// The decoded comparison: without id and jsonrpc, minus what is ignored.
	comparable := func(raw string) any {
		val, _ := decode([]byte(raw))
		obj := val.(map[string]any)
		delete(obj, "id")
		delete(obj, "jsonrpc")
		return removePaths(obj, ignore)
	}
	for i := range 3000 {
		a, b := message(), message()
		if i%5 == 0 {
			b = a
		}
		want, wantMore := diffJSON(normalize(comparable(a), ids), normalize(comparable(b), ids))
		got, more := diffResponses([]byte(a), []byte(b), ignore, ids)
		if fmt.Sprint(got) != fmt.Sprint(want) || more != wantMore {
			t.Fatalf("recorded %s\nlive     %s\nin place: %v (+%d)\ndecoded:  %v (+%d)", a, b, got, more, want, wantMore)
		}
	}
}

// Comparing two large responses that match costs nothing beyond them.
func TestDiffResponsesInPlace(t *testing.T) {
	text := strings.Repeat(`line\n`, 1<<19)
	a := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`)
	b := []byte(`{"id":7,"jsonrpc":"2.0","result":{"content":[{"text":"` + text + `","type":"text"}]}}`)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	diffs, _ := diffResponses(a, b, nil, nil)
	runtime.ReadMemStats(&after)
	if len(diffs) != 0 {
		t.Fatalf("diffs: %v", diffs)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("comparing two %d-byte responses allocated %d bytes", len(a), n)
	}
	c := bytes.Replace(b, []byte(`line\nline`), []byte(`line\nLINE`), 1)
	if diffs, _ := diffResponses(a, c, nil, nil); len(diffs) != 1 || diffs[0].Path != "$.result.content[0].text" {
		t.Fatalf("a difference in the text: %v", diffs)
	}
}

func writeFile(name, s string) error { return os.WriteFile(name, []byte(s), 0o600) }
