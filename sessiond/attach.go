package sessiond

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/memhint"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/jsonrpc/peer"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// attach serves one command until it detaches or the session ends; h is
// its hello (the envelope lines it asked for), told the secrets its reply
// handed it.
func (d *Daemon) attach(nc net.Conn, lines *transport.StreamConn, h hello, told []string) {
	label := h.Label
	ctx, cancel := context.WithCancel(d.ctx)
	a := &attachment{
		d: d, nc: nc, lines: lines, label: label, dropped: h.Dropped, notes: h.Notes, secrets: h.Secrets, ctx: ctx, cancel: cancel,
		ready: make(chan struct{}, 1),
		space: make(chan struct{}, 1),
		calls: map[string]context.CancelCauseFunc{},
		asks:  map[string]chan *jsonrpc.Message{},
	}
	a.lastTake.Store(time.Now().UnixNano())
	d.mu.Lock()
	if d.ctx.Err() != nil {
		d.mu.Unlock()
		cancel()
		return
	}
	d.attached[a] = struct{}{}
	d.touch()
	d.mu.Unlock()
	if a.secrets && d.secrets != nil {
		// Those learned between the reply and now, which TellSecret
		// did not hand it yet.
		for _, v := range d.secrets() {
			if !slices.Contains(told, v) {
				a.tellSecret(secretLine(v))
			}
		}
	}
	d.note("attached: %s", orUnnamed(label))
	a.run()
	d.endTasks(a)
	d.releaseSubscriptions(a)
	d.mu.Lock()
	delete(d.attached, a)
	d.touch()
	d.mu.Unlock()
	d.note("detached: %s", orUnnamed(label))
}

func orUnnamed(label string) string {
	if label == "" {
		return "a command"
	}
	return label
}

// attachment is one attached command.
type attachment struct {
	d     *Daemon
	nc    net.Conn
	lines *transport.StreamConn
	label string
	// dropped: the command reads envelope.Dropped (see Daemon.Observe).
	dropped bool
	// notes: the command reads envelope.Note (see Daemon.Tell).
	notes bool
	// secrets: the command reads envelope.Secret (see Daemon.TellSecret).
	secrets bool

	ctx    context.Context // ends when the command detaches
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// queue holds the lines for the writer (qbytes bytes), within
	// queueLen and queueBytes but for a first one of any size; ready is
	// signalled when a line is queued, space when one is taken.
	qmu          sync.Mutex
	queue        [][]byte
	qbytes       int
	ready, space chan struct{}

	// lastTake is when the writer last took a line (UnixNano; the attach
	// to begin with): a full queue the writer still takes from is a
	// command that reads, more slowly than the server sends.
	lastTake atomic.Int64
	// lost counts the notifications dropped for this command since it
	// was last told (see offer and tellLost).
	lost atomic.Int64

	inflight atomic.Int32 // requests forwarded and not answered yet
	lastSeq  atomic.Int64 // Daemon.seq when the latest one started

	mu      sync.Mutex
	calls   map[string]context.CancelCauseFunc // the command's requests in flight, by id key
	asks    map[string]chan *jsonrpc.Message   // server requests the command is to answer, by our id key
	nextAsk int64
	closed  string // why the daemon ends the attachment
}

// run reads the command's frames until it goes away, then cancels what it
// left in flight.
func (a *attachment) run() {
	// A command that stops reading (suspended, or not mcpx) leaves a
	// write blocked in the socket, which no context ends: once the
	// attachment ends, writes get a last second, so that the session can
	// detach it, and end, whatever the command does.
	unblock := context.AfterFunc(a.ctx, func() { _ = a.nc.SetWriteDeadline(time.Now().Add(lastWrite)) })
	defer unblock()
	a.wg.Add(1)
	go a.write()
	for {
		f, err := a.lines.Read(a.ctx)
		var tooLarge *transport.FrameTooLargeError
		if errors.As(err, &tooLarge) {
			// An mcpx command checks its messages against the session's
			// limit before it sends them (Conn.Write); another client is
			// told why it is detached rather than finding the connection
			// reset.
			a.d.note("%s sent a message longer than the session's maximum message size (%s): detached", orUnnamed(a.label), transport.FormatSize(a.d.opts.MaxMessageSize))
			a.end(fmt.Sprintf("the command sent a message longer than the %s the session takes (its maximum message size, set when it opened): it was detached", transport.FormatSize(a.d.opts.MaxMessageSize)))
			a.drain()
			break
		}
		if err != nil {
			break
		}
		env, err := parseEnvelope(f.Data)
		if err != nil || len(env.Frame) == 0 {
			a.d.note("%s sent a line that is not an envelope: detached", orUnnamed(a.label))
			break
		}
		a.handle(env.Frame)
	}
	a.cancel()
	a.wg.Wait()
	a.lines.Close()
	a.nc.Close()
}

