package record

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// attributor files the notifications and requests a server sends in the
// windows of the requests that caused them, the same way for the
// recording and the live server, so that the two can be compared request
// by request: a notifications/progress goes to the request whose progress
// token it carries (spec: basic/utilities/progress); a message on the SSE
// stream of a POST to the request answered on that stream (spec:
// basic/transports, Streamable HTTP: messages related to the request);
// a notification tagged with a subscription id to the subscriptions/listen
// request it names (spec 2026-07-28: basic/patterns/subscriptions, "The
// value is the JSON-RPC ID of the subscriptions/listen request"; on stdio
// clients "MUST use this field to correlate notifications"); any other to
// the one request awaiting its response, when exactly one is. The rest
// (on the GET stream, with several or no request pending) is left over
// and compared for the session as a whole.
type attributor struct {
	side        int // which of exchange.win it fills
	outstanding []*exchange
	tokens      map[string]*exchange
	subs        map[string]*exchange     // request id (loose key, this side's) -> its exchange
	streams     map[string]*exchange     // POST stream -> the request answered on it
	waiting     map[string]*heldList     // POST stream -> messages before its response
	loose       heldList                 // attributed to no request
	order       map[*jsonrpc.Message]int // arrival order of waiting messages
	seq         int
	// kept counts the messages this side's lists kept (see heldList), for
	// tests: the live side's are bounded whatever the server sends.
	kept int
}

func newAttributor(side int) *attributor {
	return &attributor{side: side, tokens: map[string]*exchange{}, subs: map[string]*exchange{}, streams: map[string]*exchange{},
		waiting: map[string]*heldList{}, order: map[*jsonrpc.Message]int{}}
}

// limited says this side's lists keep no more than maxHeld messages: the
// live server's.
func (a *attributor) limited() bool { return a.side == 1 }

// add files m in l.
func (a *attributor) add(l *heldList, m *jsonrpc.Message) bool {
	if l.add(m, a.limited()) {
		a.kept++
		return true
	}
	return false
}

// sent notes a request sent (or, recorded, read): its response is due.
func (a *attributor) sent(x *exchange) {
	a.outstanding = append(a.outstanding, x)
	if x.token != "" {
		a.tokens[x.token] = x
	}
	if x.req != nil && x.req.Method == mcp.MethodSubscriptionsListen {
		a.subs[a.idOf(x).LooseKey()] = x
	}
}

// idOf is x's request id on this side: as recorded, or as sent live.
func (a *attributor) idOf(x *exchange) jsonrpc.ID {
	if a.side == 0 {
		return x.req.ID
	}
	return x.liveID
}

// answered notes x's response (meta: how it came), or its end without one.
func (a *attributor) answered(x *exchange, meta *transport.Meta) {
	for i, y := range a.outstanding {
		if y == x {
			a.outstanding = append(a.outstanding[:i], a.outstanding[i+1:]...)
			break
		}
	}
	if sid := postStream(meta); sid != "" {
		a.streams[sid] = x
		if w := a.waiting[sid]; w != nil {
			x.win[a.side].merge(w, a.limited())
			for _, m := range w.msgs {
				delete(a.order, m)
			}
			delete(a.waiting, sid)
		}
	}
}

// finished forgets x: what comes later for it is left over. But a
// subscription the recording ends with still open keeps its id: what the
// server sends on it until the cancellation reaches it belongs to it
// still, however many more (see finishOpen), not to the session.
func (a *attributor) finished(x *exchange) {
	a.answered(x, nil)
	if x.token != "" && a.tokens[x.token] == x {
		delete(a.tokens, x.token)
	}
	open := x.resp == nil && x.recRefused == nil
	for k, y := range a.subs {
		if y == x && !open {
			delete(a.subs, k)
		}
	}
	for sid, y := range a.streams {
		if y == x {
			delete(a.streams, sid)
		}
	}
}

