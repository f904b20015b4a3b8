package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Subscriptions of 2026-07-28: subscriptions/listen is one long-lived
// request whose stream carries the change notifications the client opted
// in to (spec 2026-07-28: basic/patterns/subscriptions). It replaces
// resources/subscribe and the HTTP GET stream.

// ListenFilter is the notifications filter of subscriptions/listen
// (spec: "Notification Filter").
type ListenFilter struct {
	ToolsListChanged      bool     `json:"toolsListChanged,omitempty"`
	PromptsListChanged    bool     `json:"promptsListChanged,omitempty"`
	ResourcesListChanged  bool     `json:"resourcesListChanged,omitempty"`
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
}

// Describe lists what the filter asks for, for people.
func (f ListenFilter) Describe() string {
	var parts []string
	if f.ToolsListChanged {
		parts = append(parts, "tools list changes")
	}
	if f.PromptsListChanged {
		parts = append(parts, "prompts list changes")
	}
	if f.ResourcesListChanged {
		parts = append(parts, "resources list changes")
	}
	for _, u := range f.ResourceSubscriptions {
		parts = append(parts, "updates of "+u)
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Missing returns what f asks for that granted does not include.
func (f ListenFilter) Missing(granted ListenFilter) ListenFilter {
	var m ListenFilter
	m.ToolsListChanged = f.ToolsListChanged && !granted.ToolsListChanged
	m.PromptsListChanged = f.PromptsListChanged && !granted.PromptsListChanged
	m.ResourcesListChanged = f.ResourcesListChanged && !granted.ResourcesListChanged
	for _, u := range f.ResourceSubscriptions {
		if !slices.Contains(granted.ResourceSubscriptions, u) {
			m.ResourceSubscriptions = append(m.ResourceSubscriptions, u)
		}
	}
	return m
}

// Empty reports whether the filter asks for nothing.
func (f ListenFilter) Empty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged && len(f.ResourceSubscriptions) == 0
}

// ListenOptions configure Listen.
type ListenOptions struct {
	// OnAck is told each acknowledgement: what the server agreed to honour
	// (a subset of what was asked), with the notification as received.
	OnAck func(granted ListenFilter, m *jsonrpc.Message)
	// OnNote receives what Listen does on its own (re-listening after a
	// drop).
	OnNote func(string)
	// MaxReconnects caps consecutive attempts to listen again after the
	// stream dropped; zero means 5.
	MaxReconnects int
	// ReconnectDelay is the wait before listening again; zero means 1s.
	ReconnectDelay time.Duration
}

// ListenEndedError reports that the server ended a subscription: with a
// result (a graceful end) or with notifications/cancelled.
type ListenEndedError struct {
	// Graceful is true when the server answered subscriptions/listen.
	Graceful bool
	// Reason is the server's reason for a cancellation, if it gave one.
	Reason string
}

func (e *ListenEndedError) Error() string {
	if e.Graceful {
		return "the server ended the subscription (it answered subscriptions/listen)"
	}
	if e.Reason != "" {
		return "the server cancelled the subscription: " + e.Reason
	}
	return "the server cancelled the subscription (notifications/cancelled)"
}

// Listen opens a subscriptions/listen stream with filter and keeps it until
// ctx ends (a normal end: nil). Notifications on the stream go to the
// session's OnNotification like any other. When the stream drops without
// the server ending it, Listen listens again (the server keeps no
// subscription state); when the server ends it, Listen returns a
// *ListenEndedError; when the connection ends, an error wrapping
// ErrServerGone.
func (s *Session) Listen(ctx context.Context, filter ListenFilter, o ListenOptions) error {
	maxRe := o.MaxReconnects
	if maxRe <= 0 {
		maxRe = 5
	}
	delay := o.ReconnectDelay
	if delay <= 0 {
		delay = time.Second
	}
	failures := 0
	for {
		acked, err := s.listenOnce(ctx, filter, o)
		if ctx.Err() != nil {
			return nil
		}
		var sc *ServerCancelledError
		switch {
		case err == nil:
			return &ListenEndedError{Graceful: true}
		case errors.As(err, &sc):
			return &ListenEndedError{Reason: sc.Reason}
		case s.Err() != nil:
			return fmt.Errorf("%w while subscribed: %w", ErrServerGone, s.Err())
		case !errors.Is(err, transport.ErrStreamLost):
			return err
		}
		if acked {
			failures = 0
		}
		failures++
		if failures > maxRe {
			return fmt.Errorf("subscriptions/listen: the stream dropped %d times in a row; giving up: %w", maxRe, err)
		}
		if o.OnNote != nil {
			o.OnNote(fmt.Sprintf("the subscription stream dropped (%v); listening again in %s (attempt %d of %d)", err, delay, failures, maxRe))
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-s.Done():
			t.Stop()
			return fmt.Errorf("%w while subscribed: %w", ErrServerGone, s.Err())
		case <-t.C:
		}
	}
}

// listenOnce runs one subscriptions/listen request to its end. It reports
// whether the server acknowledged it.
func (s *Session) listenOnce(ctx context.Context, filter ListenFilter, o ListenOptions) (acked bool, err error) {
	var idKeyVal atomic.Value // string: the request's idKey
	var ackSeen atomic.Bool
	ackCh := make(chan struct{}, 1)
	remove := s.addNotificationHook(func(m *jsonrpc.Message) bool {
		idKeyStr, _ := idKeyVal.Load().(string)
		if idKeyStr == "" {
			return false
		}
		if sid := subscriptionID(m.Params); sid == "" || (sid != idKeyStr && sid != "s:"+strings.TrimPrefix(idKeyStr, "n:")) {
			return false
		}
		if m.Method != mcp.NotificationSubscriptionsAcknowledged {
			s.checkOnSubscription(m, filter, ackSeen.Load())
			return false
		}
		ackSeen.Store(true)
		var p struct {
			Notifications ListenFilter `json:"notifications"`
		}
		_ = json.Unmarshal(m.Params, &p)
		select {
		case ackCh <- struct{}{}:
		default:
		}
		if o.OnAck != nil {
			o.OnAck(p.Notifications, m)
		}
		return true
	})
	defer remove()
	// (Deferred after remove, so it runs first: no acknowledgement falls
	// between the two.)
	defer func() {
		if k, _ := idKeyVal.Load().(string); k != "" {
			s.endSubscription(k)
		}
	}()
	params := map[string]any{"notifications": filter}
	// The id is known before the request is sent, so the hook can match
	// the acknowledgement that may come before anything else.
	setID := func(c *callConfig) {
		c.onID = func(id jsonrpc.ID) { idKeyVal.Store(id.Key()) }
	}
	_, err = s.Call(ctx, mcp.MethodSubscriptionsListen, params, WithTimeout(-1, -1), setID)
	select {
	case <-ackCh:
		acked = true
	default:
	}
	return acked, err
}

// checkOnSubscription warns about a notification that carries the id of a
// subscription the server must not have sent on it: one before the
// subscription's acknowledgement ("MUST NOT send any notification on the
// subscription before it"), a change notification of a type, or for a
// resource, that the filter did not ask for ("The server MUST NOT send
// notification types the client has not explicitly requested"; spec
// 2026-07-28: basic/patterns/subscriptions), or a request-scoped one
// (log messages and progress belong to the stream of their request, spec
// 2026-07-28: server/utilities/logging, "Per-request log level"). The
// notification is shown all the same, after the warning.
func (s *Session) checkOnSubscription(m *jsonrpc.Message, asked ListenFilter, acked bool) {
	const spec = "spec 2026-07-28: basic/patterns/subscriptions"
	if !acked {
		s.departOnce(context.Background(), "listen early "+m.Method, "the server sent %s on a subscription before acknowledging it (notifications/subscriptions/acknowledged must come first, %s)", jsonrpc.Clip(m.Method), spec)
	}
	var what string
	switch m.Method {
	case mcp.NotificationToolsListChanged:
		if !asked.ToolsListChanged {
			what = "tools list changes"
		}
	case mcp.NotificationPromptsListChanged:
		if !asked.PromptsListChanged {
			what = "prompts list changes"
		}
	case mcp.NotificationResourcesListChanged:
		if !asked.ResourcesListChanged {
			what = "resources list changes"
		}
	case mcp.NotificationResourcesUpdated:
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(m.Params, &p)
		if !slices.Contains(asked.ResourceSubscriptions, p.URI) {
			what = "updates of " + rawjson.Excerpt(marshalRaw(p.URI), 80)
		}
	case mcp.NotificationMessage, mcp.NotificationProgress:
		s.departOnce(context.Background(), "listen scoped "+m.Method, "the server sent %s on a subscription: it belongs on the response stream of the request it relates to, never on a subscriptions/listen stream (spec 2026-07-28: server/utilities/logging, basic/patterns/subscriptions)", m.Method)
		return
	}
	if what != "" {
		s.departOnce(context.Background(), "listen unasked "+m.Method, "the server sent %s on a subscription that did not ask for %s (the server must not send notification types the client has not requested, %s)", m.Method, what, spec)
	}
}

// maxEndedSubs bounds the subscriptions a session remembers as ended.
const maxEndedSubs = 64

// endSubscription remembers that the subscription of request idKey ended,
// so that its acknowledgement, should the server send it only now (it
// was on its way when the subscription was cancelled), is not shown as a
// notification of its own: no one listens for it any more.
func (s *Session) endSubscription(idKey string) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	if len(s.endedSubs) >= maxEndedSubs {
		s.endedSubs = slices.Delete(s.endedSubs, 0, 1)
	}
	s.endedSubs = append(s.endedSubs, idKey)
}

