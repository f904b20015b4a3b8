package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Check sends ping and every page of the lists the server declares, and
// nothing else; the departures met on the way are the report's, by area,
// and do not reach OnDeparture while it runs (having the session to
// itself, those tied to no request too).
func TestCheckGathersDeparturesByArea(t *testing.T) {
	d := &warnings{t: t, ch: make(chan string, 100)}
	ch, srv, w := startConnect(t, Options{OnDeparture: d.depart})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25")) // tools and logging; prompts null
	srv.next()
	s := waitConnect(t, ch).s
	type checked struct {
		r   *CheckReport
		err error
	}
	done := make(chan checked, 1)
	go func() {
		r, err := s.Check(context.Background(), CheckOptions{Opening: []string{"an opening problem"}, Alone: true,
			ToolNotes: func(names []string) []string { return []string{"tools " + strings.Join(names, ",")} }})
		done <- checked{r, err}
	}()
	srv.reply(srv.nextRequest("ping"), `{}`)
	m := srv.nextRequest("tools/list")
	srv.send(`not json`)
	srv.reply(m, `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"p2"}`)
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"b","inputSchema":{"type":"object"}}]}`)
	got := <-done
	if got.err != nil {
		t.Fatal(got.err)
	}
	d.none()
	w.none()
	r := got.r
	var names []string
	for _, a := range r.Areas {
		names = append(names, a.Name)
	}
	if want := "initialize ping tools prompts resources resource templates"; strings.Join(names, " ") != want {
		t.Fatalf("areas %q, want %q", names, want)
	}
	if p := r.Areas[0].Problems; len(p) != 1 || p[0] != "an opening problem" {
		t.Errorf("initialize: %q", p)
	}
	if a := r.Areas[1]; len(a.Problems) != 0 || a.Err != nil {
		t.Errorf("ping: %+v", a)
	}
	tools := r.Areas[2]
	if tools.Count == nil || *tools.Count != 3 {
		t.Errorf("tools count %v, want 3", tools.Count)
	}
	// The notes see the whole list, and are not departures.
	if len(tools.Notes) != 1 || tools.Notes[0] != "tools a,a,b" {
		t.Errorf("tools notes %q", tools.Notes)
	}
	if len(tools.Problems) != 2 || !strings.Contains(tools.Problems[0], "not JSON-RPC") || !strings.Contains(tools.Problems[1], `tool "a" is listed 2 times`) {
		t.Errorf("tools problems %q", tools.Problems)
	}
	for _, a := range r.Areas[3:] {
		if a.Skipped != "not declared" {
			t.Errorf("%s: skipped %q", a.Name, a.Skipped)
		}
	}
	if n := r.Departures(); n != 3 {
		t.Errorf("departures %d, want 3", n)
	}
	if err := r.Failure(); err != nil {
		t.Errorf("failure %v", err)
	}
	// After Check, departures go to OnDeparture again.
	srv.send(`still not json`)
	d.expect("not JSON-RPC")
}

// A request the server's departure stopped counts as a departure; one
// it answered with an error is a failure of its own.
func TestCheckReportErrors(t *testing.T) {
	r := &CheckReport{Areas: []CheckArea{
		{Name: "tools", Err: violationf("bad page")},
		{Name: "prompts", Problems: []string{"x"}},
	}}
	if n := r.Departures(); n != 2 {
		t.Errorf("departures %d, want 2", n)
	}
	if err := r.Failure(); err != nil {
		t.Errorf("failure %v", err)
	}
	r.Areas = append(r.Areas, CheckArea{Name: "resources", Err: ErrTimeout})
	if err := r.Failure(); !errors.Is(err, ErrTimeout) || !strings.HasPrefix(err.Error(), "resources: ") {
		t.Errorf("failure %v", err)
	}
}

// Beside other requests (the REPL's check &), Check gathers the
// departures of its own requests only: another caller's, and those tied
// to no request, go to OnDeparture as ever.
func TestCheckBesideOtherRequests(t *testing.T) {
	type tagKey struct{}
	got := make(chan string, 100)
	onDeparture := func(ctx context.Context, msg string) {
		tag, _ := ctx.Value(tagKey{}).(string)
		got <- tag + ": " + msg
	}
	ch, srv, _ := startConnect(t, Options{OnDeparture: onDeparture})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25")) // tools and logging; prompts null
	srv.next()
	s := waitConnect(t, ch).s
	other := goCall(context.WithValue(context.Background(), tagKey{}, "other"), s, "tools/call", map[string]any{"name": "x"})
	mo := srv.nextRequest("tools/call")
	type checked struct {
		r   *CheckReport
		err error
	}
	done := make(chan checked, 1)
	go func() {
		r, err := s.Check(context.Background(), CheckOptions{})
		done <- checked{r, err}
	}()
	srv.reply(srv.nextRequest("ping"), `{}`)
	m := srv.nextRequest("tools/list")
	srv.send(`not json`)
	srv.send(`{"jsonrpc":"2.0","id":"` + mo.ID.String() + `","result":{"content":[]}}`)
	if r := result(t, other); r.err != nil {
		t.Fatal(r.err)
	}
	srv.reply(m, `{"tools":[{"name":"a","inputSchema":{"type":"object"}},{"name":"a","inputSchema":{"type":"object"}}]}`)
	c := <-done
	if c.err != nil {
		t.Fatal(c.err)
	}
	if p := c.r.Areas[2].Problems; len(p) != 1 || !strings.Contains(p[0], `tool "a" is listed 2 times`) {
		t.Errorf("tools problems %q, want Check's own only", p)
	}
	var outside []string
	for range 2 {
		select {
		case d := <-got:
			outside = append(outside, d)
		case <-time.After(wait):
			t.Fatalf("departures outside the report: %q, want 2", outside)
		}
	}
	if !strings.HasPrefix(outside[0], ": server sent a frame that is not JSON-RPC") || !strings.HasPrefix(outside[1], "other: server answered request") {
		t.Errorf("departures outside the report %q", outside)
	}
}

// Check's report holds every problem of a list, not the first ten and a
// line counting the rest, so that its count of departures is exact.
func TestCheckCountsEveryListProblem(t *testing.T) {
	ch, srv, w := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25"))
	srv.next()
	s := waitConnect(t, ch).s
	done := make(chan *CheckReport, 1)
	go func() {
		r, err := s.Check(context.Background(), CheckOptions{Alone: true})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	srv.reply(srv.nextRequest("ping"), `{}`)
	tools := strings.Repeat(`{"name":"no schema"},`, 12)
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[`+strings.TrimSuffix(tools, ",")+`]}`)
	r := <-done
	w.none()
	// Each of the 12 tools has no inputSchema and a name with a space;
	// and the name is listed 12 times.
	if p := r.Areas[2].Problems; len(p) != 25 || r.Departures() != 25 || strings.Contains(strings.Join(p, "\n"), "more problems") {
		t.Errorf("%d problems, %d departures: %q", len(p), r.Departures(), p)
	}
	// The other commands' warnings stay ten and a count.
	if p, n := s.ListProblems(ListTools, []json.RawMessage{json.RawMessage(`{"name":"a b"}`), json.RawMessage(`{"name":"a b"}`),
		json.RawMessage(`{"name":"c d"}`), json.RawMessage(`{"name":"e f"}`), json.RawMessage(`{"name":"g h"}`), json.RawMessage(`{"name":"i j"}`)}); len(p) != 11 || p[10] != "and 3 more problems" || n != 13 {
		t.Errorf("ListProblems: %q, %d problems in all", p, n)
	}
}

