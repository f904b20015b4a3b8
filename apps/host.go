package apps

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/internal/listenguard"
)

// Backend is what the host needs from the MCP session with the server
// whose views it shows. The host proxies views' tools/call and
// resources/read through it (spec "Standard MCP Messages"; "Sandbox
// proxy", point 8) and reads the views' resources with it.
type Backend interface {
	// ListTools returns the server's tools as the server lists them, each
	// a Tool object with its _meta. The host calls it for every tools/call
	// a view sends, to check the tool's visibility: implementations
	// should answer from a cache kept up to date by list_changed.
	ListTools(ctx context.Context) ([]json.RawMessage, error)
	// CallTool sends tools/call with params and returns the result. An
	// error that is or wraps an *Error reaches the view as that error.
	CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error)
	// ReadResource sends resources/read for uri and returns the result.
	ReadResource(ctx context.Context, uri string) (json.RawMessage, error)
	// ListedResource returns uri's entry in the server's resources/list
	// (a Resource object with its _meta), nil when the server does not
	// list it. The host asks only when the view's resources/read content
	// item declares no _meta.ui: the entry's _meta.ui is then the view's
	// declaration (the ext-apps SDK puts registerAppResource's _meta.ui
	// there, "a listing-level fallback" to the content item's). An error
	// (a server without resources/list, a listing that failed) leaves the
	// view with the spec's restrictive default, as a server that declares
	// nothing. Implementations should answer from a cache of the list,
	// kept up to date by list_changed, as for ListTools.
	ListedResource(ctx context.Context, uri string) (json.RawMessage, error)
}

// Implementation names the host in ui/initialize (hostInfo).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Direction says which way a message went between the host and a view.
type Direction int

const (
	// ToView is a message the host sent to a view (or its sandbox proxy).
	ToView Direction = iota + 1
	// FromView is a message the host received from a view (or its
	// sandbox proxy), as received, malformed ones included.
	FromView
)

func (d Direction) String() string {
	switch d {
	case ToView:
		return "host→view"
	case FromView:
		return "view→host"
	}
	return "Direction(" + strconv.Itoa(int(d)) + ")"
}

// WireMessage is one host↔view message, for --wire and for recording.
type WireMessage struct {
	View      ViewInfo
	Direction Direction
	// Raw is the message's JSON text exactly as sent or received.
	Raw  []byte
	Time time.Time
}

// ViewInfo identifies a view to the program running the host.
type ViewInfo struct {
	// ID is the view's identifier, unique in the host (and unguessable:
	// it is part of the view's sandbox URL).
	ID string
	// Tool is the name of the tool whose view it is.
	Tool string
	// ResourceURI is the view's ui:// resource.
	ResourceURI string
}

// State is a stage of a view's life, reported to Handlers.State.
type State int

const (
	// StateShown: a host page received the view and is loading it.
	StateShown State = iota + 1
	// StateInitialized: the view completed ui/initialize and
	// ui/notifications/initialized.
	StateInitialized
	// StatePageGone: the page showing the view went away (closed or
	// reloaded); the view comes back when a page connects again.
	StatePageGone
	// StateClosed: the view was torn down or failed; it is gone.
	StateClosed
)

