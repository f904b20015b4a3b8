package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// ClientFeatures is what mcpx offers a server: roots, sampling, elicitation
// and task-augmented execution of the latter two. It builds the client
// capabilities object, declaring exactly what is enabled, and the handlers
// that honour it.
type ClientFeatures struct {
	// Version is the protocol version mcpx offers ("" for the latest). It
	// only decides which sub-capabilities exist in that revision: sampling
	// tools, elicitation modes and tasks are 2025-11-25 features,
	// elicitation a 2025-06-18 one.
	Version  string
	Roots    *Roots    // nil: roots not declared
	Sampler  *Sampler  // nil: sampling not declared
	Elicitor *Elicitor // nil: elicitation not declared
	// Tasks runs task-augmented sampling and elicitation; nil: not declared.
	Tasks *TaskStore
	// Extensions are further extensions mcpx declares under
	// capabilities.extensions, each identifier with its settings object
	// (e.g. MCP Apps, io.modelcontextprotocol/ui with its mimeTypes, when
	// --ui asks for views). They are declared in both eras: the
	// 2026-07-28 schema has ClientCapabilities.extensions, and extensions
	// negotiated in initialize use the same member (SEP-1724; the MCP
	// Apps specification's "Client (Host) Capabilities" declares it in a
	// handshake-era initialize).
	Extensions map[string]json.RawMessage
}

// extensions returns the capabilities.extensions object: the
// identifiers of Extensions in sorted order, plus the tasks extension in
// the modern era; nil when there is none.
func (f *ClientFeatures) extensions(modern bool) json.RawMessage {
	ext := &Object{vals: map[string]json.RawMessage{}}
	if modern {
		ext.Set(mcp.TasksExtension, json.RawMessage(`{}`))
	}
	for _, id := range slices.Sorted(maps.Keys(f.Extensions)) {
		settings := f.Extensions[id]
		if len(settings) == 0 {
			settings = json.RawMessage(`{}`)
		}
		ext.Set(id, settings)
	}
	if len(ext.Keys()) == 0 {
		return nil
	}
	return ext.Marshal()
}

func (f *ClientFeatures) version() string {
	if f.Version == "" {
		return mcp.LatestHandshakeVersion
	}
	return f.Version
}

// elicitation exists from 2025-06-18; URL mode, sampling tools and tasks
// from 2025-11-25. Revision names are ISO dates, so they compare as strings.
func (f *ClientFeatures) has(since string) bool { return f.version() >= since }

// tasksOn reports whether task augmentation is declared for anything.
func (f *ClientFeatures) tasksOn() bool {
	return f.Tasks != nil && f.has("2025-11-25") && (f.Sampler != nil || f.elicitOn())
}

func (f *ClientFeatures) elicitOn() bool { return f.Elicitor != nil && f.has("2025-06-18") }

// Capabilities returns the client capabilities object for initialize
// (spec 2025-11-25: basic/lifecycle, client/*, basic/utilities/tasks). It
// also tells the handlers what was declared (sampling tools, elicitation
// modes), so a request for something undeclared is refused as the spec asks.
func (f *ClientFeatures) Capabilities() json.RawMessage {
	caps := &Object{vals: map[string]json.RawMessage{}}
	if f.Roots != nil {
		caps.Set("roots", json.RawMessage(`{"listChanged":true}`))
	}
	if f.Sampler != nil {
		f.Sampler.Tools = f.has("2025-11-25")
		if f.Sampler.Tools {
			caps.Set("sampling", json.RawMessage(`{"tools":{}}`))
		} else {
			caps.Set("sampling", json.RawMessage(`{}`))
		}
	}
	if f.elicitOn() {
		e := f.Elicitor
		e.stateless = false
		if f.has("2025-11-25") {
			e.Form, e.URL = true, true
			form := `{}`
			if e.Policy.Mode == PolicyAcceptDefaults {
				// SEP-1034: accepted content carries the schema defaults.
				form = `{"applyDefaults":true}`
			}
			caps.Set("elicitation", json.RawMessage(fmt.Sprintf(`{"form":%s,"url":{}}`, form)))
		} else {
			// 2025-06-18: an empty object, meaning form mode.
			e.Form, e.URL = true, false
			caps.Set("elicitation", json.RawMessage(`{}`))
		}
	}
	if f.tasksOn() {
		reqs := &Object{vals: map[string]json.RawMessage{}}
		if f.Sampler != nil {
			reqs.Set("sampling", json.RawMessage(`{"createMessage":{}}`))
		}
		if f.elicitOn() {
			reqs.Set("elicitation", json.RawMessage(`{"create":{}}`))
		}
		caps.Set("tasks", json.RawMessage(`{"list":{},"cancel":{},"requests":`+string(reqs.Marshal())+`}`))
	}
	if ext := f.extensions(false); ext != nil {
		caps.Set("extensions", ext)
	}
	return caps.Marshal()
}