// subscriptionEnded reports whether params carry the id of a
// subscription that ended (see endSubscription).
func (s *Session) subscriptionEnded(params json.RawMessage) bool {
	s.hookMu.Lock()
	none := len(s.endedSubs) == 0
	s.hookMu.Unlock()
	if none {
		return false
	}
	sid := subscriptionID(params)
	if sid == "" {
		return false
	}
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	for _, k := range s.endedSubs {
		if sid == k || sid == "s:"+strings.TrimPrefix(k, "n:") {
			return true
		}
	}
	return false
}

// subscriptionID returns the idKey of params._meta's subscription id, or "".
func subscriptionID(params json.RawMessage) string {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return ""
	}
	v := p.Meta[mcp.MetaSubscriptionID]
	if len(v) == 0 {
		return ""
	}
	return jsonrpc.RawID(v).Key()
}

// listening records that the subscriptions/listen request id is in flight.
func (s *Session) listening(id jsonrpc.ID) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	if s.listens == nil {
		s.listens = map[string]bool{}
	}
	s.listens[id.LooseKey()] = true
}

// listenEnded records that the subscriptions/listen request id ended: the
// latest maxEndedSubs are remembered, as what the server sent on them
// before it knew may still come.
func (s *Session) listenEnded(id jsonrpc.ID) {
	s.hookMu.Lock()
	defer s.hookMu.Unlock()
	delete(s.listens, id.LooseKey())
	if len(s.listened) >= maxEndedSubs {
		s.listened = slices.Delete(s.listened, 0, 1)
	}
	s.listened = append(s.listened, id.LooseKey())
}

