package apps

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Method names of the extension (spec "MCP Apps Specific Messages",
// "Standard MCP Messages", "Reserved Messages (Sandbox Proxy)").
const (
	methodInitialize        = "ui/initialize"
	methodInitialized       = "ui/notifications/initialized"
	methodToolInput         = "ui/notifications/tool-input"
	methodToolResult        = "ui/notifications/tool-result"
	methodToolCancelled     = "ui/notifications/tool-cancelled"
	methodTeardown          = "ui/resource-teardown"
	methodRequestTeardown   = "ui/notifications/request-teardown"
	methodSizeChanged       = "ui/notifications/size-changed"
	methodContextChanged    = "ui/notifications/host-context-changed"
	methodOpenLink          = "ui/open-link"
	methodDownloadFile      = "ui/download-file"
	methodMessage           = "ui/message"
	methodUpdateContext     = "ui/update-model-context"
	methodDisplayMode       = "ui/request-display-mode"
	methodSandboxReady      = "ui/notifications/sandbox-proxy-ready"
	methodSandboxResource   = "ui/notifications/sandbox-resource-ready"
	methodToolsCall         = "tools/call"
	methodSampling          = "sampling/createMessage"
	methodResourcesRead     = "resources/read"
	methodLog               = "notifications/message"
	methodToolsListChanged  = "notifications/tools/list_changed"
	methodCancelled         = "notifications/cancelled"
	methodPing              = "ping"
	displayInline           = "inline"
	displayFullscreen       = "fullscreen"
	sandboxInnerPermissions = "allow-scripts allow-same-origin allow-forms"
)

// Of a view's problems (malformed messages, refused requests, floods),
// the program is told this many at once, then one a second: each is a
// line on the terminal, and a view that keeps misbehaving must not fill
// it.
const (
	problemBurst = 20
	problemRate  = 1
)

// A view's sandbox may reload (and be sent the view's HTML again) this
// many times at once, then once every 2 seconds.
const (
	sandboxReloadBurst = 10
	sandboxReloadRate  = 0.5
)

// hostDisplayModes are the display modes the host page offers (spec
// "Display Modes": HostContext.availableDisplayModes).
var hostDisplayModes = []string{displayInline, displayFullscreen}

// View is one tool's UI, shown in the host page inside its sandbox proxy.
// Its methods are safe for concurrent use.
type View struct {
	h      *Host
	info   ViewInfo
	call   Call
	res    resource
	policy Policy
	ctx    context.Context // ends when the view closes: cancels its requests
	cancel context.CancelFunc
	wg     sync.WaitGroup // the view's request handlers
	done   chan struct{}
	inited chan struct{} // closed at the first initialized

	mu            sync.Mutex
	conn          *pageConn // the page showing the view, nil when none
	limiter       bucket
	sandboxReady  bool
	initRequested bool
	initialized   bool
	appModes      []string // the view's availableDisplayModes, nil if undeclared
	mode          string
	outcome       []byte // the tool-result or tool-cancelled notification, once known
	outcomeSent   bool
	nextID        int64
	pending       map[string]chan message
	inflight      map[string]*inflightRequest
	initTimer     *time.Timer
	connectTimer  *time.Timer
	modelContext  json.RawMessage
	askingLink    bool      // a ui/open-link is with Handlers.OpenLink
	askingSave    bool      // a ui/download-file is with Handlers.DownloadFile
	askingSample  bool      // a sampling/createMessage is with Handlers.Sample
	appToolsCap   bool      // the view declared appCapabilities.tools
	appTools      []AppTool // the view's own tools, as last listed
	listingTools  bool      // a tools/list to the view is under way
	relistTools   bool      // list again once it ends (list_changed meanwhile)
	reloads       bucket    // reloads of the sandbox in the same page
	problems      bucket    // problems reported to the program
	problemsLeft  int       // problems not reported since the last one
	floodDropped  int
	floodReported time.Time
	busyRefused   int // requests refused over MaxInFlight, not yet reported
	busyReported  time.Time
	unknown       map[string]bool
	closing       bool
	err           error
}

func newView(h *Host, call Call, name string, res resource) *View {
	ctx, cancel := context.WithCancel(context.Background())
	v := &View{
		h: h, call: call, res: res,
		info:     ViewInfo{ID: token()[:22], Tool: name, ResourceURI: res.uri},
		policy:   buildPolicy(res.csp, res.permissions, []string{h.hostOrigin}),
		ctx:      ctx,
		cancel:   cancel,
		done:     make(chan struct{}),
		inited:   make(chan struct{}),
		limiter:  newBucket(h.opts.RateLimit, h.opts.RateBurst),
		reloads:  newBucket(sandboxReloadRate, sandboxReloadBurst),
		problems: newBucket(problemRate, problemBurst),
		mode:     displayInline,
		pending:  map[string]chan message{},
		inflight: map[string]*inflightRequest{},
		unknown:  map[string]bool{},
	}
	v.policy.Refused = append(v.policy.Refused, res.refusedPermissions...)
	v.policy.Declared, v.policy.ListingError = res.declared, res.listingErr
	return v
}

// Info identifies the view.
func (v *View) Info() ViewInfo { return v.info }

// URL is the host page's address, pointing at this view.
func (v *View) URL() string { return v.h.URL() + "#" + v.info.ID }

// Policy is the CSP and permissions the view runs under.
func (v *View) Policy() Policy { return v.policy }

// Done is closed when the view is closed (torn down or failed).
func (v *View) Done() <-chan struct{} { return v.done }

// Err is why the view failed (wrapping ErrNoPage, ErrNoInitialize, ...),
// or nil: open, or closed normally.
func (v *View) Err() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.err
}

// ModelContext is the last ui/update-model-context params the view sent,
// nil when none (spec: "Each request overwrites the previous context").
func (v *View) ModelContext() json.RawMessage {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.modelContext)
}

