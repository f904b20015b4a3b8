package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// Implementation names a client or server (clientInfo / serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// ServerInfo is what a lifecycle learned about the server when it opened
// the session.
type ServerInfo struct {
	// Era is "legacy" for handshake-era sessions and "modern" for the
	// stateless 2026-07-28 revision.
	Era string
	// EraReason says how the era was chosen, for people ("--protocol-era
	// modern", "auto-detected: server/discover answered").
	EraReason       string
	ProtocolVersion string
	Implementation  Implementation
	// Capabilities is the server's capabilities object as received.
	Capabilities json.RawMessage
	Instructions string
	// Raw is the result that described the server (the initialize or
	// server/discover result), exactly as received.
	Raw json.RawMessage
	// SupportedVersions lists the versions server/discover named (modern).
	SupportedVersions []string
	// TTLMs and CacheScope are the server/discover result's caching hints
	// (modern; spec 2026-07-28: server/utilities/caching).
	TTLMs      *int64
	CacheScope string
}

// HasCapability reports whether the server declared a top-level capability
// (e.g. "tools", "logging", "completions").
func (i *ServerInfo) HasCapability(name string) bool {
	if i == nil {
		return false
	}
	obj, err := ParseObject(i.Capabilities)
	return err == nil && obj.Has(name) && string(obj.Get(name)) != "null"
}

// Lifecycle is a protocol era's strategy: how a session opens and what every
// outgoing request carries. The handshake era (Legacy) opens with
// initialize; the 2026-07-28 era has no handshake and puts the version,
// capabilities and client identity into each request's _meta. Swapping the
// lifecycle is all a session needs to change era.
type Lifecycle interface {
	// Open runs before any other request on s.
	Open(ctx context.Context, s *Session) error
	// Decorate returns the params to send with a request or notification
	// (for example with _meta added). Params may be nil.
	Decorate(method string, params json.RawMessage) (json.RawMessage, error)
	// Server returns what was learned about the server, nil before Open.
	Server() *ServerInfo
}

// The optional parts of a lifecycle. The session uses them when the
// lifecycle implements them; the handshake era needs none.

// Router is implemented by lifecycles whose requests carry routing
// metadata beside the message (2026-07-28: HTTP headers mirroring the
// method, the name and designated tool arguments). Route is called for
// every outgoing message with its final params; nil means none.
type Router interface {
	Route(ctx context.Context, s *Session, method string, params json.RawMessage) (*transport.Route, error)
}

// Finisher is implemented by lifecycles whose results are not always final
// (2026-07-28: a result may ask for input and be retried, or hand back a
// task to poll; an error may ask for another protocol version). Finish
// sees the raw outcome of every Call and returns what the caller gets; it
// may send the request again with Session.Resend.
type Finisher interface {
	Finish(ctx context.Context, s *Session, req *Request, res json.RawMessage, err error) (json.RawMessage, error)
}

// Stateless is implemented by lifecycles that send every request in the
// independent, per-request style of 2026-07-28: cancellation closes the
// request's stream where the transport has one, and a server's
// notifications/cancelled ends a request of ours (a subscription).
type Stateless interface {
	Stateless() bool
}

// EraError wraps an opening failure that suggests the server speaks the
// other protocol era: a session opened with that era's lifecycle (or
// Auto, which finds out) would get further.
type EraError struct {
	// Looks is the era the server appears to speak: "legacy" or "modern".
	Looks string
	Err   error
	// Other is set when the other era was tried too (Auto, after its
	// probe chose wrongly) and failed as well: its error. Neither era
	// then opens the session, so choosing one would not help.
	Other error
}

func (e *EraError) Error() string {
	looks := "a handshake-era (initialize) server"
	if e.Looks == "modern" {
		looks = "a 2026-07-28 (stateless) server"
	}
	if e.Other != nil {
		return fmt.Sprintf("%v; the server looks like %s, but that era fails too: %v", e.Err, looks, e.Other)
	}
	return fmt.Sprintf("%v; the server looks like %s", e.Err, looks)
}

