package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// Following a task by polling, in both eras: what the handshake era's
// tasks (spec 2025-11-25: basic/utilities/tasks) and the tasks extension
// of 2026-07-28 (SEP-2663) share — how long to wait between polls, when
// to stop waiting, and what in a server's answers to warn about.

// taskStatuses are the statuses the spec defines ("Task Status").
var taskStatuses = []string{TaskWorking, TaskInputRequired, TaskCompleted, TaskFailed, TaskCancelled}

// maxTaskPoll bounds the wait between two polls whatever the server
// suggests: a pollInterval of 10^15 ms would otherwise overflow a
// time.Duration. The session's timeouts bound the wait further.
const maxTaskPoll = 24 * time.Hour

// readMillis reads a task's ttl or pollInterval: an integer number of
// milliseconds (spec 2025-11-25 schema: Task; SEP-2663: ttlMs,
// pollIntervalMs). An integer too large for an int64 (a JSON Schema
// integer has no bound; 1e20 is one) is taken as the largest; anything
// else (1.5, "soon") is left out, and a negative number kept, each with a
// problem appended for the warning. null is nil, as is an absent member.
func readMillis(name string, raw json.RawMessage, problems []string) (*int64, []string) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, problems
	}
	ms, ok := integer(raw)
	if !ok {
		return nil, append(problems, fmt.Sprintf("its %s %s is not an integer number of milliseconds (ignored)", name, rawjson.Excerpt(raw, 40)))
	}
	if ms < 0 {
		problems = append(problems, fmt.Sprintf("its %s %d is negative", name, ms))
	}
	return &ms, problems
}

// integer reads a JSON number with no fractional part, clamped to the
// range of an int64.
func integer(raw json.RawMessage) (int64, bool) {
	s := string(raw)
	if rawjson.Kind(raw) != "a number" {
		return 0, false
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if (err != nil && !errors.Is(err, strconv.ErrRange)) || f != math.Trunc(f) {
		return 0, false
	}
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64, true
	case f <= math.MinInt64:
		return math.MinInt64, true
	}
	return int64(f), true
}

