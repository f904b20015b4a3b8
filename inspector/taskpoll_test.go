package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// legacyTask is a handshake-era Task with the given status and message.
func legacyTask(id, status, message string) string {
	return `{"taskId":"` + id + `","status":"` + status + `","statusMessage":"` + message +
		`","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null,"pollInterval":100}`
}

// A task that never ends is given up on: after the timeout without a
// status change, or after the maximum time whatever the changes. mcpx
// created it, so it cancels it with tasks/cancel; the error is a timeout.
func TestCallAsTaskBounded(t *testing.T) {
	for _, tc := range []struct {
		name    string
		changes bool // every poll reports a new status message
		max     bool
	}{
		{"no status change", false, false},
		{"changes, but no end", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// On synctest's clock: the bounds are real timers, and the
			// test takes no real time.
			synctest.Test(t, func(t *testing.T) {
				s, srv, _ := newTestSession(t, Options{Timeout: time.Second, MaxTimeout: 3 * time.Second})
				start := time.Now()
				ch := make(chan callResult, 1)
				go func() {
					res, err := s.CallAsTask(context.Background(), "tools/call", json.RawMessage(`{"name":"slow"}`), TaskRun{})
					ch <- callResult{res, err}
				}()
				srv.reply(srv.nextRequest("tools/call"), `{"task":`+legacyTask("t1", "working", "")+`}`)
				polls := 0
				for {
					m := srv.next()
					if m.Method == "tasks/cancel" {
						srv.reply(m, legacyTask("t1", "cancelled", ""))
						break
					}
					if m.Method != "tasks/get" {
						t.Fatalf("sent %s", m.Raw)
					}
					if polls++; polls > 100 {
						t.Fatal("mcpx never gave up on the task")
					}
					msg := ""
					if tc.changes {
						msg = strings.Repeat(".", polls)
					}
					srv.reply(m, legacyTask("t1", "working", msg))
				}
				r := result(t, ch)
				var te *TaskTimeoutError
				if !errors.As(r.err, &te) || !errors.Is(r.err, ErrTimeout) || !te.Cancelled || te.Max != tc.max || te.Status != "working" {
					t.Fatalf("err = %v (%+v), want a TaskTimeoutError, Max %v", r.err, te, tc.max)
				}
				want := time.Second
				if tc.max {
					want = 3 * time.Second
				}
				if d := time.Since(start); d != want {
					t.Errorf("gave up after %s, want %s", d, want)
				}
				// Polled at the server's interval up to the bound, the
				// last one at the bound itself.
				if polls != int(want/(100*time.Millisecond)) {
					t.Errorf("%d polls", polls)
				}
			})
		})
	}
}

// What a server gets wrong about a task that does not stop mcpx from
// following it is warned about once and put right: a ttl or pollInterval
// that is no integer (1.5, "soon"), an answer about another task id, a
// status the spec does not define. An interval too large for a duration
// (1e20, or just beyond an int64) is the longest mcpx waits.
func TestCallAsTaskOddServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 5 * time.Second
		s, srv, w := newTestSession(t, Options{Timeout: idle, MaxTimeout: -1})
		var statuses []string
		ch := make(chan callResult, 1)
		go func() {
			res, err := s.CallAsTask(context.Background(), "tools/call", json.RawMessage(`{"name":"slow"}`),
				TaskRun{OnStatus: func(t Task) { statuses = append(statuses, t.Status) }})
			ch <- callResult{res, err}
		}()
		srv.reply(srv.nextRequest("tools/call"), `{"task":{"taskId":"t1","status":"working","createdAt":"x","lastUpdatedAt":"x","ttl":"soon","pollInterval":1.5}}`)
		w.expect("task t1 departs from the spec", `its ttl "soon" is not an integer`, "its pollInterval 1.5 is not an integer")
		get := func(want string) *jsonrpc.Message {
			t.Helper()
			m := srv.nextRequest("tasks/get")
			if !strings.Contains(string(m.Params), `"taskId":"`+want+`"`) {
				t.Fatalf("polled %s, want task %s", m.Params, want)
			}
			return m
		}
		// No interval: one second.
		start := time.Now()
		m := get("t1")
		if d := time.Since(start); d != time.Second {
			t.Errorf("first poll after %s", d)
		}
		srv.reply(m, `{"taskId":"t2","status":"bogus","createdAt":"x","lastUpdatedAt":"x","ttl":null,"pollInterval":1e20}`)
		w.expect(`tasks/get t1 was answered with taskId "t2"; following t1 still`)
		w.expect(`task t1: status "bogus" is not one the spec defines`)
		// An interval too long for a duration waits the longest mcpx
		// waits, bounded by the timeout between status changes.
		start = time.Now()
		m = get("t1")
		if d := time.Since(start); d != idle {
			t.Errorf("second poll after %s", d)
		}
		srv.reply(m, legacyTask("t1", "completed", ""))
		srv.reply(srv.nextRequest("tasks/result"), `{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`)
		if r := result(t, ch); r.err != nil {
			t.Fatal(r.err)
		}
		if got := strings.Join(statuses, ","); got != "working,bogus,completed" {
			t.Errorf("statuses %s", got)
		}
	})
}