func (e *EraError) Unwrap() error { return e.Err }

// Legacy is the handshake-era lifecycle (revisions 2024-11-05 to 2025-11-25):
// initialize, version check, notifications/initialized
// (spec 2025-11-25: basic/lifecycle, "Initialization").
type Legacy struct {
	// ProtocolVersion is offered in initialize; empty means the latest.
	ProtocolVersion string
	ClientInfo      Implementation
	// Capabilities is the client capabilities object; nil means {}.
	Capabilities json.RawMessage
	// Reason says how the era was chosen, for ServerInfo.EraReason.
	Reason string

	// info is written once by Open and read by the session's read loop
	// (a server's message may arrive while Open is still running).
	info atomic.Pointer[ServerInfo]
	// offered is the capabilities object Open sent in initialize, for
	// the read loop to judge the server's requests by; nil before.
	offered atomic.Pointer[json.RawMessage]
	// phase is where Open is: handshakeIdle before it runs (a session
	// used without it, in tests), handshaking until it is about to send
	// notifications/initialized, handshakeDone after.
	phase atomic.Int32
}

// The phases of Legacy.Open.
const (
	handshakeIdle int32 = iota
	handshaking
	handshakeDone
)

// VersionError reports a server that answered initialize with a protocol
// version mcpx does not speak: offering one the server supports
// (Legacy.ProtocolVersion) may get further.
type VersionError struct {
	Offered, Got string
	// Invalid is the protocolVersion as received (a JSON excerpt) when
	// it names no version at all: a number, null, "". Got is then empty.
	Invalid string
}

// ErrUnsupportedVersion is matched by *VersionError.
var ErrUnsupportedVersion = errors.New("unsupported protocol version")

func (e *VersionError) Error() string {
	switch {
	case e.Invalid != "":
		// No version to speak of: another offer will not help.
		return fmt.Sprintf("the server's initialize result has protocolVersion %s, not a string naming a version (offered %q; spec basic/lifecycle, \"Version Negotiation\")", e.Invalid, e.Offered)
	case e.Got == "":
		return fmt.Sprintf("the server's initialize result has no protocolVersion, which it must name (offered %q; spec basic/lifecycle, \"Version Negotiation\")", e.Offered)
	}
	if slices.Contains(mcp.ModernVersions, e.Got) {
		// mcpx speaks it, but not in initialize: it has no handshake.
		return fmt.Sprintf("server chose protocol version %q, a stateless revision, which has no initialize handshake (offered %q; in the handshake mcpx speaks %s)",
			e.Got, e.Offered, strings.Join(mcp.HandshakeVersions, ", "))
	}
	return fmt.Sprintf("server chose protocol version %s, which mcpx does not speak (offered %q; mcpx speaks %s)",
		jsonrpc.QuoteClipped(e.Got), e.Offered, strings.Join(mcp.HandshakeVersions, ", "))
}

// Is makes errors.Is(err, ErrUnsupportedVersion) true.
func (e *VersionError) Is(target error) bool { return target == ErrUnsupportedVersion }

