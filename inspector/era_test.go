package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// The era-neutral operations against fake servers of both eras: the same
// call, the era's own requests on the wire.

var eras = []string{"legacy", "modern"}

// openEra opens a session of era ("legacy" or "modern") with a fake server
// that declares caps.
func openEra(t *testing.T, era, caps string, opts Options) (*Session, *fakeServer, *warnings) {
	t.Helper()
	var life Lifecycle = &Legacy{}
	if era == "modern" {
		life = &Modern{OnNote: func(string) {}}
	}
	s, srv, w, _ := newModernSession(t, life, false, opts)
	errc := make(chan error, 1)
	go func() { errc <- s.life.Open(context.Background(), s) }()
	if era == "modern" {
		srv.reply(srv.nextRequest("server/discover"), `{"supportedVersions":["2026-07-28"],"ttlMs":0,"cacheScope":"public","capabilities":`+caps+`,"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"fake","version":"1"}}}`)
	} else {
		srv.reply(srv.nextRequest("initialize"), `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"serverInfo":{"name":"fake","version":"1"}}`)
		if n := srv.next(); n.Method != "notifications/initialized" {
			t.Fatalf("sent %s after initialize", n.Raw)
		}
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("Open did not return")
	}
	return s, srv, w
}

// recv returns what ch delivers, failing after wait.
func recv[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatal("nothing arrived")
	}
	panic("unreachable")
}

func TestPingBothEras(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s, srv, _ := openEra(t, era, `{}`, Options{})
			var notes []string
			type out struct {
				r   *PingResult
				err error
			}
			ch := make(chan out, 1)
			go func() {
				r, err := s.Ping(context.Background(), func(n string) { notes = append(notes, n) })
				ch <- out{r, err}
			}()
			want := map[string]string{"legacy": "ping", "modern": "server/discover"}[era]
			srv.reply(srv.nextRequest(want), `{"x":1}`)
			o := recv(t, ch)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if string(o.r.Raw) != `{"x":1}` || o.r.RTT <= 0 {
				t.Errorf("result %+v", o.r)
			}
			if era == "legacy" && (o.r.Instead != "" || len(notes) != 0) {
				t.Errorf("a handshake-era ping substituted: %q, notes %q", o.r.Instead, notes)
			}
			if era == "modern" && (!strings.Contains(o.r.Instead, "no ping") || len(notes) != 1 || !strings.Contains(notes[0], "timing server/discover")) {
				t.Errorf("the substitution is not said: %q, notes %q", o.r.Instead, notes)
			}
		})
	}
}

