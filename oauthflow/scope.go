package oauthflow

import (
	"slices"
	"strings"
)

// SelectScopes chooses the scopes of a first authorization (spec 2025-11-25
// and later: basic/authorization, "Scope Selection Strategy"): the
// challenge's scope when it has one, else every scope in the protected
// resource metadata's scopes_supported, else none (the scope parameter is
// then omitted). why says which rule applied, for narration.
func SelectScopes(ch Challenge, prm *ResourceMetadata) (scopes []string, why string) {
	if s := ch.Scopes(); len(s) > 0 {
		return s, "from the WWW-Authenticate challenge"
	}
	if prm != nil && len(prm.ScopesSupported) > 0 {
		return slices.Clone(prm.ScopesSupported), "all of the protected resource metadata's scopes_supported"
	}
	return nil, "none: neither the challenge nor the resource metadata names any, so the scope parameter is omitted"
}

// WithOfflineAccess adds offline_access, asking for a refresh token, when
// the authorization server lists it in scopes_supported — and only then
// (spec draft: basic/authorization, "Refresh Tokens").
func WithOfflineAccess(scopes []string, as *ServerMetadata) ([]string, bool) {
	if as == nil || !as.supportsScope("offline_access") || slices.Contains(scopes, "offline_access") {
		return scopes, false
	}
	return append(slices.Clone(scopes), "offline_access"), true
}

// Union returns a's scopes followed by those of b not in a, without
// duplicates: the scope set of a step-up authorization (spec draft:
// basic/authorization, "Step-Up Authorization Flow": previously requested
// scopes plus the challenge's).
func Union(a, b []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range append(slices.Clone(a), b...) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Subset reports whether every scope in a is in b.
func Subset(a, b []string) bool {
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func scopeString(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, " ")
}