// Open performs the initialize handshake.
func (l *Legacy) Open(ctx context.Context, s *Session) error {
	l.phase.Store(handshaking)
	offered := l.ProtocolVersion
	if offered == "" {
		offered = mcp.LatestHandshakeVersion
	}
	caps := l.Capabilities
	if len(caps) == 0 {
		caps = json.RawMessage("{}")
	}
	l.offered.Store(&caps)
	params, err := initializeParams(offered, caps, l.ClientInfo)
	if err != nil {
		return fmt.Errorf("%s: encoding params: %w", mcp.MethodInitialize, err)
	}
	raw, err := s.Call(ctx, mcp.MethodInitialize, params)
	if err != nil {
		if looksModern(err) {
			return &EraError{Looks: "modern", Err: err}
		}
		return err
	}
	res, problems, err := readInitializeResult(raw)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	for _, p := range problems {
		s.depart(ctx, "the initialize result departs from the spec (basic/lifecycle): %s", p)
	}
	known := slices.Contains(mcp.HandshakeVersions, res.ProtocolVersion)
	if res.ProtocolVersion == "" || (res.ProtocolVersion != offered && !known) {
		return fmt.Errorf("initialize: %w", &VersionError{Offered: offered, Got: res.ProtocolVersion, Invalid: res.BadVersion})
	}
	if !known {
		// The version asked for, which mcpx does not know: the server
		// says it speaks it, and the person wanted to see that.
		s.warn("the server accepted protocol version %s, which mcpx does not know; going on as with %s", res.ProtocolVersion, mcp.LatestHandshakeVersion)
	}
	l.info.Store(&ServerInfo{
		Era:             "legacy",
		EraReason:       l.Reason,
		ProtocolVersion: res.ProtocolVersion,
		Implementation:  res.ServerInfo,
		Capabilities:    res.Capabilities,
		Instructions:    res.Instructions,
		Raw:             raw,
	})
	// Transports that care (HTTP: the MCP-Protocol-Version header, the GET
	// stream) learn the version before anything else is sent.
	if n, ok := transport.Find[transport.Negotiator](s.conn); ok {
		negotiated := func(ctx context.Context) error { return n.Negotiated(ctx, res.ProtocolVersion) }
		if err := s.openStreamWithin(ctx, negotiated); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
	}
	s.negotiatedStream()
	// A server may ask for roots at any time: its stream is open before it
	// hears that the session is ready.
	if anytime, _ := callbacks(caps); anytime {
		if err := s.listen(ctx); err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
	}
	// Set before the notification goes out: a server may send its
	// requests as soon as it has it, before Notify returns.
	l.phase.Store(handshakeDone)
	return s.Notify(ctx, mcp.NotificationInitialized, nil)
}

// handshakePending reports whether the session is in the handshake era
// and has not yet sent notifications/initialized.
func (s *Session) handshakePending() bool {
	l, ok := s.life.(*Legacy)
	if a, isAuto := s.life.(*Auto); isAuto {
		l, ok = a.Chosen().(*Legacy)
	}
	return ok && l.phase.Load() == handshaking
}

// offeredCapabilities returns the client capabilities the session's
// handshake declared in initialize, or nil when it has sent none (not
// yet, or in the 2026-07-28 era, where requests carry them).
func (s *Session) offeredCapabilities() json.RawMessage {
	l, ok := s.life.(*Legacy)
	if a, isAuto := s.life.(*Auto); isAuto {
		l, ok = a.Chosen().(*Legacy)
	}
	if !ok {
		return nil
	}
	if caps := l.offered.Load(); caps != nil {
		return *caps
	}
	return nil
}

// declaredCapabilities returns the client capabilities the session
// declared, in whichever era it runs: those initialize offered, or those
// every 2026-07-28 request carries. known is false while the era, or the
// handshake, has not settled them yet.
func (s *Session) declaredCapabilities() (caps json.RawMessage, known bool) {
	life := s.life
	if a, isAuto := life.(*Auto); isAuto {
		life = a.Chosen()
	}
	if m, ok := life.(*Modern); ok {
		if len(m.Capabilities) == 0 {
			return json.RawMessage("{}"), true
		}
		return m.Capabilities, true
	}
	caps = s.offeredCapabilities()
	return caps, caps != nil
}

// Decorate leaves params untouched: handshake-era requests carry nothing extra.
func (l *Legacy) Decorate(_ string, params json.RawMessage) (json.RawMessage, error) {
	return params, nil
}

// Server returns the initialize result's description of the server.
func (l *Legacy) Server() *ServerInfo { return l.info.Load() }