// ModernCapabilities returns the client capabilities object of the
// 2026-07-28 revision, sent in every request's _meta: roots (without
// listChanged, whose notification is gone), sampling with tools,
// elicitation in form and URL modes, and the tasks extension, which mcpx
// supports as a requestor (spec 2026-07-28: schema ClientCapabilities,
// basic/versioning "Extension Negotiation"). Like Capabilities it tells
// the handlers what was declared.
func (f *ClientFeatures) ModernCapabilities() json.RawMessage {
	caps := &Object{vals: map[string]json.RawMessage{}}
	if f.Roots != nil {
		caps.Set("roots", json.RawMessage(`{}`))
	}
	if f.Sampler != nil {
		f.Sampler.Tools = true
		caps.Set("sampling", json.RawMessage(`{"tools":{}}`))
	}
	if e := f.Elicitor; e != nil {
		e.Form, e.URL, e.stateless = true, true, true
		form := `{}`
		if e.Policy.Mode == PolicyAcceptDefaults {
			form = `{"applyDefaults":true}`
		}
		caps.Set("elicitation", json.RawMessage(fmt.Sprintf(`{"form":%s,"url":{}}`, form)))
	}
	caps.Set("extensions", f.extensions(true))
	return caps.Marshal()
}

// Handlers returns the server-to-client request handlers for what is
// declared; anything else is answered "method not found" by the session.
// Call Capabilities first.
func (f *ClientFeatures) Handlers() map[string]RequestHandler {
	hs := map[string]RequestHandler{}
	wrap := func(h Handler) Handler {
		if f.tasksOn() {
			return f.Tasks.Wrap(h)
		}
		return h
	}
	if f.Roots != nil {
		hs[mcp.MethodRootsList] = Adapt(f.Roots.Handle)
	}
	if f.Sampler != nil {
		hs[mcp.MethodSamplingCreateMessage] = Adapt(wrap(f.Sampler.Handle))
	}
	if f.elicitOn() {
		hs[mcp.MethodElicitationCreate] = Adapt(wrap(f.Elicitor.Handle))
	}
	if f.tasksOn() {
		for _, m := range []string{mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksList, mcp.MethodTasksCancel} {
			hs[m] = Adapt(f.Tasks.Handle)
		}
	}
	return hs
}

// Redeclare returns an Auto.OnChoose callback that declares the features
// again for the era chosen: ModernCapabilities for 2026-07-28, or
// Capabilities put into legacy's initialize. Declaring also tells the
// handlers what was declared, so they follow the era the probe found.
func (f *ClientFeatures) Redeclare(legacy *Legacy) func(era string) {
	return func(era string) {
		if era == "modern" {
			f.ModernCapabilities()
			return
		}
		legacy.Capabilities = f.Capabilities()
	}
}

// HandlersFor returns Handlers for a session opened by l. A lifecycle that
// may speak 2026-07-28 (Modern, or Auto) also gets an elicitation handler
// when elicitation is enabled, whatever handshake-era version is
// configured for a fallback: embedded elicitations of that era are
// answered through it (spec 2026-07-28: basic/patterns/mrtr).
func (f *ClientFeatures) HandlersFor(l Lifecycle) map[string]RequestHandler {
	hs := f.Handlers()
	if _, legacyOnly := l.(*Legacy); !legacyOnly && f.Elicitor != nil && hs[mcp.MethodElicitationCreate] == nil {
		hs[mcp.MethodElicitationCreate] = Adapt(f.Elicitor.Handle)
	}
	return hs
}

