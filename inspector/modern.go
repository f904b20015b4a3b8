package inspector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// The 2026-07-28 revision ("modern"): no handshake; every request carries
// its protocol version, the client's capabilities and identity in _meta;
// results carry a resultType; server-to-client requests come back embedded
// in results and the client retries (spec 2026-07-28: basic/versioning,
// basic/index "_meta", basic/patterns/mrtr).

// DefaultMaxRounds caps the retries of one multi-round request.
const DefaultMaxRounds = 10

// Modern is the lifecycle of the stateless 2026-07-28 revision. Open asks
// server/discover what the server is (which also makes a handshake-era
// server fail at once and clearly); every request then carries the
// per-request _meta, and results are finished here: input requests are
// answered through the session's handlers and the request retried, task
// handles are polled, an unsupported version is retried with one the
// server names.
type Modern struct {
	// ProtocolVersion is declared in every request; empty means the latest.
	ProtocolVersion string
	ClientInfo      Implementation
	// Capabilities is the client capabilities object sent with every
	// request; nil means {}.
	Capabilities json.RawMessage
	// LogLevel, when set, asks for notifications/message at that level on
	// every request (replacing logging/setLevel).
	LogLevel string
	// MaxRounds caps the rounds of one multi-round request; zero means
	// DefaultMaxRounds.
	MaxRounds int
	// Reason says how the era was chosen, for ServerInfo.EraReason.
	Reason string
	// OnNote tells the person what the lifecycle did on its own (a retry,
	// an input round, a task's progress). Nil uses the session's notes.
	OnNote func(string)
	// Shared says the connection carries other clients' requests too (a
	// command through a held session): a log message may be for one of
	// theirs, so one no request of ours asked for is not warned about.
	Shared bool

	// askedLog is set once a request went out asking for log messages.
	askedLog atomic.Bool

	mu      sync.Mutex
	version string
	info    *ServerInfo
	routes  bool // the connection carries routes (HTTP): x-mcp-header applies
	tools   map[string]*toolHeaders
	listed  bool // tools/list was seen complete
}

// toolHeaders is what Route needs to know about one tool.
type toolHeaders struct {
	params  []mcp.HeaderParam
	invalid error
}

func (m *Modern) note(s *Session, msg string) {
	if m.OnNote != nil {
		m.OnNote(msg)
		return
	}
	s.note("%s", msg)
}

// SetLogLevel changes the log level later requests ask for (the REPL's
// :log); "" asks for none.
func (m *Modern) SetLogLevel(level string) {
	m.mu.Lock()
	m.LogLevel = level
	m.mu.Unlock()
}

func (m *Modern) logLevel() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.LogLevel
}

func (m *Modern) currentVersion() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.version == "" {
		m.version = m.ProtocolVersion
		if m.version == "" {
			m.version = mcp.LatestModernVersion
		}
	}
	return m.version
}

func (m *Modern) setVersion(v string) {
	m.mu.Lock()
	m.version = v
	m.mu.Unlock()
}

// logsUnasked reports whether no request of this client's has asked for
// log messages, so that a server sending one breaks the rule that "The
// server MUST NOT emit notifications/message for a request that does not
// include" io.modelcontextprotocol/logLevel (spec 2026-07-28:
// server/utilities/logging, "Per-request log level"). On a shared
// connection it cannot tell: false.
func (m *Modern) logsUnasked() bool { return !m.Shared && !m.askedLog.Load() }

// ownsSubscriptions reports whether every subscription on the connection
// is this client's, so that a notification naming another, or none, is
// the server's doing (see Session.checkSubscriptionOf). On a shared
// connection other clients have subscriptions of their own: false.
func (m *Modern) ownsSubscriptions() bool { return !m.Shared }

// Stateless reports true: every request stands alone.
func (m *Modern) Stateless() bool { return true }

// Open calls server/discover (spec 2026-07-28: server/discover). A server
// that does not answer it as a modern server would is reported as
// probably speaking the handshake era.
func (m *Modern) Open(ctx context.Context, s *Session) error {
	err := m.open(ctx, s)
	var uv *UnsupportedVersionError
	var bad *malformedDiscoverError
	if errors.As(err, &bad) && bad.modern {
		// A result with supportedVersions is a modern server's, if a
		// broken one: a handshake-era server answers no result before
		// initialize.
		return err
	}
	if err != nil && !isConnectionFailure(ctx, err) && !isModernError(err) && !errors.As(err, &uv) && !isTransportFault(err) {
		return &EraError{Looks: "legacy", Err: err}
	}
	// An UnsupportedVersionError that names only handshake-era versions
	// says so itself.
	return err
}

