package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// DefaultProbeTimeout bounds how long Auto waits for server/discover on a
// connection without per-request status codes (stdio): a handshake-era
// server may never answer a request that comes before initialize.
const DefaultProbeTimeout = 3 * time.Second

// EraDecision is what Auto found out about a server's era.
type EraDecision struct {
	// Era is "modern" or "legacy".
	Era string
	// Version is the version to use: a legacy server that named its
	// versions in an UnsupportedProtocolVersionError is offered the newest
	// of them that mcpx speaks; "" means the configured one.
	Version string
	// Reason says how the era was found, for people.
	Reason string

	// unanswered: the probe got no answer in time (stdio).
	unanswered bool
}

// ProbeError is a failure of Auto's probe that says nothing about the
// server's era — a server error (HTTP 500 and the like, but not 502, 503
// or 504, which say the server is down), a broken stream — so Auto
// neither falls back nor goes on: the session is not open, though
// choosing the era outright (no probe) might open it, a handshake-era
// server failing only on a request without a session.
type ProbeError struct{ Err error }

func (e *ProbeError) Error() string {
	return e.Err.Error() + " (the probe for the server's protocol era)"
}

func (e *ProbeError) Unwrap() error { return e.Err }

// EraCache remembers each target's era for the rest of the run: the era
// is a property of the server, not of a connection (spec 2026-07-28:
// basic/versioning, "Backward Compatibility with Initialization-Based
// Versions"). It is safe for concurrent use; the zero value is ready.
type EraCache struct {
	mu sync.Mutex
	m  map[string]EraDecision
}

// Get returns the decision cached for target.
func (c *EraCache) Get(target string) (EraDecision, bool) {
	if c == nil {
		return EraDecision{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.m[target]
	return d, ok
}

// Put caches the decision for target.
func (c *EraCache) Put(target string, d EraDecision) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]EraDecision{}
	}
	c.m[target] = d
}

// Auto is the lifecycle of a client that speaks both eras: it probes with
// server/discover and then is Modern or Legacy. On stdio the probe waits at
// most ProbeTimeout and any error that is not a recognized modern error
// means a handshake-era server; over HTTP the answer comes with the
// response (a 4xx whose body is not a modern JSON-RPC error means a
// handshake-era server) (spec 2026-07-28: basic/transports/stdio and
// streamable-http, "Backward Compatibility").
type Auto struct {
	Modern *Modern
	Legacy *Legacy
	// Cache and Target remember the era per server for the run; both may
	// be zero.
	Cache  *EraCache
	Target string
	// ProbeTimeout bounds the stdio probe; zero means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// OnChoose is told the era once it is chosen (to adjust what the
	// client offers, for example).
	OnChoose func(era string)

	mu      sync.Mutex
	chosen  Lifecycle
	probing bool
}

func (a *Auto) current() (Lifecycle, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.chosen, a.probing
}

// Stateless reports true while probing and once the server is modern.
func (a *Auto) Stateless() bool {
	l, probing := a.current()
	if probing {
		return true
	}
	st, ok := l.(Stateless)
	return ok && st.Stateless()
}

// logsUnasked asks the era chosen (see Modern.logsUnasked).
func (a *Auto) logsUnasked() bool {
	l, probing := a.current()
	if probing {
		return false
	}
	u, ok := l.(logAsker)
	return ok && u.logsUnasked()
}

// ownsSubscriptions asks the era chosen (see Modern.ownsSubscriptions).
func (a *Auto) ownsSubscriptions() bool {
	l, probing := a.current()
	if probing {
		return false
	}
	o, ok := l.(subscriptionOwner)
	return ok && o.ownsSubscriptions()
}

// Open probes the server (or uses the cached era) and opens the session
// in the era found.
func (a *Auto) Open(ctx context.Context, s *Session) error {
	if d, ok := a.Cache.Get(a.Target); ok {
		return a.use(ctx, s, d, true)
	}
	d, err := a.probe(ctx, s)
	if err != nil {
		return err
	}
	a.Cache.Put(a.Target, d)
	return a.use(ctx, s, d, false)
}