// Notice explains a notification that concerns the client features, or
// returns "" for one they have nothing to say about.
func (f *ClientFeatures) Notice(m *jsonrpc.Message) string {
	if m.Method == "notifications/elicitation/complete" && f.Elicitor != nil {
		id, u, known := f.Elicitor.Complete(m.Params)
		if !known {
			return fmt.Sprintf("elicitation %s completed, but mcpx accepted no pending URL elicitation with that id (ignored)", id)
		}
		return fmt.Sprintf("elicitation %s completed (%s)", id, u)
	}
	return ""
}

// Close stops work still running for the features (task handlers).
func (f *ClientFeatures) Close() {
	if f.Tasks != nil {
		f.Tasks.Close()
	}
}

// methodCapabilities names the server capability each request method
// belongs to (spec 2025-11-25: basic/lifecycle, "Capability Negotiation",
// and each feature's "Capabilities" section; 2026-07-28 declares the same
// ones in server/discover). A method that is not here needs none.
var methodCapabilities = map[string][]string{
	mcp.MethodToolsList:              {"tools"},
	mcp.MethodToolsCall:              {"tools"},
	mcp.MethodPromptsList:            {"prompts"},
	mcp.MethodPromptsGet:             {"prompts"},
	mcp.MethodResourcesList:          {"resources"},
	mcp.MethodResourcesRead:          {"resources"},
	mcp.MethodResourcesTemplatesList: {"resources"},
	mcp.MethodResourcesSubscribe:     {"resources", "subscribe"},
	mcp.MethodResourcesUnsubscribe:   {"resources", "subscribe"},
	mcp.MethodCompletionComplete:     {"completions"},
	mcp.MethodLoggingSetLevel:        {"logging"},
}

// capabilitySince names the first revision that defines a capability
// whose requests are older than it: 2024-11-05 has completion/complete
// but no completions capability (spec 2025-03-26: changelog, "Added
// completions capability"), so a server of that revision cannot declare
// it, and its absence says nothing.
var capabilitySince = map[string]string{
	"completions": "2025-03-26",
}

// revision is the handshake-era revision whose rules the session follows:
// the one negotiated, or the latest for a version mcpx does not know that
// the server accepted (Legacy.Open goes on as with it); "" before the
// handshake. Callers ask it of handshake-era sessions only.
func (s *Session) revision() string {
	v := s.protocolVersion()
	if v != "" && !slices.Contains(mcp.HandshakeVersions, v) {
		return mcp.LatestHandshakeVersion
	}
	return v
}

// legacyMethodCapabilities are the handshake era's task methods
// (2025-11-25: basic/utilities/tasks, "Capabilities"); the 2026-07-28
// tasks extension is declared otherwise (see warnUndeclaredTasks).
var legacyMethodCapabilities = map[string][]string{
	mcp.MethodTasksList:   {"tasks", "list"},
	mcp.MethodTasksCancel: {"tasks", "cancel"},
}

// warnUndeclared warns, once per capability and session, before a request
// for a capability the server did not declare is sent anyway: a client
// should not send it (basic/lifecycle: both parties "respect the
// negotiated capabilities"), but an inspector must be able to, and the
// server's answer shows what it really does.
func (s *Session) warnUndeclared(method string) {
	info := s.life.Server()
	if info == nil {
		return // not open yet: nothing was declared
	}
	path := methodCapabilities[method]
	if path == nil && s.modern() == nil {
		path = legacyMethodCapabilities[method]
	}
	if path == nil || info.Declares(path...) {
		return
	}
	if since := capabilitySince[path[0]]; since != "" && s.modern() == nil && s.revision() < since {
		return
	}
	name := strings.Join(path, ".")
	s.warnOnce("capability "+name, "the server does not declare the %s capability; sending %s anyway", name, method)
}