func (s State) String() string {
	switch s {
	case StateShown:
		return "shown"
	case StateInitialized:
		return "initialized"
	case StatePageGone:
		return "page gone"
	case StateClosed:
		return "closed"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// Handlers hand what views ask for to the program running the host (the
// CLI shows or asks in the terminal). Every field is optional; each is
// called from the host's goroutines, and may be called concurrently, for
// one view too: a view's requests are handled in parallel (up to
// MaxInFlight), so Message and ModelContext calls may overlap. OpenLink
// is called for one link of a view at a time.
type Handlers struct {
	// Log receives the params of a view's notifications/message (level,
	// logger, data), to be shown like a server's log message.
	Log func(v ViewInfo, params json.RawMessage)
	// Message receives the params of ui/message (role, content): what the
	// app asks the host to say in the conversation. An error refuses it;
	// nil Message refuses every one.
	Message func(ctx context.Context, v ViewInfo, params json.RawMessage) error
	// ModelContext receives the params of ui/update-model-context
	// (content, structuredContent): what the app asks the host to
	// remember for the model. An error refuses it; nil accepts and keeps
	// it (View.ModelContext).
	ModelContext func(ctx context.Context, v ViewInfo, params json.RawMessage) error
	// OpenLink asks the person whether to open url (http or https,
	// checked), and opens it; an error refuses (return one wrapping
	// ErrDenied when the person said no). Nil: the host does not offer
	// openLinks and refuses every ui/open-link. It must return when ctx
	// ends.
	OpenLink func(ctx context.Context, v ViewInfo, url string) error
	// DownloadFile asks the person whether to save the files a view
	// asks the host to download (ui/download-file, draft spec: checked,
	// decoded, their names sanitised), and saves them (SaveDownload does,
	// into a directory the person chose); an error refuses (return one
	// wrapping ErrDenied when the person said no: the view is told
	// "Download denied by user"; any other reaches the view only as
	// "Download failed", the program telling the person why). Nil: the
	// host does not offer downloadFile and refuses every
	// ui/download-file. It is called for one download of a view at a
	// time, and must return when ctx ends.
	DownloadFile func(ctx context.Context, v ViewInfo, files []Download) error
	// Sample answers a view's sampling/createMessage (draft spec
	// "Standard MCP Messages", "Sampling": a CreateMessageRequest's
	// params, tools and toolChoice included) with a CreateMessageResult,
	// as the program answers a server's: the person asked, declined by
	// policy, or a reply file. It must tell the person the request is
	// the view's. An error refuses (one that is or wraps an *Error
	// reaches the view as that error). Nil: the host does not declare
	// sampling and refuses every sampling/createMessage; set, it
	// declares sampling with tools, so Sample must take a request that
	// offers tools. It is called for one request of a view at a time,
	// and must return when ctx ends.
	Sample func(ctx context.Context, v ViewInfo, params json.RawMessage) (json.RawMessage, error)
	// ViewTools is told the tools a view offers of its own (draft spec
	// "App-Provided Tools"), once listed after its initialization and
	// whenever the list changes (notifications/tools/list_changed, then
	// tools/list); an empty list when it offers none any more. Only views
	// that declare appCapabilities.tools are listed. View.CallTool calls
	// one.
	ViewTools func(v ViewInfo, tools []AppTool)
	// Problem is told what went wrong with a view: malformed or refused
	// messages, floods, timeouts, failed teardowns. The error wraps one
	// of the Err* values of this package.
	Problem func(v ViewInfo, err error)
	// State is told when a view's state changes.
	State func(v ViewInfo, s State)
}

// Errors reported to Handlers.Problem and returned by View methods,
// matched with errors.Is.
var (
	// ErrMalformed: a view sent something that is not a valid message.
	ErrMalformed = errors.New("malformed message from the view")
	// ErrFlood: a view sent more messages than the host accepts; the
	// excess was refused.
	ErrFlood = errors.New("the view sends too many messages")
	// ErrRefused: the host refused a view's request by policy (a tool not
	// visible to apps, a link the person did not open, ...).
	ErrRefused = errors.New("refused the view's request")
	// ErrUnsupported: a view sent a request or notification the host does
	// not handle (answered "method not found", or ignored).
	ErrUnsupported = errors.New("the host does not handle this method")
	// ErrNoPage: no host page connected to show the view in time.
	ErrNoPage = errors.New("the host page was not opened")
	// ErrNoInitialize: the view did not complete ui/initialize in time.
	ErrNoInitialize = errors.New("the view did not initialize")
	// ErrTeardown: the view did not answer ui/resource-teardown in time,
	// or answered with an error.
	ErrTeardown = errors.New("the view's teardown did not complete")
	// ErrClosed: the view or the host is closed.
	ErrClosed = errors.New("closed")
	// ErrDenied is what Handlers.OpenLink, Handlers.DownloadFile and
	// Handlers.Message wrap when the person refused.
	ErrDenied = errors.New("denied by the user")
)

// Options configure NewHost. Backend is required.
type Options struct {
	Backend Backend
	// HostInfo names the host (default mcpx, version "dev").
	HostInfo Implementation
	// Theme is "light" or "dark" (the host context's theme: the CLI's
	// terminal or --ui-theme); "" follows the browser's preference.
	Theme string
	// Styles is the host context's styles object (CSS variables and
	// fonts), nil for none.
	Styles json.RawMessage
	// Locale (BCP 47) and TimeZone (IANA) of the host context; "" takes
	// the browser's.
	Locale, TimeZone string
	Handlers         Handlers
	// Observer is told every host↔view message, in order, one call at a
	// time. It must not call back into the Host or its views.
	Observer func(WireMessage)
	// ConnectTimeout bounds the wait for a host page to connect after a
	// view is opened while none is: 0 means a minute, a negative value no
	// limit (a person opening the URL by hand). A page that goes away
	// later does not end its views.
	ConnectTimeout time.Duration
	// InitTimeout bounds the time from a page receiving a view to the
	// view completing ui/initialize (default 20s).
	InitTimeout time.Duration
	// TeardownTimeout bounds the wait for a view's answer to
	// ui/resource-teardown (default 3s).
	TeardownTimeout time.Duration
	// MaxMessageSize bounds one message from a view (default 4 MiB).
	MaxMessageSize int64
	// RateLimit is the number of messages a second a view may send on
	// average (default 50), RateBurst how many at once (default 200).
	// The view's sandbox and the host page apply them to a view's
	// notifications too, dropping those over them before they are
	// carried to mcpx (and telling how many).
	RateLimit float64
	RateBurst int
	// MaxInFlight bounds a view's requests being handled at once
	// (default 16); more are refused.
	MaxInFlight int
	// MaxDownloadSize bounds the content of one ui/download-file, all
	// its files together, decoded (default 4 MiB; a download cannot be
	// larger than MaxMessageSize anyway); a larger one is refused before
	// the person is asked.
	MaxDownloadSize int64
}

func (o *Options) defaults() {
	if o.HostInfo.Name == "" {
		o.HostInfo = Implementation{Name: "mcpx", Version: "dev"}
	}
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = time.Minute
	}
	if o.InitTimeout <= 0 {
		o.InitTimeout = 20 * time.Second
	}
	if o.TeardownTimeout <= 0 {
		o.TeardownTimeout = 3 * time.Second
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 4 << 20
	}
	if o.RateLimit <= 0 {
		o.RateLimit = 50
	}
	if o.RateBurst <= 0 {
		o.RateBurst = 200
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 16
	}
	if o.MaxDownloadSize <= 0 {
		o.MaxDownloadSize = 4 << 20
	}
}

// Host serves views to a browser, following the spec's web-host design
// ("Sandbox proxy"): one host page on http://127.0.0.1:P1 and the views'
// sandbox proxies on http://127.0.0.2:P2, two loopback listeners of
// different origins (spec: "The Host and the Sandbox MUST have different
// origins"). The sandbox's own loopback host keeps the views from the
// cookies of the local services on 127.0.0.1 (listenSandbox); where
// 127.0.0.2 cannot be listened on (macOS without an alias) the sandbox is
// on http://127.0.0.1:P2, another origin by its port but the same host
// for cookies. Both answer only under unguessable per-run paths and
// follow mcpx's local listener rule (package listenguard: other Hosts and
// Origins are refused).
//
// The host page is one page for the whole session: every view opened
// appears in it, each in its own sandbox frame. It talks to the host over
// a server-sent event stream (host→page) and POSTs (page→host), and
// relays postMessage between the frames and the host: all protocol logic
// is here, in Go, where every message is observed.
type Host struct {
	opts         Options
	hostToken    string
	sandboxToken string
	hostOrigin   string
	sandboxOrig  string
	hostSrv      *http.Server
	sandboxSrv   *http.Server
	serveWG      sync.WaitGroup
	background   sync.WaitGroup // closes the views ask for
	done         chan struct{}
	obsMu        sync.Mutex

	mu     sync.Mutex
	views  []*View
	conn   *pageConn
	env    pageEnv
	closed bool
	nextC  int
}

// NewHost starts the two listeners. Close stops them.
func NewHost(opts Options) (*Host, error) {
	if opts.Backend == nil {
		return nil, errors.New("apps: Options.Backend is nil")
	}
	opts.defaults()
	h := &Host{opts: opts, hostToken: token(), sandboxToken: token(), done: make(chan struct{})}
	hostLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("apps: listening for the host page on 127.0.0.1: %w", err)
	}
	sandboxLn, err := listenSandbox(net.Listen)
	if err != nil {
		hostLn.Close()
		return nil, fmt.Errorf("apps: %w", err)
	}
	h.hostOrigin = "http://" + hostLn.Addr().String()
	h.sandboxOrig = "http://" + sandboxLn.Addr().String()
	hostGuard, err := listenguard.New(http.HandlerFunc(h.serveHost), listenguard.Options{Addr: hostLn.Addr()})
	if err == nil {
		var sandboxGuard http.Handler
		sandboxGuard, err = listenguard.New(http.HandlerFunc(h.serveSandbox), listenguard.Options{Addr: sandboxLn.Addr()})
		if err == nil {
			h.hostSrv = &http.Server{Handler: hostGuard, ReadHeaderTimeout: 10 * time.Second}
			h.sandboxSrv = &http.Server{Handler: sandboxGuard, ReadHeaderTimeout: 10 * time.Second}
		}
	}
	if err != nil {
		hostLn.Close()
		sandboxLn.Close()
		return nil, fmt.Errorf("apps: %w", err)
	}
	h.serveWG.Add(2)
	go func() { defer h.serveWG.Done(); _ = h.hostSrv.Serve(hostLn) }()
	go func() { defer h.serveWG.Done(); _ = h.sandboxSrv.Serve(sandboxLn) }()
	return h, nil
}