// message files a notification or request of the server.
func (a *attributor) message(m *jsonrpc.Message, meta *transport.Meta) {
	if tok := progressTokenKey(m.Params); tok != "" && m.Kind() == jsonrpc.KindNotification {
		if x := a.tokens[tok]; x != nil {
			a.add(&x.win[a.side], m)
			return
		}
	}
	if sub := subscriptionKey(m); sub != "" {
		if x := a.subs[sub]; x != nil {
			a.add(&x.win[a.side], m)
			return
		}
	}
	sid := ""
	if meta != nil {
		sid = meta.StreamID
	}
	switch {
	case postStream(meta) != "":
		if x := a.streams[sid]; x != nil {
			a.add(&x.win[a.side], m)
			return
		}
		w := a.waiting[sid]
		if w == nil {
			w = &heldList{}
			a.waiting[sid] = w
		}
		if a.add(w, m) {
			a.seq++
			a.order[m] = a.seq
		}
		return
	case strings.HasPrefix(sid, "get"):
	case mcp.StaleLists[m.Method] != nil:
		// A list changes on the server's own time (a timer, another
		// client): it belongs to no request unless its stream says so.
	case m.Method == mcp.NotificationTasksStatus:
		// So does a task's status: the task runs on after the request
		// that created it was answered, and its receiver may tell of each
		// change whenever it comes (spec 2025-11-25
		// basic/utilities/tasks, "Task Status Notification"): the official
		// TypeScript SDK's input_required comes beside whichever request
		// happens to be pending.
	case len(a.outstanding) == 1:
		a.add(&a.outstanding[0].win[a.side], m)
		return
	}
	a.add(&a.loose, m)
}

// looseCount counts the messages no request was found for, by method
// (the attributor's own map: read it only while it does not change).
func (a *attributor) looseCount() map[string]int { return a.loose.n }

// leftoverCount counts what leftover would return now, by method.
func (a *attributor) leftoverCount() map[string]int {
	if len(a.waiting) == 0 {
		return a.loose.n
	}
	n := map[string]int{}
	for method, k := range a.loose.n {
		n[method] = k
	}
	for _, w := range a.waiting {
		for method, k := range w.n {
			n[method] += k
		}
	}
	return n
}

// leftover returns what no request was found for, in the order it came
// (messages of POST streams whose response never came included; those
// only counted, after).
func (a *attributor) leftover() *heldList {
	out := a.loose
	var waiting []*jsonrpc.Message
	for _, w := range a.waiting {
		waiting = append(waiting, w.msgs...)
	}
	// Map order is random: the messages' arrival order is kept.
	slices.SortFunc(waiting, func(x, y *jsonrpc.Message) int { return a.order[x] - a.order[y] })
	for _, m := range waiting {
		out.add(m, a.limited())
	}
	for _, w := range a.waiting {
		out.mergeCounted(w)
	}
	a.loose, a.waiting, a.order = heldList{}, map[string]*heldList{}, map[*jsonrpc.Message]int{}
	return &out
}

// postStream returns the name of the SSE stream of a POST that meta says
// a message came on ("post-3"), or "".
func postStream(meta *transport.Meta) string {
	if meta == nil || !strings.HasPrefix(meta.StreamID, "post") {
		return ""
	}
	return meta.StreamID
}

// progressTokenKey returns params._meta.progressToken (of a request) or
// params.progressToken (of notifications/progress) as a key, "" when
// there is none.
func progressTokenKey(params []byte) string {
	if len(params) == 0 {
		return ""
	}
	tok := rawjson.Member(params, "progressToken")
	if tok == nil {
		if meta := rawjson.Member(params, "_meta"); meta != nil {
			tok = rawjson.Member(meta, "progressToken")
		}
	}
	if tok == nil || rawjson.IsNull(tok) {
		return ""
	}
	return idKey(tok)
}

// subscriptionKey returns the subscription id a notification is tagged
// with (params._meta, spec 2026-07-28: basic/patterns/subscriptions) as a
// loose id key, "" when it has none.
func subscriptionKey(m *jsonrpc.Message) string {
	if m.Kind() != jsonrpc.KindNotification || len(m.Params) == 0 {
		return ""
	}
	meta := rawjson.Member(m.Params, "_meta")
	if meta == nil {
		return ""
	}
	sub := rawjson.Member(meta, mcp.MetaSubscriptionID)
	if sub == nil || rawjson.IsNull(sub) {
		return ""
	}
	return jsonrpc.RawID(sub).LooseKey()
}

// diffOptionsFor returns how messages of method are compared in this
// session: the ignores that apply to it, the session ids of both sides,
// the normalizers.
func (s *sessionRun) diffOptionsFor(method string, named bool) diffOptions {
	live := ""
	if sid, ok := transport.Find[interface{ SessionID() string }](s.conn); ok {
		live = sid.SessionID()
	}
	if s.norm == nil || len(s.recIDs) != s.normRec || live != s.normLive {
		// The session ids seen changed: the session-id normalizer with them.
		ids := map[string]bool{}
		var list []string
		for id := range s.recIDs {
			ids[id] = true
			list = append(list, id)
		}
		if live != "" && !ids[live] {
			ids[live] = true
			list = append(list, live)
		}
		s.norm, _ = CompileNormalizers(s.r.norms, list) // checked by VerifySessions
		s.ids, s.normRec, s.normLive = ids, len(s.recIDs), live
	}
	return diffOptions{ignore: pathsFor(s.r.ignores, method), ids: s.ids, tasks: s.taskPairs(), cursors: s.cursorPairs(), norm: s.norm, named: named}
}

