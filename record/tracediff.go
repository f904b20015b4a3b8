package record

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// DiffOptions configure DiffTraces.
type DiffOptions struct {
	// Ignore lists what is not compared, as VerifyOptions.Ignore does; the
	// ignores stored in either trace's header apply as well.
	Ignore []string
	// Normalize lists normalizers applied to string values before they are
	// compared, in addition to those of either trace's header.
	Normalize []Normalizer
}

// TraceDiff is what DiffTraces found: the changes from an old trace to a
// new one.
type TraceDiff struct {
	// Sessions counts the sessions both traces have.
	Sessions int
	// Exchanges counts the requests whose outcomes were compared.
	Exchanges int
	// Changes lists what differs, by session, in the old trace's order. In
	// each Difference, Recorded is the old value and Live the new one.
	Changes []Mismatch
}

// Equal reports whether the traces hold the same sessions.
func (d *TraceDiff) Equal() bool { return len(d.Changes) == 0 }

// Count counts the differences: those listed and those beyond, and a
// change with none listed (an exchange only one trace has) as one.
func (d *TraceDiff) Count() int {
	n := 0
	for _, c := range d.Changes {
		n += max(len(c.Diffs)+c.MoreDiffs, 1)
	}
	return n
}

// Summary is a one-line account of the diff.
func (d *TraceDiff) Summary() string {
	s := fmt.Sprintf("%d exchange(s) compared", d.Exchanges)
	if d.Sessions > 1 {
		s += fmt.Sprintf(" in %d sessions", d.Sessions)
	}
	return s + fmt.Sprintf(", %d change(s)", d.Count())
}

// Err returns nil when the traces are equal, else a *DiffError.
func (d *TraceDiff) Err() error {
	if d.Equal() {
		return nil
	}
	return &DiffError{Diff: d}
}

// DiffError reports traces that differ; it matches ErrMismatch.
type DiffError struct{ Diff *TraceDiff }

func (e *DiffError) Error() string {
	return fmt.Sprintf("the traces differ: %d change(s)", e.Diff.Count())
}

// Is makes errors.Is(err, ErrMismatch) true.
func (e *DiffError) Is(target error) bool { return target == ErrMismatch }

// MarshalJSON gives the diff the form `mcpx trace diff --json` prints:
// {"equal", "sessions", "exchanges", "count", "changes": [{"session",
// "exchange", "method", "params", "problem", "diffs": [{"message",
// "path", "old", "new", "shortened"}], "moreDiffs"}]}, where an absent
// value has no old or new member, and shortened is true for excerpts (see
// Difference).
func (d *TraceDiff) MarshalJSON() ([]byte, error) {
	type diff struct {
		Message   string          `json:"message,omitempty"`
		Path      string          `json:"path"`
		Old       json.RawMessage `json:"old,omitempty"`
		New       json.RawMessage `json:"new,omitempty"`
		Shortened bool            `json:"shortened,omitempty"`
	}
	type change struct {
		Session   int             `json:"session"`
		Exchange  int             `json:"exchange,omitempty"`
		Method    string          `json:"method,omitempty"`
		Params    json.RawMessage `json:"params,omitempty"`
		Problem   string          `json:"problem"`
		Diffs     []diff          `json:"diffs,omitempty"`
		MoreDiffs int             `json:"moreDiffs,omitempty"`
	}
	out := struct {
		Equal     bool     `json:"equal"`
		Sessions  int      `json:"sessions"`
		Exchanges int      `json:"exchanges"`
		Count     int      `json:"count"`
		Changes   []change `json:"changes"`
	}{Equal: d.Equal(), Sessions: d.Sessions, Exchanges: d.Exchanges, Count: d.Count(), Changes: []change{}}
	for _, m := range d.Changes {
		c := change{Session: m.Session, Exchange: m.Exchange, Method: m.Method, Problem: m.Problem, MoreDiffs: m.MoreDiffs}
		if len(m.Request) > 0 && json.Valid(m.Request) {
			c.Params = m.Request
		}
		for _, x := range m.Diffs {
			c.Diffs = append(c.Diffs, diff{Message: x.Message, Path: x.Path, Old: validRaw(x.Recorded), New: validRaw(x.Live), Shortened: x.Shortened})
		}
		out.Changes = append(out.Changes, c)
	}
	return json.Marshal(out)
}