// listenSandbox listens for the views' sandbox proxies on 127.0.0.2, a
// loopback host of their own. Browsers scope cookies by host, not port:
// on 127.0.0.1, as the host page is, a view (server-supplied HTML,
// running with allow-same-origin in its proxy's origin) would read with
// document.cookie every non-HttpOnly cookie that any local service
// reached as http://127.0.0.1:PORT has set, and its requests to those
// services would be same-site, SameSite cookies included; with a
// connectDomains it declares, it could send them away. Every address of
// 127.0.0.0/8 is loopback on Linux and Windows, and browsers count
// 127.0.0.2 as loopback too (a potentially trustworthy origin, as
// 127.0.0.1). Where 127.0.0.2 cannot be listened on (macOS configures
// only 127.0.0.1 unless an alias is added: EADDRNOTAVAIL), the sandbox
// falls back to 127.0.0.1 and works as before, without that isolation.
// listen is net.Listen (a test's stand-in refuses 127.0.0.2).
func listenSandbox(listen func(network, address string) (net.Listener, error)) (net.Listener, error) {
	ln, err := listen("tcp", "127.0.0.2:0")
	if err == nil {
		return ln, nil
	}
	ln, err1 := listen("tcp", "127.0.0.1:0")
	if err1 != nil {
		return nil, fmt.Errorf("listening for the sandbox on 127.0.0.2 (%w) and on 127.0.0.1: %w", err, err1)
	}
	return ln, nil
}