// liveRaw returns a live message redacted as the recording was: by the
// trace's rules, and of the secrets the caller knows (VerifyOptions.Secrets),
// as the recorder was given its own.
func (s *sessionRun) liveRaw(m *jsonrpc.Message) []byte {
	if s.r.red.Enabled() {
		return s.r.opts.Secrets.Frame(s.r.red.Frame(m.Raw))
	}
	return m.Raw
}

// liveText returns what the live side said in text (an HTTP refusal's
// body, an error) redacted as the recorder redacts text.
func (s *sessionRun) liveText(t string) string {
	if s.r.red.Enabled() {
		return s.r.opts.Secrets.Text(s.r.red.Text(t))
	}
	return t
}

// compareExchange compares the recorded outcome of x with the live one,
// and the messages in their windows; bad reports a difference.
func (s *sessionRun) compareExchange(x *exchange) (mm Mismatch, bad bool) {
	s.mu.Lock()
	live, liveStatus, liveRefused, failed, timedOut := x.live, x.liveStatus, x.liveRefused, x.failed, x.timedOut
	liveWin, liveAgain := &x.win[1], &x.again[1]
	s.mu.Unlock()
	mm = Mismatch{Session: s.n, Exchange: x.n, Method: x.req.Method, Request: x.req.Params}
	if x.resp != nil {
		mm.Recorded = x.resp.Raw
	}
	if live != nil {
		mm.Live = s.liveRaw(live) // redacted as the recording was
	}
	var problems []string
	status := func(st int) string {
		if st == 0 {
			return ""
		}
		return strconv.Itoa(st)
	}
	httpDiff := func(rec, live int) {
		mm.Diffs = append(mm.Diffs, Difference{Message: "HTTP", Path: "$.status", Recorded: status(rec), Live: status(live)})
	}
	switch {
	case x.recRefused != nil && liveRefused != nil:
		if x.recRefused.status != liveRefused.status {
			problems = append(problems, fmt.Sprintf("refused with HTTP %d, the recording has HTTP %d", liveRefused.status, x.recRefused.status))
			httpDiff(x.recRefused.status, liveRefused.status)
		}
	case live == nil:
		switch {
		case liveRefused != nil:
			problems = append(problems, fmt.Sprintf("refused with HTTP %d: %s", liveRefused.status, s.liveText(liveRefused.text)))
			httpDiff(x.respStatus, liveRefused.status)
		case failed != nil:
			problems = append(problems, s.liveText(failed.Error()))
			if x.recRefused != nil {
				// The recording's may say the same (mcpx proxy's 502 for
				// a server that went away mid-request).
				problems = append(problems, fmt.Sprintf("the recording has a refusal, HTTP %d: %s", x.recRefused.status, x.recRefused.text))
			}
		case timedOut:
			problems = append(problems, fmt.Sprintf("no response within %s", s.r.opts.Timeout))
		case x.recRefused != nil:
			// The recording shows a refusal and nothing came.
			problems = append(problems, "no response (the recording has a refusal, HTTP "+strconv.Itoa(x.recRefused.status)+")")
		default:
			problems = append(problems, "no response: the connection ended first")
		}
	case x.recRefused != nil:
		problems = append(problems, fmt.Sprintf("answered, but the recording has a refusal (HTTP %d)", x.recRefused.status))
		httpDiff(x.recRefused.status, liveStatus)
	default:
		if p, diffs, more := compareResponses(x.resp, live, s.liveRaw(live), s.diffOptionsFor(x.req.Method, true)); p != "" {
			problems = append(problems, p)
			mm.Diffs, mm.MoreDiffs = append(mm.Diffs, diffs...), more
		}
		if x.respStatus != 0 && liveStatus != 0 && x.respStatus != liveStatus {
			problems = append(problems, fmt.Sprintf("it came with HTTP %d, the recording has HTTP %d", liveStatus, x.respStatus))
			httpDiff(x.respStatus, liveStatus)
		}
	}
	if live != nil && (x.again[0].len() > 0 || liveAgain.len() > 0) {
		// The server answered the request more than once: as often, with
		// the same answers (JSON-RPC 2.0 allows one response per request,
		// but a recording shows what the server did).
		if r, l := x.again[0].len(), liveAgain.len(); r != l {
			p := fmt.Sprintf("answered %d time(s), the recording has %d", l+1, r+1)
			if liveAgain.partial() {
				p = fmt.Sprintf("answered %d time(s) (%d of the repetitions kept, the rest counted, not kept), the recording has %d", l+1, len(liveAgain.msgs), r+1)
			}
			problems = append(problems, p)
			diff := Difference{Message: "response again", Path: "$", Recorded: messageList(x.again[0].msgs, func(m *jsonrpc.Message) []byte { return m.Raw }),
				Live: messageList(liveAgain.msgs, s.liveRaw)}
			diff.shorten()
			mm.Diffs = append(mm.Diffs, diff)
		} else {
			var diffs []Difference
			// (As far as both were kept: the recording whole, the live
			// server's first maxHeld.)
			for i := range min(len(x.again[0].msgs), len(liveAgain.msgs)) {
				d, more := diffMessages(x.again[0].msgs[i].Raw, s.liveRaw(liveAgain.msgs[i]), s.diffOptionsFor(x.req.Method, true))
				for j := range d {
					d[j].Message = fmt.Sprintf("response again #%d", i+1)
				}
				diffs, mm.MoreDiffs = append(diffs, d...), mm.MoreDiffs+more
			}
			if len(diffs) > 0 {
				problems = append(problems, "the response it sent again differs")
				mm.Diffs = append(mm.Diffs, diffs...)
			}
		}
	}
	if live != nil || liveRefused != nil || timedOut {
		diffs, more, notes := s.compareWindow(&x.win[0], liveWin)
		if len(diffs) > 0 {
			problems = append(problems, "the "+windowNoun(&x.win[0], liveWin)+" differ"+notesText(notes))
			mm.Diffs, mm.MoreDiffs = append(mm.Diffs, diffs...), mm.MoreDiffs+more
		}
	}
	if len(problems) == 0 {
		return mm, false
	}
	mm.Problem = strings.Join(problems, "; ")
	return mm, true
}