func TestSetLogLevelBothEras(t *testing.T) {
	// Legacy: logging/setLevel, and its error with context.
	s, srv, _ := openEra(t, "legacy", `{"logging":{}}`, Options{})
	if c := s.LogLevelCaveat("debug"); c != "" {
		t.Errorf("caveat for a server that declares logging: %q", c)
	}
	type out struct {
		c   LogLevelChange
		err error
	}
	ch := make(chan out, 1)
	go func() { c, err := s.SetLogLevel(context.Background(), "debug"); ch <- out{c, err} }()
	m := srv.nextRequest("logging/setLevel")
	if !strings.Contains(string(m.Params), `"level":"debug"`) {
		t.Errorf("params %s", m.Params)
	}
	srv.reply(m, `{}`)
	if o := recv(t, ch); o.err != nil || o.c.PerRequest || o.c.String() != "log level set to debug" {
		t.Errorf("got %+v %q, %v", o.c, o.c, o.err)
	}
	go func() { c, err := s.SetLogLevel(context.Background(), "info"); ch <- out{c, err} }()
	m = srv.nextRequest("logging/setLevel")
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32601,"message":"nope"}}`)
	var rpcErr *jsonrpc.Error
	if o := recv(t, ch); !errors.As(o.err, &rpcErr) || !strings.HasPrefix(o.err.Error(), `logging/setLevel "info": server error -32601`) {
		t.Errorf("err %v", o.err)
	}

	// Modern: no request; the level rides in the next request's _meta.
	s, srv, _ = openEra(t, "modern", `{}`, Options{})
	if c := s.LogLevelCaveat("debug"); !strings.Contains(c, "asking for log messages at debug anyway") {
		t.Errorf("caveat %q", c)
	}
	c, err := s.SetLogLevel(context.Background(), "warning")
	if err != nil || !c.PerRequest || !strings.Contains(c.String(), "sent with every request") {
		t.Errorf("got %+v, %v", c, err)
	}
	call := goCall(context.Background(), s, "tools/list", nil)
	m = srv.nextRequest("tools/list")
	if got := string(metaOf(t, m)[mcp.MetaLogLevel]); got != `"warning"` {
		t.Errorf("_meta log level %s", got)
	}
	srv.reply(m, `{"tools":[]}`)
	result(t, call)

	s, _, _ = openEra(t, "legacy", `{}`, Options{})
	if c := s.LogLevelCaveat("debug"); !strings.Contains(c, "sending logging/setLevel anyway") {
		t.Errorf("caveat %q", c)
	}
}

// hookLog records what watch hooks are told.
type hookLog struct {
	acks  chan WatchAck
	warns chan string
	ends  chan error
	asked chan ListenFilter
}

func newHookLog() (*hookLog, WatchHooks) {
	l := &hookLog{acks: make(chan WatchAck, 10), warns: make(chan string, 10), ends: make(chan error, 10), asked: make(chan ListenFilter, 10)}
	return l, WatchHooks{
		OnAck:  func(a WatchAck) { l.acks <- a },
		OnWarn: func(s string) { l.warns <- s },
		OnEnd:  func(f ListenFilter, err error) { l.asked <- f; l.ends <- err },
	}
}

func TestWatchLegacy(t *testing.T) {
	s, srv, _ := openEra(t, "legacy", `{"resources":{"subscribe":true}}`, Options{})
	log, hooks := newHookLog()
	errc := make(chan error, 1)
	// For counts from the end of the subscribing.
	go func() {
		errc <- s.Watch(context.Background(), WatchSpec{Lists: true, Resources: []string{"a://1", "a://2"}, For: time.Millisecond}, hooks)
	}()
	for _, u := range []string{"a://1", "a://2"} {
		m := srv.nextRequest("resources/subscribe")
		if !strings.Contains(string(m.Params), `"uri":"`+u+`"`) {
			t.Errorf("subscribe params %s, want %s", m.Params, u)
		}
		srv.reply(m, `{}`)
	}
	// List changes need no request in this era: the next requests end the
	// watch. Unsubscribed last first; a failure is a warning.
	m := srv.nextRequest("resources/unsubscribe")
	if !strings.Contains(string(m.Params), `"a://2"`) {
		t.Errorf("first unsubscribe %s", m.Params)
	}
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32602,"message":"unknown"}}`)
	srv.reply(srv.nextRequest("resources/unsubscribe"), `{}`)
	if err := recv(t, errc); err != nil {
		t.Fatalf("err %v", err)
	}
	if w := recv(t, log.warns); !strings.Contains(w, `resources/unsubscribe "a://2": server error`) {
		t.Errorf("warning %q", w)
	}

	// A failed subscribe undoes the ones before it and ends the watch.
	go func() { errc <- s.Watch(context.Background(), WatchSpec{Resources: []string{"a://1", "a://2"}}, hooks) }()
	srv.reply(srv.nextRequest("resources/subscribe"), `{}`)
	m = srv.nextRequest("resources/subscribe")
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32602,"message":"no such resource"}}`)
	m = srv.nextRequest("resources/unsubscribe")
	if !strings.Contains(string(m.Params), `"a://1"`) {
		t.Errorf("undo %s", m.Params)
	}
	srv.reply(m, `{}`)
	if err := recv(t, errc); err == nil || !strings.HasPrefix(err.Error(), `resources/subscribe "a://2": server error -32602`) {
		t.Errorf("err %v", err)
	}

	// Ending ctx ends it normally.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errc <- s.Watch(ctx, WatchSpec{Lists: true}, hooks) }()
	cancel()
	if err := recv(t, errc); err != nil {
		t.Errorf("err %v", err)
	}
	srv.quietUntil(mark(t, s))

	// The server going away ends it with ErrServerGone.
	go func() { errc <- s.Watch(context.Background(), WatchSpec{Lists: true}, hooks) }()
	srv.conn.Close()
	if err := recv(t, errc); !errors.Is(err, ErrServerGone) || !strings.Contains(err.Error(), "while watching") {
		t.Errorf("err %v", err)
	}
	if len(log.acks) != 0 || len(log.ends) != 0 {
		t.Error("the handshake era acknowledged or ended a subscription stream")
	}
}

// acknowledge sends the acknowledgement of listen request m, granting
// granted (the notifications member, raw JSON).
func acknowledge(srv *fakeServer, m *jsonrpc.Message, granted string) {
	srv.send(`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":` + m.ID.String() + `},"notifications":` + granted + `}}`)
}