// token returns 32 random bytes in base64url: an unguessable path part.
func token() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// SandboxSharesCookies reports whether the views' sandbox fell back to
// 127.0.0.1 (listenSandbox), where views can read the cookies of the
// local services on 127.0.0.1 and send them requests that carry them: a
// program says so to the person.
func (h *Host) SandboxSharesCookies() bool {
	return strings.HasPrefix(h.sandboxOrig, "http://127.0.0.1:")
}

// URL is the host page's address: the page that shows every view.
func (h *Host) URL() string { return h.hostOrigin + "/" + h.hostToken + "/" }

// Connected reports whether a host page is connected now (so that a new
// view appears in it without opening a browser).
func (h *Host) Connected() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conn != nil
}

// Call is the tool call a view is opened for.
type Call struct {
	// Tool is the tool's definition as listed by the server (name,
	// inputSchema, _meta with ui.resourceUri): the host context's
	// toolInfo.tool.
	Tool json.RawMessage
	// Arguments are the call's arguments (an object; nil for none): sent
	// to the view in ui/notifications/tool-input.
	Arguments json.RawMessage
	// RequestID is the JSON-RPC id of the tools/call request, when known
	// (the host context's toolInfo.id).
	RequestID json.RawMessage
}

// Open reads the tool's ui:// resource through the backend, checks it
// and makes a view of it, shown in the connected host page or in the
// next one that connects (spec "Resource Discovery": "Host MUST use
// resources/read to fetch the referenced resource URI"); a content item
// without _meta.ui has its resources/list entry's (listingDeclarations).
// Errors wrap ErrNoView, ErrBadMeta, ErrResourceRead, ErrMIMEType,
// ErrInvalidHTML or ErrClosed, or are ctx's.
func (h *Host) Open(ctx context.Context, call Call) (*View, error) {
	ui, err := ParseToolUI(call.Tool)
	if err != nil {
		return nil, err
	}
	name := toolName(call.Tool)
	if !ui.HasView() {
		return nil, fmt.Errorf("%w: tool %q declares no _meta.ui.resourceUri", ErrNoView, name)
	}
	args := call.Arguments
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	} else if !json.Valid(args) || bytes.TrimSpace(args)[0] != '{' {
		return nil, fmt.Errorf("apps: the arguments of %q are not a JSON object", name)
	}
	call.Arguments = args
	result, err := h.opts.Backend.ReadResource(ctx, ui.ResourceURI)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrResourceRead, ui.ResourceURI, err)
	}
	res, err := parseResource(ui.ResourceURI, result)
	if err != nil {
		return nil, err
	}
	if res.declared == DeclaredNowhere {
		h.listingDeclarations(ctx, &res)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("apps: opening the view of %q: %w", name, err)
		}
	}
	v := newView(h, call, name, res)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		v.cancel()
		return nil, fmt.Errorf("apps: opening a view: host %w", ErrClosed)
	}
	h.views = append(h.views, v)
	c := h.conn
	if c == nil && h.opts.ConnectTimeout > 0 {
		v.mu.Lock() // lock order: h.mu, then v.mu
		v.armConnectTimer(h.opts.ConnectTimeout)
		v.mu.Unlock()
	}
	h.mu.Unlock()
	if c != nil {
		v.attach(c)
	}
	return v, nil
}