// A departure the server repeats with every message is counted in a
// Check's report every time, the first EachShown named, the rest counted
// in the area's More (memory bounded whatever the server floods), and
// none of them says that more are counted, not shown. Those the console
// says are counted apart.
func TestCheckGathersEveryRepeatedDeparture(t *testing.T) {
	d := &warnings{t: t, ch: make(chan string, 100)}
	ch, srv, w := startConnect(t, Options{OnDeparture: d.depart})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25"))
	srv.next()
	s := waitConnect(t, ch).s
	done := make(chan *CheckReport, 1)
	go func() {
		r, err := s.Check(context.Background(), CheckOptions{Alone: true})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	m := srv.nextRequest("ping")
	const sent = EachShown + 3
	for i := range sent {
		srv.send(`{"jsonrpc":"2.0","id":"nobody-` + strconv.Itoa(i) + `","result":{}}`)
	}
	srv.reply(m, `{}`)
	// More of them during the next area: counted in it.
	m = srv.nextRequest("tools/list")
	srv.send(`{"jsonrpc":"2.0","id":"nobody-more","result":{}}`)
	srv.reply(m, `{"tools":[]}`)
	r := <-done
	d.none()
	w.none()
	var got []string
	for _, a := range r.Areas {
		for _, p := range a.Problems {
			if strings.Contains(p, "unknown request id") {
				got = append(got, p)
			}
		}
	}
	if len(got) != EachShown {
		t.Errorf("%d responses to unknown ids named in the report, want %d: %q", len(got), EachShown, got)
	}
	const kind = "responses to unknown request ids"
	if diff := cmp.Diff([]Unsaid{{kind, sent - EachShown}}, r.Areas[1].More); diff != "" {
		t.Errorf("ping's More (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Unsaid{{kind, 1}}, r.Areas[2].More); diff != "" {
		t.Errorf("tools' More (-want +got):\n%s", diff)
	}
	if n := r.Departures(); n != sent+1 {
		t.Errorf("Departures = %d, want %d", n, sent+1)
	}
	for _, p := range got {
		if strings.Contains(p, "not shown") {
			t.Errorf("the report says %q", p)
		}
	}
	if u := s.UnsaidDepartures(); len(u) != 0 {
		t.Errorf("unsaid: %+v", u)
	}
	// After Check, the first of that sort is said as the first is.
	srv.send(`{"jsonrpc":"2.0","id":"after","result":{}}`)
	if got := d.expect("unknown request id"); strings.Contains(got, "not shown") {
		t.Errorf("after the Check: %q", got)
	}
}

// The departures the session counted and did not say while it opened
// (CheckOptions.OpeningMore) are counted in the first area, beside those
// said (Opening).
func TestCheckCountsOpeningMore(t *testing.T) {
	ch, srv, _ := startConnect(t, Options{})
	srv.reply(srv.nextRequest("initialize"), initResult("2025-11-25"))
	srv.next()
	s := waitConnect(t, ch).s
	done := make(chan *CheckReport, 1)
	go func() {
		more := []Unsaid{{"progress notifications for tokens no request carries", 40}}
		r, err := s.Check(context.Background(), CheckOptions{Alone: true, Opening: []string{"a", "b"}, OpeningMore: more})
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	srv.reply(srv.nextRequest("ping"), `{}`)
	srv.reply(srv.nextRequest("tools/list"), `{"tools":[]}`)
	r := <-done
	if a := r.Areas[0]; a.Departures() != 42 || len(a.Problems) != 2 || len(a.More) != 1 {
		t.Errorf("opening: %d departures, problems %q, more %+v; want 42, 2, 1", a.Departures(), a.Problems, a.More)
	}
	if n := r.Departures(); n != 42 {
		t.Errorf("Departures = %d, want 42", n)
	}
}