// open runs server/discover with opts and adopts its result.
func (m *Modern) open(ctx context.Context, s *Session, opts ...CallOption) error {
	m.mu.Lock()
	m.routes = carriesRoutes(s.conn)
	m.mu.Unlock()
	raw, err := s.Call(ctx, mcp.MethodDiscover, nil, opts...)
	if err != nil {
		return err
	}
	d, err := ParseDiscoverResult(raw)
	if err != nil {
		return &malformedDiscoverError{err: err, modern: rawjson.Member(raw, "supportedVersions") != nil}
	}
	if err := m.adopt(d, raw); err != nil {
		return err
	}
	// Checked here, once it is a DiscoverResult: hints missing from an
	// answer that is not one (a probe's) would be beside the point.
	m.checkCacheHints(ctx, s, mcp.MethodDiscover, raw)
	if v := m.currentVersion(); !slices.Contains(mcp.ModernVersions, v) {
		// The version asked for, which mcpx does not know: the server
		// says it speaks it, and the person wanted to see that (as a
		// handshake that accepts it, Legacy.Open).
		s.warn("the server supports protocol version %s, which mcpx does not know; going on as with %s", v, mcp.LatestModernVersion)
	}
	return nil
}

// malformedDiscoverError is a server/discover result that is not a
// DiscoverResult; modern says whether it has supportedVersions all the same.
type malformedDiscoverError struct {
	err    error
	modern bool
}

func (e *malformedDiscoverError) Error() string { return e.err.Error() }
func (e *malformedDiscoverError) Unwrap() error { return e.err }

// Is makes a result with supportedVersions, a modern server's that is
// broken, the server's departure from the protocol; a result without is
// more likely a handshake-era server's answer (see Modern.Open).
func (e *malformedDiscoverError) Is(target error) bool {
	return e.modern && target == ErrProtocolViolation
}

// DiscoverResult is a server/discover result (spec 2026-07-28:
// server/discover, "DiscoverResult").
type DiscoverResult struct {
	SupportedVersions []string        `json:"supportedVersions"`
	Capabilities      json.RawMessage `json:"capabilities"`
	Instructions      string          `json:"instructions"`
	TTLMs             *int64          `json:"ttlMs"`
	CacheScope        string          `json:"cacheScope"`
	Meta              struct {
		ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo"`
	} `json:"_meta"`
	// ServerInfo at the top level is not in the schema; some servers send
	// it there, so it is accepted as a fallback.
	ServerInfo *Implementation `json:"serverInfo"`
}

// ParseDiscoverResult decodes a server/discover result (spec 2026-07-28:
// server/discover). Only what the session cannot do without is an error:
// a result that is not an object, or no supportedVersions array of
// strings. A member of another type than the schema's is left out (the
// serverInfo's name and version are read one by one), as a handshake
// reads its InitializeResult.
func ParseDiscoverResult(raw json.RawMessage) (*DiscoverResult, error) {
	var d DiscoverResult
	var versions []byte
	implementation := func(v []byte) *Implementation {
		if !isObject(v) {
			return nil
		}
		impl, _ := readImplementation(v)
		return &impl
	}
	if !rawjson.Members(raw, func(n, v []byte) bool {
		switch {
		case rawjson.NameIs(n, "supportedVersions"):
			versions = v
		case rawjson.NameIs(n, "capabilities"):
			if isObject(v) {
				d.Capabilities = v
			}
		case rawjson.NameIs(n, "instructions"):
			d.Instructions, _ = rawjson.String(v)
		case rawjson.NameIs(n, "ttlMs"):
			var ttl int64
			if json.Unmarshal(v, &ttl) == nil {
				d.TTLMs = &ttl
			}
		case rawjson.NameIs(n, "cacheScope"):
			d.CacheScope, _ = rawjson.String(v)
		case rawjson.NameIs(n, "_meta"):
			d.Meta.ServerInfo = implementation(rawjson.Member(v, mcp.MetaServerInfo))
		case rawjson.NameIs(n, "serverInfo"):
			d.ServerInfo = implementation(v)
		}
		return true
	}) {
		return nil, errors.New("server/discover: the result is not a DiscoverResult: it is not a JSON object")
	}
	if versions == nil || rawjson.IsNull(versions) {
		return nil, errors.New("server/discover: the result lists no supportedVersions")
	}
	d.SupportedVersions = []string{}
	strs := true
	if !rawjson.Elements(versions, func(e []byte) bool {
		v, ok := rawjson.String(e)
		strs = strs && ok
		d.SupportedVersions = append(d.SupportedVersions, v)
		return ok
	}) || !strs {
		return nil, fmt.Errorf("server/discover: the result is not a DiscoverResult: its supportedVersions is %s, not an array of strings", rawjson.Excerpt(versions, 60))
	}
	return &d, nil
}