// listingDeclarations reads the view's _meta.ui from its resource's
// resources/list entry, for a resources/read content item that declares
// none. This is the ext-apps SDK's rule (McpUiAppResourceConfig: the
// entry's _meta.ui is "a listing-level fallback"; McpUiToolMeta.csp:
// "Hosts read it from the resources/read content item (with
// resources/list entry as fallback)"), which its servers rely on: a
// registerAppResource's _meta.ui is only in the listing unless the read
// callback repeats it. The precedence is whole-object, as in the SDK's
// reference hosts (contentMeta?.ui ?? listingMeta?.ui): a content item
// with a _meta.ui, even an empty one, is the whole declaration and the
// entry is not read; fields are never merged from both, which could
// grant what neither declaration asked for alone. Failing to list, or a
// malformed entry, leaves the restrictive default (res unchanged) and
// says why in the view's Policy.ListingError: the listing is a
// fallback, never required.
func (h *Host) listingDeclarations(ctx context.Context, res *resource) {
	entry, err := h.opts.Backend.ListedResource(ctx, res.uri)
	if err != nil {
		// As the backend gives it: its own names the request (the
		// session's "resources/list: server error ..."), and what shows it
		// says it is the listing's.
		res.listingErr = err
		return
	}
	if entry == nil {
		return
	}
	var e struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(entry, &e); err != nil {
		res.listingErr = fmt.Errorf("%w: the resources/list entry of %s is not a Resource object: %v", ErrBadMeta, res.uri, err)
		return
	}
	raw, ok := e.Meta["ui"]
	if !ok || string(raw) == "null" {
		return
	}
	decl, err := parseUIMeta(raw)
	if err != nil {
		res.listingErr = fmt.Errorf("%w: %s: its resources/list entry's _meta.ui: %v", ErrBadMeta, res.uri, err)
		return
	}
	res.uiDecl = decl
	res.declared = DeclaredInListing
}

