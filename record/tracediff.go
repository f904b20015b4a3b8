package record

import (
	"encoding/json"
	"fmt"
	"iter"
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
	if nilSource(old) || nilSource(new) {
		return nil, nilArgument("DiffTraces", "a trace")
	}
	d, err := diffTraces(old, new, opts)
	if d == nil {
		return nil, err
	}
	return &d.res, err
}

// diffTraces is DiffTraces, returning its run (nil when it could not
// start).
func diffTraces(old, new SessionSource, opts DiffOptions) (*traceDiffer, error) {
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
		if err := d.session(n, old, new); err != nil {
			return d, err
		}
	}
	return d, nil
}

// traceDiffer is one run of DiffTraces.
type traceDiffer struct {
	ignores []Ignore
	norms   []Normalizer
	res     TraceDiff
	// heldPeak is the most exchanges a session's comparison held at
	// once, for the test that it holds those in flight, not the session.
	heldPeak int
}

// diffScan is what a first pass over a recorded session finds: whether
// the trace has it, how many requests the client sent in it and the
// session ids it saw, which the comparison of each exchange needs.
type diffScan struct {
	present bool
	count   int
	ids     []string
}

// scanDiffSession passes over session n of src, holding none of it.
func scanDiffSession(src SessionSource, n int) (diffScan, error) {
	var sc diffScan
	sc.present = slices.Contains(src.SessionNumbers(), n)
	if !sc.present {
		return sc, nil
	}
	_, events := sessionEvents(src, n)
	seen := map[string]bool{}
	for e, err := range events {
		if err != nil {
			return sc, err
		}
		if e.Meta != nil && e.Meta.SessionID != "" && !seen[e.Meta.SessionID] {
			seen[e.Meta.SessionID] = true
			sc.ids = append(sc.ids, e.Meta.SessionID)
		}
		if e.Kind == KindFrame && e.Dir == ClientToServer {
			msgs, _ := parseFrame(e.Data)
			for _, m := range msgs {
				if m.Kind() == jsonrpc.KindRequest {
					sc.count++
				}
			}
		}
	}
	return sc, nil
}

// diffReader reads a recorded session an event at a time and files its
// messages as Verify files the recorded side: each response and HTTP
// refusal to its request, each notification and server request to the
// window of the request that caused it (see attributor), or else to the
// session. An exchange is settled once nothing later in the session can
// change it: answered and finished (the client sent its next frame), or
// the session read to its end.
type diffReader struct {
	next func() (Event, error, bool)
	stop func()
	done bool

	exch    []*exchange // the client's requests, in order (nil once compared); win[0] holds their windows
	settled []bool      // by the exchanges' positions in exch
	newly   []int       // the positions of the exchanges settled by the last step
	loose   *heldList   // what the server sent outside any request, once done

	attr     *attributor
	byID     map[string]*exchange
	answered []*exchange // since the last client frame
	last     []*exchange // the requests of the last client frame
}

func newDiffReader(src SessionSource, n int) *diffReader {
	_, events := sessionEvents(src, n)
	next, stop := iter.Pull2(events)
	return &diffReader{next: next, stop: stop, attr: newAttributor(0), byID: map[string]*exchange{}}
}

// step reads the next event; at the session's end every exchange is
// settled and the reader done.
func (r *diffReader) step() error {
	e, err, ok := r.next()
	if err != nil {
		return err
	}
	if !ok {
		r.done = true
		r.loose = r.attr.leftover()
		for i, x := range r.exch {
			if x != nil && !r.settled[i] {
				r.settled[i] = true
				r.newly = append(r.newly, i)
			}
		}
		return nil
	}
	attr, byID := r.attr, r.byID
	switch {
	case e.Kind == KindFrame && e.Dir == ClientToServer:
		// As in Verify: what was answered before this frame was sent
		// is finished; what the server sends later is not its.
		for _, x := range r.answered {
			attr.finished(x)
			// A refused request may still be answered (see below).
			if i := x.n - 1; x.resp != nil && !r.settled[i] {
				r.settled[i] = true
				r.newly = append(r.newly, i)
			}
		}
		r.answered, r.last = r.answered[:0], nil
		msgs, _ := parseFrame(e.Data)
		for _, m := range msgs {
			if m.Kind() != jsonrpc.KindRequest {
				continue
			}
			x := &exchange{n: len(r.exch) + 1, req: m, token: progressTokenKey(m.Params)}
			r.exch = append(r.exch, x)
			r.settled = append(r.settled, false)
			byID[m.ID.Key()] = x
			r.last = append(r.last, x)
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
				r.answered = append(r.answered, x)
			case jsonrpc.KindRequest, jsonrpc.KindNotification:
				attr.message(m, e.Meta)
			}
		}
	case e.Kind == KindHTTP && e.Meta != nil && e.Meta.HTTPStatus >= 400 && (e.Meta.HTTPMethod == "" || e.Meta.HTTPMethod == "POST"):
		ref := &refusal{status: e.Meta.HTTPStatus, text: e.Text}
		targets := r.last
		if len(e.Re) > 0 {
			targets = nil
			if x := byID[idKey(e.Re)]; x != nil {
				targets = []*exchange{x}
			}
		} else {
			r.last = nil // a later status is another request's
		}
		for _, x := range targets {
			if x.resp == nil && x.recRefused == nil {
				x.recRefused = ref
				attr.answered(x, nil)
				r.answered = append(r.answered, x)
			}
		}
	}
	return nil
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