func validRaw(s string) json.RawMessage {
	if s == "" || !json.Valid([]byte(s)) {
		return nil
	}
	return json.RawMessage(s)
}

// DiffTraces compares two recordings, typically of one server before and
// after a change, the way Verify compares a recording with a live server:
// session by session (by number), and within a session exchange by
// exchange (the n-th request the client sent in one with the n-th in the
// other): the request, its outcome (the response or HTTP refusal) and
// the notifications and requests the server sent in its window, then
// what the server sent outside any request. Messages are compared as
// Verify compares them (ids, session ids and timestamps normalized, the
// normalizers and ignores of opts and of both traces' headers applied),
// and the lists of tools, prompts, resources and resource templates by
// name (uri): a renamed tool is one change, at its name. Timing is not
// compared. It returns an error only when a trace cannot be read or an
// ignore or normalizer is not valid.
func DiffTraces(old, new SessionSource, opts DiffOptions) (*TraceDiff, error) {
	var ignores []Ignore
	var norms []Normalizer
	for i, h := range []Header{old.TraceHeader(), new.TraceHeader()} {
		ig, err := ParseIgnores(h.Ignore)
		if err != nil {
			return nil, fmt.Errorf("the ignores of the %s trace: %w", [2]string{"old", "new"}[i], err)
		}
		ignores, norms = append(ignores, ig...), append(norms, h.Normalize...)
	}
	own, err := ParseIgnores(opts.Ignore)
	if err != nil {
		return nil, err
	}
	ignores, norms = append(ignores, own...), append(norms, opts.Normalize...)
	if _, err := CompileNormalizers(norms, nil); err != nil {
		return nil, err
	}
	d := &traceDiffer{ignores: ignores, norms: norms}
	nums := map[int]bool{}
	var all []int
	for _, src := range []SessionSource{old, new} {
		for _, n := range src.SessionNumbers() {
			if !nums[n] {
				nums[n] = true
				all = append(all, n)
			}
		}
	}
	slices.Sort(all)
	for _, n := range all {
		a, err := readDiffSession(old, n)
		if err != nil {
			return &d.res, fmt.Errorf("the old trace: %w", err)
		}
		b, err := readDiffSession(new, n)
		if err != nil {
			return &d.res, fmt.Errorf("the new trace: %w", err)
		}
		d.session(n, a, b)
	}
	return &d.res, nil
}

// traceDiffer is one run of DiffTraces.
type traceDiffer struct {
	ignores []Ignore
	norms   []Normalizer
	res     TraceDiff
}

// diffSession is one recorded session as DiffTraces compares it.
type diffSession struct {
	present bool
	exch    []*exchange // the client's requests, in order; win[0] holds their windows
	loose   *heldList   // what the server sent outside any request
	ids     []string    // the session ids it saw
}