// Views returns the views that are open.
func (h *Host) Views() []*View {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.views)
}

// Close tears every view down (ui/resource-teardown, each wait bounded by
// TeardownTimeout and ctx), tells the page the session ended and stops
// the listeners. It returns the views' teardown errors.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	views := slices.Clone(h.views)
	h.mu.Unlock()
	errs := make([]error, len(views))
	var wg sync.WaitGroup
	for i, v := range views {
		wg.Go(func() { errs[i] = v.Close(ctx, "the host is ending the session") })
	}
	wg.Wait()
	h.mu.Lock()
	if h.conn != nil {
		h.conn.send("bye", map[string]string{"reason": "mcpx ended the session"})
		h.conn.end()
	}
	h.mu.Unlock()
	h.background.Wait()
	close(h.done)
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for _, s := range []*http.Server{h.hostSrv, h.sandboxSrv} {
		if s.Shutdown(sctx) != nil {
			s.Close()
		}
	}
	h.serveWG.Wait()
	return errors.Join(errs...)
}

// goBackground runs f in a goroutine that Close waits for, unless the
// host is closing.
func (h *Host) goBackground(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.background.Go(f)
	}
}

func (h *Host) remove(v *View) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.views = slices.DeleteFunc(h.views, func(x *View) bool { return x == v })
}

func (h *Host) observe(info ViewInfo, d Direction, raw []byte) {
	if h.opts.Observer == nil {
		return
	}
	h.obsMu.Lock()
	defer h.obsMu.Unlock()
	h.opts.Observer(WireMessage{View: info, Direction: d, Raw: slices.Clone(raw), Time: time.Now()})
}

func (h *Host) problem(info ViewInfo, err error) {
	if h.opts.Handlers.Problem != nil {
		h.opts.Handlers.Problem(info, err)
	}
}

func (h *Host) state(info ViewInfo, s State) {
	if h.opts.Handlers.State != nil {
		h.opts.Handlers.State(info, s)
	}
}

// pageEnv is what the page reports of the browser: the host context's
// defaults (locale, time zone, theme) and the space a view has.
type pageEnv struct {
	TimeZone   string      `json:"timeZone"`
	Locale     string      `json:"locale"`
	Dark       bool        `json:"dark"`
	Inline     *dimensions `json:"inline"`
	Fullscreen *dimensions `json:"fullscreen"`
}

// dimensions are a container's (spec "Container Dimensions"): fixed
// width/height, or maximums.
type dimensions struct {
	Width     *float64 `json:"width,omitempty"`
	Height    *float64 `json:"height,omitempty"`
	MaxWidth  *float64 `json:"maxWidth,omitempty"`
	MaxHeight *float64 `json:"maxHeight,omitempty"`
}

func (d *dimensions) valid() bool {
	for _, p := range []*float64{d.Width, d.Height, d.MaxWidth, d.MaxHeight} {
		if p != nil && !(*p >= 0 && *p <= 1e5) {
			return false
		}
	}
	return true
}

// A page's event stream holds at most this many events, and this many
// bytes of them, waiting to be written (an event larger than that alone
// is still queued, when nothing else waits: a tool's result may be as
// large as a message of the server's, transport.DefaultMaxMessageSize).
const (
	maxPageEvents = 4096
	maxPageQueued = 256 << 20
)

// pageConn is one connected host page: its event stream.
type pageConn struct {
	id     string
	events chan []byte
	gone   chan struct{}
	once   sync.Once
	// queued is the size of the events waiting in events, limit its
	// bound (maxPageQueued).
	queued atomic.Int64
	limit  int64
}