// Initialized waits until the view has completed its handshake
// (ui/initialize, then ui/notifications/initialized), and returns nil; or
// the view's error when it failed first (ErrNoPage, ErrNoInitialize), or
// ErrClosed, or ctx's error.
func (v *View) Initialized(ctx context.Context) error {
	select {
	case <-v.inited:
		return nil
	case <-v.done:
		if err := v.Err(); err != nil {
			return err
		}
		return fmt.Errorf("view of %q: %w", v.info.Tool, ErrClosed)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SetResult gives the view the tool's result (a CallToolResult): sent in
// ui/notifications/tool-result once the view is initialized and has its
// tool input (spec "Notifications (Host → View)": tool-input, then
// tool-result). Only the first outcome (SetResult or Cancel) counts.
func (v *View) SetResult(result json.RawMessage) {
	if !json.Valid(result) {
		v.Cancel("the tool's result is not valid JSON")
		return
	}
	v.setOutcome(methodToolResult, result)
}

// Cancel tells the view the tool call did not complete, with reason
// (ui/notifications/tool-cancelled: the call failed or was interrupted).
func (v *View) Cancel(reason string) {
	v.setOutcome(methodToolCancelled, map[string]string{"reason": reason})
}

func (v *View) setOutcome(method string, params any) {
	b, err := encodeNotification(method, params)
	if err != nil {
		b, _ = encodeNotification(methodToolCancelled, map[string]string{"reason": "the tool's result could not be encoded"})
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.outcome != nil || v.closing {
		return
	}
	v.outcome = b
	v.sendOutcomeLocked()
}

// sendOutcomeLocked sends the outcome when the view is ready for it.
func (v *View) sendOutcomeLocked() {
	if v.initialized && v.outcome != nil && !v.outcomeSent && v.conn != nil {
		v.outcomeSent = true
		v.sendLocked(v.outcome)
	}
}

// sendLocked sends a message to the view in the current page. v.mu is
// held, so that the observer sees messages in the order they are sent.
func (v *View) sendLocked(msg []byte) {
	if v.conn == nil {
		return
	}
	v.h.observe(v.info, ToView, msg)
	v.conn.send("rpc", struct {
		View string          `json:"view"`
		Msg  json.RawMessage `json:"msg"`
	}{v.info.ID, msg})
}

func (v *View) notifyLocked(method string, params any) {
	if b, err := encodeNotification(method, params); err == nil {
		v.sendLocked(b)
	}
}

// armConnectTimer fails the view if no page shows it within d. v.mu is
// held, or the view is not yet shared.
func (v *View) armConnectTimer(d time.Duration) {
	if v.connectTimer != nil {
		v.connectTimer.Stop()
	}
	v.connectTimer = time.AfterFunc(d, func() {
		v.fail(fmt.Errorf("%w: no browser opened %s within %v", ErrNoPage, v.h.URL(), d))
	})
}

// viewEvent tells the page about a view to show.
type viewEvent struct {
	ID      string `json:"id"`
	Tool    string `json:"tool"`
	URI     string `json:"uri"`
	Sandbox string `json:"sandbox"`
	Allow   string `json:"allow"`
	Border  *bool  `json:"border"`
	Mode    string `json:"mode"`
	Policy  string `json:"policy"`
}

// attach shows the view in page c, from the start: a new sandbox, a new
// handshake, the tool's input and outcome sent again.
func (v *View) attach(c *pageConn) {
	v.mu.Lock()
	if v.closing || v.conn == c {
		v.mu.Unlock()
		return
	}
	v.resetLocked()
	v.conn = c
	if v.connectTimer != nil {
		v.connectTimer.Stop()
		v.connectTimer = nil
	}
	c.send("view", viewEvent{
		ID: v.info.ID, Tool: v.info.Tool, URI: v.info.ResourceURI,
		Sandbox: v.h.sandboxURL(v.info.ID), Allow: v.policy.Permissions.Allow(),
		Border: v.res.prefersBorder, Mode: v.mode, Policy: v.policy.Header,
	})
	d := v.h.opts.InitTimeout
	v.initTimer = time.AfterFunc(d, func() { v.initTimedOut(c, d) })
	v.mu.Unlock()
	v.h.state(v.info, StateShown)
}

// resetLocked forgets the state of the previous page: its handshake, its
// requests (cancelled) and the host's requests to it (answered by
// nothing).
func (v *View) resetLocked() {
	for _, r := range v.inflight {
		r.cancel()
	}
	clear(v.inflight)
	v.dropPendingLocked()
	if v.initTimer != nil {
		v.initTimer.Stop()
		v.initTimer = nil
	}
	v.sandboxReady, v.initRequested, v.initialized, v.outcomeSent = false, false, false, false
	v.appModes = nil
	v.appToolsCap, v.appTools = false, nil
	v.mode = displayInline
}

// restartLocked starts the view over in its reloaded sandbox in page c:
// the old document's requests are cancelled, the host's requests to it
// answered by nothing, and the new one gets the handshake, the tool's
// input and outcome again, within InitTimeout. The display mode stays:
// the page keeps the frame where it was.
func (v *View) restartLocked(c *pageConn) {
	for _, r := range v.inflight {
		r.cancel()
	}
	clear(v.inflight)
	v.dropPendingLocked()
	v.initRequested, v.initialized, v.outcomeSent = false, false, false
	v.appModes = nil
	v.appToolsCap, v.appTools = false, nil
	if v.initTimer != nil {
		v.initTimer.Stop()
	}
	d := v.h.opts.InitTimeout
	v.initTimer = time.AfterFunc(d, func() { v.initTimedOut(c, d) })
	c.send("state", map[string]string{"view": v.info.ID, "text": "reloaded"})
}

// detach forgets page c when it went away.
func (v *View) detach(c *pageConn) {
	v.mu.Lock()
	if v.conn != c {
		v.mu.Unlock()
		return
	}
	v.resetLocked()
	v.conn = nil
	closing := v.closing
	v.mu.Unlock()
	if !closing {
		v.h.state(v.info, StatePageGone)
	}
}

func (v *View) initTimedOut(c *pageConn, d time.Duration) {
	v.mu.Lock()
	if v.conn != c || v.initialized || v.closing {
		v.mu.Unlock()
		return
	}
	var why string
	switch {
	case !v.sandboxReady:
		why = "its sandbox proxy did not load"
	case !v.initRequested:
		why = "it did not send ui/initialize"
	default:
		why = "it answered ui/initialize but never sent ui/notifications/initialized"
	}
	v.mu.Unlock()
	v.fail(fmt.Errorf("%w within %v: %s", ErrNoInitialize, d, why))
}

// fail closes the view because of err, without a teardown.
func (v *View) fail(err error) {
	v.mu.Lock()
	if v.closing {
		v.mu.Unlock()
		return
	}
	v.closing = true
	v.err = err
	v.mu.Unlock()
	v.h.problem(v.info, err)
	v.finish(err.Error())
}

// Close tears the view down: ui/resource-teardown is sent to an
// initialized view and its answer awaited (bounded by TeardownTimeout and
// ctx; spec "Host SHOULD wait for a response before tearing down the
// resource"), then the page removes the view. Its requests in flight are
// cancelled. A teardown that got no answer in time or an error answer
// returns an error wrapping ErrTeardown (the view is closed all the
// same). Close waits for the view's request handlers, so a Handlers
// function must not call it (it would wait for itself).
func (v *View) Close(ctx context.Context, reason string) error {
	v.mu.Lock()
	if v.closing {
		v.mu.Unlock()
		select {
		case <-v.done:
		case <-ctx.Done():
		}
		return nil
	}
	v.closing = true
	var answer chan message
	conn := v.conn
	if conn != nil && v.initialized {
		v.nextID++
		b, err := encodeRequest(v.nextID, methodTeardown, map[string]string{"reason": reason})
		if err == nil {
			answer = make(chan message, 1)
			v.pending[idKey([]byte(fmt.Sprint(v.nextID)))] = answer
			v.sendLocked(b)
		}
	}
	v.mu.Unlock()
	var err error
	if answer != nil {
		t := time.NewTimer(v.h.opts.TeardownTimeout)
		select {
		case m := <-answer:
			// A view without a teardown handler answers "method not
			// found": it has nothing to save, which is an answer too.
			if m.err != nil && m.err.Code != CodeMethodNotFound {
				err = fmt.Errorf("%w: the view answered ui/resource-teardown with %v", ErrTeardown, m.err)
			}
		case <-t.C:
			err = fmt.Errorf("%w: the view did not answer ui/resource-teardown within %v", ErrTeardown, v.h.opts.TeardownTimeout)
		case <-conn.gone:
		case <-ctx.Done():
			err = fmt.Errorf("%w: %w", ErrTeardown, ctx.Err())
		}
		t.Stop()
		if err != nil {
			v.h.problem(v.info, err)
		}
	}
	v.finish(reason)
	return err
}

// finish ends the view: the page removes it, its requests are cancelled
// and awaited, Done is closed.
func (v *View) finish(reason string) {
	v.mu.Lock()
	for _, t := range []*time.Timer{v.initTimer, v.connectTimer} {
		if t != nil {
			t.Stop()
		}
	}
	if v.conn != nil {
		v.conn.send("closed", map[string]string{"view": v.info.ID, "reason": reason})
	}
	v.conn = nil
	v.mu.Unlock()
	v.cancel()
	v.h.remove(v)
	v.wg.Wait()
	close(v.done)
	v.h.state(v.info, StateClosed)
}

// serveSandbox serves the view's sandbox proxy page with the view's CSP
// (spec "Sandbox proxy", point 5: set as a header, which the view's
// document inherits and cannot change).
func (v *View) serveSandbox(w http.ResponseWriter) {
	var b bytes.Buffer
	if err := sandboxPage().Execute(&b, map[string]string{
		"HostOrigin": v.h.hostOrigin,
		"Script":     "/" + v.h.sandboxToken + "/sandbox.js",
		"Rate":       strconv.FormatFloat(v.h.opts.RateLimit, 'g', -1, 64),
		"Burst":      strconv.Itoa(v.h.opts.RateBurst),
	}); err != nil {
		http.Error(w, "sandbox page", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", v.policy.Header)
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	_, _ = w.Write(b.Bytes())
}

// receive handles one message the page relayed from the view's frame.
func (v *View) receive(c *pageConn, raw json.RawMessage) {
	var m message
	err := fmt.Errorf("%w: %d bytes, more than %d", errMalformed, len(raw), v.h.opts.MaxMessageSize)
	if int64(len(raw)) <= v.h.opts.MaxMessageSize {
		m, err = decodeMessage(raw)
	}
	v.mu.Lock()
	if v.conn != c {
		v.mu.Unlock()
		return
	}
	closing := v.closing
	// Answers to the host's own requests are not limited: the host asked.
	_, awaited := v.pending[idKey(m.id)]
	if !(err == nil && m.isResponse() && awaited) && !v.limiter.allow(time.Now()) {
		v.floodDropped++
		report := time.Since(v.floodReported) >= time.Second
		n := v.floodDropped
		if report {
			v.floodReported, v.floodDropped = time.Now(), 0
		}
		if err == nil && m.isRequest() {
			v.replyErrorLocked(m.id, &Error{Code: CodeRefused, Message: "too many messages: the host refuses them for a while"})
		}
		v.mu.Unlock()
		if report {
			v.problem(fmt.Errorf("%w: refused %d message(s) over %.0f a second", ErrFlood, n, v.h.opts.RateLimit))
		}
		return
	}
	v.mu.Unlock()

	v.h.observe(v.info, FromView, raw)
	if err != nil {
		v.malformed(raw, err)
		return
	}
	switch {
	case closing && !m.isResponse():
		// Only the answer to ui/resource-teardown matters now.
	case m.isResponse():
		v.mu.Lock()
		ch, ok := v.pending[idKey(m.id)]
		delete(v.pending, idKey(m.id))
		v.mu.Unlock()
		if !ok {
			v.problem(fmt.Errorf("%w: a response to id %s, which the host did not send or no longer awaits", ErrMalformed, clip(m.id)))
			return
		}
		ch <- m
	case m.isNotification():
		v.notification(c, m)
	default:
		v.request(c, m)
	}
}

func (v *View) malformed(raw []byte, err error) {
	v.problem(fmt.Errorf("%w: %w", ErrMalformed, err))
	if id := peekRequestID(raw); id != nil {
		v.mu.Lock()
		v.replyErrorLocked(id, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()})
		v.mu.Unlock()
	}
}

func (v *View) replyLocked(id json.RawMessage, result any) {
	if b, err := encodeResult(id, result); err == nil {
		v.sendLocked(b)
	} else {
		v.replyErrorLocked(id, &Error{Code: CodeInternalError, Message: "the host could not encode its answer: " + err.Error()})
	}
}

func (v *View) replyErrorLocked(id json.RawMessage, e *Error) {
	if b, err := encodeError(id, e); err == nil {
		v.sendLocked(b)
	}
}

// notification handles a notification from the view or its sandbox.
func (v *View) notification(c *pageConn, m message) {
	switch m.method {
	case methodSandboxReady:
		// Spec "Sandbox proxy", point 4: the host sends the raw HTML once
		// the sandbox is ready, with the CSP and permissions it declared.
		v.mu.Lock()
		if v.closing {
			v.mu.Unlock()
			return
		}
		if v.sandboxReady {
			// The sandbox loaded again (the person reloaded the frame, or
			// the view its sandbox): a new, empty document, which needs
			// the resource and starts over with ui/initialize. A view
			// that keeps reloading is failed rather than sent its HTML
			// again and again.
			if !v.reloads.allow(time.Now()) {
				v.mu.Unlock()
				v.fail(fmt.Errorf("%w: its sandbox reloaded more than %d times in a row", ErrFlood, sandboxReloadBurst))
				return
			}
			v.restartLocked(c)
		}
		v.sandboxReady = true
		v.notifyLocked(methodSandboxResource, map[string]any{
			"html":        v.res.html,
			"sandbox":     sandboxInnerPermissions,
			"csp":         v.policy.CSP,
			"permissions": v.policy.Permissions,
		})
		v.mu.Unlock()
	case methodInitialized:
		v.mu.Lock()
		first := !v.initialized && v.initRequested
		requested := v.initRequested
		if first {
			v.initialized = true
			if v.initTimer != nil {
				v.initTimer.Stop()
				v.initTimer = nil
			}
			// Spec: tool-input after the handshake, then the outcome.
			v.notifyLocked(methodToolInput, map[string]json.RawMessage{"arguments": v.call.Arguments})
			v.sendOutcomeLocked()
			c.send("state", map[string]string{"view": v.info.ID, "text": "initialized"})
		}
		v.mu.Unlock()
		if first {
			select {
			case <-v.inited:
			default:
				close(v.inited)
			}
			v.h.state(v.info, StateInitialized)
			// Draft spec "App Tool Lifecycle": "Tools become available
			// once the app advertises the tools capability in
			// ui/initialize and the host issues tools/list".
			v.listAppTools()
		} else if !requested {
			v.problem(fmt.Errorf("%w: %s before ui/initialize", ErrMalformed, m.method))
		}
	case methodSizeChanged:
		var p struct {
			Width  *float64 `json:"width"`
			Height *float64 `json:"height"`
		}
		d := dimensions{}
		if json.Unmarshal(m.params, &p) != nil || m.params == nil {
			v.problem(fmt.Errorf("%w: %s params are not {width, height}", ErrMalformed, m.method))
			return
		}
		d.Width, d.Height = p.Width, p.Height
		if !d.valid() {
			v.problem(fmt.Errorf("%w: %s with a size out of range", ErrMalformed, m.method))
			return
		}
		// Spec "Container Dimensions", "Host Behavior": the host updates
		// the iframe to the view's size, which is the view's "up to this
		// maximum height" (and width) the host context gave it: a view
		// cannot grow its frame past what it was told it may have.
		env := v.h.environment()
		v.mu.Lock()
		if v.conn == c {
			if box := v.containerLocked(env); box != nil {
				p.Width, p.Height = atMost(p.Width, box.MaxWidth), atMost(p.Height, box.MaxHeight)
			}
			c.send("size", map[string]any{"view": v.info.ID, "width": p.Width, "height": p.Height})
		}
		v.mu.Unlock()
	case methodLog:
		var p struct {
			Level *string         `json:"level"`
			Data  json.RawMessage `json:"data"`
		}
		if m.params == nil || json.Unmarshal(m.params, &p) != nil || p.Level == nil || p.Data == nil {
			v.problem(fmt.Errorf("%w: %s params lack a level and data", ErrMalformed, m.method))
			return
		}
		if v.h.opts.Handlers.Log != nil {
			v.h.opts.Handlers.Log(v.info, m.params)
		}
	case methodCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if m.params != nil && json.Unmarshal(m.params, &p) == nil && validID(p.RequestID) {
			v.mu.Lock()
			if r, ok := v.inflight[idKey(p.RequestID)]; ok {
				r.cancel()
			}
			v.mu.Unlock()
		}
	case methodToolsListChanged:
		// Draft spec "Standard MCP Messages": "App → Host: App-registered
		// tools changed": listed again, when the view declared tools (one
		// listing at a time; the rate limit bounds a view that repeats
		// it). From a view that declared none it means nothing.
		v.listAppTools()
	case methodRequestTeardown:
		// Not one of the view's goroutines: Close waits for those.
		v.h.goBackground(func() {
			ctx, cancel := context.WithTimeout(context.Background(), v.h.opts.TeardownTimeout+time.Second)
			defer cancel()
			_ = v.Close(ctx, "the view asked to be closed")
		})
	default:
		v.unsupported("ignored the notification", m.method)
	}
}

// atMost is n bounded by max, when both are set.
func atMost(n, max *float64) *float64 {
	if n != nil && max != nil && *n > *max {
		return max
	}
	return n
}

// problem tells the program about a problem with what the view sent,
// unless it was told too many lately (problemBurst, problemRate); the
// number left out is added to the next one told. The view's failures and
// teardown errors are always told (fail, Close). v.mu is not held.
func (v *View) problem(err error) {
	v.mu.Lock()
	ok := v.problems.allow(time.Now())
	left := v.problemsLeft
	if ok {
		v.problemsLeft = 0
	} else {
		v.problemsLeft++
	}
	v.mu.Unlock()
	if !ok {
		return
	}
	if left > 0 {
		err = fmt.Errorf("%w (and %d more problems of this view not shown)", err, left)
	}
	v.h.problem(v.info, err)
}

// unsupported reports, once per method, a method the host does not
// handle.
func (v *View) unsupported(what, method string) {
	v.mu.Lock()
	first := !v.unknown[method]
	if first && len(v.unknown) < 32 {
		v.unknown[method] = true
	}
	v.mu.Unlock()
	if first {
		v.problem(fmt.Errorf("%w: %s %s", ErrUnsupported, what, strconv.Quote(clipString(method, 60))))
	}
}

// inflightRequest is a request of the view's being handled.
type inflightRequest struct{ cancel context.CancelFunc }

// request handles a request from the view in a goroutine of its own (a
// proxied tools/call may take long), bounded by MaxInFlight.
func (v *View) request(c *pageConn, m message) {
	key := idKey(m.id)
	v.mu.Lock()
	if v.conn != c {
		v.mu.Unlock()
		return
	}
	if _, dup := v.inflight[key]; dup {
		v.replyErrorLocked(m.id, &Error{Code: CodeInvalidRequest, Message: "a request with this id is in progress"})
		v.mu.Unlock()
		v.problem(fmt.Errorf("%w: request id %s reused while in progress", ErrMalformed, clip(m.id)))
		return
	}
	if len(v.inflight) >= v.h.opts.MaxInFlight {
		v.replyErrorLocked(m.id, &Error{Code: CodeRefused, Message: fmt.Sprintf("too many requests in progress (at most %d)", v.h.opts.MaxInFlight)})
		// Reported at most once a second, as the rate limit's refusals
		// are: a view that keeps asking must not flood the terminal.
		v.busyRefused++
		n, report := v.busyRefused, time.Since(v.busyReported) >= time.Second
		if report {
			v.busyReported, v.busyRefused = time.Now(), 0
		}
		v.mu.Unlock()
		if report {
			v.problem(fmt.Errorf("%w: refused %d request(s) while %d were in progress", ErrFlood, n, v.h.opts.MaxInFlight))
		}
		return
	}
	ctx, cancel := context.WithCancel(v.ctx)
	req := &inflightRequest{cancel: cancel}
	v.inflight[key] = req
	// Started under the lock that saw the view open, so that Close, which
	// marks it closing under that lock before it waits, waits for it.
	v.wg.Go(func() {
		defer cancel()
		result, rpcErr := v.handle(ctx, m)
		v.mu.Lock()
		defer v.mu.Unlock()
		if v.inflight[key] != req {
			return // the page went away, or the view closed
		}
		delete(v.inflight, key)
		if v.conn != c {
			return
		}
		if rpcErr != nil {
			v.replyErrorLocked(m.id, rpcErr)
		} else {
			v.replyLocked(m.id, result)
		}
	})
	v.mu.Unlock()
}

// handle answers one request of the view's.
func (v *View) handle(ctx context.Context, m message) (any, *Error) {
	if m.method == methodPing {
		return struct{}{}, nil
	}
	if m.method == methodInitialize {
		return v.initialize(m)
	}
	v.mu.Lock()
	ready := v.initRequested
	v.mu.Unlock()
	if !ready {
		return nil, &Error{Code: CodeInvalidRequest, Message: m.method + " before ui/initialize"}
	}
	switch m.method {
	case methodToolsCall:
		return v.callTool(ctx, m.params)
	case methodResourcesRead:
		var p struct {
			URI string `json:"uri"`
		}
		if m.params == nil || json.Unmarshal(m.params, &p) != nil || p.URI == "" {
			return nil, &Error{Code: CodeInvalidParams, Message: "resources/read needs a uri"}
		}
		result, err := v.h.opts.Backend.ReadResource(ctx, p.URI)
		if err != nil {
			return nil, asError(err)
		}
		return json.RawMessage(result), nil
	case methodOpenLink:
		return v.openLink(ctx, m.params)
	case methodDownloadFile:
		return v.downloadFile(ctx, m.params)
	case methodSampling:
		return v.sample(ctx, m.params)
	case methodMessage:
		return v.deliver(ctx, m, v.h.opts.Handlers.Message, "Message sending denied")
	case methodUpdateContext:
		if m.params == nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid content format: no params"}
		}
		var p struct {
			Content           *[]json.RawMessage `json:"content"`
			StructuredContent *map[string]any    `json:"structuredContent"`
		}
		if json.Unmarshal(m.params, &p) != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "Invalid content format: content must be an array, structuredContent an object"}
		}
		if h := v.h.opts.Handlers.ModelContext; h != nil {
			if err := h(ctx, v.info, m.params); err != nil {
				return nil, refusal("Context update denied", err)
			}
		}
		v.mu.Lock()
		v.modelContext = slices.Clone(m.params)
		v.mu.Unlock()
		return struct{}{}, nil
	case methodDisplayMode:
		return v.displayMode(m.params)
	}
	v.unsupported("answered \"method not found\" to", m.method)
	return nil, &Error{Code: CodeMethodNotFound, Message: "the host does not handle " + m.method}
}

// initialize answers ui/initialize with the host's info, capabilities and
// context (spec "Host Context in McpUiInitializeResult", "Host
// Capabilities").
func (v *View) initialize(m message) (any, *Error) {
	var p struct {
		ProtocolVersion string `json:"protocolVersion"`
		AppCapabilities struct {
			AvailableDisplayModes []string        `json:"availableDisplayModes"`
			Tools                 json.RawMessage `json:"tools"`
		} `json:"appCapabilities"`
	}
	if m.params == nil || json.Unmarshal(m.params, &p) != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "ui/initialize params must be an object with protocolVersion, appInfo and appCapabilities"}
	}
	version := ProtocolVersion
	if slices.Contains(knownVersions, p.ProtocolVersion) {
		version = p.ProtocolVersion
	}
	env := v.h.environment()
	v.mu.Lock()
	v.initRequested = true
	v.appModes = p.AppCapabilities.AvailableDisplayModes
	// Draft spec "App Capabilities in ui/initialize": tools, "App exposes
	// MCP-style tools that the host can call".
	v.appToolsCap = len(p.AppCapabilities.Tools) > 0 && p.AppCapabilities.Tools[0] == '{'
	hctx := v.hostContextLocked(env)
	v.mu.Unlock()
	return map[string]any{
		"protocolVersion":  version,
		"hostInfo":         v.h.opts.HostInfo,
		"hostCapabilities": v.hostCapabilities(),
		"hostContext":      hctx,
	}, nil
}

