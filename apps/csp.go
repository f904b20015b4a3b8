package apps

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"unicode/utf8"
)

// CSP is the network access a view declares in its resource's
// _meta.ui.csp (spec "UI Resource Format", McpUiResourceCsp): the
// origins it may connect to, load resources from, frame, and use as its
// base URI. Empty lists mean none.
type CSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

func (c CSP) empty() bool {
	return len(c.ConnectDomains)+len(c.ResourceDomains)+len(c.FrameDomains)+len(c.BaseURIDomains) == 0
}

// Permissions are the browser features a view asks for in
// _meta.ui.permissions (spec "UI Resource Format"); each maps to a
// Permission Policy feature of the view's iframe.
type Permissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

// MarshalJSON writes the spec's shape: a member with an empty object for
// each permission.
func (p Permissions) MarshalJSON() ([]byte, error) {
	var parts []string
	for _, f := range p.features() {
		parts = append(parts, strconv.Quote(f.key)+":{}")
	}
	return []byte("{" + strings.Join(parts, ",") + "}"), nil
}

type feature struct{ key, policy string }

// features lists the granted permissions with their Permission Policy
// names (spec: camera, microphone, geolocation, clipboard-write).
func (p Permissions) features() []feature {
	var out []feature
	if p.Camera {
		out = append(out, feature{"camera", "camera"})
	}
	if p.Microphone {
		out = append(out, feature{"microphone", "microphone"})
	}
	if p.Geolocation {
		out = append(out, feature{"geolocation", "geolocation"})
	}
	if p.ClipboardWrite {
		out = append(out, feature{"clipboardWrite", "clipboard-write"})
	}
	return out
}

// Allow is the iframe allow attribute (Permissions Policy) granting p,
// "" when p asks for nothing.
func (p Permissions) Allow() string {
	var names []string
	for _, f := range p.features() {
		names = append(names, f.policy)
	}
	return strings.Join(names, "; ")
}

// Policy is what the host enforces on one view: the CSP header of its
// sandbox, the allow attribute of its frames, and the declared entries it
// refused. It is fixed when the view is opened; a person or a log should
// see it (spec "Host Behavior": "Host SHOULD log CSP configurations for
// security review"; "Security Implications": "Host SHOULD warn users when
// UI requires external domain access").
type Policy struct {
	// CSP holds the declared domains the host approved (the refused ones
	// removed). It is also what the view is told in
	// hostCapabilities.sandbox.csp.
	CSP CSP
	// Permissions are the granted browser features.
	Permissions Permissions
	// Header is the Content-Security-Policy of the view's document.
	Header string
	// Refused lists declared entries the host did not admit, each named
	// by its place in _meta.ui and with the reason (`csp.connectDomains
	// entry "*": ...`, `permissions member "usb": ...`).
	Refused []string
	// Declared says whose _meta.ui the policy was built from: the
	// resources/read content item's, the resources/list entry's (when the
	// content item has none), or none.
	Declared Declared
	// ListingError is why the resources/list entry, looked at because the
	// content item declares no _meta.ui, gave nothing: the listing failed
	// (a server without resources/list; the backend's error), or the
	// entry's _meta.ui is malformed (wraps ErrBadMeta). The view then has
	// the restrictive default. Nil otherwise.
	ListingError error
}

// Declared is where a view's _meta.ui comes from.
type Declared string

const (
	// DeclaredNowhere: neither the content item nor the listing declares
	// _meta.ui (or the listing could not be read): the spec's restrictive
	// default.
	DeclaredNowhere Declared = ""
	// DeclaredInContent: the resources/read content item's _meta.ui.
	DeclaredInContent Declared = "resources/read content"
	// DeclaredInListing: the resources/list entry's _meta.ui, the
	// fallback for a content item without one.
	DeclaredInListing Declared = "resources/list entry"
)

// External reports whether the view may reach any origin beyond its own
// sandbox: the case the user should be warned about.
func (p Policy) External() bool { return !p.CSP.empty() }