func listenFilterOf(t *testing.T, m *jsonrpc.Message) ListenFilter {
	t.Helper()
	var p struct {
		Notifications ListenFilter `json:"notifications"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.Notifications
}

func TestWatchModern(t *testing.T) {
	s, srv, _ := openEra(t, "modern", `{"tools":{"listChanged":true}}`, Options{})
	log, hooks := newHookLog()
	errc := make(chan error, 1)
	go func() {
		errc <- s.Watch(context.Background(), WatchSpec{Lists: true, Resources: []string{"a://1"}}, hooks)
	}()
	m := srv.nextRequest("subscriptions/listen")
	want := ListenFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true, ResourceSubscriptions: []string{"a://1"}}
	if got := listenFilterOf(t, m); got.Describe() != want.Describe() {
		t.Errorf("filter %+v", got)
	}
	acknowledge(srv, m, `{"toolsListChanged":true}`)
	ack := recv(t, log.acks)
	if !ack.Granted.ToolsListChanged || ack.Missing.ToolsListChanged || !ack.Missing.PromptsListChanged ||
		len(ack.Missing.ResourceSubscriptions) != 1 || ack.Asked.Describe() != want.Describe() {
		t.Errorf("ack %+v", ack)
	}
	// The server ends it: a *ListenEndedError.
	srv.reply(m, `{}`)
	var ended *ListenEndedError
	if err := recv(t, errc); !errors.As(err, &ended) || !ended.Graceful {
		t.Errorf("err %v", err)
	}

	// For ends it normally, and the server is told (however soon it ends).
	go func() {
		errc <- s.Watch(context.Background(), WatchSpec{Lists: true, For: 50 * time.Millisecond}, hooks)
	}()
	if err := recv(t, errc); err != nil {
		t.Errorf("err %v", err)
	}
	for n := srv.next(); n.Method != "notifications/cancelled"; n = srv.next() {
		if n.Method != "subscriptions/listen" {
			t.Errorf("sent %s", n.Raw)
		}
	}
	// No resources/subscribe in this era.
	srv.quietUntil(mark(t, s))
}

func TestWatcherLegacy(t *testing.T) {
	s, srv, _ := openEra(t, "legacy", `{"resources":{"subscribe":true}}`, Options{})
	log, hooks := newHookLog()
	w, err := s.StartWatch(context.Background(), WatchSpec{Lists: true, DeclaredListsOnly: true}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	srv.quietUntil(mark(t, s)) // nothing to ask for yet
	ctx := context.Background()
	do := func(fn func() error) <-chan error {
		ch := make(chan error, 1)
		go func() { ch <- fn() }()
		return ch
	}
	for _, u := range []string{"b://2", "a://1"} {
		ch := do(func() error { return w.Add(ctx, u) })
		srv.reply(srv.nextRequest("resources/subscribe"), `{}`)
		if err := recv(t, ch); err != nil {
			t.Fatal(err)
		}
	}
	ch := do(func() error { return w.Add(ctx, "c://3") })
	m := srv.nextRequest("resources/subscribe")
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32602,"message":"no"}}`)
	if err := recv(t, ch); err == nil {
		t.Error("a refused subscribe succeeded")
	}
	if got := strings.Join(w.Resources(), " "); got != "a://1 b://2" {
		t.Errorf("resources %q", got)
	}
	// Remove sends resources/unsubscribe, even for a URI it did not add.
	for _, u := range []string{"b://2", "x://9"} {
		ch = do(func() error { return w.Remove(ctx, u) })
		m = srv.nextRequest("resources/unsubscribe")
		if !strings.Contains(string(m.Params), u) {
			t.Errorf("unsubscribe %s, want %s", m.Params, u)
		}
		srv.reply(m, `{}`)
		if err := recv(t, ch); err != nil {
			t.Fatal(err)
		}
	}
	// Close unsubscribes from what is left.
	ch = do(w.Close)
	m = srv.nextRequest("resources/unsubscribe")
	if !strings.Contains(string(m.Params), "a://1") {
		t.Errorf("unsubscribe %s", m.Params)
	}
	srv.reply(m, `{}`)
	if err := recv(t, ch); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, "a://1"); err == nil {
		t.Error("Add after Close succeeded")
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// Stop leaves the subscriptions to the session.
	type started struct {
		w   *Watcher
		err error
	}
	sc := make(chan started, 1)
	go func() {
		w, err := s.StartWatch(ctx, WatchSpec{Resources: []string{"a://1"}}, hooks)
		sc <- started{w, err}
	}()
	srv.reply(srv.nextRequest("resources/subscribe"), `{}`)
	st := recv(t, sc)
	if st.err != nil {
		t.Fatal(st.err)
	}
	st.w.Stop()
	if err := st.w.Close(); err != nil {
		t.Errorf("Close after Stop: %v", err)
	}
	srv.quietUntil(mark(t, s))
	if len(log.acks)+len(log.ends) != 0 {
		t.Error("the handshake era acknowledged or ended a subscription stream")
	}
}

