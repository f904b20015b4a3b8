package oauthflow

import (
	"strings"
)

// Challenge is one challenge of a WWW-Authenticate header (RFC 9110
// section 11.6.1): an authentication scheme and its parameters, with
// parameter names lower-cased and quoted values unquoted.
type Challenge struct {
	Scheme string
	Params map[string]string
}

// ParseChallenges parses a WWW-Authenticate header value, which may hold
// several challenges ("Bearer realm=x, error=y, DPoP algs=ES256"), or
// several header lines joined with commas. It is lenient: what it cannot
// parse it skips.
func ParseChallenges(header string) []Challenge {
	p := &challengeParser{s: header}
	var out []Challenge
	for {
		p.skipSeparators()
		if p.done() {
			return out
		}
		tok := p.token()
		if tok == "" {
			// Not a token: skip it (a stray quoted string whole).
			if p.peek() == '"' {
				p.value()
			} else {
				p.i++
			}
			continue
		}
		p.skipSpaces()
		if p.peek() == '=' && len(out) > 0 && !p.token68End() {
			p.i++ // '='
			p.skipSpaces()
			out[len(out)-1].Params[strings.ToLower(tok)] = p.value()
			continue
		}
		if p.peek() == '=' {
			// The tail of a token68 ("abc==") or a parameter before any
			// scheme: skip the equals signs.
			for p.peek() == '=' {
				p.i++
			}
			continue
		}
		out = append(out, Challenge{Scheme: tok, Params: map[string]string{}})
		// A token68 may follow the scheme (separated by a space, not a
		// comma); parameters are left for the loop.
		if p.done() || p.peek() == ',' {
			continue
		}
		save := p.i
		t68 := p.token68()
		p.skipSpaces()
		if t68 != "" && (p.done() || p.peek() == ',') {
			out[len(out)-1].Params["token68"] = t68
			continue
		}
		p.i = save
	}
}

// Bearer returns the first Bearer challenge (the scheme is matched
// case-insensitively), and whether there is one.
func Bearer(cs []Challenge) (Challenge, bool) {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "Bearer") {
			return c, true
		}
	}
	return Challenge{}, false
}

// DPoP returns the first DPoP challenge (RFC 9449 section 7.1), and
// whether there is one.
func DPoP(cs []Challenge) (Challenge, bool) {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "DPoP") {
			return c, true
		}
	}
	return Challenge{}, false
}

// Param returns the named parameter ("" when absent).
func (c Challenge) Param(name string) string { return c.Params[strings.ToLower(name)] }

// Scopes returns the space-separated scope parameter as a list.
func (c Challenge) Scopes() []string { return strings.Fields(c.Param("scope")) }

type challengeParser struct {
	s string
	i int
}

func (p *challengeParser) done() bool { return p.i >= len(p.s) }

func (p *challengeParser) peek() byte {
	if p.done() {
		return 0
	}
	return p.s[p.i]
}

func (p *challengeParser) skipSpaces() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *challengeParser) skipSeparators() {
	for !p.done() && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

// token68End reports whether the '=' at the current position ends a
// token68 ("=" runs followed by the end, a comma, or spaces then a comma)
// rather than introducing a parameter value.
func (p *challengeParser) token68End() bool {
	j := p.i
	for j < len(p.s) && p.s[j] == '=' {
		j++
	}
	if j-p.i < 2 && j < len(p.s) {
		// A single '=' followed by something: a parameter.
		return false
	}
	for j < len(p.s) && (p.s[j] == ' ' || p.s[j] == '\t') {
		j++
	}
	return j >= len(p.s) || p.s[j] == ','
}

func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~/:", c) >= 0
}

// token68 reads a token68 (RFC 9110 section 11.2): token characters
// followed by optional '=' padding.
func (p *challengeParser) token68() string {
	start := p.i
	for !p.done() && (isTokenChar(p.s[p.i]) && p.s[p.i] != '=') {
		p.i++
	}
	if p.i == start {
		return ""
	}
	for !p.done() && p.s[p.i] == '=' {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *challengeParser) token() string {
	start := p.i
	for !p.done() && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

// value reads a token or a quoted string (with backslash escapes).
func (p *challengeParser) value() string {
	if p.peek() != '"' {
		start := p.i
		for !p.done() && p.s[p.i] != ',' && p.s[p.i] != ' ' && p.s[p.i] != '\t' {
			p.i++
		}
		return p.s[start:p.i]
	}
	p.i++
	var b strings.Builder
	for !p.done() {
		c := p.s[p.i]
		p.i++
		switch c {
		case '\\':
			if !p.done() {
				b.WriteByte(p.s[p.i])
				p.i++
			}
		case '"':
			return b.String()
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