// session compares session n of the two traces. Both are read at once,
// an event at a time, the one behind in requests first, and each
// exchange is compared once it is settled on both sides and let go of:
// what is held is the exchanges in flight (and those never answered,
// until the end), not the sessions. (A diff of two 147 MB sessions held
// both whole: 1 GB.) The changes are listed in the order of the
// exchanges all the same.
func (d *traceDiffer) session(n int, old, new SessionSource) error {
	sa, err := scanDiffSession(old, n)
	if err != nil {
		return fmt.Errorf("the old trace: %w", err)
	}
	sb, err := scanDiffSession(new, n)
	if err != nil {
		return fmt.Errorf("the new trace: %w", err)
	}
	switch {
	case !sa.present:
		d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Problem: fmt.Sprintf("session only in the new trace (%d request(s))", sb.count)})
		return nil
	case !sb.present:
		d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Problem: fmt.Sprintf("session only in the old trace (%d request(s))", sa.count)})
		return nil
	}
	d.res.Sessions++
	ids := append(append([]string(nil), sa.ids...), sb.ids...)
	norm, _ := CompileNormalizers(d.norms, ids) // checked by DiffTraces
	opts := func(method string, named bool) diffOptions { return d.options(method, named, ids, norm) }
	a, b := newDiffReader(old, n), newDiffReader(new, n)
	defer a.stop()
	defer b.stop()
	changes := map[int]Mismatch{} // by the exchanges' positions
	let := 0                      // exchanges let go of
	resolve := func(i int) {
		var x, y *exchange
		if i < len(a.exch) {
			x = a.exch[i]
		}
		if i < len(b.exch) {
			y = b.exch[i]
		}
		switch {
		case x != nil && y != nil && a.settled[i] && b.settled[i]:
			if mm, ok := d.exchange(n, x, y, opts); ok {
				changes[i] = mm
			}
		case x == nil && y != nil && a.done && i >= len(a.exch):
			changes[i] = Mismatch{Session: n, Exchange: y.n, Method: y.req.Method, Request: y.req.Params,
				Problem: "only in the new trace"}
		case y == nil && x != nil && b.done && i >= len(b.exch):
			changes[i] = Mismatch{Session: n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params,
				Problem: "only in the old trace"}
		default:
			return
		}
		if x != nil {
			a.exch[i] = nil
			let++
		}
		if y != nil {
			b.exch[i] = nil
			let++
		}
	}
	for !a.done || !b.done {
		r, other, which := a, b, "old"
		if a.done || !b.done && len(b.exch) < len(a.exch) {
			r, other, which = b, a, "new"
		}
		if err := r.step(); err != nil {
			return fmt.Errorf("the %s trace: %w", which, err)
		}
		d.heldPeak = max(d.heldPeak, len(a.exch)+len(b.exch)-let)
		for _, i := range r.newly {
			resolve(i)
		}
		r.newly = r.newly[:0]
		if r.done {
			// Just read to its end: what the other side holds beyond
			// it is only there.
			for i := len(r.exch); i < len(other.exch); i++ {
				resolve(i)
			}
		}
	}
	for i := range max(len(a.exch), len(b.exch)) {
		if mm, ok := changes[i]; ok {
			d.res.Changes = append(d.res.Changes, mm)
		}
	}
	raw := func(m *jsonrpc.Message) []byte { return m.Raw }
	diffs, more, counts := compareWindows(a.loose, b.loose, func(m string) diffOptions { return opts(m, false) }, raw)
	if len(diffs) > 0 {
		d.res.Changes = append(d.res.Changes, Mismatch{Session: n, Problem: "the server's messages outside any request differ" + countsText(counts),
			Diffs: diffs, MoreDiffs: more})
	}
	return nil
}

// exchange compares the n-th exchange of a session, x in the old trace
// and y in the new, and returns the change, if any.
func (d *traceDiffer) exchange(n int, x, y *exchange, opts func(method string, named bool) diffOptions) (Mismatch, bool) {
	raw := func(m *jsonrpc.Message) []byte { return m.Raw }
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
		return mm, true
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
	if len(problems) == 0 {
		return Mismatch{}, false
	}
	mm.Problem = strings.Join(problems, "; ")
	return mm, true
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