// buildPolicy builds the view's policy from its resource's declarations
// (spec "Host Behavior" and "Security Implications", "Content Security
// Policy Enforcement"; "Sandbox proxy", point 5):
//
//   - without declarations, exactly the spec's restrictive default:
//     default-src 'none'; script-src 'self' 'unsafe-inline'; style-src
//     'self' 'unsafe-inline'; img-src 'self' data:; media-src 'self'
//     data:; connect-src 'none';
//   - frame-src 'none' unless frameDomains, base-uri 'self' unless
//     baseUriDomains, object-src 'none' always;
//   - declared origins are added only to the directives the spec maps them
//     to, and only when they are one origin or a wildcard subdomain of a
//     registrable name (never a keyword, a scheme, "*" or anything that
//     could end the directive): the policy is never looser than declared;
//   - frame-ancestors names the host page's origins, so that no other page
//     can frame the view's sandbox (a further restriction, which the spec
//     allows: "Host MAY further restrict");
//   - form-action 'none', which no other directive covers (default-src
//     does not): a form the view submits would send its fields to an
//     undeclared origin ("Host MUST block connections to undeclared
//     domains"), and, where the sandbox is on 127.0.0.1 (listenSandbox's
//     fallback), to the other services there, which are same-site to
//     it, with their SameSite cookies. A view's own form submission
//     would only replace it, so no working view loses anything.
func buildPolicy(declared CSP, perms Permissions, frameAncestors []string) Policy {
	p := Policy{Permissions: perms}
	p.CSP.ConnectDomains, p.Refused = admitSources("csp.connectDomains", declared.ConnectDomains, p.Refused)
	p.CSP.ResourceDomains, p.Refused = admitSources("csp.resourceDomains", declared.ResourceDomains, p.Refused)
	p.CSP.FrameDomains, p.Refused = admitSources("csp.frameDomains", declared.FrameDomains, p.Refused)
	p.CSP.BaseURIDomains, p.Refused = admitSources("csp.baseUriDomains", declared.BaseURIDomains, p.Refused)

	res := p.CSP.ResourceDomains
	directive := func(name string, base []string, extra []string, fallback string) string {
		srcs := append(append([]string{}, base...), extra...)
		if len(srcs) == 0 {
			srcs = []string{fallback}
		}
		return name + " " + strings.Join(srcs, " ")
	}
	d := []string{
		"default-src 'none'",
		directive("script-src", []string{"'self'", "'unsafe-inline'"}, res, ""),
		directive("style-src", []string{"'self'", "'unsafe-inline'"}, res, ""),
		directive("img-src", []string{"'self'", "data:"}, res, ""),
		directive("media-src", []string{"'self'", "data:"}, res, ""),
	}
	if len(res) > 0 {
		d = append(d, directive("font-src", nil, res, ""))
	}
	d = append(d,
		directive("connect-src", nil, p.CSP.ConnectDomains, "'none'"),
		directive("frame-src", nil, p.CSP.FrameDomains, "'none'"),
		"object-src 'none'",
		directive("base-uri", nil, p.CSP.BaseURIDomains, "'self'"),
		"form-action 'none'",
		directive("frame-ancestors", nil, frameAncestors, "'none'"),
	)
	p.Header = strings.Join(d, "; ")
	return p
}

func admitSources(field string, in []string, refused []string) (ok []string, _ []string) {
	for _, s := range in {
		if err := checkSource(s); err != nil {
			refused = append(refused, fmt.Sprintf("%s entry %s: %v", field, strconv.QuoteToASCII(clipString(s, 100)), err))
			continue
		}
		ok = append(ok, s)
	}
	return ok, refused
}

// clipString cuts s to at most max bytes, at a character boundary, and
// marks the cut with "…".
func clipString(s string, max int) string {
	if len(s) > max {
		for max > 0 && !utf8.RuneStart(s[max]) {
			max--
		}
		return s[:max] + "…"
	}
	return s
}

// checkSource admits a CSP host-source naming one origin or the
// subdomains of one name: [scheme://]host[:port][/path], the scheme one of
// http, https, ws, wss, the host a DNS name (optionally "*." before at
// least two labels), an IPv4 address or a bracketed IPv6 address, the
// port a number or "*" (CSP Level 3, section 2.3.1, host-source).
func checkSource(s string) error {
	if s == "" {
		return fmt.Errorf("empty")
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune(`;,'"\`, c) {
			return fmt.Errorf("contains %q, which a CSP source cannot", c)
		}
	}
	rest := s
	if i := strings.Index(rest, "://"); i >= 0 {
		switch strings.ToLower(rest[:i]) {
		case "http", "https", "ws", "wss":
		default:
			return fmt.Errorf("scheme %q is not http, https, ws or wss", rest[:i])
		}
		rest = rest[i+3:]
	} else if strings.HasSuffix(rest, ":") || strings.Contains(rest, ":/") {
		return fmt.Errorf("a scheme alone admits every origin")
	}
	hostport, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		hostport, path = rest[:i], rest[i:]
	}
	if strings.ContainsAny(path, "?#") {
		return fmt.Errorf("a query or fragment is not part of a CSP source")
	}
	host, port, hasPort := hostport, "", false
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return fmt.Errorf("unclosed IPv6 address")
		}
		host = hostport[:end+1]
		port, hasPort = strings.CutPrefix(hostport[end+1:], ":")
		if ip := net.ParseIP(host[1:end]); ip == nil || ip.To4() != nil {
			return fmt.Errorf("%q is not an IPv6 address", host)
		}
		if hostport[end+1:] != "" && !strings.HasPrefix(hostport[end+1:], ":") {
			return fmt.Errorf("junk after the IPv6 address")
		}
	} else if i := strings.LastIndexByte(hostport, ':'); i >= 0 {
		host, port, hasPort = hostport[:i], hostport[i+1:], true
	}
	// port-part = 1*DIGIT / "*": a browser ignores a source with an empty
	// port or a sign, which the view would then be told was approved.
	if hasPort && port != "*" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 || strings.TrimLeft(port, "0123456789") != "" {
			return fmt.Errorf("invalid port %q", port)
		}
	}
	if strings.HasPrefix(host, "[") {
		return nil
	}
	if host == "" || host == "*" {
		return fmt.Errorf("a wildcard host admits every origin")
	}
	if net.ParseIP(host) != nil {
		return nil
	}
	name := strings.TrimPrefix(host, "*.")
	labels := strings.Split(name, ".")
	if name != host && len(labels) < 2 {
		return fmt.Errorf("a wildcard over a top-level name admits too many origins")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") ||
			strings.ContainsFunc(l, func(c rune) bool {
				return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-')
			}) {
			return fmt.Errorf("%q is not a host name", host)
		}
	}
	return nil
}