// drain reads what the command still sends, for at most lastWrite, once
// the attachment ended with a reason: a socket closed with input unread
// resets the connection, and the command could lose the reason.
func (a *attachment) drain() {
	_ = a.nc.SetReadDeadline(time.Now().Add(lastWrite))
	_, _ = io.Copy(io.Discard, a.nc)
}

// maxInflight bounds the requests one command may have in flight through
// the session (an mcpx command has at most a REPL's --parallel of them): a
// local client that sends requests without reading the answers would
// otherwise grow the session, and the server, without bound.
var maxInflight = 1024

// lastWrite bounds a write to a command once its attachment ended.
const lastWrite = time.Second

// write sends the queued lines; once the attachment ends, the reason, if
// the daemon gave one (not after a write that failed: a line may have
// been cut short, and the reader ends the attachment, see discard).
func (a *attachment) write() {
	defer a.wg.Done()
	for {
		b, ok := a.take()
		if !ok {
			if a.tellLost() {
				continue
			}
			select {
			case <-a.ready:
				continue
			case <-a.ctx.Done():
				a.sayClosed()
				return
			}
		}
		if err := a.lines.Write(a.ctx, transport.Frame{Data: b}); err != nil {
			if errors.Is(err, context.Canceled) {
				a.sayClosed() // nothing of the line was written
				a.cancel()
				return
			}
			a.discard()
			return
		}
		if len(b) >= bigLine {
			// A large answer's memory goes back to the system once it
			// is written (the queue let go of it): a session lives long
			// (see memhint).
			memhint.Free()
		}
	}
}

// discard ends the writing once a write to the command failed: the
// command went away, or its socket broke. What it sent before it went is
// still to be read, and it matters: a command whose timeout expired sends
// notifications/cancelled with its reason, then exits, and the server
// would hear "cancelled by the user" instead if the attachment ended
// first. So the reader ends the attachment, at the end of the command's
// input or within lastWrite, and until then the lines queued for the
// command are let go, so that nothing waits for a room in the queue.
func (a *attachment) discard() {
	_ = a.nc.SetReadDeadline(time.Now().Add(lastWrite))
	for {
		for {
			if _, ok := a.take(); !ok {
				break
			}
		}
		select {
		case <-a.ready:
		case <-a.ctx.Done():
			return
		}
	}
}

// bigLine is the size of a line after whose writing the session hands the
// memory it no longer uses back to the system.
const bigLine = 16 << 20

// put queues line if it fits (see queue) and reports whether it did.
func (a *attachment) put(line []byte) bool {
	a.qmu.Lock()
	fits := len(a.queue) == 0 || (len(a.queue) < queueLen && a.qbytes+len(line) <= queueBytes)
	if fits {
		a.queue = append(a.queue, line)
		a.qbytes += len(line)
	}
	a.qmu.Unlock()
	if fits {
		signal(a.ready)
	}
	return fits
}

// take returns the oldest line queued, if any.
func (a *attachment) take() ([]byte, bool) {
	a.qmu.Lock()
	if len(a.queue) == 0 {
		a.qmu.Unlock()
		return nil, false
	}
	a.lastTake.Store(time.Now().UnixNano())
	b := a.queue[0]
	a.queue[0] = nil
	a.queue = a.queue[1:]
	a.qbytes -= len(b)
	a.qmu.Unlock()
	signal(a.space)
	return b, true
}

// signal wakes the one waiting on ch, if any, without waiting itself.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// sayClosed tells the command why the daemon ended the attachment, if it
// did (bounded: the command may not read any more).
func (a *attachment) sayClosed() {
	a.mu.Lock()
	why := a.closed
	a.mu.Unlock()
	if why == "" {
		return
	}
	_ = a.nc.SetWriteDeadline(time.Now().Add(lastWrite))
	ctx, cancel := context.WithTimeout(context.Background(), lastWrite)
	defer cancel()
	_ = writeJSON(ctx, a.lines, envelope{Closed: why})
}

// end detaches the command, telling it why.
func (a *attachment) end(why string) {
	a.mu.Lock()
	a.closed = why
	a.mu.Unlock()
	a.cancel()
}