// compareResponses compares two responses to the same request (the
// second as raw gives it): a problem in a few words and the differences,
// or "" when they match. Verify and DiffTraces share it.
func compareResponses(rec, live *jsonrpc.Message, raw []byte, o diffOptions) (problem string, diffs []Difference, more int) {
	diffs, more = diffMessages(rec.Raw, raw, o)
	if len(diffs) == 0 {
		return "", nil, 0
	}
	if (rec.ErrorRaw != nil) != (live.ErrorRaw != nil) {
		return "the response differs (result vs error)", diffs, more
	}
	return "the response differs", diffs, more
}

// windowNoun says what a window holds: notifications, requests or both.
func windowNoun(lists ...*heldList) string {
	var notes, reqs bool
	for _, l := range lists {
		for _, m := range l.msgs {
			if m.Kind() == jsonrpc.KindRequest {
				reqs = true
			} else {
				notes = true
			}
		}
	}
	switch {
	case notes && reqs:
		return "notifications and requests the server sent"
	case reqs:
		return "requests the server sent"
	}
	return "notifications"
}

// compareWindow compares the messages the server sent in a window (see
// compareWindows), the live ones redacted as the recording was.
func (s *sessionRun) compareWindow(rec, live *heldList) (diffs []Difference, more int, notes []string) {
	diffs, more, counts := compareWindows(rec, live, func(method string) diffOptions { return s.diffOptionsFor(method, false) }, s.liveRaw)
	for _, c := range counts {
		switch {
		case c.method == "":
			notes = append(notes, fmt.Sprintf("%d of other methods (counted, not kept), the recording has %d", c.n[1], c.n[0]))
		case c.cut && c.kept == 0:
			notes = append(notes, fmt.Sprintf("%d %s (counted, not kept), the recording has %d", c.n[1], c.method, c.n[0]))
		case c.cut:
			notes = append(notes, fmt.Sprintf("%d %s (%d kept, the rest counted, not kept), the recording has %d", c.n[1], c.method, c.kept, c.n[0]))
		default:
			notes = append(notes, fmt.Sprintf("%d %s, the recording has %d", c.n[1], c.method, c.n[0]))
		}
	}
	return diffs, more, notes
}

// countDiff is a method of which two windows hold different numbers of
// messages: n[0] in the first, n[1] in the second. cut says the second
// kept only kept of them, counting the rest (see maxHeld); an empty
// method stands for those counted under no method (heldList.other).
type countDiff struct {
	method string
	n      [2]int
	cut    bool
	kept   int
}