func (v *View) hostCapabilities() map[string]any {
	content := map[string]struct{}{"text": {}, "image": {}, "audio": {}, "resource": {}, "resourceLink": {}}
	caps := map[string]any{
		"serverTools":     struct{}{},
		"serverResources": struct{}{},
		"logging":         struct{}{},
		"sandbox": map[string]any{
			"permissions": v.policy.Permissions,
			"csp":         v.policy.CSP,
		},
		"updateModelContext": map[string]struct{}{"text": {}, "image": {}, "audio": {}, "resource": {}, "resourceLink": {}, "structuredContent": {}},
	}
	if v.h.opts.Handlers.OpenLink != nil {
		caps["openLinks"] = struct{}{}
	}
	// Draft spec "Host Capabilities": downloadFile, "Host supports file
	// downloads via ui/download-file" (the ext-apps SDK's App.downloadFile
	// is offered to views where a host declares it).
	if v.h.opts.Handlers.DownloadFile != nil {
		caps["downloadFile"] = struct{}{}
	}
	if v.h.opts.Handlers.Message != nil {
		caps["message"] = content
	}
	// Draft spec "Host Capabilities": sampling, "Host supports LLM
	// sampling (sampling/createMessage) from the view", with tools ("tool
	// use via tools and toolChoice params (SEP-1577)"), only when the
	// program answers it.
	if v.h.opts.Handlers.Sample != nil {
		caps["sampling"] = map[string]any{"tools": struct{}{}}
	}
	return caps
}