// adopt takes what the discover result says about the server, and picks a
// version it supports.
func (m *Modern) adopt(d *DiscoverResult, raw json.RawMessage) error {
	cur := m.currentVersion()
	if !slices.Contains(d.SupportedVersions, cur) {
		v := commonModern(d.SupportedVersions)
		if v == "" {
			return fmt.Errorf("server/discover: %w", &UnsupportedVersionError{Requested: cur, Supported: d.SupportedVersions})
		}
		m.setVersion(v)
	}
	info := &ServerInfo{
		Era:               "modern",
		EraReason:         m.Reason,
		ProtocolVersion:   m.currentVersion(),
		Capabilities:      d.Capabilities,
		Instructions:      d.Instructions,
		Raw:               raw,
		SupportedVersions: d.SupportedVersions,
		TTLMs:             d.TTLMs,
		CacheScope:        d.CacheScope,
	}
	if d.Meta.ServerInfo != nil {
		info.Implementation = *d.Meta.ServerInfo
	} else if d.ServerInfo != nil {
		info.Implementation = *d.ServerInfo
	}
	m.mu.Lock()
	m.info = info
	m.mu.Unlock()
	return nil
}

// setReason sets the reason the era was chosen, once Open has run.
func (m *Modern) setReason(reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Reason = reason
	if m.info != nil {
		m.info.EraReason = reason
	}
}

// Server returns a copy of what server/discover (and the serverInfo of
// later results) said about the server.
func (m *Modern) Server() *ServerInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.info == nil {
		return nil
	}
	c := *m.info
	return &c
}

// Decorate adds the per-request _meta fields to a request's params
// (spec 2026-07-28: basic/index, "Per-request protocol fields"). Fields
// the caller already set are kept. Notifications carry none.
func (m *Modern) Decorate(method string, params json.RawMessage) (json.RawMessage, error) {
	if strings.HasPrefix(method, "notifications/") {
		return params, nil
	}
	caps := m.Capabilities
	if len(caps) == 0 {
		caps = json.RawMessage("{}")
	}
	fields := []struct {
		key   string
		value json.RawMessage
	}{
		{mcp.MetaProtocolVersion, marshalRaw(m.currentVersion())},
		{mcp.MetaClientInfo, marshalRaw(m.ClientInfo)},
		{mcp.MetaClientCapabilities, caps},
	}
	if level := m.logLevel(); level != "" {
		fields = append(fields, struct {
			key   string
			value json.RawMessage
		}{mcp.MetaLogLevel, marshalRaw(level)})
	}
	return withMeta(params, func(meta *Object) {
		for _, f := range fields {
			if !meta.Has(f.key) {
				meta.Set(f.key, f.value)
			}
		}
		if meta.Has(mcp.MetaLogLevel) {
			m.askedLog.Store(true)
		}
	})
}

// InvalidToolError reports a tool definition whose x-mcp-header annotations
// break the spec's constraints: such a tool is not called over HTTP. mcpx
// still lists it, with the reason.
type InvalidToolError struct {
	Tool   string
	Reason string
}

func (e *InvalidToolError) Error() string {
	return fmt.Sprintf("tool %q has an invalid x-mcp-header annotation (%s), so mcpx does not call it over HTTP (spec 2026-07-28: server/tools, \"x-mcp-header\")",
		e.Tool, e.Reason)
}

// transportRoute is r in the form the transport carries it.
func transportRoute(r mcp.Route) *transport.Route {
	t := &transport.Route{ProtocolVersion: r.ProtocolVersion, Method: r.Method, Name: r.Name}
	for _, p := range r.Params {
		t.Params = append(t.Params, transport.RouteParam(p))
	}
	return t
}

// Route describes a message for the transport: version, method, name, and
// for tools/call over HTTP the arguments its tool designates with
// x-mcp-header (looked up in tools/list, fetched when not yet known).
func (m *Modern) Route(ctx context.Context, s *Session, method string, params json.RawMessage) (*transport.Route, error) {
	r := mcp.StandardRoute(method, params)
	if r.ProtocolVersion == "" {
		r.ProtocolVersion = m.currentVersion()
	}
	if method != mcp.MethodToolsCall || r.Name == "" {
		return transportRoute(r), nil
	}
	obj, err := ParseObject(params)
	if err != nil {
		return transportRoute(r), nil
	}
	m.mu.Lock()
	routes := m.routes
	m.mu.Unlock()
	if !routes {
		// Only bindings with headers mirror arguments (stdio MAY ignore
		// x-mcp-header entirely).
		return transportRoute(r), nil
	}
	th := m.toolHeaders(ctx, s, r.Name)
	if th == nil {
		return transportRoute(r), nil
	}
	if th.invalid != nil {
		return nil, th.invalid
	}
	if r.Params, err = mcp.HeaderValues(th.params, obj.Get("arguments")); err != nil {
		return nil, err
	}
	return transportRoute(r), nil
}

