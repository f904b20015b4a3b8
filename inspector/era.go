package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/mcp"
)

// Era-neutral operations: what a person asks for is the same in both
// protocol eras, how it is done on the wire is the session's lifecycle's
// business. Commands call these and never ask which era they are in.

// VersionEra returns the protocol era of a revision mcpx speaks: "legacy"
// for the handshake revisions (mcp.HandshakeVersions), "modern" for the
// stateless ones (mcp.ModernVersions), and "" for any other version. A
// version mcpx does not know belongs to no era: it is offered as it is in
// the era the person chose, and the server's answer decides what happens
// next (spec 2025-11-25: basic/lifecycle, "Version Negotiation"; 2026-07-28:
// basic/versioning) — which is how a person tests a server's negotiation.
func VersionEra(v string) string {
	switch {
	case slices.Contains(mcp.HandshakeVersions, v):
		return "legacy"
	case slices.Contains(mcp.ModernVersions, v):
		return "modern"
	}
	return ""
}

// ErrNotInThisEra is matched by the errors of operations the session's
// protocol era does not have (tasks/list in the tasks extension of
// 2026-07-28, for example).
var ErrNotInThisEra = errors.New("not available in this protocol era")

// EraUnsupportedError reports an operation the session's era lacks. It
// matches ErrNotInThisEra.
type EraUnsupportedError struct {
	// Op is what was asked for ("tasks/list").
	Op string
	// Why says, for people, what the era has instead of it, or why not.
	Why string
}

func (e *EraUnsupportedError) Error() string { return e.Why }

// Is makes errors.Is(err, ErrNotInThisEra) true.
func (e *EraUnsupportedError) Is(target error) bool { return target == ErrNotInThisEra }

// PingResult is the outcome of Session.Ping.
type PingResult struct {
	// Raw is the result as received.
	Raw json.RawMessage
	// RTT is the time from sending the request to its answer.
	RTT time.Duration
	// Instead is empty when ping itself was sent; in an era without ping it
	// says, for people, what was timed in its place.
	Instead string
}

// Ping checks that the server answers and times the round trip. The
// handshake era has ping (spec 2025-11-25: basic/utilities/ping);
// 2026-07-28 removed it, so there Ping times server/discover, the cheapest
// request every server must answer (spec 2026-07-28: server/discover).
// onNote, when set, is told about the substitution before the request goes
// out.
func (s *Session) Ping(ctx context.Context, onNote func(string)) (*PingResult, error) {
	method, instead := mcp.MethodPing, ""
	if s.modern() != nil {
		method, instead = mcp.MethodDiscover, "server/discover: the modern era has no ping"
		if onNote != nil {
			onNote("the modern era has no ping; timing server/discover instead")
		}
	}
	start := time.Now()
	res, err := s.Call(ctx, method, nil)
	if err != nil {
		return nil, err
	}
	return &PingResult{Raw: res, RTT: time.Since(start), Instead: instead}, nil
}

// OpeningNote says, for people, how a lifecycle is about to open a session
// and what the client declares in it.
func OpeningNote(l Lifecycle) string {
	switch l := l.(type) {
	case *Legacy:
		return "offering client capabilities " + string(l.Capabilities)
	case *Modern:
		return "declaring client capabilities " + string(l.Capabilities) + " in every request (protocol era modern)"
	case *Auto:
		return "protocol era auto: probing with server/discover before anything else"
	}
	return ""
}

// OpenedNote says, for people, how the session was opened and with what
// server: "initialized: NAME VERSION, protocol V" after a handshake,
// "discovered: …" after server/discover.
func (i *ServerInfo) OpenedNote() string {
	verb := "initialized"
	if i.Era == "modern" {
		verb = "discovered"
	}
	name := strings.TrimSpace(i.Implementation.Name + " " + i.Implementation.Version)
	if name == "" {
		name = "a server that did not name itself"
	}
	return fmt.Sprintf("%s: %s, protocol %s", verb, name, i.ProtocolVersion)
}