// tellSecret queues line, an envelope.Secret, without waiting (it is
// told as the session's connection presents the credential, which holds
// up the session's requests meanwhile). A command whose queue is full
// (one that reads more slowly than the server sends) could not redact
// what follows: it is detached, and told why, rather than shown the
// credential.
func (a *attachment) tellSecret(line []byte) {
	if a.ctx.Err() != nil || a.put(line) {
		return
	}
	a.d.note("%s could not be handed a new credential of the session's at once: detached", orUnnamed(a.label))
	a.end("the session's connection got a new credential while this command's messages waited (it read them more slowly than the server sent them): it was detached, so as not to show it what it could not redact")
}

// secretLine is the envelope.Secret line of value.
func secretLine(value string) []byte {
	line, _ := json.Marshal(envelope{Secret: value})
	return line
}

// send queues a line for the command, waiting while the queue is full.
func (a *attachment) send(frame []byte) {
	line, err := frameLine(frame)
	if err != nil {
		a.d.note("%v", err)
		return
	}
	a.sendLine(line)
}

// sendLine queues an envelope line, waiting for room as send does.
func (a *attachment) sendLine(line []byte) {
	for !a.put(line) {
		select {
		case <-a.space:
		case <-a.ctx.Done():
			return
		}
	}
}

// offer queues a notification line without waiting. When the queue is
// full (queueLen lines or queueBytes), a command that still reads, more
// slowly than the server sends (a server flooding its log), loses the
// notification, and is told how many it lost once there is room
// (tellLost): the answers to its own requests still reach it, where
// detaching it would fail them all. A command whose writer has taken
// nothing for stallLimit stopped reading: it is detached, and told why,
// rather than holding up the session (or its memory).
func (a *attachment) offer(line []byte) {
	if a.ctx.Err() != nil {
		return
	}
	a.tellLost()
	if a.put(line) {
		return
	}
	if time.Since(time.Unix(0, a.lastTake.Load())) < stallLimit {
		a.lost.Add(1)
		return
	}
	a.d.note("%s does not read what the session sends: detached", orUnnamed(a.label))
	a.end(fmt.Sprintf("the command did not read what the server sent for %s (%d messages or %s waiting for it): it was detached", stallLimit, queueLen, transport.FormatSize(queueBytes)))
}

// stallLimit is how long a command with a full queue may take nothing
// before it is detached (see offer). (A variable for the tests.)
var stallLimit = 5 * time.Second

// tellLost queues, if notifications were lost for the command since it
// was last told and there is room, a line that tells it how many
// (envelope.Dropped, to a command that asked for those), and reports
// whether it queued one.
func (a *attachment) tellLost() bool {
	n := a.lost.Swap(0)
	if n == 0 || !a.dropped {
		return false
	}
	line, err := json.Marshal(envelope{Dropped: fmt.Sprintf("dropped %d notification(s) from the server: they came faster than this command could take them (the session holds at most %d messages or %s for a command)",
		n, queueLen, transport.FormatSize(queueBytes))})
	if err != nil {
		return false
	}
	if !a.put(line) {
		a.lost.Add(n)
		return false
	}
	return true
}

// handle dispatches one frame from the command.
func (a *attachment) handle(frame []byte) {
	msgs, _, err := jsonrpc.DecodeFrame(frame)
	if err != nil {
		a.send(jsonrpc.EncodeResponse(jsonrpc.ID{}, nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "mcpx session: " + err.Error()}))
		return
	}
	for _, m := range msgs {
		switch {
		case m.IsRequest():
			a.request(m)
		case m.IsNotification():
			a.notification(m)
		case m.IsResponse():
			a.response(m)
		}
	}
}

