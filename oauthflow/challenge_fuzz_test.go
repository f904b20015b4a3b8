package oauthflow

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// challengeSeeds are WWW-Authenticate values from the MCP specification
// (basic/authorization), RFC 6750, RFC 9449 and RFC 9110, and odd ones.
var challengeSeeds = []string{
	`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`,
	`Bearer error="insufficient_scope", scope="files:read files:write user:profile", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", error_description="Additional file write permission required"`,
	`Bearer realm="example", error="invalid_token", error_description="The access token expired"`,
	`DPoP algs="ES256 PS256", error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof"`,
	`Basic realm="x", Bearer scope="a b", error="insufficient_scope"`,
	`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
	`Negotiate abc123==, Bearer`,
	`Bearer realm=""`,
	`Bearer realm = "spaced" ,scope=unquoted`,
	`, ,Bearer scope=a, "junk", ;`,
	`=, a=b, Bearer x==, y="\\\"", z="unterminated`,
	"Bearer\trealm=\"tab\"\t,\tBasic",
}

// FuzzWWWAuthenticate checks ParseChallenges on arbitrary header values:
// schemes are tokens, parameter names lower-case tokens, and what it
// returns, written out again in canonical form, parses to the same
// challenges.
func FuzzWWWAuthenticate(f *testing.F) {
	for _, s := range challengeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		cs := ParseChallenges(header)
		for _, c := range cs {
			if !isToken(c.Scheme) {
				t.Fatalf("ParseChallenges(%q): scheme %q is not a token", header, c.Scheme)
			}
			for name := range c.Params {
				if !isToken(name) || name != strings.ToLower(name) {
					t.Fatalf("ParseChallenges(%q): parameter name %q is not a lower-case token", header, name)
				}
			}
		}
		text := formatChallenges(cs)
		if again := ParseChallenges(text); !sameChallenges(again, cs) {
			t.Fatalf("ParseChallenges(%q) = %v, written out as %q parses to %v", header, cs, text, again)
		}
	})
}

// FuzzWWWAuthenticateRoundTrip writes a challenge with an arbitrary
// quoted parameter value, between two other challenges, and checks that
// ParseChallenges reads back exactly what was written.
func FuzzWWWAuthenticateRoundTrip(f *testing.F) {
	f.Add("Bearer", "scope", "files:read files:write")
	f.Add("DPoP", "algs", "ES256")
	f.Add("Bearer", "error_description", `say "hi", \ then, go=`)
	f.Add("Basic", "token68", "abc==")
	f.Fuzz(func(t *testing.T, scheme, name, value string) {
		scheme, name = tokenOf(scheme, "Bearer"), strings.ToLower(tokenOf(name, "realm"))
		want := []Challenge{
			{Scheme: "Basic", Params: map[string]string{"realm": "first"}},
			{Scheme: scheme, Params: map[string]string{name: value, "error": "x"}},
			{Scheme: "Other", Params: map[string]string{}},
		}
		text := formatChallenges(want)
		if got := ParseChallenges(text); !sameChallenges(got, want) {
			t.Fatalf("ParseChallenges(%q) = %v, want %v", text, got, want)
		}
	})
}

// isToken reports an RFC 9110 token, with the '/' and ':' ParseChallenges
// also accepts (they appear in token68 and in sloppy servers' values).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isTokenChar(s[i]) {
			return false
		}
	}
	return true
}

// tokenOf keeps the token characters of s, or returns def when none.
func tokenOf(s, def string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if isTokenChar(s[i]) && s[i] != '/' && s[i] != ':' {
			b.WriteByte(s[i])
		}
	}
	if b.Len() == 0 {
		return def
	}
	return b.String()
}

// isToken68 reports whether s can be written as a token68.
func isToken68(s string) bool {
	t := strings.TrimRight(s, "=")
	return t != "" && isToken(t) && !strings.Contains(t, "=")
}

// formatChallenges writes challenges in canonical form: the scheme, a
// token68 when there is one, then the parameters in name order with quoted
// values.
func formatChallenges(cs []Challenge) string {
	var parts []string
	for _, c := range cs {
		s := c.Scheme
		sep := " "
		if t, ok := c.Params["token68"]; ok && isToken68(t) {
			s += " " + t
			sep = ", "
		}
		for _, name := range slices.Sorted(maps.Keys(c.Params)) {
			if name == "token68" && isToken68(c.Params[name]) {
				continue
			}
			v := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(c.Params[name])
			s += sep + name + `="` + v + `"`
			sep = ", "
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

func sameChallenges(a, b []Challenge) bool {
	return slices.EqualFunc(a, b, func(x, y Challenge) bool {
		return x.Scheme == y.Scheme && maps.Equal(x.Params, y.Params)
	})
}