// toolHeaders returns what tools/list said about tool name, listing the
// tools first when they are not known yet; nil when the server does not
// list it (or listing fails before the page that has it: the call goes
// out without Mcp-Param headers and the server judges).
func (m *Modern) toolHeaders(ctx context.Context, s *Session, name string) *toolHeaders {
	m.mu.Lock()
	th, listed := m.tools[name], m.listed
	m.mu.Unlock()
	if th != nil || listed {
		return th
	}
	if _, err := s.List(ctx, mcp.MethodToolsList, nil); err != nil {
		m.note(s, fmt.Sprintf("tools/list (to find the headers tool %q needs) failed: %v", name, err))
		// The pages read before a later one failed are known still.
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tools[name]
}

// recordTools learns the x-mcp-header annotations of a tools/list page.
// A first page (no cursor in the request) starts afresh.
func (m *Modern) recordTools(req *Request, raw json.RawMessage) {
	var page struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
		// Any JSON: a cursor that is not a string does not hide the
		// page's tools.
		NextCursor json.RawMessage `json:"nextCursor"`
	}
	if json.Unmarshal(raw, &page) != nil {
		return
	}
	first := true
	if obj, err := ParseObject(req.Params); err == nil && obj.Has("cursor") {
		first = false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if first || m.tools == nil {
		m.tools = map[string]*toolHeaders{}
		m.listed = false
	}
	for _, t := range page.Tools {
		params, err := mcp.ToolHeaderParams(t.InputSchema)
		th := &toolHeaders{params: params}
		if err != nil {
			th.invalid = &InvalidToolError{Tool: t.Name, Reason: err.Error()}
		}
		m.tools[t.Name] = th
	}
	if len(page.NextCursor) == 0 || rawjson.IsNull(page.NextCursor) {
		// The last page: an empty cursor is a cursor like any other
		// (spec 2026-07-28: server/utilities/pagination).
		m.listed = true
	}
}

// forgetTools drops what is known about the tools (they changed).
func (m *Modern) forgetTools() {
	m.mu.Lock()
	m.tools, m.listed = nil, false
	m.mu.Unlock()
}

// noteServer takes the server's identity from a result's _meta
// (spec 2026-07-28: basic/index, "Per-response protocol fields").
func (m *Modern) noteServer(raw json.RawMessage) {
	var r struct {
		Meta struct {
			ServerInfo *Implementation `json:"io.modelcontextprotocol/serverInfo"`
		} `json:"_meta"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Meta.ServerInfo == nil || r.Meta.ServerInfo.Name == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.info != nil && m.info.Implementation.Name == "" {
		m.info.Implementation = *r.Meta.ServerInfo
	}
}

// ResultType returns a result's resultType; an absent one means complete
// (spec 2026-07-28: basic/index, "ResultType"). A resultType that is not
// a string is returned as its JSON text (1, {"…":…}), which is no result
// type: "A resultType of any value unrecognized by the client MUST be
// considered invalid" (ibid.).
func ResultType(raw json.RawMessage) string {
	rt, _ := resultType(raw)
	return rt
}

// resultType returns ResultType and how to name it in an error: quoted
// when it is a string, as it came otherwise.
func resultType(raw json.RawMessage) (rt, shown string) {
	var r struct {
		ResultType json.RawMessage `json:"resultType"`
	}
	if json.Unmarshal(raw, &r) != nil || len(r.ResultType) == 0 || rawjson.IsNull(r.ResultType) {
		return mcp.ResultComplete, strconv.Quote(mcp.ResultComplete)
	}
	if s, ok := rawjson.String(r.ResultType); ok {
		return s, strconv.Quote(s)
	}
	text := rawjson.Excerpt(r.ResultType, 60)
	return text, text
}

// mrtrMethods may answer with input_required (spec 2026-07-28:
// basic/patterns/mrtr, "Supported Requests").
var mrtrMethods = map[string]bool{mcp.MethodToolsCall: true, mcp.MethodPromptsGet: true, mcp.MethodResourcesRead: true}

// Finish completes a request: it retries once with a version the server
// supports after UnsupportedProtocolVersion, re-lists tools and retries
// once after HeaderMismatch on tools/call, answers input requests and
// retries until the result is complete (at most MaxRounds rounds), and
// polls a task handle to its end.
func (m *Modern) Finish(ctx context.Context, s *Session, req *Request, res json.RawMessage, err error) (json.RawMessage, error) {
	maxRounds := m.MaxRounds
	if maxRounds <= 0 {
		maxRounds = DefaultMaxRounds
	}
	versionRetried, headersRetried, lostRetried := false, false, false
	round := 0
	// sent is the params of the request in flight: a later round's carry
	// the inputs answered and the request state.
	sent := req.Params
	var unanswered map[string]bool
	for {
		if err != nil {
			if errors.Is(err, transport.ErrStreamLost) && reissuable[req.Method] && !lostRetried && ctx.Err() == nil {
				// "A broken response stream loses the in-flight request;
				// clients MUST re-issue it as a new request with a new
				// request ID" (spec 2026-07-28: changelog; basic/transports/
				// streamable-http: streams are not resumable). Only a
				// request that changes nothing is re-issued on mcpx's own:
				// a tool may have run already. A later round is re-issued
				// as it was sent: from the first, the person would be asked
				// again for what they answered.
				lostRetried = true
				m.note(s, fmt.Sprintf("%s: its response stream was lost before the answer; re-issuing it as a new request", req.Label()))
				res, err = s.Resend(ctx, req, sent)
				continue
			}
			var rpcErr *jsonrpc.Error
			if !errors.As(err, &rpcErr) || ctx.Err() != nil {
				return nil, err
			}
			switch rpcErr.Code {
			case mcp.CodeUnsupportedProtocolVersion:
				uv := unsupportedVersion(rpcErr)
				if v := commonModern(uv.Supported); v != "" && !versionRetried {
					versionRetried = true
					m.setVersion(v)
					m.note(s, fmt.Sprintf("%s: the server does not accept protocol version %s (it supports %s); retrying with %s",
						req.Label(), cmp.Or(uv.Requested, "mcpx's"), strings.Join(uv.Supported, ", "), v))
					res, err = s.Resend(ctx, req, req.Params)
					continue
				}
				uv.Err = err
				return nil, uv
			case mcp.CodeHeaderMismatch:
				m.mu.Lock()
				routes := m.routes
				m.mu.Unlock()
				if req.Method == mcp.MethodToolsCall && routes && !headersRetried {
					// The tool's x-mcp-header annotations may have changed
					// (spec 2026-07-28: basic/transports/streamable-http,
					// "Client Behavior").
					headersRetried = true
					m.forgetTools()
					s.tools.invalidate()
					m.note(s, fmt.Sprintf("%s: the server reports mismatched headers (%s); listing the tools again and retrying once", req.Label(), rpcErr.Message))
					res, err = s.Resend(ctx, req, req.Params)
					continue
				}
			case mcp.CodeMissingRequiredClientCapability:
				return nil, missingCapability(rpcErr, err)
			}
			return nil, err
		}
		m.noteServer(res)
		if req.Method == mcp.MethodToolsList {
			m.recordTools(req, res)
		}
		rt, shown := resultType(res)
		switch rt {
		case mcp.ResultComplete:
			if req.Method != mcp.MethodDiscover { // (see open)
				m.checkCacheHints(ctx, s, req.Method, res)
			}
			return res, nil
		case mcp.ResultInputRequired:
			if !mrtrMethods[req.Method] {
				return nil, violationf("%s: the server answered input_required, which the spec allows only for tools/call, prompts/get and resources/read (basic/patterns/mrtr)", req.Label())
			}
			round++
			if round > maxRounds {
				return nil, fmt.Errorf("%s: the server still needs input after %d rounds; giving up", req.Label(), maxRounds)
			}
			params, missing, ierr := m.answerRound(ctx, s, req, res, round, maxRounds, unanswered)
			if ierr != nil {
				return nil, ierr
			}
			unanswered = missing
			sent = params
			res, err = s.Resend(ctx, req, sent)
		case mcp.ResultTask:
			return m.awaitTask(ctx, s, req, res)
		default:
			return nil, violationf("%s: the server answered with resultType %s, which mcpx does not recognize (invalid per spec 2026-07-28: basic/index, \"ResultType\")", req.Label(), shown)
		}
	}
}

// reissuable are the requests that only read, which Finish re-issues once
// when their response stream is lost: sending one again changes nothing
// on the server. tools/call, tasks/update and tasks/cancel are left to
// the person; subscriptions/listen is listened again by its own loop.
var reissuable = map[string]bool{
	mcp.MethodDiscover: true, mcp.MethodToolsList: true, mcp.MethodPromptsList: true, mcp.MethodPromptsGet: true,
	mcp.MethodResourcesList: true, mcp.MethodResourcesTemplatesList: true, mcp.MethodResourcesRead: true,
	mcp.MethodCompletionComplete: true, mcp.MethodTasksGet: true,
	mcp.MethodSkillsList: true, mcp.MethodSkillsGet: true, mcp.MethodResourcesDirectoryRead: true,
}

// cacheableMethods are the requests whose complete results carry caching
// hints (spec 2026-07-28: server/utilities/caching, "Cacheable Results").
var cacheableMethods = map[string]bool{
	mcp.MethodDiscover: true, mcp.MethodToolsList: true, mcp.MethodPromptsList: true,
	mcp.MethodResourcesList: true, mcp.MethodResourcesTemplatesList: true, mcp.MethodResourcesRead: true,
}

// checkCacheHints warns, once a session, about a complete result of a
// cacheable request without ttlMs or cacheScope: "Servers MUST include
// caching hints" on them (spec 2026-07-28: server/utilities/caching,
// "Cacheable Results"). Only the two members are looked for: a list of
// thousands of items is not decoded for it.
func (m *Modern) checkCacheHints(ctx context.Context, s *Session, method string, res json.RawMessage) {
	if !cacheableMethods[method] {
		return
	}
	var missing []string
	for _, name := range []string{"ttlMs", "cacheScope"} {
		if rawjson.Member(res, name) == nil {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return
	}
	s.departOnce(ctx, "cache hints", "the server's %s result has no %s: servers must include caching hints on it (spec 2026-07-28: server/utilities/caching, \"Cacheable Results\"); taken as stale at once", method, strings.Join(missing, " or "))
}

// InputRequired is an InputRequiredResult (spec 2026-07-28:
// basic/patterns/mrtr).
type InputRequired struct {
	// InputRequests maps the server's keys to the requests, raw.
	InputRequests map[string]json.RawMessage
	// RequestState is the opaque state exactly as received (the JSON
	// string token), nil when absent.
	RequestState json.RawMessage
}

// ParseInputRequired decodes an InputRequiredResult.
func ParseInputRequired(raw json.RawMessage) (*InputRequired, error) {
	obj, err := ParseObject(raw)
	if err != nil {
		return nil, violationf("an input_required result is not an object: %w", err)
	}
	ir := &InputRequired{}
	if v := obj.Get("inputRequests"); len(v) > 0 && string(v) != "null" {
		if err := json.Unmarshal(v, &ir.InputRequests); err != nil {
			return nil, violationf("inputRequests is not a map of requests: %s", rawjson.DecodeProblem(err))
		}
	}
	if v := obj.Get("requestState"); len(v) > 0 {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, violationf("requestState is not a string: %s", excerpt(v, 60))
		}
		ir.RequestState = v
	}
	return ir, nil
}

// answerRound answers one InputRequiredResult and returns the params of
// the retry: the caller's params with inputResponses and, when the server
// sent one, the exact requestState. Requests mcpx cannot answer (a policy
// refused, the capability is not declared) are left out; a request left
// out in the previous round and asked again ends the call.
func (m *Modern) answerRound(ctx context.Context, s *Session, req *Request, res json.RawMessage, round, maxRounds int, unanswered map[string]bool) (json.RawMessage, map[string]bool, error) {
	ir, err := ParseInputRequired(res)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", req.Label(), err)
	}
	if len(ir.InputRequests) == 0 && ir.RequestState == nil {
		// The retry would be the very request answered: "Servers MUST
		// include at least one of inputRequests or requestState in every
		// InputRequiredResult response" (spec 2026-07-28:
		// basic/patterns/mrtr, "Server Requirements").
		return nil, nil, violationf("%s: the server answered input_required with neither input requests nor requestState, so a retry would repeat the same request (an InputRequiredResult must include at least one, spec 2026-07-28: basic/patterns/mrtr)", req.Label())
	}
	keys := make([]string, 0, len(ir.InputRequests))
	for k := range ir.InputRequests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	what := make([]string, 0, len(keys))
	for _, k := range keys {
		what = append(what, inputMethod(ir.InputRequests[k])+" ("+k+")")
	}
	msg := fmt.Sprintf("%s: the server needs input (round %d of at most %d)", req.Label(), round, maxRounds)
	switch {
	case len(what) > 0:
		msg += ": " + strings.Join(what, ", ")
	default:
		msg += ": no input requests, only request state"
	}
	m.note(s, msg+"; retrying as a new request")
	responses, failed, err := s.answerInputs(ctx, ir.InputRequests)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", req.Label(), err)
	}
	for k := range failed {
		if unanswered[k] {
			return nil, nil, violationf("%s: the server asked again for input %q, which mcpx could not provide: %v", req.Label(), k, failed[k])
		}
	}
	obj, err := ParseObject(req.Params)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", req.Label(), err)
	}
	obj.Delete("inputResponses")
	obj.Delete("requestState")
	if len(ir.InputRequests) > 0 {
		obj.Set("inputResponses", responses.Marshal())
	}
	if ir.RequestState != nil {
		obj.Set("requestState", ir.RequestState)
	}
	missing := map[string]bool{}
	for k := range failed {
		missing[k] = true
	}
	return obj.Marshal(), missing, nil
}

// inputMethod returns the method of an embedded input request.
func inputMethod(raw json.RawMessage) string {
	var r struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(raw, &r) != nil || r.Method == "" {
		return "(no method)"
	}
	return r.Method
}

// answerInputs answers embedded input requests (elicitation/create,
// sampling/createMessage, roots/list) through the same handlers and
// policies that answer server-to-client requests in the handshake era,
// one at a time (a person may be asked), and shows each like a server
// request. It returns the responses by key and, by key, why a request got
// none. Only a context that ended, or a policy that needs a terminal and
// has none, is an error.
func (s *Session) answerInputs(ctx context.Context, reqs map[string]json.RawMessage) (*Object, map[string]error, error) {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := &Object{vals: map[string]json.RawMessage{}}
	failed := map[string]error{}
	for _, k := range keys {
		var r struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(reqs[k], &r); err != nil || r.Method == "" {
			failed[k] = fmt.Errorf("input request %q is not a request object", k)
			s.depart(ctx, "input request %q is not a request with a method (not answered): %s", k, excerpt(reqs[k], 200))
			continue
		}
		msg := &jsonrpc.Message{Raw: reqs[k], ID: jsonrpc.String(k), Method: r.Method, Params: r.Params}
		s.checkIncludeContext(ctx, r.Method, r.Params)
		var result json.RawMessage
		var rpcErr *jsonrpc.Error
		h := s.opts.Handlers[r.Method]
		// What AfterAnswer defers runs once this answer is shown: it goes
		// out with the retry, which a cancelled context then stops.
		hctx, after := withAfterAnswer(ctx)
		if h == nil {
			rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + jsonrpc.Clip(r.Method) + " (the capability is not declared)"}
		} else {
			v, err := h(hctx, msg)
			switch {
			case ctx.Err() != nil:
				after.run()
				return nil, nil, ctx.Err()
			case errors.Is(err, ErrNoTerminal):
				after.run()
				return nil, nil, err
			case err != nil:
				if !errors.As(err, &rpcErr) {
					rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
				}
			default:
				if result, err = compactJSON(v); err != nil {
					rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "mcpx could not encode its answer: " + err.Error()}
				}
			}
		}
		show := s.opts.OnInputRequest
		if show == nil {
			show = s.opts.OnServerRequest
		}
		if show != nil {
			show(msg, result, rpcErr)
		}
		after.run()
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		if rpcErr != nil {
			// mcpx's own refusal, which never reaches the server: not a
			// *jsonrpc.Error, which would read as the server's.
			failed[k] = errors.New(rpcErr.Message)
			continue
		}
		if len(result) == 0 {
			result = json.RawMessage("{}")
		}
		out.Set(k, result)
	}
	return out, failed, nil
}

// UnsupportedVersionError is a server's UnsupportedProtocolVersionError
// (-32022) that mcpx could not get past: none of the versions it supports
// is one mcpx speaks in this era.
type UnsupportedVersionError struct {
	Requested string
	Supported []string
	// Err is the error as received, when there was one.
	Err error
}

func (e *UnsupportedVersionError) Error() string {
	msg := fmt.Sprintf("the server does not support protocol version %s", cmp.Or(e.Requested, "requested"))
	if len(e.Supported) > 0 {
		msg += " (it supports " + versionList(e.Supported) + ")"
	}
	if e.Err != nil {
		msg = e.Err.Error() + ": " + msg
	}
	if e.HandshakeEra() {
		msg += "; those are handshake-era versions"
	}
	return msg
}

// maxVersionsNamed bounds the versions an error names of those a server
// says it supports: a server's list may be any length.
const maxVersionsNamed = 10

// versionList names the versions a server supports for an error: at
// most maxVersionsNamed of them, each cut as jsonrpc.Clip cuts a
// peer's text.
func versionList(vs []string) string {
	var b strings.Builder
	for i, v := range vs[:min(len(vs), maxVersionsNamed)] {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(jsonrpc.Clip(v))
	}
	if len(vs) > maxVersionsNamed {
		fmt.Fprintf(&b, " and %d more", len(vs)-maxVersionsNamed)
	}
	return b.String()
}

// HandshakeEra reports whether the server named versions and all of them
// are handshake-era ones: it speaks the other era (Legacy, or Auto).
func (e *UnsupportedVersionError) HandshakeEra() bool {
	return len(e.Supported) > 0 && !e.speaksModern()
}

func (e *UnsupportedVersionError) Unwrap() error { return e.Err }

// speaksModern reports whether the server named a stateless version.
func (e *UnsupportedVersionError) speaksModern() bool {
	return slices.ContainsFunc(e.Supported, mcp.IsModernVersion)
}

// unsupportedVersion decodes the data of a -32022 error.
func unsupportedVersion(e *jsonrpc.Error) *UnsupportedVersionError {
	var d struct {
		Supported []string `json:"supported"`
		Requested string   `json:"requested"`
	}
	_ = json.Unmarshal(e.Data, &d)
	return &UnsupportedVersionError{Requested: d.Requested, Supported: d.Supported}
}

// commonModern returns the newest stateless version mcpx speaks that
// supported lists, or "".
func commonModern(supported []string) string {
	for _, v := range mcp.ModernVersions {
		if slices.Contains(supported, v) {
			return v
		}
	}
	return ""
}

// MissingCapabilityError is a server's MissingRequiredClientCapability
// error (-32021), naming what it needs.
type MissingCapabilityError struct {
	// Required is data.requiredCapabilities as received.
	Required json.RawMessage
	Err      error
}

func (e *MissingCapabilityError) Error() string {
	msg := e.Err.Error()
	if names := e.Capabilities(); len(names) > 0 {
		msg += "; the request needs the client capabilities " + strings.Join(names, ", ")
	}
	return msg
}

// Capabilities returns the dotted names of the capabilities the server
// requires ("sampling", "elicitation.url"; see CapabilityNames).
func (e *MissingCapabilityError) Capabilities() []string { return CapabilityNames(e.Required) }

func (e *MissingCapabilityError) Unwrap() error { return e.Err }

func missingCapability(rpcErr *jsonrpc.Error, err error) error {
	var d struct {
		Required json.RawMessage `json:"requiredCapabilities"`
	}
	_ = json.Unmarshal(rpcErr.Data, &d)
	return &MissingCapabilityError{Required: d.Required, Err: err}
}

// isModernError reports whether err carries an error only a 2026-07-28
// server sends (spec 2026-07-28: basic/versioning, "Backward
// Compatibility with Initialization-Based Versions").
func isModernError(err error) bool {
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) {
		return false
	}
	switch rpcErr.Code {
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}

// looksModern reports whether a failed initialize suggests a 2026-07-28
// server: a modern error code whose data names a stateless version, or a
// message that mentions one.
func looksModern(err error) bool {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		if rpcErr.Code == mcp.CodeUnsupportedProtocolVersion {
			return unsupportedVersion(rpcErr).speaksModern()
		}
		if rpcErr.Code == mcp.CodeHeaderMismatch || rpcErr.Code == mcp.CodeMissingRequiredClientCapability {
			return true
		}
	}
	msg := err.Error()
	return strings.Contains(msg, "2026-07-28") || strings.Contains(msg, mcp.MetaProtocolVersion)
}

// isConnectionFailure reports errors that say nothing about the era: the
// server could not be reached or went away, credentials were refused, or
// the person gave up.
func isConnectionFailure(ctx context.Context, err error) bool {
	var exit *transport.PeerExitError
	return ctx.Err() != nil || errors.As(err, &exit) ||
		errors.Is(err, transport.ErrConnect) || errors.Is(err, transport.ErrClosed) ||
		errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, context.Canceled)
}

// isTransportFault reports a transport failure that says nothing about
// the era: a server error (HTTP 5xx), a lost stream, a broken connection.
// An HTTP 4xx refusal is not one: handshake-era servers refuse a request
// that comes without a session, so it suggests one (as Auto concludes).
func isTransportFault(err error) bool {
	var he *transport.HTTPError
	if errors.As(err, &he) {
		return he.Status < 400 || he.Status >= 500
	}
	return errors.Is(err, transport.ErrTransport)
}

// carriesRoutes reports whether conn mirrors routes outside the message.
func carriesRoutes(conn transport.Conn) bool {
	rc, ok := transport.Find[transport.RouteCarrier](conn)
	return ok && rc.CarriesRoutes()
}