// isChange reports whether method is one of the change notifications a
// 2026-07-28 server sends only on a subscription (spec 2026-07-28:
// basic/patterns/subscriptions, "Notification Filter").
func isChange(method string) bool {
	switch method {
	case mcp.NotificationToolsListChanged, mcp.NotificationPromptsListChanged,
		mcp.NotificationResourcesListChanged, mcp.NotificationResourcesUpdated:
		return true
	}
	return false
}

// checkSubscriptionOf warns, once a kind in a session, about a
// notification of a 2026-07-28 server that names a subscription this
// client never opened (its subscriptionId is no subscriptions/listen
// request's: "The value is the JSON-RPC ID of the subscriptions/listen
// request"), and about a change notification that names none: "All
// notifications delivered on the stream carry
// io.modelcontextprotocol/subscriptionId", and outside a stream the
// client asked for no change notifications ("The server MUST NOT send
// notification types the client has not explicitly requested", spec
// 2026-07-28: basic/patterns/subscriptions). On a shared connection (a
// held session's, where other clients' subscriptions exist and are
// another's to judge) and while the era is not known, it says nothing.
// The notification is shown all the same, after the warning.
func (s *Session) checkSubscriptionOf(m *jsonrpc.Message) {
	if !s.speaksModern() {
		return
	}
	if o, ok := s.life.(subscriptionOwner); !ok || !o.ownsSubscriptions() {
		return
	}
	const spec = "spec 2026-07-28: basic/patterns/subscriptions"
	sid := subscriptionOf(m.Params)
	if sid.IsZero() {
		if isChange(m.Method) {
			s.departOnce(context.Background(), "listen none "+m.Method, "the server sent %s without io.modelcontextprotocol/subscriptionId: change notifications come only on a subscriptions/listen stream, and every notification on one carries its subscription's id (%s)", m.Method, spec)
		}
		return
	}
	key := sid.LooseKey()
	s.hookMu.Lock()
	known := s.listens[key] || slices.Contains(s.listened, key)
	s.hookMu.Unlock()
	if !known {
		s.departOnce(context.Background(), "listen unknown "+m.Method, "the server sent %s for subscription %s, which mcpx never opened: a subscription's id is that of the subscriptions/listen request that opened it (%s)", jsonrpc.Clip(m.Method), sid.Excerpt(), spec)
	}
}

// subscriptionOf returns params._meta's subscription id; the zero ID
// when there is none.
func subscriptionOf(params json.RawMessage) jsonrpc.ID {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}
	}
	v := p.Meta[mcp.MetaSubscriptionID]
	if len(v) == 0 {
		return jsonrpc.ID{}
	}
	return jsonrpc.RawID(v)
}