// readDiffSession reads session n of src and files its messages as
// Verify files the recorded side: each response and HTTP refusal to its
// request, each notification and server request to the window of the
// request that caused it (see attributor), or else to the session.
func readDiffSession(src SessionSource, n int) (*diffSession, error) {
	ds := &diffSession{loose: &heldList{}}
	for _, m := range src.SessionNumbers() {
		ds.present = ds.present || m == n
	}
	if !ds.present {
		return ds, nil
	}
	_, events := sessionEvents(src, n)
	attr := newAttributor(0)
	byID := map[string]*exchange{}
	seen := map[string]bool{}
	var answered []*exchange // since the last client frame
	var last []*exchange     // the requests of the last client frame
	for e, err := range events {
		if err != nil {
			return nil, err
		}
		if e.Meta != nil && e.Meta.SessionID != "" && !seen[e.Meta.SessionID] {
			seen[e.Meta.SessionID] = true
			ds.ids = append(ds.ids, e.Meta.SessionID)
		}
		switch {
		case e.Kind == KindFrame && e.Dir == ClientToServer:
			// As in Verify: what was answered before this frame was sent
			// is finished; what the server sends later is not its.
			for _, x := range answered {
				attr.finished(x)
			}
			answered, last = answered[:0], nil
			msgs, _ := parseFrame(e.Data)
			for _, m := range msgs {
				if m.Kind() != jsonrpc.KindRequest {
					continue
				}
				x := &exchange{n: len(ds.exch) + 1, req: m, token: progressTokenKey(m.Params)}
				ds.exch = append(ds.exch, x)
				byID[m.ID.Key()] = x
				last = append(last, x)
				attr.sent(x)
			}
		case e.Kind == KindFrame:
			msgs, _ := parseFrame(e.Data)
			for _, m := range msgs {
				switch m.Kind() {
				case jsonrpc.KindResponse:
					x := byID[m.ID.Key()]
					if x == nil || x.resp != nil {
						continue
					}
					x.resp, x.recRefused = m, nil
					if e.Meta != nil {
						x.respStatus = e.Meta.HTTPStatus
					}
					delete(byID, m.ID.Key())
					attr.answered(x, e.Meta)
					answered = append(answered, x)
				case jsonrpc.KindRequest, jsonrpc.KindNotification:
					attr.message(m, e.Meta)
				}
			}
		case e.Kind == KindHTTP && e.Meta != nil && e.Meta.HTTPStatus >= 400 && (e.Meta.HTTPMethod == "" || e.Meta.HTTPMethod == "POST"):
			ref := &refusal{status: e.Meta.HTTPStatus, text: e.Text}
			targets := last
			if len(e.Re) > 0 {
				targets = nil
				if x := byID[idKey(e.Re)]; x != nil {
					targets = []*exchange{x}
				}
			} else {
				last = nil // a later status is another request's
			}
			for _, x := range targets {
				if x.resp == nil && x.recRefused == nil {
					x.recRefused = ref
					attr.answered(x, nil)
					answered = append(answered, x)
				}
			}
		}
	}
	ds.loose = attr.leftover()
	return ds, nil
}

// options returns how messages of method are compared in a session whose
// sides saw the session ids ids.
func (d *traceDiffer) options(method string, named bool, ids []string, norm *Normalizers) diffOptions {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return diffOptions{ignore: pathsFor(d.ignores, method), ids: set, norm: norm, named: named}
}

// session compares session n of the two traces.
func (d *traceDiffer) session(n int, a, b *diffSession) {
	switch {
	case !a.present:
		d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Problem: fmt.Sprintf("session only in the new trace (%d request(s))", len(b.exch))})
		return
	case !b.present:
		d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Problem: fmt.Sprintf("session only in the old trace (%d request(s))", len(a.exch))})
		return
	}
	d.res.Sessions++
	ids := append(append([]string(nil), a.ids...), b.ids...)
	norm, _ := CompileNormalizers(d.norms, ids) // checked by DiffTraces
	opts := func(method string, named bool) diffOptions { return d.options(method, named, ids, norm) }
	raw := func(m *jsonrpc.Message) []byte { return m.Raw }
	for i := range max(len(a.exch), len(b.exch)) {
		switch {
		case i >= len(a.exch):
			y := b.exch[i]
			d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Exchange: y.n, Method: y.req.Method, Request: y.req.Params,
				Problem: "only in the new trace"})
			continue
		case i >= len(b.exch):
			x := a.exch[i]
			d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params,
				Problem: "only in the old trace"})
			continue
		}
		x, y := a.exch[i], b.exch[i]
		mm := Mismatch{Session: n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params}
		if x.resp != nil {
			mm.Recorded = x.resp.Raw
		}
		if y.resp != nil {
			mm.Live = y.resp.Raw
		}
		if x.req.Method != y.req.Method {
			mm.Problem = fmt.Sprintf("another request: %s in the new trace", y.req.Method)
			mm.Diffs = []Difference{{Message: "request", Path: "$.method", Recorded: strconv.Quote(x.req.Method), Live: strconv.Quote(y.req.Method)}}
			d.res.Changes = append(d.res.Changes, mm)
			continue
		}
		var problems []string
		o := opts(x.req.Method, false)
		if diffs, more := diffMessages(x.req.Raw, y.req.Raw, o); len(diffs) > 0 {
			for j := range diffs {
				diffs[j].Message = "request"
			}
			problems = append(problems, "the request differs")
			mm.Diffs, mm.MoreDiffs = append(mm.Diffs, diffs...), more
		}
		if x.resp != nil || y.resp != nil || x.recRefused != nil || y.recRefused != nil {
			d.res.Exchanges++
		}
		if p, diffs, more := compareOutcomes(x, y, opts(x.req.Method, true)); p != "" {
			problems = append(problems, p)
			mm.Diffs, mm.MoreDiffs = append(mm.Diffs, diffs...), mm.MoreDiffs+more
		}
		diffs, more, counts := compareWindows(&x.win[0], &y.win[0], func(m string) diffOptions { return opts(m, false) }, raw)
		if len(diffs) > 0 {
			problems = append(problems, "the "+windowNoun(&x.win[0], &y.win[0])+" differ"+countsText(counts))
			mm.Diffs, mm.MoreDiffs = append(mm.Diffs, diffs...), mm.MoreDiffs+more
		}
		if len(problems) > 0 {
			mm.Problem = strings.Join(problems, "; ")
			d.res.Changes = append(d.res.Changes, mm)
		}
	}
	diffs, more, counts := compareWindows(a.loose, b.loose, func(m string) diffOptions { return opts(m, false) }, raw)
	if len(diffs) > 0 {
		d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Problem: "the server's messages outside any request differ" + countsText(counts),
			Diffs: diffs, MoreDiffs: more})
	}
}

