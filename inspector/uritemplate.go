package inspector

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"

	"github.com/mcpx-dev/mcpx/transport"
)

// TemplateError reports a URI template that cannot be expanded with the
// pairs given: it does not parse as RFC 6570, or a pair names none of its
// variables.
type TemplateError struct {
	Template string
	// Reason is why the template does not parse, At the byte it fails at;
	// "" when it parses.
	Reason string
	At     int
	// Key is the pair's key that names no variable; Vars the template's
	// variables, Suggestions those close to Key.
	Key         string
	Vars        []string
	Suggestions []string
}

func (e *TemplateError) Error() string {
	t := transport.QuoteExcerpt(e.Template)
	switch {
	case e.Reason != "":
		return fmt.Sprintf("URI template %s does not parse (RFC 6570): %s at byte %d", t, e.Reason, e.At)
	case len(e.Suggestions) > 0:
		return fmt.Sprintf("URI template %s has no variable %s (did you mean %s?)", t, transport.QuoteExcerpt(e.Key), strings.Join(e.Suggestions, ", "))
	case len(e.Vars) > 0:
		return fmt.Sprintf("URI template %s has no variable %s (it has %s)", t, transport.QuoteExcerpt(e.Key), strings.Join(e.Vars, ", "))
	}
	return fmt.Sprintf("URI template %s has no variable %s (it has none)", t, transport.QuoteExcerpt(e.Key))
}

// ExpandURITemplate makes a URI from tmpl, an RFC 6570 URI template (a
// resource template's uriTemplate: spec server/resources, "Resource
// Templates"), and pairs, key=value values of its variables (keys split
// as StringPair splits them; a later pair replaces an earlier one). unset
// names the variables without a value: RFC 6570 expands an undefined
// variable to nothing (section 3.2.1), so it is not an error, but seldom
// what a person meant. Errors are a *TemplateError or an *ArgumentError.
//
// uritemplate parses and validates the template; the expansion is done
// here because its Expand departs from RFC 6570 where a person's values
// differ from a server's tests: it encodes a character outside ASCII as
// its code point rather than its UTF-8 octets (é as %E9, U+1000 as %10),
// re-encodes the % of a pct-encoded triplet in {+var} and {#var}, and
// cuts a prefix ({var:3}) in bytes rather than characters.
func ExpandURITemplate(tmpl string, pairs []string) (uri string, unset []string, err error) {
	t, err := uritemplate.New(tmpl)
	if err != nil {
		reason, at := parseFailure(tmpl, err)
		return "", nil, &TemplateError{Template: tmpl, Reason: reason, At: at}
	}
	vars := t.Varnames()
	values := map[string]string{}
	for _, p := range pairs {
		k, v, err := StringPair(p)
		if err != nil {
			return "", nil, err
		}
		if !slices.Contains(vars, k) {
			return "", nil, &TemplateError{Template: tmpl, Key: k, Vars: vars, Suggestions: Suggest(k, vars, 3)}
		}
		values[k] = v
	}
	for _, v := range vars {
		if _, ok := values[v]; !ok {
			unset = append(unset, v)
		}
	}
	return expandTemplate(tmpl, values), unset, nil
}

// parseFailure takes uritemplate's error apart: it reads "REASON:
// TEMPLATE[:at]M", the template up to where it failed and a marker.
func parseFailure(tmpl string, err error) (reason string, at int) {
	msg := err.Error()
	if msg == "" {
		return "invalid", 0
	}
	rest := msg[:len(msg)-1] // the marker
	for i := 0; i+2 <= len(rest) && i < 100; i++ {
		if rest[i:i+2] != ": " {
			continue
		}
		if n := len(rest) - i - 2; n <= len(tmpl) && rest[i+2:] == tmpl[:n] {
			return rest[:i], n
		}
	}
	return msg, 0
}

// expandTemplate expands tmpl, which uritemplate has accepted, by RFC
// 6570 section 3: literals and {expressions}, literals holding no brace
// (section 2.1) and expressions not nesting.
func expandTemplate(tmpl string, values map[string]string) string {
	var b strings.Builder
	for tmpl != "" {
		literal, rest, ok := strings.Cut(tmpl, "{")
		// Section 3.1: a character a URI cannot hold (one outside ASCII)
		// is pct-encoded; the others, pct-encoded triplets too, are copied.
		pctEncode(&b, literal, true)
		if !ok {
			break
		}
		expr, rest, _ := strings.Cut(rest, "}")
		expandExpression(&b, expr, values)
		tmpl = rest
	}
	return b.String()
}

// expandExpression appends the expansion of one expression (without its
// braces) by the table of RFC 6570 appendix A. Values are strings only:
// the explode modifier (*) does nothing to one.
func expandExpression(b *strings.Builder, expr string, values map[string]string) {
	var op byte
	if expr != "" && strings.IndexByte("+#./;?&", expr[0]) >= 0 {
		op, expr = expr[0], expr[1:]
	}
	first, sep, named, ifemp, reserved := "", ",", false, "", false
	switch op {
	case '+':
		reserved = true
	case '#':
		first, reserved = "#", true
	case '.':
		first, sep = ".", "."
	case '/':
		first, sep = "/", "/"
	case ';':
		first, sep, named = ";", ";", true
	case '?':
		first, sep, named, ifemp = "?", "&", true, "="
	case '&':
		first, sep, named, ifemp = "&", "&", true, "="
	}
	n := 0
	for spec := range strings.SplitSeq(expr, ",") {
		name, limit := strings.TrimSuffix(spec, "*"), -1
		if k := strings.IndexByte(name, ':'); k >= 0 {
			limit, _ = strconv.Atoi(name[k+1:]) // 1 to 9999: uritemplate checked
			name = name[:k]
		}
		v, ok := values[name]
		if !ok {
			continue // undefined: section 3.2.1
		}
		if n == 0 {
			b.WriteString(first)
		} else {
			b.WriteString(sep)
		}
		n++
		if named {
			b.WriteString(name)
			if v == "" {
				b.WriteString(ifemp)
				continue
			}
			b.WriteByte('=')
		}
		pctEncode(b, prefix(v, limit, reserved), reserved)
	}
}

// prefix returns the first n characters of v (all of it for n < 0):
// section 2.4.1 counts characters, and where reserved characters are
// kept, a pct-encoded triplet is one and is never split.
func prefix(v string, n int, reserved bool) string {
	i := 0
	for ; n != 0 && i < len(v); n-- {
		if reserved && isTriplet(v[i:]) {
			i += 3
			continue
		}
		_, size := utf8.DecodeRuneInString(v[i:])
		i += size
	}
	return v[:i]
}

// TemplateValue is value as ExpandURITemplate writes it for a simple
// {var} (reserved false) or a {+var} (reserved true): what a URI typed
// against a template holds for the value, which the REPL's completion
// of such URIs inserts.
func TemplateValue(value string, reserved bool) string {
	var b strings.Builder
	pctEncode(&b, value, reserved)
	return b.String()
}

// pctEncode appends v, each octet that is not unreserved (nor reserved,
// nor part of a pct-encoded triplet, when reserved) pct-encoded: RFC 6570
// section 1.6 (characters are encoded as their UTF-8 octets) and 3.2.1.
func pctEncode(b *strings.Builder, v string, reserved bool) {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case isUnreserved(c), reserved && strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0:
			b.WriteByte(c)
		case reserved && isTriplet(v[i:]):
			b.WriteString(v[i : i+3])
			i += 2
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
}

func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0
}

func isTriplet(s string) bool {
	return len(s) >= 3 && s[0] == '%' && isHex(s[1]) && isHex(s[2])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
