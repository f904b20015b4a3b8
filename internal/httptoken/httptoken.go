// Package httptoken checks HTTP tokens (RFC 9110, section 5.6.2), the
// syntax of header field names. transport checks the headers it sends with
// it, and package mcp the header names tools declare with x-mcp-header.
package httptoken

import "strings"

// Valid reports whether s is a non-empty token: letters, digits and
// !#$%&'*+-.^_`|~ only.
func Valid(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