func TestWatcherModern(t *testing.T) {
	s, srv, _ := openEra(t, "modern", `{"tools":{"listChanged":true},"prompts":{}}`, Options{})
	log, hooks := newHookLog()
	ctx := context.Background()
	w, err := s.StartWatch(ctx, WatchSpec{Lists: true, DeclaredListsOnly: true}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	// Only the lists the server declares listChanged for.
	m := srv.nextRequest("subscriptions/listen")
	if got := listenFilterOf(t, m); got.Describe() != "tools list changes" {
		t.Errorf("filter %+v", got)
	}
	// Adding a resource listens again with it.
	if err := w.Add(ctx, "a://1"); err != nil {
		t.Fatal(err)
	}
	if n := srv.next(); n.Method != "notifications/cancelled" || !strings.Contains(string(n.Params), `"requestId":`+m.ID.String()) {
		t.Errorf("sent %s, want the old stream cancelled", n.Raw)
	}
	m = srv.nextRequest("subscriptions/listen")
	if got := listenFilterOf(t, m); got.Describe() != "tools list changes, updates of a://1" {
		t.Errorf("filter %+v", got)
	}
	acknowledge(srv, m, `{"toolsListChanged":true}`)
	if ack := recv(t, log.acks); len(ack.Missing.ResourceSubscriptions) != 1 || len(ack.Asked.ResourceSubscriptions) != 1 {
		t.Errorf("ack %+v", ack)
	}
	// A resource not watched cannot be removed; one watched can.
	var nw *NotWatchedError
	if err := w.Remove(ctx, "b://2"); !errors.As(err, &nw) || nw.URI != "b://2" {
		t.Errorf("err %v", err)
	}
	if err := w.Remove(ctx, "a://1"); err != nil {
		t.Fatal(err)
	}
	if n := srv.next(); n.Method != "notifications/cancelled" {
		t.Errorf("sent %s", n.Raw)
	}
	m = srv.nextRequest("subscriptions/listen")
	if got := listenFilterOf(t, m); got.Describe() != "tools list changes" {
		t.Errorf("filter %+v", got)
	}
	// The server ending the stream is reported, with what it was asked.
	srv.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + m.ID.String() + `,"reason":"bye"}}`)
	var ended *ListenEndedError
	if err := recv(t, log.ends); !errors.As(err, &ended) || ended.Reason != "bye" {
		t.Errorf("end %v", err)
	}
	if f := recv(t, log.asked); !f.ToolsListChanged {
		t.Errorf("asked %+v", f)
	}
	// After the server ended it, a change listens again.
	if err := w.Add(ctx, "c://3"); err != nil {
		t.Fatal(err)
	}
	m = srv.nextRequest("subscriptions/listen")
	if got := listenFilterOf(t, m); got.Describe() != "tools list changes, updates of c://3" {
		t.Errorf("filter %+v", got)
	}
	// Close cancels the stream and sends no resources/unsubscribe.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if n := srv.next(); n.Method != "notifications/cancelled" {
		t.Errorf("sent %s", n.Raw)
	}
	srv.quietUntil(mark(t, s))
	select {
	case err := <-log.ends:
		t.Errorf("a stream ended on request was reported as ended: %v", err)
	default:
	}

	// Stop ends the stream.
	w, err = s.StartWatch(ctx, WatchSpec{Lists: true, DeclaredListsOnly: true}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	srv.nextRequest("subscriptions/listen")
	w.Stop()
	if n := srv.next(); n.Method != "notifications/cancelled" {
		t.Errorf("sent %s", n.Raw)
	}

	// A watch that asks for nothing opens no stream.
	s2, srv2, _ := openEra(t, "modern", `{}`, Options{})
	w, err = s2.StartWatch(ctx, WatchSpec{Lists: true, DeclaredListsOnly: true}, hooks)
	if err != nil {
		t.Fatal(err)
	}
	srv2.quietUntil(mark(t, s2))
	w.Stop()
}