func newPageConn() *pageConn {
	return &pageConn{events: make(chan []byte, maxPageEvents), gone: make(chan struct{}), limit: maxPageQueued}
}

// send queues an event for the page; a page that does not read its
// stream (maxPageEvents events or maxPageQueued bytes behind) is
// disconnected rather than buffered without bound. The bytes count: a
// view whose requests are answered with large results (its server's, or
// its own resource read again and again) faster than the browser reads
// them would otherwise fill the host's memory with up to maxPageEvents
// of them (spec "Other risks": "Hosts should implement resource
// limits").
func (c *pageConn) send(event string, data any) {
	b, err := marshal(data)
	if err != nil {
		return
	}
	var e bytes.Buffer
	e.WriteString("event: " + event + "\n")
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		e.WriteString("data: ")
		e.Write(line)
		e.WriteByte('\n')
	}
	e.WriteByte('\n')
	n := int64(e.Len())
	if before := c.queued.Add(n) - n; before > 0 && before+n > c.limit {
		c.queued.Add(-n)
		c.end()
		return
	}
	select {
	case <-c.gone:
		c.queued.Add(-n)
	case c.events <- e.Bytes():
	default:
		c.queued.Add(-n)
		c.end()
	}
}

// next takes a queued event off the stream's queue, to be written.
func (c *pageConn) next(e []byte) []byte {
	c.queued.Add(-int64(len(e)))
	return e
}

func (c *pageConn) end() { c.once.Do(func() { close(c.gone) }) }

// serveHost answers the host listener: the page, its script and style,
// the event stream and the posts. Everything is under /<hostToken>/.
func (h *Host) serveHost(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+h.hostToken+"/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch {
	case rest == "" && r.Method == http.MethodGet:
		h.servePage(w, r)
	case rest == "events" && r.Method == http.MethodGet:
		h.serveEvents(w, r)
	case rest == "post" && r.Method == http.MethodPost:
		h.servePost(w, r)
	case (rest == "host.js" || rest == "host.css") && r.Method == http.MethodGet:
		serveStatic(w, rest)
	default:
		http.NotFound(w, r)
	}
}

// serveSandbox answers the sandbox listener: a view's sandbox proxy page,
// with the view's CSP, and the proxy's script.
func (h *Host) serveSandbox(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/"+h.sandboxToken+"/")
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	if rest == "sandbox.js" {
		serveStatic(w, rest)
		return
	}
	id, ok := strings.CutPrefix(rest, "view/")
	if !ok {
		http.NotFound(w, r)
		return
	}
	v := h.view(id)
	if v == nil {
		http.NotFound(w, r)
		return
	}
	v.serveSandbox(w)
}

func (h *Host) view(id string) *View {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.views {
		if v.info.ID == id {
			return v
		}
	}
	return nil
}

func (h *Host) sandboxURL(id string) string {
	return h.sandboxOrig + "/" + h.sandboxToken + "/view/" + id
}

// serveEvents is the page's event stream. A new page takes over from the
// previous one (which is told it was replaced): every open view is shown
// again in the new page and starts over with ui/initialize.
func (h *Host) serveEvents(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	c := newPageConn()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		http.Error(w, "mcpx ended this session", http.StatusGone)
		return
	}
	h.nextC++
	c.id = strconv.Itoa(h.nextC) + "-" + token()[:12]
	old := h.conn
	h.conn = c
	views := slices.Clone(h.views)
	c.send("hello", map[string]any{"conn": c.id, "theme": h.opts.Theme})
	h.mu.Unlock()
	if old != nil {
		old.send("replaced", map[string]string{})
		old.end()
	}
	for _, v := range views {
		v.attach(c)
	}
	defer h.detach(c)

	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	ping := time.NewTicker(15 * time.Second)
	defer ping.Stop()
	for {
		select {
		case e := <-c.events:
			if _, err := w.Write(c.next(e)); err != nil {
				return
			}
			// Write what is queued before flushing.
			for n := len(c.events); n > 0; n-- {
				if _, err := w.Write(c.next(<-c.events)); err != nil {
					return
				}
			}
			if rc.Flush() != nil {
				return
			}
		case <-ping.C:
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil || rc.Flush() != nil {
				return
			}
		case <-c.gone:
			// Deliver what was queued last (replaced, bye, closed).
			for n := len(c.events); n > 0; n-- {
				_, _ = w.Write(c.next(<-c.events))
			}
			_ = rc.Flush()
			return
		case <-r.Context().Done():
			return
		case <-h.done:
			return
		}
	}
}

