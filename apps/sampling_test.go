package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testwait"
)

func samplingRequest(id int, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"sampling/createMessage","params":%s}`, id, params)
}

const samplingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Hi"}}],"maxTokens":50}`

// sampling/createMessage (draft spec "Sampling"): with Handlers.Sample
// the host declares sampling (with tools), hands the view's params to the
// program and answers its CreateMessageResult; the program's refusal
// reaches the view as its error; malformed params never reach the
// program; and both ways are view messages, as any other.
func TestSampling(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	type asked struct {
		v      ViewInfo
		params string
	}
	got := make(chan asked, 8)
	var answer json.RawMessage = json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Hello"},"model":"mcpx-human"}`)
	var mu sync.Mutex
	var refuse error
	o.Handlers.Sample = func(ctx context.Context, v ViewInfo, params json.RawMessage) (json.RawMessage, error) {
		got <- asked{v, string(params)}
		mu.Lock()
		defer mu.Unlock()
		return answer, refuse
	}
	h := newTestHost(t, o)
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	init := p.handshake(id)
	p.rpc() // tool-input
	caps, _ := init["hostCapabilities"].(map[string]any)
	if s, _ := caps["sampling"].(map[string]any); s == nil || s["tools"] == nil {
		t.Errorf("hostCapabilities %v lack sampling with tools", caps)
	}

	p.post(id, samplingRequest(2, samplingParams))
	m := p.rpc()
	if m["id"] != float64(2) || fmt.Sprint(m["result"]) != "map[content:map[text:Hello type:text] model:mcpx-human role:assistant]" {
		t.Fatalf("answer: %v", m)
	}
	select {
	case a := <-got:
		if a.v.ID != id || a.params != samplingParams {
			t.Errorf("handler given %+v", a)
		}
	case <-time.After(testwait.Bound):
		t.Fatal("the handler was not asked")
	}
	rec.waitFor(t, "the request and its answer observed", func(r *recorder) bool {
		var from, to bool
		for _, w := range r.wire {
			from = from || w.Direction == FromView && strings.Contains(string(w.Raw), `"sampling/createMessage"`)
			to = to || w.Direction == ToView && strings.Contains(string(w.Raw), `"Hello"`)
		}
		return from && to
	})

	// Refused by the program: its *Error as it is.
	mu.Lock()
	refuse = &Error{Code: -1, Message: "User rejected sampling request"}
	mu.Unlock()
	p.post(id, samplingRequest(3, samplingParams))
	if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(-1) || e["message"] != "User rejected sampling request" {
		t.Fatalf("refused: %v", e)
	}
	<-got

	// Malformed: refused before the program is asked (params that are
	// not an object are not even a message).
	for _, params := range []string{`{}`, `{"messages":{}}`, `{"messages":null}`} {
		p.post(id, samplingRequest(4, params))
		if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(CodeInvalidParams) {
			t.Errorf("%s: %v", params, e)
		}
	}
	select {
	case a := <-got:
		t.Errorf("the handler was given malformed params %s", a.params)
	default:
	}
}

// Without Handlers.Sample the host declares no sampling and answers
// "method not found".
func TestNoSamplingHandler(t *testing.T) {
	rec := newRecorder()
	h := newTestHost(t, rec.options(newFakeBackend(minimalHTML)))
	v := openShow(t, h, `{}`)
	p := connectPage(t, h)
	p.next("view")
	id := v.Info().ID
	if caps, _ := p.handshake(id)["hostCapabilities"].(map[string]any); caps["sampling"] != nil {
		t.Errorf("hostCapabilities %v declare sampling", caps)
	}
	p.rpc() // tool-input
	p.post(id, samplingRequest(2, samplingParams))
	if e, _ := p.rpc()["error"].(map[string]any); e == nil || e["code"] != float64(CodeMethodNotFound) {
		t.Fatalf("sampling without a handler: %v", e)
	}
}

// One sampling question at a time per view: the person answers each in
// turn, and a view must not queue them up.
func TestOneSamplingQuestionAtATime(t *testing.T) {
	rec := newRecorder()
	o := rec.options(newFakeBackend(minimalHTML))
	asked := make(chan struct{}, 4)
	answer := make(chan error)
	o.Handlers.Sample = func(ctx context.Context, v ViewInfo, params json.RawMessage) (json.RawMessage, error) {
		asked <- struct{}{}
		select {
		case err := <-answer:
			return json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"ok"},"model":"m"}`), err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	h := newTestHost(t, o)
	_, p, id := handshaken(t, h)
	wait := func() {
		t.Helper()
		select {
		case <-asked:
		case <-time.After(testwait.Bound):
			t.Fatal("the person was not asked")
		}
	}
	p.post(id, samplingRequest(1, samplingParams))
	wait()
	p.post(id, samplingRequest(2, samplingParams))
	if m := p.rpc(); m["id"] != float64(2) || m["error"] == nil {
		t.Fatalf("a sampling request while another is asked about: %v", m)
	}
	answer <- nil
	if m := p.rpc(); m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("the request asked about: %v", m)
	}
	p.post(id, samplingRequest(3, samplingParams))
	wait()
	answer <- nil
	if m := p.rpc(); m["id"] != float64(3) || m["result"] == nil {
		t.Fatalf("the next request: %v", m)
	}
	rec.waitFor(t, "the refused request reported", func(r *recorder) bool {
		return r.hasProblem(ErrRefused, "still asked about another of the view's")
	})
}