// warnDeclaredButUnknown warns, once per method, when the server answers
// a method of a capability it declared with "method not found": the
// declaration promised it (spec 2025-11-25: basic/lifecycle, "Capability
// Negotiation"). tools/call is left out: -32601 is also how a server
// refuses a tool that requires a task (basic/utilities/tasks).
func (s *Session) warnDeclaredButUnknown(ctx context.Context, method string, err error) {
	var rpcErr *jsonrpc.Error
	if method == mcp.MethodToolsCall || !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeMethodNotFound {
		return
	}
	path := methodCapabilities[method]
	if path == nil && s.modern() == nil {
		path = legacyMethodCapabilities[method]
	}
	if path == nil || !s.life.Server().Declares(path...) {
		return
	}
	name := strings.Join(path, ".")
	s.departOnce(ctx, "unknown "+method, "the server declares the %s capability, yet answers %s with -32601 (method not found)", name, method)
}

// maxWarned bounds the warnings warnOnce remembers: some of their keys
// come from the server (a method it sent), and memory stays bounded
// whatever it sends. Past the bound, such warnings are no longer given.
const maxWarned = 256

// maxWarnedKey bounds the length of a key warnOnce remembers.
const maxWarnedKey = 256

// warnOnce warns unless a warning with the same key was given already in
// this session.
func (s *Session) warnOnce(key, format string, args ...any) {
	if s.firstWarning(key) {
		s.warn(format, args...)
	}
}

// departOnce is warnOnce for a departure of the server's, tied to the
// request whose context ctx is (see depart).
func (s *Session) departOnce(ctx context.Context, key, format string, args ...any) {
	if s.firstWarning(key) {
		s.depart(ctx, format, args...)
	}
}

// firstWarning reports whether key is new to the session's warnings, and
// remembers it (within maxWarned).
func (s *Session) firstWarning(key string) bool {
	// A key holds the server's text at times (a method): bounded, as the
	// number of keys is.
	key = key[:min(len(key), maxWarnedKey)]
	s.mu.Lock()
	first := !s.warned[key] && len(s.warned) < maxWarned
	if s.warned == nil {
		s.warned = map[string]bool{}
	}
	if first {
		s.warned[key] = true
	}
	s.mu.Unlock()
	return first
}

// Declares reports whether the server's capabilities contain the given
// path of members, e.g. ("tasks", "requests", "tools", "call") or
// ("resources", "subscribe"); a boolean member must be true.
func (i *ServerInfo) Declares(path ...string) bool {
	if i == nil {
		return false
	}
	raw := i.Capabilities
	if !json.Valid(raw) {
		return false
	}
	// Read in place, as ParseObject would find each member (the last of
	// a name): every request asks this, and parsing copied every member.
	for _, name := range path {
		var found bool
		if !rawjson.Members(raw, func(n, v []byte) bool {
			if rawjson.NameIs(n, name) || !utf8.Valid(n) && memberName(n) == name {
				raw, found = v, true
			}
			return true
		}) || !found {
			return false
		}
	}
	s := string(raw)
	return s != "null" && s != "false"
}

// CapabilityNames flattens a capabilities object into the dotted names of
// the capabilities it sets ("tools.listChanged",
// "tasks.requests.tools.call"); false and null members are not set.
func CapabilityNames(raw json.RawMessage) []string { return capabilityDetails(raw, "") }

// capabilityDetails is CapabilityNames with prefix before each name.
func capabilityDetails(raw json.RawMessage, prefix string) []string {
	obj, err := ParseObject(raw)
	if err != nil {
		if s := strings.TrimSpace(string(raw)); s != "" && s != "true" && s != "{}" {
			return []string{strings.TrimSuffix(prefix, ".") + "=" + s}
		}
		if prefix != "" {
			return []string{strings.TrimSuffix(prefix, ".")}
		}
		return nil
	}
	if len(obj.Keys()) == 0 {
		if prefix != "" {
			return []string{strings.TrimSuffix(prefix, ".")}
		}
		return nil
	}
	var out []string
	for _, k := range obj.Keys() {
		v := obj.Get(k)
		if string(v) == "false" || string(v) == "null" {
			continue
		}
		out = append(out, capabilityDetails(v, prefix+k+".")...)
	}
	return out
}