// detach forgets c when the page goes away.
func (h *Host) detach(c *pageConn) {
	c.end()
	h.mu.Lock()
	current := h.conn == c
	if current {
		h.conn = nil
	}
	views := slices.Clone(h.views)
	h.mu.Unlock()
	// The views stay open for the next page (a reload, or the page opened
	// again): the program decides when they end (StatePageGone).
	for _, v := range views {
		v.detach(c)
	}
}

// postBody is what the page posts: messages the frames sent, what it
// dropped, and the browser's environment.
type postBody struct {
	Env      *pageEnv `json:"env"`
	Messages []struct {
		View    string          `json:"view"`
		Message json.RawMessage `json:"message"`
	} `json:"messages"`
	Dropped []struct {
		View  string `json:"view"`
		Count int    `json:"count"`
		Why   string `json:"why"`
	} `json:"dropped"`
	// Modes are display modes the person chose (leaving full screen).
	Modes []struct {
		View string `json:"view"`
		Mode string `json:"mode"`
	} `json:"modes"`
}

// maxBatch bounds the messages of one post (the page sends at most 64).
const maxBatch = 256

// postOverhead is what a post may hold beyond one message of
// MaxMessageSize: the other members and the rest of the batch. The page
// is told the resulting bound (maxPost) and fills each post up to it, so
// that a batch of large messages is never refused whole.
const postOverhead = 1 << 20

func (h *Host) maxPost() int64 { return h.opts.MaxMessageSize + postOverhead }

func (h *Host) servePost(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	c := h.conn
	h.mu.Unlock()
	if c == nil || r.URL.Query().Get("c") != c.id {
		http.Error(w, "this page is no longer connected to mcpx", http.StatusConflict)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxPost()))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var p postBody
	if err := json.Unmarshal(body, &p); err != nil || len(p.Messages) > maxBatch {
		http.Error(w, "malformed post", http.StatusBadRequest)
		return
	}
	if p.Env != nil {
		h.setEnv(*p.Env)
	}
	for _, d := range p.Dropped {
		if v := h.view(d.View); v != nil && d.Count > 0 {
			h.problem(v.info, fmt.Errorf("%w: the host page dropped %d of its messages (%s)", ErrFlood, d.Count, clipString(d.Why, 40)))
		}
	}
	for _, m := range p.Messages {
		if v := h.view(m.View); v != nil {
			v.receive(c, m.Message)
		}
	}
	for _, m := range p.Modes {
		if v := h.view(m.View); v != nil {
			v.setMode(m.Mode)
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// setEnv records the browser's environment and tells initialized views
// what changed in their host context.
func (h *Host) setEnv(e pageEnv) {
	if e.Inline != nil && !e.Inline.valid() {
		e.Inline = nil
	}
	if e.Fullscreen != nil && !e.Fullscreen.valid() {
		e.Fullscreen = nil
	}
	e.TimeZone = clipString(e.TimeZone, 64)
	e.Locale = clipString(e.Locale, 35)
	h.mu.Lock()
	old := h.env
	h.env = e
	views := slices.Clone(h.views)
	h.mu.Unlock()
	for _, v := range views {
		v.envChanged(old, e)
	}
}

func (h *Host) environment() pageEnv {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.env
}

// theme is the host context's theme: the injected one, else the
// browser's preference.
func (h *Host) theme(e pageEnv) string {
	if h.opts.Theme != "" {
		return h.opts.Theme
	}
	if e.Dark {
		return "dark"
	}
	return "light"
}