// probe asks server/discover and classifies the answer.
func (a *Auto) probe(ctx context.Context, s *Session) (EraDecision, error) {
	a.mu.Lock()
	a.probing = true
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.probing = false
		a.mu.Unlock()
	}()
	opts := []CallOption{asProbe()}
	wait := time.Duration(0)
	if !carriesRoutes(s.conn) {
		wait = a.ProbeTimeout
		if wait <= 0 {
			wait = DefaultProbeTimeout
		}
		opts = append(opts, WithTimeout(wait, wait))
	}
	err := a.Modern.open(ctx, s, opts...)
	var uv *UnsupportedVersionError
	var te *TimeoutError
	var he *transport.HTTPError
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		info := a.Modern.Server()
		return EraDecision{Era: "modern", Reason: fmt.Sprintf("auto-detected: server/discover answered (supported versions %s)", strings.Join(info.SupportedVersions, ", "))}, nil
	case isConnectionFailure(ctx, err):
		return EraDecision{}, err
	case errors.As(err, &uv):
		if uv.speaksModern() || len(uv.Supported) == 0 {
			// A modern server with no version in common with mcpx
			// (its DiscoverResult or its -32022 named only stateless
			// versions mcpx does not speak): not a reason to fall back
			// (spec 2026-07-28: basic/transports/stdio, "Backward
			// Compatibility": do not fall back to initialize).
			return EraDecision{}, err
		}
		// A modern answer naming only handshake-era versions: initialize
		// with the newest of them mcpx speaks.
		d := EraDecision{Era: "legacy", Reason: "auto-detected: server/discover named only handshake-era versions (" + strings.Join(uv.Supported, ", ") + ")"}
		for _, v := range mcp.HandshakeVersions {
			if slices.Contains(uv.Supported, v) {
				d.Version = v
				break
			}
		}
		if d.Version == "" {
			return EraDecision{}, err
		}
		return d, nil
	case isModernError(err):
		return EraDecision{}, err
	case errors.As(err, &te):
		return EraDecision{Era: "legacy", unanswered: true, Reason: fmt.Sprintf("auto-detected: no answer to server/discover within %s, so a handshake-era server", wait)}, nil
	case errors.As(err, &he):
		if he.Status >= 400 && he.Status < 500 {
			return EraDecision{Era: "legacy", Reason: fmt.Sprintf("auto-detected: server/discover was refused with HTTP %d and no modern error", he.Status)}, nil
		}
		if he.Status == http.StatusBadGateway || he.Status == http.StatusServiceUnavailable || he.Status == http.StatusGatewayTimeout {
			// The server (or the gateway before it) is down, whatever
			// its era: choosing one would not help.
			return EraDecision{}, err
		}
		return EraDecision{}, &ProbeError{Err: err}
	case errors.As(err, &rpcErr):
		return EraDecision{Era: "legacy", Reason: fmt.Sprintf("auto-detected: server/discover failed with error %d (%s), so a handshake-era server", rpcErr.Code, firstLineOf(rpcErr.Message))}, nil
	case errors.Is(err, transport.ErrTransport):
		return EraDecision{}, &ProbeError{Err: err}
	}
	// The server answered, but not with a DiscoverResult.
	return EraDecision{Era: "legacy", Reason: "auto-detected: server/discover did not return a DiscoverResult (" + err.Error() + ")"}, nil
}