// UnmarshalJSON reads a Task. A ttl or pollInterval that is not an
// integer number of milliseconds is left out (see Problems) rather than
// making the whole task unreadable: it is a hint, and the task can be
// followed without it.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	var aux struct {
		plain
		TTL          json.RawMessage `json:"ttl"`
		PollInterval json.RawMessage `json:"pollInterval"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return unembedded(err)
	}
	*t = Task(aux.plain)
	var problems []string
	// The members a Task must have besides its id and status, which are
	// checked where they are needed (spec 2025-11-25 schema: Task; ttl is
	// null for unlimited, "TTL and Resource Management").
	var missing []string
	for _, name := range []string{"createdAt", "lastUpdatedAt", "ttl"} {
		if rawjson.Member(b, name) == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		problems = append(problems, "it lacks "+strings.Join(missing, ", ")+", which a Task must have (ttl: null for unlimited)")
	}
	t.TTL, problems = readMillis("ttl", aux.TTL, problems)
	t.PollInterval, problems = readMillis("pollInterval", aux.PollInterval, problems)
	t.problems = strings.Join(problems, "; ")
	return nil
}

// Problems says what of the task as received departs from the spec and
// was left out or kept as it came ("" when nothing).
func (t Task) Problems() string { return t.problems }

// UnmarshalJSON reads a DetailedTask, leniently as Task.UnmarshalJSON.
func (t *DetailedTask) UnmarshalJSON(b []byte) error {
	type plain DetailedTask
	var aux struct {
		plain
		TTLMs          json.RawMessage `json:"ttlMs"`
		PollIntervalMs json.RawMessage `json:"pollIntervalMs"`
	}
	if err := json.Unmarshal(b, &aux); err != nil {
		return unembedded(err)
	}
	*t = DetailedTask(aux.plain)
	var problems []string
	t.TTLMs, problems = readMillis("ttlMs", aux.TTLMs, problems)
	t.PollIntervalMs, problems = readMillis("pollIntervalMs", aux.PollIntervalMs, problems)
	t.problems = strings.Join(problems, "; ")
	return nil
}

// unembedded removes the name of the alias type UnmarshalJSON decodes
// through from a decoding error's field path ("plain.taskId"), which
// would otherwise show in what mcpx says about the server's task.
func unembedded(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		c := *te
		c.Field = strings.TrimPrefix(c.Field, "plain.")
		return &c
	}
	return err
}

// pollWait is how long to wait before polling again: the server's
// suggestion (which the spec says to respect, "Polling"), at least floor
// (a suggestion of 0, or a negative one, would be a busy loop), one second
// when there is none.
func pollWait(suggested *int64, floor time.Duration) time.Duration {
	if suggested == nil {
		return max(time.Second, floor)
	}
	if ms := *suggested; ms >= maxTaskPoll.Milliseconds() {
		return maxTaskPoll
	}
	return max(time.Duration(*suggested)*time.Millisecond, floor)
}

// TaskTimeoutError reports a task mcpx stopped waiting for: its status
// did not change within the session's timeout (a status change is a
// task's progress, and resets it as progress resets a request's), or it
// did not end within the session's maximum time. It matches ErrTimeout.
type TaskTimeoutError struct {
	TaskID string
	// Status is the last status the server reported.
	Status string
	After  time.Duration
	// Max is true when the maximum total time, not the timeout between
	// status changes, expired.
	Max bool
	// Cancelled is true when mcpx sent tasks/cancel for it (the task was
	// mcpx's own).
	Cancelled bool
}

func (e *TaskTimeoutError) Error() string {
	msg := fmt.Sprintf("task %s still %s: no status change in %s", e.TaskID, e.Status, e.After)
	if e.Max {
		msg = fmt.Sprintf("task %s still %s after %s (the maximum total time, even with status changes)", e.TaskID, e.Status, e.After)
	}
	if e.Cancelled {
		msg += "; tasks/cancel sent"
	}
	return msg
}

// Is makes errors.Is(err, ErrTimeout) true.
func (e *TaskTimeoutError) Is(target error) bool { return target == ErrTimeout }

// taskPoll follows one task: the id it was created with, the bounds of
// the wait, and what was warned about already.
type taskPoll struct {
	// ctx is the context of the request that made the task, which the
	// departures found in its polls are tied to (see depart).
	ctx     context.Context
	s       *Session
	id      string
	status  string        // the last status and message, to tell a change
	idle    time.Duration // <= 0: none
	max     time.Duration // <= 0: none
	start   time.Time
	changed time.Time
	// progressAt, when set, holds when progress last came (Unix
	// nanoseconds; 0: never): progress resets the timeout too.
	progressAt *atomic.Int64
	warned     map[string]bool
}

// newTaskPoll starts following task t, bounded by the session's timeouts.
func (s *Session) newTaskPoll(ctx context.Context, t Task) *taskPoll {
	now := time.Now()
	p := &taskPoll{ctx: ctx, s: s, id: t.TaskID, status: t.Status + "\x00" + t.StatusMessage, idle: s.opts.Timeout, max: s.opts.MaxTimeout,
		start: now, changed: now, warned: map[string]bool{}}
	p.check(t)
	return p
}

// maxTaskWarnings bounds the warnings about one task: their keys hold
// what the server sent (a status), which may change with every poll.
const maxTaskWarnings = 16

func (p *taskPoll) warnOnce(key, format string, args ...any) {
	if p.warned[key] || len(p.warned) >= maxTaskWarnings {
		return
	}
	p.warned[key] = true
	p.s.depart(p.ctx, format, args...)
}

// check warns, once each, about what in a task as received departs from
// the spec (spec 2025-11-25: basic/utilities/tasks).
func (p *taskPoll) check(t Task) {
	if t.Status == "" {
		p.warnOnce("no status", "task %s has no status (spec: a Task must have one); waiting on as for a task still working", p.id)
	} else if !slices.Contains(taskStatuses, t.Status) {
		p.warnOnce("status "+t.Status, "task %s: status %q is not one the spec defines (%s); waiting on as for a task still working",
			p.id, t.Status, strings.Join(taskStatuses, ", "))
	}
	if pr := t.Problems(); pr != "" {
		p.warnOnce("problems "+pr, "task %s departs from the spec: %s", p.id, pr)
	}
}

// observe takes a tasks/get answer: it warns about what departs from the
// spec — an answer about another task than the one asked for, whose
// taskId is then put right (the request's taskId is the source of truth:
// spec 2025-11-25: basic/utilities/tasks, "Task Context") — and notes a
// status change, which resets the timeout.
func (p *taskPoll) observe(t *Task) {
	if t.TaskID != p.id {
		p.warnOnce("id", "tasks/get %s was answered with taskId %q; following %s still", p.id, t.TaskID, p.id)
		t.TaskID = p.id
	}
	p.check(*t)
	if st := t.Status + "\x00" + t.StatusMessage; st != p.status {
		p.status = st
		p.progressed()
	}
}

// progressed resets the timeout between status changes (a status change,
// or input answered).
func (p *taskPoll) progressed() { p.changed = time.Now() }

// lastChange is when the timeout was last reset: by a status change, input
// answered, or progress.
func (p *taskPoll) lastChange() time.Time {
	if p.progressAt != nil {
		if n := p.progressAt.Load(); n != 0 {
			if t := time.Unix(0, n); t.After(p.changed) {
				return t
			}
		}
	}
	return p.changed
}

// wait returns how long to wait before the next poll: what the server
// suggests, but no later than a bound expires, so that the task is polled
// once more before mcpx gives up on it.
func (p *taskPoll) wait(suggested *int64, floor time.Duration) time.Duration {
	w := pollWait(suggested, floor)
	now := time.Now()
	if p.idle > 0 {
		w = min(w, max(p.lastChange().Add(p.idle).Sub(now), floor))
	}
	if p.max > 0 {
		w = min(w, max(p.start.Add(p.max).Sub(now), floor))
	}
	return w
}

// untilMax returns ctx ending also when the maximum time is up (ctx itself
// when there is none).
func (p *taskPoll) untilMax(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.max <= 0 {
		return ctx, func() {}
	}
	return context.WithDeadline(ctx, p.start.Add(p.max))
}

// expired returns the error to stop with once a bound has expired, nil
// before.
func (p *taskPoll) expired() *TaskTimeoutError {
	now := time.Now()
	switch {
	case p.max > 0 && !now.Before(p.start.Add(p.max)):
		return &TaskTimeoutError{TaskID: p.id, Status: p.lastStatus(), After: p.max, Max: true}
	case p.idle > 0 && !now.Before(p.lastChange().Add(p.idle)):
		return &TaskTimeoutError{TaskID: p.id, Status: p.lastStatus(), After: p.idle}
	}
	return nil
}

func (p *taskPoll) lastStatus() string {
	status, _, _ := strings.Cut(p.status, "\x00")
	return status
}