// compareOutcomes compares the outcomes of two recorded exchanges: their
// responses (see compareResponses), HTTP statuses or refusals.
func compareOutcomes(x, y *exchange, o diffOptions) (problem string, diffs []Difference, more int) {
	status := func(st int) string {
		if st == 0 {
			return ""
		}
		return strconv.Itoa(st)
	}
	httpDiff := func(a, b int) []Difference {
		return []Difference{{Message: "HTTP", Path: "$.status", Recorded: status(a), Live: status(b)}}
	}
	switch {
	case x.recRefused != nil && y.recRefused != nil:
		if x.recRefused.status != y.recRefused.status {
			return fmt.Sprintf("refused with HTTP %d, now HTTP %d", x.recRefused.status, y.recRefused.status),
				httpDiff(x.recRefused.status, y.recRefused.status), 0
		}
	case x.recRefused != nil:
		if y.resp == nil {
			return fmt.Sprintf("refused with HTTP %d, now no response", x.recRefused.status), httpDiff(x.recRefused.status, 0), 0
		}
		return fmt.Sprintf("refused with HTTP %d, now answered", x.recRefused.status), httpDiff(x.recRefused.status, y.respStatus), 0
	case y.recRefused != nil:
		if x.resp == nil {
			return fmt.Sprintf("no response, now refused with HTTP %d", y.recRefused.status), httpDiff(0, y.recRefused.status), 0
		}
		return fmt.Sprintf("answered, now refused with HTTP %d", y.recRefused.status), httpDiff(x.respStatus, y.recRefused.status), 0
	case x.resp == nil && y.resp == nil:
	case x.resp == nil:
		return "no response in the old trace", []Difference{{Path: "$", Live: string(y.resp.Raw)}}, 0
	case y.resp == nil:
		return "no response in the new trace", []Difference{{Path: "$", Recorded: string(x.resp.Raw)}}, 0
	default:
		problem, diffs, more = compareResponses(x.resp, y.resp, y.resp.Raw, o)
		if x.respStatus != 0 && y.respStatus != 0 && x.respStatus != y.respStatus {
			if problem != "" {
				problem += "; "
			}
			problem += fmt.Sprintf("it came with HTTP %d, now HTTP %d", x.respStatus, y.respStatus)
			diffs = append(diffs, httpDiff(x.respStatus, y.respStatus)...)
		}
	}
	return problem, diffs, more
}

// countsText words the methods of which the old and the new windows hold
// different numbers of messages.
func countsText(counts []countDiff) string {
	if len(counts) == 0 {
		return ""
	}
	var notes []string
	for _, c := range counts {
		notes = append(notes, fmt.Sprintf("%d %s, now %d", c.n[0], c.method, c.n[1]))
	}
	return ": " + strings.Join(notes, "; ")
}