func (v *View) hostContextLocked(env pageEnv) map[string]any {
	hc := map[string]any{
		"theme":                 v.h.theme(env),
		"displayMode":           v.mode,
		"availableDisplayModes": hostDisplayModes,
		"platform":              "web",
		"userAgent":             v.h.opts.HostInfo.Name + "/" + v.h.opts.HostInfo.Version,
	}
	tool := map[string]any{"tool": json.RawMessage(v.call.Tool)}
	if v.call.RequestID != nil && validID(v.call.RequestID) {
		tool["id"] = json.RawMessage(v.call.RequestID)
	}
	hc["toolInfo"] = tool
	if len(v.h.opts.Styles) > 0 && json.Valid(v.h.opts.Styles) {
		hc["styles"] = json.RawMessage(v.h.opts.Styles)
	}
	if d := v.containerLocked(env); d != nil {
		hc["containerDimensions"] = d
	}
	locale, tz := v.h.opts.Locale, v.h.opts.TimeZone
	if locale == "" {
		locale = env.Locale
	}
	if tz == "" {
		tz = env.TimeZone
	}
	if locale != "" {
		hc["locale"] = locale
	}
	if tz != "" {
		hc["timeZone"] = tz
	}
	return hc
}

// containerLocked is the space of the view in its display mode.
func (v *View) containerLocked(env pageEnv) *dimensions {
	if v.mode == displayFullscreen {
		return env.Fullscreen
	}
	return env.Inline
}

