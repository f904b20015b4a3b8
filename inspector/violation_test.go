package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// The decoders of what a server sends mark what they cannot read as the
// server's departure from the protocol, with the error's text unchanged;
// what a caller gives them wrongly, and a JSON-RPC error, are not.
func TestProtocolViolationDecoders(t *testing.T) {
	for name, err := range map[string]error{
		"a task that is not an object": second(ParseDetailedTask(json.RawMessage(`[1]`))),
		"a task without taskId":        second(ParseDetailedTask(json.RawMessage(`{"status":"working"}`))),
		"input_required not an object": second(ParseInputRequired(json.RawMessage(`"x"`))),
		"inputRequests not a map":      second(ParseInputRequired(json.RawMessage(`{"inputRequests":[1]}`))),
		"requestState not a string":    second(ParseInputRequired(json.RawMessage(`{"requestState":5}`))),
		"a skill entry without uri":    second(ParseSkill(json.RawMessage(`{"frontmatter":{}}`))),
		"a skill entry not an object":  second(ParseSkill(json.RawMessage(`7`))),
		"a skill without resources":    second(ParseSkill(json.RawMessage(`{"uri":"skill://a/SKILL.md"}`))),
		"a skill's resources a number": second(ParseSkill(json.RawMessage(`{"uri":"skill://a/SKILL.md","resources":3}`))),
		"a skill's resources mistyped": second(ParseSkill(json.RawMessage(`{"uri":"skill://a/SKILL.md","resources":[{"size":"big"}]}`))),
		"contents not an array":        second(DecodeContents(json.RawMessage(`{"contents":{}}`))),
		"a content not an object":      second(DecodeContents(json.RawMessage(`{"contents":[1]}`))),
		"content not an array":         second(ToolContents(json.RawMessage(`{"content":"hi"}`))),
		"a content block not object":   second(ToolContents(json.RawMessage(`{"content":[[]]}`))),
		"a repeated cursor":            &PaginationError{Method: "tools/list", Cursor: "c", Repeated: true, Pages: 2},
		"a broken discover result":     &malformedDiscoverError{err: errors.New("server/discover: the result lists no supportedVersions"), modern: true},
	} {
		if err == nil || !errors.Is(err, ErrProtocolViolation) {
			t.Errorf("%s: %v is not an ErrProtocolViolation", name, err)
		}
		if err != nil && strings.Contains(err.Error(), ErrProtocolViolation.Error()) {
			t.Errorf("%s: %q names the mark in its text", name, err)
		}
	}
	for name, err := range map[string]error{
		"more pages than List follows": &PaginationError{Method: "tools/list", Pages: 10000},
		// Most likely a handshake-era server's answer: Modern.Open
		// reports that server as one.
		"a discover result without supportedVersions": &malformedDiscoverError{err: errors.New("x"), modern: false},
		"the caller's JSON":                           second(ParseObject([]byte(`[`))),
	} {
		if errors.Is(err, ErrProtocolViolation) {
			t.Errorf("%s: %v is an ErrProtocolViolation", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }

// A tasks/get or tasks/cancel result that is not a Task stops the call as
// the server's departure from the protocol; the server's JSON-RPC error
// does not.
func TestProtocolViolationTaskResults(t *testing.T) {
	s, srv, _ := newTestSession(t, Options{})
	ch := make(chan error, 1)
	go func() { _, err := s.GetTask(context.Background(), "t1"); ch <- err }()
	srv.reply(srv.nextRequest("tasks/get"), `[1]`)
	if err := <-ch; err == nil || !errors.Is(err, ErrProtocolViolation) {
		t.Errorf("tasks/get: %v", err)
	}
	go func() { _, err := s.CancelTask(context.Background(), "t1"); ch <- err }()
	srv.reply(srv.nextRequest("tasks/cancel"), `"cancelled"`)
	if err := <-ch; err == nil || !errors.Is(err, ErrProtocolViolation) {
		t.Errorf("tasks/cancel: %v", err)
	}
	go func() { _, err := s.GetTask(context.Background(), "t1"); ch <- err }()
	m := srv.nextRequest("tasks/get")
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"error":{"code":-32602,"message":"no such task"}}`)
	if err := <-ch; err == nil || errors.Is(err, ErrProtocolViolation) {
		t.Errorf("tasks/get refused: %v", err)
	}
}

// A 2026-07-28 task that completes without a result, or a task handle
// that is not a task, is the server's departure from the protocol.
func TestProtocolViolationModernTask(t *testing.T) {
	s, srv, _, _ := newModernSession(t, &Modern{OnNote: func(string) {}}, false, Options{})
	openModern(t, s, srv)
	ch := goCall(context.Background(), s, "tools/call", map[string]any{"name": "job"})
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"task","taskId":"t1","status":"working","pollIntervalMs":1}`)
	srv.reply(srv.nextRequest("tasks/get"), `{"resultType":"complete","taskId":"t1","status":"completed"}`)
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "completed without a result") || !errors.Is(r.err, ErrProtocolViolation) {
		t.Errorf("completed without a result: %v", r.err)
	}
	ch = goCall(context.Background(), s, "tools/call", map[string]any{"name": "job"})
	srv.reply(srv.nextRequest("tools/call"), `{"resultType":"task","status":"working"}`)
	if r := result(t, ch); r.err == nil || !strings.Contains(r.err.Error(), "no taskId") || !errors.Is(r.err, ErrProtocolViolation) {
		t.Errorf("a handle without taskId: %v", r.err)
	}
}

// An answer mcpx cannot read as a message (written on the line of
// another, nested too deep) fails its request as the server's departure
// from the protocol.
func TestProtocolViolationUnreadableAnswer(t *testing.T) {
	s, srv, w := newTestSession(t, Options{})
	ch := make(chan error, 1)
	go func() { _, err := s.GetTask(context.Background(), "t1"); ch <- err }()
	m := srv.nextRequest("tasks/get")
	srv.send(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{}}`)
	if err := <-ch; err == nil || !errors.Is(err, ErrProtocolViolation) || !strings.Contains(err.Error(), "not alone on its line") {
		t.Errorf("an answer sharing its line: %v", err)
	}
	w.expect("not JSON-RPC")
	go func() { _, err := s.GetTask(context.Background(), "t1"); ch <- err }()
	m = srv.nextRequest("tasks/get")
	srv.send(`{"jsonrpc":"2.0","id":` + m.ID.String() + `,"result":{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}}`)
	if err := <-ch; err == nil || !errors.Is(err, ErrProtocolViolation) {
		t.Errorf("an answer nested too deep: %v", err)
	}
	w.expect("deep")
}
