package cmd

import (
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

// resolveEra settles --protocol-era (default $MCPX_PROTOCOL_ERA, else
// legacy) against --protocol-version: a stateless version mcpx speaks
// implies the modern era, and the two flags must not contradict each
// other. A version mcpx does not know (inspector.VersionEra) is offered
// as it is, in the era chosen.
func (g *globalOptions) resolveEra(eraSet bool) error {
	era, source := g.protocolEra, ""
	if eraSet {
		source = "--protocol-era"
	} else if env := strings.TrimSpace(g.io.Getenv("MCPX_PROTOCOL_ERA")); env != "" {
		era, source = env, "MCPX_PROTOCOL_ERA"
	}
	versionEra := inspector.VersionEra(g.protocolVersion)
	switch era {
	case "":
		era = eraLegacy
		if versionEra == eraModern {
			era, source = eraModern, "--protocol-version"
		}
	case eraLegacy, eraAuto, eraModern:
	default:
		return usageErrorf("%s must be legacy, auto or modern, not %q", source, era)
	}
	if v := g.protocolVersion; v != "" {
		switch {
		case versionEra == eraModern && era == eraLegacy:
			return usageErrorf("--protocol-version %s is a 2026-07-28-era (stateless) version, but %s is legacy; use --protocol-era modern", v, orDefault(source, "the default era"))
		case versionEra == eraLegacy && era == eraModern && source != "--protocol-version":
			return usageErrorf("--protocol-version %s is a handshake-era version, but %s is modern; use --protocol-era legacy or auto", v, source)
		}
	}
	if era == eraModern && g.url != "" && g.transport == string(transport.ModeSSE) {
		return usageErrorf("--transport sse is the 2024-11-05 HTTP+SSE transport; the modern era runs over Streamable HTTP (--transport http or auto)")
	}
	g.era = era
	g.eraSource = source
	return nil
}

// legacyVersion is the version to offer in initialize: --protocol-version
// unless it is a stateless one.
func (g *globalOptions) legacyVersion() string {
	if inspector.VersionEra(g.protocolVersion) != eraModern {
		return g.protocolVersion
	}
	return ""
}

// modernVersion is the stateless version to declare: --protocol-version
// unless it is a handshake one.
func (g *globalOptions) modernVersion() string {
	if inspector.VersionEra(g.protocolVersion) != eraLegacy {
		return g.protocolVersion
	}
	return ""
}

// target names the server for the era cache.
func (g *globalOptions) target(server []string) string {
	if g.url != "" {
		return "url " + g.url
	}
	return "command " + strings.Join(server, "\x00")
}

// lifecycle builds the session's lifecycle for the era: Legacy (initialize),
// Modern (per-request _meta) or Auto (probe, then one of them).
func (g *globalOptions) lifecycle(c *client, server []string) inspector.Lifecycle {
	client := inspector.Implementation{Name: "mcpx", Version: Version()}
	legacy := func(reason string) *inspector.Legacy {
		return &inspector.Legacy{
			ProtocolVersion: g.legacyVersion(),
			ClientInfo:      client,
			Capabilities:    c.feats.Capabilities(),
			Reason:          reason,
		}
	}
	modern := func(reason string) *inspector.Modern {
		return &inspector.Modern{
			ProtocolVersion: g.modernVersion(),
			ClientInfo:      client,
			Capabilities:    c.feats.ModernCapabilities(),
			LogLevel:        g.feat.logLevel,
			Reason:          reason,
			OnNote:          c.console.Note,
		}
	}
	chosenBy := "chosen with " + g.eraSource
	if g.eraSource == "" {
		chosenBy = "the default"
	}
	switch g.era {
	case eraModern:
		return modern(chosenBy)
	case eraAuto:
		if g.url != "" && g.transport == string(transport.ModeSSE) {
			return legacy("--transport sse speaks only the handshake era")
		}
		m := modern("")
		l := legacy("")
		return &inspector.Auto{
			Modern: m,
			Legacy: l,
			Cache:  &g.eraCache,
			Target: g.target(server),
			// Tell the handlers what the era chosen declared.
			OnChoose: c.feats.Redeclare(l),
		}
	}
	return legacy(chosenBy)
}