// envChanged sends initialized views the host context fields that changed
// (spec "ui/notifications/host-context-changed": partial updates).
func (v *View) envChanged(old, e pageEnv) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.initialized {
		return
	}
	changed := map[string]any{}
	if t := v.h.theme(e); t != v.h.theme(old) {
		changed["theme"] = t
	}
	if d, od := v.containerLocked(e), v.containerLocked(old); d != nil && !reflect.DeepEqual(d, od) {
		changed["containerDimensions"] = d
	}
	if len(changed) > 0 {
		v.notifyLocked(methodContextChanged, changed)
	}
}

// callTool proxies the view's tools/call to the server, only for a tool
// of this server whose visibility includes "app" (spec "Visibility":
// "Host MUST reject tools/call requests from apps for tools that don't
// include "app" in visibility").
//
// The server gets the params the host checked, re-encoded from what the
// host read, never the view's text: JSON parsers disagree on a member
// given twice (the first or the last wins) and on case (encoding/json
// matches "NAME" to name, a JavaScript or Python server does not), so a
// view that sent {"name":"secret","NAME":"refresh"} would have the host
// check one tool and the server call another. Members whose names differ
// from the ones the host reads (name, arguments, _meta) only by case are
// refused as ambiguous.
func (v *View) callTool(ctx context.Context, params json.RawMessage) (any, *Error) {
	var members map[string]json.RawMessage
	if params == nil || json.Unmarshal(params, &members) != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "tools/call needs a tool name"}
	}
	for k := range members {
		for _, known := range []string{"name", "arguments", "_meta"} {
			if k != known && strings.EqualFold(k, known) {
				v.problem(fmt.Errorf("%w: tools/call params with a member %q besides %q", ErrRefused, clipString(k, 40), known))
				return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("tools/call params have a member %q, which is ambiguous with %q", k, known)}
			}
		}
	}
	var name string
	if json.Unmarshal(members["name"], &name) != nil || name == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "tools/call needs a tool name"}
	}
	if a, ok := members["arguments"]; ok && a[0] != '{' && string(a) != "null" {
		return nil, &Error{Code: CodeInvalidParams, Message: "tools/call arguments must be an object"}
	}
	tools, err := v.h.opts.Backend.ListTools(ctx)
	if err != nil {
		return nil, &Error{Code: CodeInternalError, Message: "the host could not list the server's tools: " + err.Error()}
	}
	var ui ToolUI
	found := false
	for _, t := range tools {
		if toolName(t) == name {
			found = true
			ui, err = ParseToolUI(t)
			if err != nil {
				ui = ToolUI{Visibility: []string{}}
			}
			break
		}
	}
	if !found {
		v.problem(fmt.Errorf("%w: tools/call of %q, which the server does not list", ErrRefused, clipString(name, 100)))
		return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
	}
	if !ui.VisibleTo(VisibleToApp) {
		v.problem(fmt.Errorf("%w: tools/call of %q, whose visibility %q does not include %q", ErrRefused, name, ui.Visibility, VisibleToApp))
		return nil, &Error{Code: CodeRefused, Message: fmt.Sprintf("tool %q is not callable by apps (its visibility does not include %q)", name, VisibleToApp)}
	}
	// The name as the host read it (a lone surrogate escape, say, decoded
	// as U+FFFD), so that the server is asked for the tool checked.
	if members["name"], err = marshal(name); err != nil {
		return nil, &Error{Code: CodeInternalError, Message: "the host could not encode the tool name"}
	}
	withoutProgressToken(members)
	forward, err := marshal(members)
	if err != nil {
		return nil, &Error{Code: CodeInternalError, Message: "the host could not encode the call: " + err.Error()}
	}
	result, err := v.h.opts.Backend.CallTool(ctx, forward)
	if err != nil {
		return nil, asError(err)
	}
	return json.RawMessage(result), nil
}

