package oauthflow

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/transport"
)

// ResourceMetadata is OAuth 2.0 Protected Resource Metadata (RFC 9728
// section 2): what an MCP server says about itself as a resource server.
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
	ResourceName         string   `json:"resource_name,omitempty"`
}

// ServerMetadata is OAuth 2.0 Authorization Server Metadata (RFC 8414
// section 2), or the OpenID Connect Discovery 1.0 provider metadata that
// shares its fields, reduced to what mcpx uses.
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	TokenEndpointAuthSigningAlgValuesSupported []string `json:"token_endpoint_auth_signing_alg_values_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	// ClientIDMetadataDocumentSupported advertises Client ID Metadata
	// Documents (spec 2025-11-25: basic/authorization, "Client ID Metadata
	// Documents").
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// AuthorizationResponseIssParameterSupported advertises the iss
	// parameter in authorization responses (RFC 9207 section 2.3).
	AuthorizationResponseIssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// DPoPSigningAlgValuesSupported lists the algorithms the server takes
	// DPoP proofs signed with (RFC 9449 section 5.1): it supports DPoP.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// authMethods returns the token endpoint authentication methods the server
// supports: the advertised list, or RFC 8414's default (client_secret_basic).
func (m *ServerMetadata) authMethods() []string {
	if len(m.TokenEndpointAuthMethodsSupported) > 0 {
		return m.TokenEndpointAuthMethodsSupported
	}
	return []string{"client_secret_basic"}
}

// supportsScope reports whether scopes_supported lists s.
func (m *ServerMetadata) supportsScope(s string) bool {
	return slices.Contains(m.ScopesSupported, s)
}

// ResourceMetadataURLs returns the well-known locations of the protected
// resource metadata for the MCP endpoint serverURL, in the order the spec
// (2025-06-18 and later: basic/authorization, "Protected Resource Metadata
// Discovery Requirements") says to try them: the path-specific location
// (RFC 9728 section 3.1: the well-known suffix inserted between host and
// path, a trailing slash dropped), then the root.
func ResourceMetadataURLs(serverURL string) ([]string, error) {
	u, err := parseServerURL(serverURL)
	if err != nil {
		return nil, err
	}
	origin := u.Scheme + "://" + u.Host
	const suffix = "/.well-known/oauth-protected-resource"
	var out []string
	if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" {
		s := origin + suffix + p
		if u.RawQuery != "" {
			s += "?" + u.RawQuery
		}
		out = append(out, s)
	}
	return append(out, origin+suffix), nil
}

// parseServerURL parses an MCP server's URL: http or https with a host
// (a URL without a scheme would make the well-known URLs relative).
func parseServerURL(serverURL string) (*url.URL, error) {
	u, err := url.Parse(serverURL)
	if err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http" {
		return nil, fmt.Errorf("invalid server URL %q", serverURL)
	}
	return u, nil
}

// metadataProbe is one place to look for authorization server metadata.
type metadataProbe struct {
	URL  string
	Kind string // "RFC 8414" or "OpenID Connect Discovery"
}

// ServerMetadataURLs returns where to look for the metadata of the
// authorization server with this issuer, in the spec's priority order
// (2025-11-25: basic/authorization, "Authorization Server Metadata
// Discovery"): RFC 8414 with the well-known suffix inserted before the
// issuer's path, then OpenID Connect Discovery inserted, then OpenID
// Connect Discovery appended (the last two coincide for an issuer without
// a path).
func ServerMetadataURLs(issuer string) ([]string, error) {
	ps, err := serverMetadataProbes(issuer)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.URL
	}
	return out, nil
}

func serverMetadataProbes(issuer string) ([]metadataProbe, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return nil, fmt.Errorf("authorization server %s is not an http(s) URL", quoted(issuer))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("authorization server %s has a query or fragment, which an issuer identifier must not have (RFC 8414 section 2)", quoted(issuer))
	}
	origin := u.Scheme + "://" + u.Host
	p := strings.TrimSuffix(u.EscapedPath(), "/")
	if p == "" {
		return []metadataProbe{
			{origin + "/.well-known/oauth-authorization-server", "RFC 8414"},
			{origin + "/.well-known/openid-configuration", "OpenID Connect Discovery"},
		}, nil
	}
	return []metadataProbe{
		{origin + "/.well-known/oauth-authorization-server" + p, "RFC 8414"},
		{origin + "/.well-known/openid-configuration" + p, "OpenID Connect Discovery"},
		{origin + p + "/.well-known/openid-configuration", "OpenID Connect Discovery"},
	}, nil
}

// CanonicalResource returns the canonical URI of the MCP server at
// serverURL (spec 2025-06-18 and later: basic/authorization, "Canonical
// Server URI"): lower-case scheme and host, no fragment, no user info, no
// query, and no trailing slash when the path is only "/". It is the
// resource indicator mcpx sends when the server's protected resource
// metadata names none (or a 2025-03-26 server has none): a resource
// metadata's resource is the server's word and is sent as it is.
//
// The query is never kept. RFC 8707 section 2 says the resource SHOULD
// NOT include one, and the spec's examples of canonical URIs have none:
// the path identifies the server. The indicator goes to the authorization
// server, another origin, and into the authorization URL the browser
// shows, while a server URL's query often holds a credential (api_key=…,
// jwt=…) under a name no list can foresee: a rule by parameter name kept
// some (jwt=) and dropped harmless ones (zipcode=). A server whose
// resource needs a query names it in its metadata.
func CanonicalResource(serverURL string) (string, error) {
	u, err := parseServerURL(serverURL)
	if err != nil {
		return "", err
	}
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	c.Fragment, c.RawFragment = "", ""
	c.User = nil
	c.RawQuery, c.ForceQuery = "", false
	if c.Path == "/" {
		c.Path, c.RawPath = "", ""
	}
	return c.String(), nil
}

// Covers reports whether the resource identifier resource names the MCP
// endpoint serverURL or a prefix of it: same scheme, host and port, and
// the resource's path equal to the server's or one of its leading path
// segments. A token issued for resource may only be sent to such URLs,
// and protected resource metadata that names a resource not covering the
// server is refused (spec draft: basic/authorization; RFC 9728 section 3.3).
func Covers(resource, serverURL string) bool {
	r, err1 := url.Parse(resource)
	s, err2 := url.Parse(serverURL)
	if err1 != nil || err2 != nil || r.Host == "" || s.Host == "" || r.Fragment != "" {
		return false
	}
	if !transport.SameOrigin(r, s) {
		return false
	}
	rp := strings.TrimSuffix(r.Path, "/")
	sp := strings.TrimSuffix(s.Path, "/")
	return rp == "" || rp == sp || strings.HasPrefix(sp, rp+"/")
}

// quoted quotes server-supplied text for a message: in double quotes,
// bounded and with its control characters escaped (transport.Excerpt), as
// a server can send a value of any length or one that moves the terminal's
// cursor.
func quoted(s string) string { return transport.QuoteExcerpt(s) }

// isLoopbackHost reports localhost and loopback IP addresses.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkEndpoint enforces OAuth 2.1's communication security (spec
// 2025-11-25: basic/authorization, "Communication Security": authorization
// server endpoints MUST be HTTPS) for the endpoints and documents of the
// flow: plain http is allowed only on loopback, or on the MCP server's own
// origin, which the person chose to reach over http anyway.
func checkEndpoint(name, endpoint, serverURL string) error {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("the %s %s is not an http(s) URL", name, quoted(endpoint))
	}
	if u.Scheme == "https" || isLoopbackHost(u.Hostname()) {
		return nil
	}
	if s, err := url.Parse(serverURL); err == nil && transport.SameOrigin(u, s) {
		return nil
	}
	return fmt.Errorf("the %s %s is not HTTPS, which OAuth 2.1 requires (plain http is allowed only on loopback, or on the MCP server's own origin)", name, transport.ShortURL(endpoint))
}