// use opens the session in the era d names.
func (a *Auto) use(ctx context.Context, s *Session, d EraDecision, cached bool) error {
	reason := d.Reason
	if cached {
		reason += " (remembered for this run)"
	}
	var l Lifecycle
	if d.Era == "modern" {
		a.Modern.Reason = reason
		l = a.Modern
	} else {
		a.Legacy.Reason = reason
		if d.Version != "" {
			a.Legacy.ProtocolVersion = d.Version
		}
		l = a.Legacy
	}
	a.choose(l, d.Era)
	if d.Era == "modern" {
		if info := a.Modern.Server(); info != nil && !cached {
			// The probe's answer is the discover result; keep its reason.
			a.Modern.setReason(reason)
			return nil
		}
	}
	err := l.Open(ctx, s)
	if err == nil || d.Era != "legacy" || isConnectionFailure(ctx, err) {
		return err
	}
	var ee *EraError
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &ee) && ee.Looks == "modern":
		// Refused as a 2026-07-28 server refuses initialize.
		if rerr := a.rediscover(ctx, s, "initialize was refused as by a 2026-07-28 server"); rerr != nil {
			if isConnectionFailure(ctx, rerr) {
				return rerr
			}
			return &EraError{Looks: ee.Looks, Err: ee.Err, Other: rerr}
		}
		return nil
	case d.unanswered && errors.Is(err, ErrTimeout):
		// Silent in both eras: say so, rather than only half of it.
		return fmt.Errorf("%w; server/discover, sent first, got none either", err)
	case d.unanswered && errors.As(err, &rpcErr):
		// The server that did not answer the probe in time answers
		// initialize, with an error: its answer to the probe may only
		// have come late (a server slow to start).
		if rerr := a.rediscover(ctx, s, "server/discover was not answered in time, initialize was refused"); rerr != nil {
			if isConnectionFailure(ctx, rerr) {
				return rerr
			}
			return err
		}
		return nil
	}
	return err
}

func (a *Auto) choose(l Lifecycle, era string) {
	a.mu.Lock()
	a.chosen = l
	a.mu.Unlock()
	if a.OnChoose != nil {
		a.OnChoose(era)
	}
}

// rediscover handles a handshake refused after the probe chose the
// handshake era: the probe's answer came too late (a server slow to start
// on stdio), was not a DiscoverResult, or the era remembered no longer
// holds. The era is probed once more, without the stdio probe's bound
// (spec 2026-07-28: basic/versioning, "Backward Compatibility with
// Initialization-Based Versions": "re-probing if the cached assumption
// later fails"); why says what happened, for the era's reason. It returns
// server/discover's error when the server does not answer it this time
// either.
func (a *Auto) rediscover(ctx context.Context, s *Session, why string) error {
	a.mu.Lock()
	a.probing = true
	a.mu.Unlock()
	err := a.Modern.open(ctx, s)
	a.mu.Lock()
	a.probing = false
	a.mu.Unlock()
	if err != nil {
		return err
	}
	d := EraDecision{Era: "modern", Reason: "auto-detected: " + why + ", and server/discover, asked again, answered"}
	a.Cache.Put(a.Target, d)
	a.Modern.setReason(d.Reason)
	a.choose(a.Modern, d.Era)
	return nil
}

// Decorate decorates for the era in use (modern while probing).
func (a *Auto) Decorate(method string, params json.RawMessage) (json.RawMessage, error) {
	l, probing := a.current()
	if probing {
		return a.Modern.Decorate(method, params)
	}
	if l == nil {
		return params, nil
	}
	return l.Decorate(method, params)
}

// Route routes for the era in use.
func (a *Auto) Route(ctx context.Context, s *Session, method string, params json.RawMessage) (*transport.Route, error) {
	l, probing := a.current()
	if probing {
		return a.Modern.Route(ctx, s, method, params)
	}
	if r, ok := l.(Router); ok {
		return r.Route(ctx, s, method, params)
	}
	return nil, nil
}

// Finish finishes for the era in use.
func (a *Auto) Finish(ctx context.Context, s *Session, req *Request, res json.RawMessage, err error) (json.RawMessage, error) {
	l, probing := a.current()
	if probing {
		return a.Modern.Finish(ctx, s, req, res, err)
	}
	if f, ok := l.(Finisher); ok {
		return f.Finish(ctx, s, req, res, err)
	}
	return res, err
}

// Server returns what the chosen lifecycle learned.
func (a *Auto) Server() *ServerInfo {
	l, _ := a.current()
	if l == nil {
		return nil
	}
	return l.Server()
}

// Chosen returns the lifecycle in use once Open chose one.
func (a *Auto) Chosen() Lifecycle {
	l, _ := a.current()
	return l
}