// withoutProgressToken removes _meta.progressToken (however cased: a
// server decoding with encoding/json would take "PROGRESSTOKEN" for it)
// from a view's request params: the host does not relay progress to
// views, and the view's token must not collide with the session's own.
func withoutProgressToken(params map[string]json.RawMessage) {
	var meta map[string]json.RawMessage
	if json.Unmarshal(params["_meta"], &meta) != nil || meta == nil {
		return
	}
	n := len(meta)
	maps.DeleteFunc(meta, func(k string, _ json.RawMessage) bool { return strings.EqualFold(k, "progressToken") })
	switch {
	case len(meta) == n:
	case len(meta) == 0:
		delete(params, "_meta")
	default:
		if b, err := marshal(meta); err == nil {
			params["_meta"] = b
		}
	}
}

// maxLinkLength bounds the URL of a ui/open-link: the person is shown
// the whole URL before it is opened, which a longer one makes unreadable
// (a view can pad a link to hide where it goes), and a browser is
// started with it as an argument, which the system bounds (128 KiB on
// Linux).
const maxLinkLength = 8 << 10

// openLink asks the person, through Handlers.OpenLink, to open an http or
// https URL (spec "ui/open-link").
func (v *View) openLink(ctx context.Context, params json.RawMessage) (any, *Error) {
	var p struct {
		URL string `json:"url"`
	}
	if params == nil || json.Unmarshal(params, &p) != nil || p.URL == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid URL: ui/open-link needs a url"}
	}
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		strings.ContainsFunc(p.URL, func(c rune) bool { return c < ' ' || c == 0x7f }) {
		v.problem(fmt.Errorf("%w: ui/open-link of %q, not an http or https URL", ErrRefused, clipString(p.URL, 200)))
		return nil, &Error{Code: CodeRefused, Message: "Invalid URL: only http and https links are opened"}
	}
	if len(p.URL) > maxLinkLength {
		v.problem(fmt.Errorf("%w: ui/open-link of a URL of %d bytes (more than %d): %q", ErrRefused, len(p.URL), maxLinkLength, clipString(p.URL, 200)))
		return nil, &Error{Code: CodeRefused, Message: fmt.Sprintf("Invalid URL: longer than %d bytes", maxLinkLength)}
	}
	open := v.h.opts.Handlers.OpenLink
	if open == nil {
		return nil, &Error{Code: CodeRefused, Message: "Policy violation: this host does not open links"}
	}
	// One question at a time: the person answers each link in turn, and
	// a view must not queue up questions faster than they can say no.
	release, ok := v.claimQuestion(&v.askingLink)
	if !ok {
		v.problem(fmt.Errorf("%w: ui/open-link of %q while the person is still asked about another link", ErrRefused, clipString(p.URL, 200)))
		return nil, &Error{Code: CodeRefused, Message: "Link opening denied: the user is still asked about another link"}
	}
	defer release()
	if err := open(ctx, v.info, u.String()); err != nil {
		return nil, refusal("Link opening denied by user", err)
	}
	return struct{}{}, nil
}

