package oauthflow

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		in   string
		want []Challenge
	}{
		{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`,
			[]Challenge{{"Bearer", map[string]string{"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource", "scope": "files:read"}}}},
		// Parameter names are case-insensitive; values keep their case;
		// tokens need no quotes; escapes are undone.
		{`bearer Error=invalid_token, Error_Description="say \"hi\", twice"`,
			[]Challenge{{"bearer", map[string]string{"error": "invalid_token", "error_description": `say "hi", twice`}}}},
		// Several challenges, as one header or as lines joined with commas.
		{`Basic realm="x", Bearer scope="a b", error="insufficient_scope"`,
			[]Challenge{{"Basic", map[string]string{"realm": "x"}}, {"Bearer", map[string]string{"scope": "a b", "error": "insufficient_scope"}}}},
		{`DPoP algs="ES256", Bearer realm="mcp"`,
			[]Challenge{{"DPoP", map[string]string{"algs": "ES256"}}, {"Bearer", map[string]string{"realm": "mcp"}}}},
		// A token68 after a scheme, and a bare scheme.
		{`Negotiate abc123==, Bearer`,
			[]Challenge{{"Negotiate", map[string]string{"token68": "abc123=="}}, {"Bearer", map[string]string{}}}},
		{`Bearer realm=""`, []Challenge{{"Bearer", map[string]string{"realm": ""}}}},
		{``, nil},
		// Garbage is skipped, not fatal.
		{`, ,Bearer scope=a, "junk", ;`, []Challenge{{"Bearer", map[string]string{"scope": "a"}}}},
	}
	for _, tt := range tests {
		got := ParseChallenges(tt.in)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseChallenges(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
	b, ok := Bearer(ParseChallenges(`Basic realm="x", Bearer scope="a  b"`))
	if !ok || cmp.Diff([]string{"a", "b"}, b.Scopes()) != "" {
		t.Errorf("Bearer = %+v, %v", b, ok)
	}
	if _, ok := Bearer(ParseChallenges(`Basic realm="x"`)); ok {
		t.Error("found a Bearer challenge in a Basic one")
	}
}

// The protected resource metadata is looked for at the path-specific
// location first, then at the root (RFC 9728 section 3.1).
func TestResourceMetadataURLs(t *testing.T) {
	tests := map[string][]string{
		"https://example.com/public/mcp": {"https://example.com/.well-known/oauth-protected-resource/public/mcp", "https://example.com/.well-known/oauth-protected-resource"},
		"https://example.com/mcp/":       {"https://example.com/.well-known/oauth-protected-resource/mcp", "https://example.com/.well-known/oauth-protected-resource"},
		"http://127.0.0.1:8080/mcp?t=1":  {"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp?t=1", "http://127.0.0.1:8080/.well-known/oauth-protected-resource"},
		"https://example.com":            {"https://example.com/.well-known/oauth-protected-resource"},
		"https://example.com/":           {"https://example.com/.well-known/oauth-protected-resource"},
	}
	for in, want := range tests {
		got, err := ResourceMetadataURLs(in)
		if err != nil || cmp.Diff(want, got) != "" {
			t.Errorf("ResourceMetadataURLs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Authorization server metadata is probed in the spec's order: RFC 8414
// inserted, OIDC inserted, OIDC appended (2025-11-25: basic/authorization).
func TestServerMetadataURLs(t *testing.T) {
	tests := map[string][]string{
		"https://auth.example.com/tenant1": {
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration",
		},
		"https://auth.example.com/tenant1/": {
			"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
			"https://auth.example.com/.well-known/openid-configuration/tenant1",
			"https://auth.example.com/tenant1/.well-known/openid-configuration",
		},
		"https://auth.example.com": {
			"https://auth.example.com/.well-known/oauth-authorization-server",
			"https://auth.example.com/.well-known/openid-configuration",
		},
		"http://127.0.0.1:9000/": {
			"http://127.0.0.1:9000/.well-known/oauth-authorization-server",
			"http://127.0.0.1:9000/.well-known/openid-configuration",
		},
	}
	for in, want := range tests {
		got, err := ServerMetadataURLs(in)
		if err != nil || cmp.Diff(want, got) != "" {
			t.Errorf("ServerMetadataURLs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"auth.example.com", "ftp://auth.example.com", "https://auth.example.com/?x=1", "https://auth.example.com/#f"} {
		if _, err := ServerMetadataURLs(bad); err == nil {
			t.Errorf("ServerMetadataURLs(%q) accepted an invalid issuer", bad)
		}
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		resource, server string
		want             bool
	}{
		{"https://mcp.example.com/mcp", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com", "https://mcp.example.com/mcp", true},
		{"https://mcp.example.com/", "https://mcp.example.com/mcp", true},
		{"https://MCP.example.com:443/mcp", "https://mcp.example.com/mcp/", true},
		{"https://mcp.example.com/api", "https://mcp.example.com/api/v1/mcp", true},
		{"https://mcp.example.com/api", "https://mcp.example.com/apiv2/mcp", false},
		{"https://mcp.example.com/mcp", "https://mcp.example.com/other", false},
		{"https://evil.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"http://mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com:8443/mcp", "https://mcp.example.com/mcp", false},
		{"https://mcp.example.com/mcp#frag", "https://mcp.example.com/mcp", false},
		{"mcp.example.com/mcp", "https://mcp.example.com/mcp", false},
	}
	for _, tt := range tests {
		if got := Covers(tt.resource, tt.server); got != tt.want {
			t.Errorf("Covers(%q, %q) = %v, want %v", tt.resource, tt.server, got, tt.want)
		}
	}
}

func TestCanonicalResource(t *testing.T) {
	tests := map[string]string{
		"HTTPS://MCP.Example.com/MCP":     "https://mcp.example.com/MCP",
		"https://mcp.example.com/":        "https://mcp.example.com",
		"https://mcp.example.com/mcp#x":   "https://mcp.example.com/mcp",
		"https://u:p@mcp.example.com/mcp": "https://mcp.example.com/mcp",
		"http://127.0.0.1:3000/mcp":       "http://127.0.0.1:3000/mcp",
		// Never a query, whatever its parameters are named (RFC 8707
		// section 2: the resource SHOULD NOT include one): the indicator
		// goes to the authorization server, another origin, and into the
		// authorization URL a browser shows.
		"https://mcp.example.com/mcp?tenant=acme":           "https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp?tenant=acme&api_key=S": "https://mcp.example.com/mcp",
		"https://mcp.example.com/?token=S":                  "https://mcp.example.com",
		"https://mcp.example.com/mcp?jwt=eyJhbGciOi":        "https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp?zipcode=94110":         "https://mcp.example.com/mcp",
		"https://mcp.example.com/mcp?":                      "https://mcp.example.com/mcp",
		"https://mcp.example.com/?x=1#f":                    "https://mcp.example.com",
	}
	for in, want := range tests {
		if got, err := CanonicalResource(in); err != nil || got != want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Authorization server endpoints must be HTTPS, except on loopback and on
// the MCP server's own (http) origin.
func TestCheckEndpoint(t *testing.T) {
	server := "http://mcp.internal:8080/mcp"
	ok := []string{"https://auth.example.com/token", "http://127.0.0.1:9/token", "http://localhost:9/token", "http://[::1]:9/token", "http://mcp.internal:8080/token"}
	bad := []string{"http://auth.example.com/token", "http://mcp.internal:9090/token", "ftp://auth.example.com/", "not a url"}
	for _, e := range ok {
		if err := checkEndpoint("token endpoint", e, server); err != nil {
			t.Errorf("%s refused: %v", e, err)
		}
	}
	for _, e := range bad {
		if err := checkEndpoint("token endpoint", e, server); err == nil {
			t.Errorf("%s accepted", e)
		}
	}
}

func TestSelectScopes(t *testing.T) {
	prm := &ResourceMetadata{ScopesSupported: []string{"mcp:read", "mcp:write"}}
	tests := []struct {
		challenge string
		prm       *ResourceMetadata
		want      []string
	}{
		// The challenge's scope is authoritative, whatever scopes_supported says.
		{`Bearer scope="files:read"`, prm, []string{"files:read"}},
		// Else every scope of scopes_supported.
		{`Bearer error="invalid_token"`, prm, []string{"mcp:read", "mcp:write"}},
		// Else none: the scope parameter is omitted.
		{`Bearer`, &ResourceMetadata{}, nil},
		{`Bearer`, nil, nil},
	}
	for _, tt := range tests {
		ch, _ := Bearer(ParseChallenges(tt.challenge))
		got, why := SelectScopes(ch, tt.prm)
		if diff := cmp.Diff(tt.want, got); diff != "" || why == "" {
			t.Errorf("SelectScopes(%q) = %q (%s), want %q", tt.challenge, got, why, tt.want)
		}
	}
}

// offline_access is asked for only where the authorization server lists it.
func TestWithOfflineAccess(t *testing.T) {
	got, added := WithOfflineAccess([]string{"mcp:basic"}, &ServerMetadata{ScopesSupported: []string{"mcp:basic", "offline_access"}})
	if !added || cmp.Diff([]string{"mcp:basic", "offline_access"}, got) != "" {
		t.Errorf("supported: %q, %v", got, added)
	}
	got, added = WithOfflineAccess([]string{"mcp:basic"}, &ServerMetadata{ScopesSupported: []string{"mcp:basic", "mcp:read"}})
	if added || cmp.Diff([]string{"mcp:basic"}, got) != "" {
		t.Errorf("not supported: %q, %v", got, added)
	}
	got, added = WithOfflineAccess(nil, &ServerMetadata{})
	if added || got != nil {
		t.Errorf("no scopes_supported: %q, %v", got, added)
	}
	got, added = WithOfflineAccess([]string{"offline_access"}, &ServerMetadata{ScopesSupported: []string{"offline_access"}})
	if added || len(got) != 1 {
		t.Errorf("already there: %q, %v", got, added)
	}
}

func TestUnionSubset(t *testing.T) {
	if got := Union([]string{"a", "b"}, []string{"b", "c", "", "a"}); cmp.Diff([]string{"a", "b", "c"}, got) != "" {
		t.Errorf("Union = %q", got)
	}
	if !Subset([]string{"a"}, []string{"b", "a"}) || Subset([]string{"a", "c"}, []string{"a"}) || !Subset(nil, nil) {
		t.Error("Subset is wrong")
	}
}