// request answers initialize from the held session and forwards the rest.
func (a *attachment) request(m *jsonrpc.Message) {
	sess := a.d.sess.Load()
	if m.Method == mcp.MethodInitialize {
		info := sess.Server()
		if info == nil || info.Era != "legacy" {
			a.send(jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("mcpx session %s speaks protocol revision 2026-07-28, which has no initialize", a.d.opts.Name)}))
			return
		}
		// The server was initialized once, when the session opened.
		a.send(jsonrpc.EncodeResponse(m.ID, info.Raw, nil))
		return
	}
	if n := a.inflight.Load(); n >= int32(maxInflight) {
		// Refused rather than queued: the command's cancellations must
		// still be read, and each request in flight holds memory until
		// it is answered.
		a.send(jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("mcpx session: this command has %d requests in flight, the most a session takes from one command; wait for their answers", n)}))
		return
	}
	var subscribed string // the URI of a resources/subscribe
	switch m.Method {
	case mcp.MethodResourcesSubscribe:
		if subscribed = subscriptionURI(m.Params); subscribed != "" {
			a.d.subscribe(a, subscribed)
		}
	case mcp.MethodResourcesUnsubscribe:
		if uri := subscriptionURI(m.Params); uri != "" && a.d.unsubscribe(a, uri) {
			// Another command attached is still subscribed to it: the
			// server's subscription, the held session's, stays.
			a.send(jsonrpc.EncodeResponse(m.ID, json.RawMessage(`{}`), nil))
			return
		}
	}
	key := m.ID.Key()
	ctx, cancel := context.WithCancelCause(a.ctx)
	a.mu.Lock()
	if _, dup := a.calls[key]; dup {
		a.mu.Unlock()
		cancel(nil)
		a.send(jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "mcpx session: request id " + m.ID.Excerpt() + " is in use"}))
		return
	}
	a.calls[key] = cancel
	a.mu.Unlock()
	a.inflight.Add(1)
	a.lastSeq.Store(a.d.seq.Add(1))
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer func() {
			a.mu.Lock()
			delete(a.calls, key)
			a.mu.Unlock()
			a.inflight.Add(-1)
			cancel(nil)
		}()
		if !a.forward(ctx, sess, m) && subscribed != "" && ctx.Err() == nil {
			// The server refused it. (One cancelled may have been
			// subscribed: it stays counted, and is released with the
			// command.)
			a.d.unsubscribe(a, subscribed)
		}
	}()
}