// downloadFile asks the person, through Handlers.DownloadFile, to save
// the files of a ui/download-file (draft spec "ui/download-file": "Host
// SHOULD show a confirmation dialog before initiating the download",
// "MAY reject the download based on security policy, file size
// limits"). What the host refuses by itself (a resource link, more than
// MaxDownloadSize bytes, more than maxDownloadFiles files) is refused
// before the person is asked, and reported. The answers are the draft's:
// an empty result, or error -32000 "Download denied by user", "Invalid
// content" or "Policy violation", and "Download failed" when the files
// could not be saved (why is for the person, not the view: it would
// tell the view where the person's files are).
func (v *View) downloadFile(ctx context.Context, params json.RawMessage) (any, *Error) {
	save := v.h.opts.Handlers.DownloadFile
	if save == nil {
		return nil, &Error{Code: CodeRefused, Message: "Policy violation: this host does not download files"}
	}
	files, e := parseDownload(params, v.h.opts.MaxDownloadSize)
	if e != nil {
		v.problem(fmt.Errorf("%w: ui/download-file: %s", ErrRefused, e.Message))
		return nil, e
	}
	// One question at a time, as for links.
	release, ok := v.claimQuestion(&v.askingSave)
	if !ok {
		v.problem(fmt.Errorf("%w: ui/download-file while the person is still asked about another download", ErrRefused))
		return nil, &Error{Code: CodeRefused, Message: "Download denied: the user is still asked about another download"}
	}
	defer release()
	if err := save(ctx, v.info, files); err != nil {
		var rpc *Error
		switch {
		case errors.As(err, &rpc):
			return nil, rpc
		case errors.Is(err, ErrDenied):
			return nil, &Error{Code: CodeRefused, Message: "Download denied by user"}
		}
		return nil, &Error{Code: CodeRefused, Message: "Download failed: the host could not save the file"}
	}
	return struct{}{}, nil
}

