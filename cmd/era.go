package cmd

import (
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/transport"
)

// Protocol eras (--protocol-era): the handshake revisions up to 2025-11-25
// ("legacy"), the stateless revision 2026-07-28 ("modern"), or whichever
// the server speaks ("auto").
const (
	eraLegacy = "legacy"
	eraAuto   = "auto"
	eraModern = "modern"
)

// validate checks the session flags and settles --protocol-era (default
// $MCPX_PROTOCOL_ERA, else legacy) against --protocol-version: a
// stateless version mcpx speaks implies the modern era, and the two flags
// must not contradict each other. A version mcpx does not know
// (inspector.VersionEra) is offered as it is, in the era chosen.
func (f sessionFlags) validate(h httpFlags, ios *IOStreams, eraSet bool) (sessionDesc, error) {
	d := sessionDesc{maxMessageSize: f.maxMessageSize, timeout: f.timeout, maxTimeout: f.maxTimeout, protocolVersion: f.protocolVersion}
	era, source := f.protocolEra, ""
	if eraSet {
		source = "--protocol-era"
	} else if env := strings.TrimSpace(ios.Getenv("MCPX_PROTOCOL_ERA")); env != "" {
		era, source = env, "MCPX_PROTOCOL_ERA"
	}
	versionEra := inspector.VersionEra(f.protocolVersion)
	switch era {
	case "":
		era = eraLegacy
		if versionEra == eraModern {
			era, source = eraModern, "--protocol-version"
		}
	case eraLegacy, eraAuto, eraModern:
	default:
		return d, usageErrorf("%s must be legacy, auto or modern, not %q", source, era)
	}
	if v := f.protocolVersion; v != "" {
		switch {
		case versionEra == eraModern && era == eraLegacy:
			return d, usageErrorf("--protocol-version %s is a 2026-07-28-era (stateless) version, but %s is legacy; use --protocol-era modern", v, orDefault(source, "the default era"))
		case versionEra == eraLegacy && era == eraModern && source != "--protocol-version":
			return d, usageErrorf("--protocol-version %s is a handshake-era version, but %s is modern; use --protocol-era legacy or auto", v, source)
		}
	}
	if era == eraModern && h.url != "" && h.transport == string(transport.ModeSSE) {
		return d, usageErrorf("--transport sse is the 2024-11-05 HTTP+SSE transport; the modern era runs over Streamable HTTP (--transport http or auto)")
	}
	d.era, d.eraSource = era, source
	d.traceContext, d.traceErr = traceContextFrom(ios)
	return d, nil
}

// Environment variables that carry an OpenTelemetry trace context into a
// process (OpenTelemetry, "Environment Variables as Context Propagation
// Carriers").
const (
	traceParentEnv = "TRACEPARENT"
	traceStateEnv  = "TRACESTATE"
	baggageEnv     = "BAGGAGE"
)

// traceContextFrom takes the trace context of the environment, which
// every request then carries in _meta (spec 2026-07-28: basic/index,
// "OpenTelemetry trace context"). Values that break the W3C formats are
// not sent, and a command that connects warns about them (connect): a
// value some other tool left in the environment must not stop mcpx.
func traceContextFrom(ios *IOStreams) (*inspector.TraceContext, error) {
	parent := strings.TrimSpace(ios.Getenv(traceParentEnv))
	state := strings.TrimSpace(ios.Getenv(traceStateEnv))
	baggage := strings.TrimSpace(ios.Getenv(baggageEnv))
	tc, err := inspector.ParseTraceContext(parent, state, baggage)
	if err != nil {
		return nil, fmt.Errorf("the trace context of the environment (%s, %s, %s) is not sent as it breaks W3C's format: %v; correct it or unset it", traceParentEnv, traceStateEnv, baggageEnv, err)
	}
	return tc, nil
}

// legacyVersion is the version to offer in initialize: --protocol-version
// unless it is a stateless one.
func (d sessionDesc) legacyVersion() string {
	if inspector.VersionEra(d.protocolVersion) != eraModern {
		return d.protocolVersion
	}
	return ""
}

// modernVersion is the stateless version to declare: --protocol-version
// unless it is a handshake one.
func (d sessionDesc) modernVersion() string {
	if inspector.VersionEra(d.protocolVersion) != eraLegacy {
		return d.protocolVersion
	}
	return ""
}

// offered is the version offered to an HTTP server before a session says
// which (MCP-Protocol-Version, OAuth's discovery).
func (d sessionDesc) offered() string {
	if d.protocolVersion == "" {
		return latestVersion()
	}
	return d.protocolVersion
}

// eraKey names the server for the era cache.
func (d connDesc) eraKey() string {
	if d.http.url != "" {
		return "url " + d.http.url
	}
	return "command " + strings.Join(d.server, "\x00")
}

// lifecycle builds the session's lifecycle for the era: Legacy
// (initialize), Modern (per-request _meta) or Auto (probe, then one of
// them, remembering the answer in cache).
func lifecycle(d *connDesc, feats *inspector.ClientFeatures, onNote func(string), cache *inspector.EraCache) inspector.Lifecycle {
	client := inspector.Implementation{Name: "mcpx", Version: Version()}
	legacy := func(reason string) *inspector.Legacy {
		return &inspector.Legacy{
			ProtocolVersion: d.session.legacyVersion(),
			ClientInfo:      client,
			Capabilities:    feats.Capabilities(),
			Reason:          reason,
		}
	}
	modern := func(reason string) *inspector.Modern {
		return &inspector.Modern{
			ProtocolVersion: d.session.modernVersion(),
			ClientInfo:      client,
			Capabilities:    feats.ModernCapabilities(),
			LogLevel:        d.feat.logLevel,
			Reason:          reason,
			OnNote:          onNote,
			Shared:          d.session.held,
		}
	}
	chosenBy := "chosen with " + d.session.eraSource
	if d.session.eraSource == "" {
		chosenBy = "the default"
	}
	switch d.session.era {
	case eraModern:
		return modern(chosenBy)
	case eraAuto:
		if d.http.url != "" && d.http.mode == transport.ModeSSE {
			return legacy("--transport sse speaks only the handshake era")
		}
		m := modern("")
		l := legacy("")
		return &inspector.Auto{
			Modern: m,
			Legacy: l,
			Cache:  cache,
			Target: d.eraKey(),
			// Tell the handlers what the era chosen declared.
			OnChoose: feats.Redeclare(l),
		}
	}
	return legacy(chosenBy)
}