// forward sends the command's request through the held session and
// passes the outcome back under the command's id; it reports whether the
// server answered with a result.
func (a *attachment) forward(ctx context.Context, sess *inspector.Session, m *jsonrpc.Message) bool {
	// The command keeps its own timeouts and cancels when they expire.
	var sent string
	defer func() {
		if sent != "" {
			a.d.mu.Lock()
			delete(a.d.forwards, sent)
			a.d.mu.Unlock()
		}
	}()
	var ids []jsonrpc.ID // (one unless the request was sent again)
	opts := []inspector.CallOption{inspector.Raw(), inspector.WithTimeout(-1, -1),
		inspector.OnRequestID(func(id jsonrpc.ID) {
			ids = append(ids, id)
			sent = id.LooseKey()
			a.d.mu.Lock()
			a.d.forwards[sent] = forward{a: a, id: m.ID}
			a.d.mu.Unlock()
		})}
	token := progressToken(m.Params)
	task := token != nil && taskAugmented(m.Params)
	switch {
	case task:
		// The token outlives the answer, for the task's life (tasks.go).
		opts = append(opts, inspector.WithTaskProgress(func(p inspector.Progress) { a.progress(token, p) }))
	case token != nil:
		opts = append(opts, inspector.WithProgress(func(p inspector.Progress) { a.progress(token, p) }))
	}
	var params any
	if len(m.Params) > 0 {
		params = m.Params
	}
	res, err := sess.Call(ctx, m.Method, params, opts...)
	if task {
		a.d.followTask(a, sess, ids, res, err)
	}
	a.d.taskAnswered(m.Method, m.Params, res, err)
	var rpcErr *jsonrpc.Error
	var sc *inspector.ServerCancelledError
	var tooLarge *transport.FrameTooLargeError
	if err != nil {
		select {
		case <-sess.Done():
			// The connection to the server ended: the session ends, and
			// tells every command why (the server's last words
			// included), which an error answer here would have
			// pre-empted, as if the server had answered it.
			return false
		default:
		}
	}
	switch {
	case err == nil:
		line, lerr := responseLine(m.ID, res)
		if lerr != nil {
			a.d.note("%v", lerr)
			return true
		}
		a.sendLine(line)
		return true
	case ctx.Err() != nil:
		// The command cancelled it or went away: no answer (spec:
		// basic/utilities/cancellation), the server was told.
	case errors.As(err, &rpcErr):
		a.send(jsonrpc.EncodeResponse(m.ID, nil, rpcErr))
	case errors.As(err, &sc):
		params, _ := json.Marshal(map[string]any{"requestId": m.ID, "reason": sc.Reason})
		a.send(jsonrpc.EncodeNotification(mcp.NotificationCancelled, params))
	case errors.As(err, &tooLarge):
		// The answer was over the session's limit: the command is told
		// so apart from the words (envelope.TooLarge), for the advice a
		// connection of its own would get.
		frame := jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpx session " + a.d.opts.Name + ": " + err.Error()})
		line, merr := json.Marshal(envelope{Frame: frame, TooLarge: tooLarge.Limit})
		if merr != nil {
			a.d.note("%v", merr)
			return false
		}
		a.sendLine(line)
	default:
		frame := jsonrpc.EncodeResponse(m.ID, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpx session " + a.d.opts.Name + ": " + err.Error()})
		kind := failure(err)
		if kind == "" {
			a.send(frame)
			return false
		}
		// The connection to the server failed this request (the session
		// goes on: over HTTP the next may get through): the command is
		// told so apart from the words (envelope.Failed), so that it fails
		// as over a connection of its own, not as if the server had
		// answered with an error.
		line, merr := json.Marshal(envelope{Frame: frame, Failed: kind})
		if merr != nil {
			a.d.note("%v", merr)
			return false
		}
		a.sendLine(line)
	}
	return false
}

// failure says what kind of failure of the connection to the server err
// is (envelope.Failed), "" when it is none.
func failure(err error) string {
	switch {
	case errors.Is(err, transport.ErrUnauthorized):
		return failedAuth
	case errors.Is(err, transport.ErrConnect), errors.Is(err, transport.ErrTransport), errors.Is(err, transport.ErrClosed):
		return failedConnection
	}
	return ""
}

// progressToken returns params._meta.progressToken, nil when absent.
func progressToken(params json.RawMessage) json.RawMessage {
	var p struct {
		Meta struct {
			Token json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Meta.Token) == 0 || string(p.Meta.Token) == "null" {
		return nil
	}
	return p.Meta.Token
}

// progress passes one progress update on under the command's own token.
func (a *attachment) progress(token json.RawMessage, p inspector.Progress) {
	v := map[string]any{"progressToken": token, "progress": p.Progress}
	if p.Total != nil {
		v["total"] = *p.Total
	}
	if p.Message != "" {
		v["message"] = p.Message
	}
	params, _ := json.Marshal(v)
	line, err := frameLine(jsonrpc.EncodeNotification(mcp.NotificationProgress, params))
	if err == nil {
		a.offer(line)
	}
}

// notification handles the command's notifications: initialized was the
// held session's business, cancelled withdraws one of the command's
// requests, the rest go to the server.
func (a *attachment) notification(m *jsonrpc.Message) {
	switch m.Method {
	case mcp.NotificationInitialized:
		return
	case mcp.NotificationCancelled:
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Reason    string          `json:"reason"`
		}
		if json.Unmarshal(m.Params, &p) == nil && len(p.RequestID) > 0 {
			a.mu.Lock()
			cancel := a.calls[jsonrpc.RawID(p.RequestID).Key()]
			a.mu.Unlock()
			if cancel != nil {
				// The held session tells the server, with its own id and
				// the command's reason (a timeout, Ctrl-C).
				cancel(peer.Reason(p.Reason))
			}
		}
		return
	}
	var params any
	if len(m.Params) > 0 {
		params = m.Params
	}
	if err := a.d.sess.Load().Notify(a.ctx, m.Method, params, inspector.Raw()); err != nil {
		a.d.note("passing on %s: %v", m.Method, err)
	}
}

// response delivers the command's answer to a server request.
func (a *attachment) response(m *jsonrpc.Message) {
	a.mu.Lock()
	ch := a.asks[m.ID.Key()]
	delete(a.asks, m.ID.Key())
	a.mu.Unlock()
	if ch != nil {
		ch <- m
	}
}

// ask passes a server request on to the command and waits for its answer.
func (a *attachment) ask(ctx context.Context, req *jsonrpc.Message) (any, error) {
	a.mu.Lock()
	a.nextAsk++
	id := jsonrpc.Int(a.nextAsk)
	ch := make(chan *jsonrpc.Message, 1)
	a.asks[id.Key()] = ch
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		delete(a.asks, id.Key())
		a.mu.Unlock()
	}()
	a.send(jsonrpc.EncodeRequest(id, req.Method, req.Params))
	select {
	case m := <-ch:
		if m.Error != nil {
			return nil, m.Error
		}
		return m.Result, nil
	case <-ctx.Done():
		// The server withdrew its request: so does the session.
		params, _ := json.Marshal(map[string]any{"requestId": id, "reason": "the server cancelled its request"})
		if line, err := frameLine(jsonrpc.EncodeNotification(mcp.NotificationCancelled, params)); err == nil {
			a.offer(line)
		}
		return nil, context.Cause(ctx)
	case <-a.ctx.Done():
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the mcpx command that was to answer %s went away", req.Method)}
	}
}
