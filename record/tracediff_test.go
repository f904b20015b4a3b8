package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// traceOf reads a trace written as its header and event lines.
func traceOf(t *testing.T, header string, lines ...string) *Trace {
	t.Helper()
	tr, err := ReadOptions{}.Read(strings.NewReader(header + "\n" + strings.Join(lines, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

const diffHeader = `{"format":"mcpx-trace","version":1,"created":"2026-11-21T20:08:18Z","transport":"stdio","target":"stdio: srv"}`

func diffSessionLines(tools, logText string, extra ...string) []string {
	return append([]string{
		`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}}`,
		`{"t":2,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"srv","version":"1"},"at":"2026-11-21T20:08:18Z"}}}`,
		`{"t":3,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":2,"method":"tools/list"}}`,
		`{"t":4,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":2,"result":{"tools":` + tools + `}}}`,
		`{"t":5,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"log"}}}`,
		`{"t":6,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"` + logText + `"}}}`,
		`{"t":7,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":3,"result":{"content":[]}}}`,
	}, extra...)
}

func TestDiffTraces(t *testing.T) {
	const tools = `[{"name":"a","description":"A"},{"name":"log","description":"L"},{"name":"z"}]`
	old := traceOf(t, diffHeader, diffSessionLines(tools, "hello")...)

	t.Run("equal", func(t *testing.T) {
		// Other ids, another timestamp, the list in another order, a
		// notification: the same session.
		reordered := `[{"name":"z"},{"name":"log","description":"L"},{"name":"a","description":"A"}]`
		lines := diffSessionLines(reordered, "hello")
		lines[1] = strings.Replace(lines[1], "20:08:18Z", "21:00:00Z", 1)
		d, err := DiffTraces(old, traceOf(t, diffHeader, lines...), DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Equal() || d.Err() != nil || d.Exchanges != 3 || d.Sessions != 1 {
			t.Fatalf("diff = %+v", d)
		}
	})

	t.Run("rename", func(t *testing.T) {
		renamed := `[{"name":"a","description":"A"},{"name":"note","description":"L"},{"name":"z"}]`
		d, err := DiffTraces(old, traceOf(t, diffHeader, diffSessionLines(renamed, "hello")...), DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if d.Count() != 1 || len(d.Changes) != 1 {
			t.Fatalf("changes = %+v", d.Changes)
		}
		c := d.Changes[0]
		want := Difference{Path: `$.result.tools[?@.name=="log"].name`, Recorded: `"log"`, Live: `"note"`}
		if c.Session != 1 || c.Exchange != 2 || c.Method != "tools/list" || len(c.Diffs) != 1 || c.Diffs[0] != want {
			t.Fatalf("change = %+v", c)
		}
		if err := d.Err(); !errors.Is(err, ErrMismatch) {
			t.Fatalf("Err() = %v, want ErrMismatch", err)
		}
	})

	t.Run("added tool, notification, extra exchange", func(t *testing.T) {
		added := `[{"name":"a","description":"A"},{"name":"log","description":"L"},{"name":"new"},{"name":"z"}]`
		lines := diffSessionLines(added, "hello!",
			`{"t":8,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":4,"method":"ping"}}`,
			`{"t":9,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":4,"result":{}}}`)
		d, err := DiffTraces(old, traceOf(t, diffHeader, lines...), DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range d.Changes {
			s := c.Where(true) + ": " + c.Problem
			for _, x := range c.Diffs {
				s += " | " + x.Message + " " + x.Path + " " + x.Recorded + " -> " + x.Live
			}
			got = append(got, s)
		}
		want := []string{
			`session 1, exchange 2 tools/list: the response differs |  $.result.tools[?@.name=="new"]  -> {"name":"new"}`,
			`session 1, exchange 3 tools/call "log": the notifications differ | notifications/message #1 $.params.data "hello" -> "hello!"`,
			`session 1, exchange 4 ping: only in the new trace`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if d.Count() != 3 {
			t.Errorf("Count() = %d, want 3", d.Count())
		}
		// --ignore, and the ignores a trace's header stores, leave them out.
		d, err = DiffTraces(old, traceOf(t, strings.Replace(diffHeader, `"transport"`, `"ignore":["tools/list:$.result.tools"],"transport"`, 1), lines...),
			DiffOptions{Ignore: []string{"notifications/message:$.params.data"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Changes) != 1 || d.Changes[0].Method != "ping" {
			t.Fatalf("with ignores: %+v", d.Changes)
		}
	})

	t.Run("sessions", func(t *testing.T) {
		two := append(diffSessionLines(tools, "hello"),
			`{"t":10,"s":2,"kind":"session","text":"stdio: srv","session":{"transport":"stdio","target":"stdio: srv"}}`,
			`{"t":11,"s":2,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}}`)
		d, err := DiffTraces(old, traceOf(t, diffHeader, two...), DiffOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Changes) != 1 || d.Changes[0].Session != 2 || !strings.Contains(d.Changes[0].Problem, "only in the new trace") {
			t.Fatalf("changes = %+v", d.Changes)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Equal   bool `json:"equal"`
			Count   int  `json:"count"`
			Changes []struct {
				Session int    `json:"session"`
				Problem string `json:"problem"`
			} `json:"changes"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Equal || doc.Count != 1 || doc.Changes[0].Session != 2 {
			t.Fatalf("JSON %s (%v)", b, err)
		}
	})
}

// Two long sessions are compared exchange by exchange as they are read,
// not once both are held: at no time are more than a few exchanges
// held, even after a request never answered (compared at the end), and
// the changes come in the order of the exchanges. A diff of two 147 MB
// sessions held both, 1 GB; 40 MB now. Counted in exchanges, not bytes.
func TestDiffTracesHoldsWhatIsInFlight(t *testing.T) {
	const n = 2000
	session := func(changed int) *Trace {
		lines := []string{`{"t":1,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":"lost","method":"tools/call","params":{"name":"slow"}}}`}
		for i := 1; i <= n; i++ {
			text := "same"
			if i == changed {
				text = "changed"
			}
			lines = append(lines,
				fmt.Sprintf(`{"t":%d,"kind":"frame","dir":"c2s","msg":{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo"}}}`, i+1, i),
				fmt.Sprintf(`{"t":%d,"kind":"frame","dir":"s2c","msg":{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}}`, i+1, i, text))
		}
		return traceOf(t, diffHeader, lines...)
	}
	d, err := diffTraces(session(0), session(n/2), DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.res.Changes) != 1 || d.res.Changes[0].Exchange != n/2+1 || d.res.Exchanges != n {
		t.Fatalf("%d exchanges compared, changes %+v; want %d compared, exchange %d changed", d.res.Exchanges, d.res.Changes, n, n/2+1)
	}
	if d.heldPeak == 0 || d.heldPeak > 8 {
		t.Errorf("%d exchanges held at once, want the lost ones and those in flight (no more than 8)", d.heldPeak)
	}
}