// sample hands a view's sampling/createMessage to Handlers.Sample (draft
// spec "Standard MCP Messages", "Sampling": "The host ... SHOULD apply
// rate limiting, cost controls, and user approval"): a request whose
// params are not an object with messages is refused before the person
// is asked, and a view asks one question at a time.
func (v *View) sample(ctx context.Context, params json.RawMessage) (any, *Error) {
	h := v.h.opts.Handlers.Sample
	if h == nil {
		v.unsupported("answered \"method not found\" to", methodSampling)
		return nil, &Error{Code: CodeMethodNotFound, Message: "the host does not handle sampling/createMessage (it did not declare hostCapabilities.sampling)"}
	}
	var p struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if params == nil || json.Unmarshal(params, &p) != nil || p.Messages == nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "sampling/createMessage params must be an object with messages, an array"}
	}
	// One question at a time, as for links and downloads.
	release, ok := v.claimQuestion(&v.askingSample)
	if !ok {
		v.problem(fmt.Errorf("%w: sampling/createMessage while the person is still asked about another of the view's", ErrRefused))
		return nil, &Error{Code: CodeRefused, Message: "Sampling denied: the user is still asked about another request of this view"}
	}
	defer release()
	result, err := h(ctx, v.info, params)
	if err != nil {
		return nil, asError(err)
	}
	if !json.Valid(result) || len(bytes.TrimSpace(result)) == 0 || bytes.TrimSpace(result)[0] != '{' {
		return nil, &Error{Code: CodeInternalError, Message: "the host's answer is not a CreateMessageResult object"}
	}
	return json.RawMessage(result), nil
}

// claimQuestion takes asking, one of the view's flags of a question
// with the person (a link, a download, a sampling request), so that the
// view asks one of each kind at a time: false when it is taken already.
// release gives it back once the person answered.
func (v *View) claimQuestion(asking *bool) (release func(), ok bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if *asking {
		return nil, false
	}
	*asking = true
	return func() {
		v.mu.Lock()
		*asking = false
		v.mu.Unlock()
	}, true
}

// deliver hands a ui/message to its handler.
func (v *View) deliver(ctx context.Context, m message, h func(context.Context, ViewInfo, json.RawMessage) error, denied string) (any, *Error) {
	var p struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if m.params == nil || json.Unmarshal(m.params, &p) != nil || p.Role != "user" || len(p.Content) == 0 ||
		p.Content[0] != '[' && p.Content[0] != '{' {
		return nil, &Error{Code: CodeInvalidParams, Message: "Invalid message format: role must be \"user\" and content a content block or an array of them"}
	}
	if h == nil {
		return nil, &Error{Code: CodeRefused, Message: denied}
	}
	if err := h(ctx, v.info, m.params); err != nil {
		return nil, refusal(denied, err)
	}
	return struct{}{}, nil
}

func refusal(message string, err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if !errors.Is(err, ErrDenied) {
		message += ": " + err.Error()
	}
	return &Error{Code: CodeRefused, Message: message}
}

// displayMode honours ui/request-display-mode for modes the host offers
// and the view declared (spec "Display Modes", "Requirements" for the
// host), answering the resulting mode.
func (v *View) displayMode(params json.RawMessage) (any, *Error) {
	var p struct {
		Mode string `json:"mode"`
	}
	if params == nil || json.Unmarshal(params, &p) != nil || p.Mode == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "ui/request-display-mode needs a mode"}
	}
	env := v.h.environment()
	v.mu.Lock()
	defer v.mu.Unlock()
	if slices.Contains(hostDisplayModes, p.Mode) && (v.appModes == nil || slices.Contains(v.appModes, p.Mode)) {
		v.switchModeLocked(p.Mode, env)
	}
	return map[string]string{"mode": v.mode}, nil
}

// setMode is a display mode the person chose in the page (leaving full
// screen): the view is told in ui/notifications/host-context-changed.
func (v *View) setMode(mode string) {
	if !slices.Contains(hostDisplayModes, mode) {
		return
	}
	env := v.h.environment()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.switchModeLocked(mode, env)
}

func (v *View) switchModeLocked(mode string, env pageEnv) {
	if mode == v.mode {
		return
	}
	v.mode = mode
	if v.conn != nil {
		v.conn.send("mode", map[string]string{"view": v.info.ID, "mode": mode})
	}
	if v.initialized {
		changed := map[string]any{"displayMode": mode}
		if d := v.containerLocked(env); d != nil {
			changed["containerDimensions"] = d
		}
		v.notifyLocked(methodContextChanged, changed)
	}
}