// The modern era's tasks are bounded the same way, and its hints read as
// leniently; a task mcpx only waits for (tasks result ID) is not
// cancelled when mcpx gives up.
func TestModernTaskBounded(t *testing.T) {
	for _, own := range []bool{true, false} {
		t.Run(map[bool]string{true: "own", false: "followed"}[own], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, srv, w, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{Timeout: time.Second})
				openModern(t, s, srv)
				ch := make(chan callResult, 1)
				go func() {
					var res json.RawMessage
					var err error
					if own {
						res, err = s.Call(context.Background(), "tools/call", map[string]any{"name": "job"})
					} else {
						res, err = s.FollowTask(context.Background(), "t1")
					}
					ch <- callResult{res, err}
				}()
				task := `"taskId":"t1","status":"working","pollIntervalMs":-5}`
				if own {
					srv.reply(srv.nextRequest("tools/call"), `{"resultType":"task",`+task)
				} else {
					srv.reply(srv.nextRequest("tasks/get"), `{"resultType":"complete",`+task)
				}
				w.expect("task t1 departs from the spec", "its pollIntervalMs -5 is negative")
				for polls := 0; ; polls++ {
					if polls > 100 {
						t.Fatal("mcpx never gave up on the task")
					}
					m := srv.next()
					if m.Method == "tasks/cancel" {
						if !own {
							t.Error("cancelled a task mcpx only followed")
						}
						srv.reply(m, `{"resultType":"complete"}`)
						break
					}
					srv.reply(m, `{"resultType":"complete","taskId":"t1","status":"working"}`)
					if own {
						continue
					}
					if r := (<-ch); !errors.Is(r.err, ErrTimeout) || strings.Contains(r.err.Error(), "tasks/cancel") {
						t.Fatalf("err = %v", r.err)
					}
					return
				}
				var te *TaskTimeoutError
				if r := result(t, ch); !errors.As(r.err, &te) || !te.Cancelled || !strings.Contains(r.err.Error(), "no status change in 1s; tasks/cancel sent") {
					t.Fatalf("err = %v", r.err)
				}
			})
		})
	}
}

func TestReadMillis(t *testing.T) {
	for raw, want := range map[string]string{
		`5`: "5", `-1`: "-1 its x -1 is negative", `1e3`: "1000", `1e20`: "9223372036854775807",
		`99999999999999999999`: "9223372036854775807", `-1e999`: "-9223372036854775808 its x -9223372036854775808 is negative",
		`1.5`: "nil its x 1.5 is not an integer number of milliseconds (ignored)", `"5"`: `nil its x "5" is not an integer number of milliseconds (ignored)`,
		`null`: "nil", ``: "nil",
	} {
		v, problems := readMillis("x", json.RawMessage(raw), nil)
		got := "nil"
		if v != nil {
			got = strconv.FormatInt(*v, 10)
		}
		if len(problems) > 0 {
			got += " " + strings.Join(problems, "; ")
		}
		if got != want {
			t.Errorf("%s: %s, want %s", raw, got, want)
		}
	}
}