// compareWindows compares the messages two servers sent in a window,
// method by method in the order each came: the same number of a method
// are compared one by one ("notifications/message #2"), a different
// number is one difference (the lists of that method). A method whose
// whole messages are ignored (METHOD:$) is left out, and so are pings
// (liveness checks, spec: basic/utilities/ping). opts gives how a
// method's messages are compared; raw gives the bytes of a message of
// the second list (verify redacts a live one as the recording was).
// The numbers are those of all the messages, kept or only counted (see
// maxHeld); messages are compared as far as both lists kept them.
// Verify and DiffTraces share it.
func compareWindows(rec, live *heldList, opts func(method string) diffOptions, raw func(*jsonrpc.Message) []byte) (diffs []Difference, more int, counts []countDiff) {
	if rec.len() == 0 && live.len() == 0 {
		return nil, 0, nil // most windows
	}
	byMethod := [2]map[string][]*jsonrpc.Message{{}, {}}
	for side, l := range [2]*heldList{rec, live} {
		for _, m := range l.msgs {
			if m.Method != mcp.MethodPing {
				byMethod[side][m.Method] = append(byMethod[side][m.Method], m)
			}
		}
	}
	self := func(m *jsonrpc.Message) []byte { return m.Raw }
	for _, method := range methods(rec, live) {
		if method == mcp.MethodPing {
			continue
		}
		o := opts(method)
		if anyMatch(o.ignore, nil) {
			continue
		}
		r, l := byMethod[0][method], byMethod[1][method]
		rn, ln := rec.n[method], live.n[method]
		label := method
		if label == "" {
			label = "response" // to a request answered before
		}
		if rn != ln {
			counts = append(counts, countDiff{method: label, n: [2]int{rn, ln}, cut: ln > len(l), kept: len(l)})
			diff := Difference{Message: label, Path: "$", Recorded: messageList(r, self), Live: messageList(l, raw)}
			diff.shorten()
			diffs = append(diffs, diff)
			continue
		}
		// The same number: compared one by one, as far as both were kept
		// (the live server's first maxHeld messages).
		for i := range min(len(r), len(l)) {
			d, m := diffMessages(r[i].Raw, raw(l[i]), o)
			for j := range d {
				d[j].Message = fmt.Sprintf("%s #%d", label, i+1)
			}
			diffs, more = append(diffs, d...), more+m
		}
	}
	if rec.other != live.other {
		// Messages of methods past maxCountedNames, counted together.
		counts = append(counts, countDiff{n: [2]int{rec.other, live.other}, cut: true})
		diffs = append(diffs, Difference{Message: "other methods", Path: "$", Recorded: "[]", Live: "[]"})
	}
	return diffs, more, counts
}

// messageList renders messages as one JSON array, each as raw gives it;
// past maxShown bytes the rest is left out (Difference.shorten cuts it).
func messageList(ms []*jsonrpc.Message, raw func(*jsonrpc.Message) []byte) string {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range ms {
		if b.Len() > maxShown {
			break
		}
		if i > 0 {
			b.WriteByte(',')
		}
		r := bytes.TrimSpace(raw(m))
		b.Write(r[:min(len(r), maxShown+1)])
	}
	b.WriteByte(']')
	return b.String()
}

// compareFrame compares the HTTP outcome of a frame without requests (a
// notification the client sent) with the recorded one.
func (s *sessionRun) compareFrame(it *sendItem) {
	mm := Mismatch{Session: s.n, Method: it.method, Request: firstParams(it.frame)}
	rec, live := it.recRefused, it.liveRefused
	switch {
	case it.sendErr != nil:
		mm.Problem = "could not be sent: " + s.liveText(it.sendErr.Error())
	case rec == nil && live == nil, rec != nil && live != nil && rec.status == live.status:
		return
	case live == nil:
		if it.sendErr != nil {
			return
		}
		mm.Problem = fmt.Sprintf("accepted, but the recording has a refusal (HTTP %d)", rec.status)
		mm.Diffs = []Difference{{Message: "HTTP", Path: "$.status", Recorded: strconv.Itoa(rec.status)}}
	case rec == nil:
		mm.Problem = fmt.Sprintf("refused with HTTP %d: %s", live.status, s.liveText(live.text))
		mm.Diffs = []Difference{{Message: "HTTP", Path: "$.status", Live: strconv.Itoa(live.status)}}
	default:
		mm.Problem = fmt.Sprintf("refused with HTTP %d, the recording has HTTP %d", live.status, rec.status)
		mm.Diffs = []Difference{{Message: "HTTP", Path: "$.status", Recorded: strconv.Itoa(rec.status), Live: strconv.Itoa(live.status)}}
	}
	s.r.add(it.pos, mm)
}

// firstParams returns the params of a frame's (first) message.
func firstParams(frame []byte) []byte {
	msgs, _ := parseFrame(frame)
	if len(msgs) == 0 {
		return nil
	}
	return msgs[0].Params
}