func TestTasksBothEras(t *testing.T) {
	ctx := context.Background()
	t.Run("legacy", func(t *testing.T) {
		s, srv, _ := openEra(t, "legacy", `{"tasks":{"list":{},"cancel":{}}}`, Options{})
		type got struct {
			r   *TaskReport
			err error
		}
		gc := make(chan got, 1)
		go func() { r, err := s.LookupTask(ctx, "t1"); gc <- got{r, err} }()
		m := srv.nextRequest("tasks/get")
		if !strings.Contains(string(m.Params), `"taskId":"t1"`) {
			t.Errorf("params %s", m.Params)
		}
		srv.reply(m, `{"taskId":"t1","status":"working","createdAt":"c","lastUpdatedAt":"u","ttl":60000,"pollInterval":500}`)
		g := recv(t, gc)
		if g.err != nil || g.r.Task == nil || g.r.Task.Status != "working" || *g.r.Task.TTLMs != 60000 || *g.r.Task.PollIntervalMs != 500 {
			t.Fatalf("got %+v, %v", g.r, g.err)
		}
		if tk := g.r.Task.Task(); *tk.TTL != 60000 || *tk.PollInterval != 500 {
			t.Errorf("Task() %+v", tk)
		}
		go func() { r, err := s.LookupTask(ctx, "t2"); gc <- got{r, err} }()
		m = srv.nextRequest("tasks/get")
		srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32602,"message":"unknown task"}}`)
		if g := recv(t, gc); g.err == nil || !strings.Contains(g.err.Error(), `tasks/get "t2"`) {
			t.Errorf("err %v", g.err)
		}

		// tasks/result, which blocks until the task ends.
		rc := make(chan callResult, 1)
		go func() { r, err := s.AwaitTask(ctx, "t1"); rc <- callResult{r, err} }()
		srv.reply(srv.nextRequest("tasks/result"), `{"content":[{"type":"text","text":"done"}]}`)
		if r := recv(t, rc); r.err != nil || !strings.Contains(string(r.res), "done") {
			t.Errorf("got %s, %v", r.res, r.err)
		}

		// tasks/cancel answers with the task.
		cc := make(chan *TaskCancellation, 1)
		go func() {
			c, err := s.RequestTaskCancel(ctx, "t1")
			if err != nil {
				t.Error(err)
			}
			cc <- c
		}()
		srv.reply(srv.nextRequest("tasks/cancel"), `{"taskId":"t1","status":"cancelled","createdAt":"c","lastUpdatedAt":"u","ttl":null}`)
		c := recv(t, cc)
		if c.Acknowledged {
			t.Error("a handshake-era cancel is the task itself, not an acknowledgement")
		}
		if st, err := c.State(ctx); err != nil || st == nil || st.Status != "cancelled" {
			t.Errorf("state %+v, %v", st, err)
		}

		// tasks/list exists in this era.
		lc := make(chan error, 1)
		go func() { _, err := s.List(ctx, ListTasks, nil); lc <- err }()
		srv.reply(srv.nextRequest("tasks/list"), `{"tasks":[]}`)
		if err := recv(t, lc); err != nil {
			t.Error(err)
		}
		srv.quietUntil(mark(t, s)) // State asked nothing
	})

	t.Run("modern", func(t *testing.T) {
		s, srv, w := openEra(t, "modern", `{}`, Options{})
		type got struct {
			r   *TaskReport
			err error
		}
		gc := make(chan got, 1)
		go func() { r, err := s.LookupTask(ctx, "t1"); gc <- got{r, err} }()
		w.expect("does not declare the io.modelcontextprotocol/tasks extension; sending tasks/get anyway")
		srv.reply(srv.nextRequest("tasks/get"), `{"resultType":"complete","taskId":"t1","status":"completed","ttlMs":1000,"result":{"content":[]}}`)
		g := recv(t, gc)
		if g.err != nil || g.r.Task == nil || g.r.Task.Status != "completed" || len(g.r.Task.Result) == 0 || *g.r.Task.TTLMs != 1000 {
			t.Fatalf("got %+v, %v", g.r, g.err)
		}

		// No tasks/result: the task is followed with tasks/get.
		rc := make(chan callResult, 1)
		go func() { r, err := s.AwaitTask(ctx, "t1"); rc <- callResult{r, err} }()
		w.expect("sending tasks/result anyway")
		srv.reply(srv.nextRequest("tasks/get"), `{"taskId":"t1","status":"working","pollIntervalMs":10}`)
		srv.reply(srv.nextRequest("tasks/get"), `{"taskId":"t1","status":"completed","result":{"content":[{"type":"text","text":"done"}]}}`)
		if r := recv(t, rc); r.err != nil || !strings.Contains(string(r.res), "done") {
			t.Errorf("got %s, %v", r.res, r.err)
		}

		// tasks/cancel only acknowledges; State asks tasks/get.
		cc := make(chan *TaskCancellation, 1)
		go func() {
			c, err := s.RequestTaskCancel(ctx, "t1")
			if err != nil {
				t.Error(err)
			}
			cc <- c
		}()
		w.expect("sending tasks/cancel anyway")
		srv.reply(srv.nextRequest("tasks/cancel"), `{"resultType":"complete"}`)
		c := recv(t, cc)
		if !c.Acknowledged {
			t.Error("a tasks-extension cancel is an acknowledgement")
		}
		sc := make(chan *DetailedTask, 1)
		go func() {
			st, err := c.State(ctx)
			if err != nil {
				t.Error(err)
			}
			sc <- st
		}()
		srv.reply(srv.nextRequest("tasks/get"), `{"taskId":"t1","status":"cancelled"}`)
		if st := recv(t, sc); st == nil || st.Status != "cancelled" {
			t.Errorf("state %+v", st)
		}

		// No tasks/list: refused without a request.
		_, err := s.List(ctx, ListTasks, nil)
		var eu *EraUnsupportedError
		if !errors.Is(err, ErrNotInThisEra) || !errors.As(err, &eu) || eu.Op != ListTasks || !strings.Contains(err.Error(), "has no tasks/list") {
			t.Errorf("err %v", err)
		}
		srv.quietUntil(mark(t, s))
		w.none()
	})

	t.Run("modern-declared", func(t *testing.T) {
		s, srv, w := openEra(t, "modern", `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`, Options{})
		gc := make(chan error, 1)
		go func() { _, err := s.LookupTask(ctx, "t1"); gc <- err }()
		srv.reply(srv.nextRequest("tasks/get"), `{"taskId":"t1","status":"working"}`)
		if err := recv(t, gc); err != nil {
			t.Fatal(err)
		}
		w.none()
	})
}

func TestAttachRootsBothEras(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s, srv, _ := openEra(t, era, `{}`, Options{})
			r := NewRoots(nil)
			if !strings.Contains(r.ChangeNote(), "next asks") {
				t.Errorf("unattached note %q", r.ChangeNote())
			}
			s.AttachRoots(r)
			s.AttachRoots(nil) // no roots: nothing to do
			if err := r.Set(context.Background(), []Root{{URI: "file:///x"}}); err != nil {
				t.Fatal(err)
			}
			if era == "legacy" {
				if n := srv.next(); n.Method != "notifications/roots/list_changed" {
					t.Errorf("sent %s", n.Raw)
				}
				if !strings.Contains(r.ChangeNote(), "sent notifications/roots/list_changed") {
					t.Errorf("note %q", r.ChangeNote())
				}
				return
			}
			srv.quietUntil(mark(t, s))
			if !strings.Contains(r.ChangeNote(), "the modern era has no roots/list_changed notification") {
				t.Errorf("note %q", r.ChangeNote())
			}
		})
	}
}

func TestHandlersForAndRedeclare(t *testing.T) {
	newFeatures := func(version string) *ClientFeatures {
		e, err := NewElicitor(context.Background(), ElicitPolicy{Mode: PolicyDecline}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &ClientFeatures{Version: version, Elicitor: e}
	}
	// 2025-03-26 has no elicitation: only the 2026-07-28 era answers it.
	f := newFeatures("2025-03-26")
	f.Capabilities()
	if f.HandlersFor(&Legacy{})["elicitation/create"] != nil {
		t.Error("a handshake-era session at 2025-03-26 answers elicitation")
	}
	for _, l := range []Lifecycle{&Modern{}, &Auto{}} {
		if f.HandlersFor(l)["elicitation/create"] == nil {
			t.Errorf("%T: embedded elicitations would go unanswered", l)
		}
	}

	f = newFeatures("")
	legacy := &Legacy{}
	f.ModernCapabilities()
	choose := f.Redeclare(legacy)
	choose("modern")
	if legacy.Capabilities != nil || !f.Elicitor.stateless {
		t.Errorf("modern chosen: legacy caps %s, stateless %v", legacy.Capabilities, f.Elicitor.stateless)
	}
	choose("legacy")
	if legacy.Capabilities == nil || f.Elicitor.stateless {
		t.Errorf("legacy chosen: legacy caps %s, stateless %v", legacy.Capabilities, f.Elicitor.stateless)
	}
}

func TestNotificationHelpers(t *testing.T) {
	msg := func(method, params string) *jsonrpc.Message {
		return &jsonrpc.Message{Method: method, Params: json.RawMessage(params)}
	}
	if !IsListChanged(msg("notifications/prompts/list_changed", "")) || IsListChanged(msg("notifications/message", "")) {
		t.Error("IsListChanged")
	}
	if u, ok := UpdatedResource(msg("notifications/resources/updated", `{"uri":"a://1"}`)); !ok || u != "a://1" {
		t.Errorf("UpdatedResource %q %v", u, ok)
	}
	if _, ok := UpdatedResource(msg("notifications/resources/list_changed", `{}`)); ok {
		t.Error("UpdatedResource of a list change")
	}
	if tk, ok := TaskStatusOf(msg("notifications/tasks/status", `{"taskId":"t1","status":"working"}`)); !ok || tk.TaskID != "t1" {
		t.Errorf("TaskStatusOf %+v %v", tk, ok)
	}
	for _, m := range []*jsonrpc.Message{msg("notifications/tasks/status", `{"status":"working"}`), msg("notifications/message", `{"taskId":"t1"}`)} {
		if _, ok := TaskStatusOf(m); ok {
			t.Errorf("TaskStatusOf(%s %s)", m.Method, m.Params)
		}
	}
}

func TestOpeningNotes(t *testing.T) {
	if n := OpeningNote(&Legacy{Capabilities: json.RawMessage(`{"roots":{}}`)}); n != `offering client capabilities {"roots":{}}` {
		t.Errorf("legacy %q", n)
	}
	if n := OpeningNote(&Modern{Capabilities: json.RawMessage(`{}`)}); !strings.Contains(n, "in every request (protocol era modern)") {
		t.Errorf("modern %q", n)
	}
	if n := OpeningNote(&Auto{}); !strings.Contains(n, "probing with server/discover") {
		t.Errorf("auto %q", n)
	}
	for era, verb := range map[string]string{"legacy": "initialized: ", "modern": "discovered: "} {
		info := &ServerInfo{Era: era, Implementation: Implementation{Name: "srv", Version: "1"}, ProtocolVersion: "v"}
		if got := info.OpenedNote(); got != verb+"srv 1, protocol v" {
			t.Errorf("%s: %q", era, got)
		}
	}
}

func TestVersionEra(t *testing.T) {
	for v, want := range map[string]string{
		"2024-11-05": "legacy", "2025-11-25": "legacy", "2026-07-28": "modern",
		"2099-01-01": "", "2024-01-01": "", "": "", "latest": "",
	} {
		if got := VersionEra(v); got != want {
			t.Errorf("VersionEra(%q) = %q, want %q", v, got, want)
		}
	}
}

// A server without a name is said to be one, not shown as blanks.
func TestOpenedNoteUnnamed(t *testing.T) {
	if got := (&ServerInfo{Era: "legacy", ProtocolVersion: "2025-11-25"}).OpenedNote(); got != "initialized: a server that did not name itself, protocol 2025-11-25" {
		t.Errorf("got %q", got)
	}
}

// A log message from a server that does not declare the logging
// capability is a warning, once ("Servers that emit log message
// notifications MUST declare the logging capability", spec
// server/utilities/logging); it is delivered all the same. A server that
// declares it gets none.
func TestLogMessageWithoutLoggingCapability(t *testing.T) {
	for _, era := range eras {
		for _, caps := range []string{`{}`, `{"logging":{}}`} {
			got := make(chan string, 4)
			s, srv, w := openEra(t, era, caps, Options{OnNotification: func(m *jsonrpc.Message) { got <- m.Method }})
			for range 2 {
				srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"hi"}}`)
				if m := recv(t, got); m != "notifications/message" {
					t.Errorf("%s %s: delivered %s", era, caps, m)
				}
			}
			if era == "modern" {
				// And no request asked for them (TestModernUnaskedLogMessage).
				w.expect("though no request of mcpx's asked for one")
			}
			if caps == `{}` {
				w.expect("the server sends log messages without declaring the logging capability")
			}
			w.none()
			s.Close()
		}
	}
}