// A task of the tasks extension that the server fails or cancels is the
// server's answer: a TaskEndedError, with the task's error when it has one.
func TestModernTaskEnded(t *testing.T) {
	for _, tc := range []struct {
		end, want string
		rpc       bool
	}{
		{`"status":"failed"`, "task t1 failed: no reason given", false},
		{`"status":"failed","statusMessage":"disk full"`, "task t1 failed: disk full", false},
		{`"status":"failed","error":{"code":-32603,"message":"boom"}`, "task t1 failed: server error -32603", true},
		{`"status":"cancelled"`, "task t1 was cancelled: by the server", false},
	} {
		s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
		openModern(t, s, srv)
		ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "job"})
		srv.reply(srv.nextRequest("tools/call"), `{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":1}`)
		srv.reply(srv.nextRequest("tasks/get"), `{"resultType":"complete","taskId":"t1",`+tc.end+`}`)
		r := result(t, ch)
		var te *TaskEndedError
		var rpcErr *jsonrpc.Error
		if !errors.As(r.err, &te) || !strings.Contains(r.err.Error(), tc.want) || errors.As(r.err, &rpcErr) != tc.rpc {
			t.Errorf("%s: err = %v", tc.end, r.err)
		}
	}
}

// A result with a task object is a CreateTaskResult however broken, never
// the request's own result; one without is the server answering directly.
func TestCallAsTaskCreateResultShapes(t *testing.T) {
	for answer, want := range map[string]string{
		`{"task":{"taskId":5,"status":"working"}}`: "tools/call: the server created a task that is not a Task: its taskId is a number, not a string",
		`{"task":{"status":"working"}}`:            "tools/call: the server created a task without a taskId",
		`{"content":[],"task":null}`:               "",
	} {
		s, srv, _ := newTestSession(t, Options{})
		var notes []string
		ch := make(chan callResult, 1)
		go func() {
			res, err := s.CallAsTask(context.Background(), "tools/call", json.RawMessage(`{"name":"x"}`), TaskRun{OnNote: func(n string) { notes = append(notes, n) }})
			ch <- callResult{res, err}
		}()
		srv.reply(srv.nextRequest("tools/call"), answer)
		r := result(t, ch)
		switch {
		case want == "" && (r.err != nil || string(r.res) != answer || len(notes) != 1):
			t.Errorf("%s: %s %v %q, want it returned as the answer", answer, r.res, r.err, notes)
		case want != "" && (r.err == nil || r.err.Error() != want || !errors.Is(r.err, ErrProtocolViolation)):
			t.Errorf("%s: %v, want %q", answer, r.err, want)
		}
	}
}

// A task without a status is warned about (once) and shown as such.
func TestTaskWithoutStatus(t *testing.T) {
	s, _, w := newTestSession(t, Options{})
	p := s.newTaskPoll(t.Context(), Task{TaskID: "t"})
	w.expect("task t has no status")
	p.observe(&Task{TaskID: "t"})
	w.none()
	if got := (Task{TaskID: "t"}).String(); got != "task t: (no status)" {
		t.Errorf("String() = %q", got)
	}
}

// A server that reports a new unknown status at every poll gets a bounded
// number of warnings, and mcpx remembers a bounded number of them.
func TestTaskWarningsBounded(t *testing.T) {
	s, _, w := newTestSession(t, Options{})
	p := s.newTaskPoll(t.Context(), Task{TaskID: "t", Status: "working"})
	for i := range 100 {
		p.observe(&Task{TaskID: "t", Status: strconv.Itoa(i)})
	}
	if len(p.warned) != maxTaskWarnings {
		t.Errorf("%d warnings remembered", len(p.warned))
	}
	for range maxTaskWarnings {
		w.expect("is not one the spec defines")
	}
}

// The maximum time bounds the whole task, the wait in tasks/result too (a
// task that needed input and then runs on): at the bound mcpx gives up on
// the task as while polling — tasks/cancel, and a TaskTimeoutError — never
// only notifications/cancelled for tasks/result, which leaves the task
// running (spec 2025-11-25: basic/utilities/cancellation: a task is
// cancelled with tasks/cancel).
func TestCallAsTaskBoundedInResult(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, srv, _ := newTestSession(t, Options{Timeout: time.Second, MaxTimeout: 3 * time.Second})
		start := time.Now()
		ch := make(chan callResult, 1)
		go func() {
			res, err := s.CallAsTask(context.Background(), "tools/call", json.RawMessage(`{"name":"slow"}`), TaskRun{})
			ch <- callResult{res, err}
		}()
		srv.reply(srv.nextRequest("tools/call"), `{"task":`+legacyTask("t1", "working", "")+`}`)
		// Two seconds of polls, then the task needs input.
		for i := 1; ; i++ {
			m := srv.nextRequest("tasks/get")
			if time.Since(start) >= 2*time.Second {
				srv.reply(m, legacyTask("t1", "input_required", ""))
				break
			}
			srv.reply(m, legacyTask("t1", "working", strconv.Itoa(i)))
		}
		// tasks/result is never answered: the task runs on.
		srv.nextRequest("tasks/result")
		m := srv.next()
		if m.Method != "tasks/cancel" {
			t.Fatalf("at the bound, sent %s; want tasks/cancel", m.Raw)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("gave up after %s, want the maximum, 3s", d)
		}
		srv.reply(m, legacyTask("t1", "cancelled", ""))
		r := result(t, ch)
		var te *TaskTimeoutError
		if !errors.As(r.err, &te) || !te.Cancelled || !te.Max || te.Status != "input_required" {
			t.Fatalf("err = %v (%+v), want a TaskTimeoutError, Max, cancelled", r.err, te)
		}
	})
}

// A Task must have createdAt, lastUpdatedAt and ttl (null for unlimited)
// (spec 2025-11-25 schema: Task; basic/utilities/tasks, "TTL and Resource
// Management"): a server that leaves them out is warned about, once, and
// followed all the same.
func TestCallAsTaskMissingRequiredMembers(t *testing.T) {
	s, srv, w := newTestSession(t, Options{})
	ch := make(chan callResult, 1)
	go func() {
		res, err := s.CallAsTask(context.Background(), "tools/call", json.RawMessage(`{"name":"x"}`), TaskRun{MinPoll: time.Millisecond})
		ch <- callResult{res, err}
	}()
	srv.reply(srv.nextRequest("tools/call"), `{"task":{"taskId":"t1","status":"working","pollInterval":1}}`)
	w.expect("task t1 departs from the spec", "it lacks createdAt, lastUpdatedAt, ttl")
	srv.reply(srv.nextRequest("tasks/get"), `{"taskId":"t1","status":"completed","createdAt":"x","lastUpdatedAt":"x","pollInterval":1}`)
	w.expect("task t1 departs from the spec", "it lacks ttl")
	srv.reply(srv.nextRequest("tasks/result"), `{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`)
	if r := result(t, ch); r.err != nil {
		t.Fatal(r.err)
	}
	w.none()
}

// tasks/result must carry io.modelcontextprotocol/related-task with the
// task's id (spec 2025-11-25: basic/utilities/tasks, "Related Task
// Metadata"): a result without it, or naming another task, is warned
// about and returned as it came.
func TestTaskResultRelatedTask(t *testing.T) {
	for answer, want := range map[string]string{
		`{"content":[]}`: `tasks/result t1: the result has no _meta "io.modelcontextprotocol/related-task" naming the task`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t2"}}}`: `tasks/result t1: the result has no _meta "io.modelcontextprotocol/related-task" naming the task`,
		`{"content":[],"_meta":{"io.modelcontextprotocol/related-task":{"taskId":"t1"}}}`: "",
	} {
		s, srv, w := newTestSession(t, Options{})
		ch := make(chan callResult, 1)
		go func() {
			res, err := s.TaskResult(context.Background(), "t1")
			ch <- callResult{res, err}
		}()
		srv.reply(srv.nextRequest("tasks/result"), answer)
		if r := result(t, ch); r.err != nil || string(r.res) != answer {
			t.Errorf("%s: got %s %v", answer, r.res, r.err)
		}
		if want != "" {
			w.expect(want)
		}
		w.none()
	}
}
