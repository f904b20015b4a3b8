package inspector

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/yosida95/uritemplate/v3"
)

// rfcValues are the string variables of RFC 6570's examples (section 3.2).
var rfcValues = []string{
	"var=value", "hello=Hello World!", "path=/foo/bar", "empty=", "x=1024", "y=768",
	"half=50%", "base=http://example.com/home/", "who=fred",
}

func TestExpandURITemplate(t *testing.T) {
	for _, tc := range []struct {
		tmpl  string
		pairs []string // rfcValues when nil
		want  string
	}{
		// RFC 6570 section 3.2's examples (and 1.2's, level 2).
		{"{var}", nil, "value"},
		{"{hello}", nil, "Hello%20World%21"},
		{"{half}", nil, "50%25"},
		{"O{empty}X", nil, "OX"},
		{"O{undef}X", nil, "OX"},
		{"{x,y}", nil, "1024,768"},
		{"{x,hello,y}", nil, "1024,Hello%20World%21,768"},
		{"?{x,empty}", nil, "?1024,"},
		{"?{x,undef}", nil, "?1024"},
		{"{var:3}", nil, "val"},
		{"{var:30}", nil, "value"},
		{"{base}", nil, "http%3A%2F%2Fexample.com%2Fhome%2F"},
		{"{+var}", nil, "value"},
		{"{+hello}", nil, "Hello%20World!"},
		{"{+half}", nil, "50%25"},
		{"{+base}index", nil, "http://example.com/home/index"},
		{"{+path}/here", nil, "/foo/bar/here"},
		{"here?ref={+path}", nil, "here?ref=/foo/bar"},
		{"{+path:6}/here", nil, "/foo/b/here"},
		{"{#var}", nil, "#value"},
		{"{#hello}", nil, "#Hello%20World!"},
		{"{#path:6}/here", nil, "#/foo/b/here"},
		{"{#undef}", nil, ""},
		{"X{.var}", nil, "X.value"},
		{"X{.x,y}", nil, "X.1024.768"},
		{"X{.empty}", nil, "X."},
		{"{/var}", nil, "/value"},
		{"{/var,x}/here", nil, "/value/1024/here"},
		{"{/var:1,var}", nil, "/v/value"},
		{"{;x,y}", nil, ";x=1024;y=768"},
		{"{;x,y,empty}", nil, ";x=1024;y=768;empty"},
		{"{;hello:5}", nil, ";hello=Hello"},
		{"{?x,y}", nil, "?x=1024&y=768"},
		{"{?x,y,empty}", nil, "?x=1024&y=768&empty="},
		{"{?var:3}", nil, "?var=val"},
		{"?fixed=yes{&x}", nil, "?fixed=yes&x=1024"},
		{"{&x,y,empty}", nil, "&x=1024&y=768&empty="},
		{"{var*}", nil, "value"}, // explode: nothing to a string
		// Characters are encoded as their UTF-8 octets (section 1.6),
		// counted as characters by a prefix (2.4.1); {+var} keeps a
		// pct-encoded triplet (3.2.3), {var} encodes its %.
		{"{x}", []string{"x=é"}, "%C3%A9"},
		{"{x}", []string{"x=\u1000"}, "%E1%80%80"},
		{"{x:1}", []string{"x=éa"}, "%C3%A9"},
		{"{+x}", []string{"x=%20a%2"}, "%20a%252"},
		{"{+x:2}", []string{"x=%20ab"}, "%20a"},
		{"{x}", []string{"x=%20"}, "%2520"},
		{"{x}", []string{"x=a\xffb"}, "a%FFb"},
		// A literal outside ASCII is encoded too (section 3.1); others,
		// and triplets, are copied.
		{"test://é/{x}%41", []string{"x=1"}, "test://%C3%A9/1%41"},
		// MCP-style templates.
		{"test://greet/{name}", []string{"name=Ada Lovelace/2"}, "test://greet/Ada%20Lovelace%2F2"},
		{"file:///{+path}", []string{"path=src/main.go"}, "file:///src/main.go"},
		{"repo://{owner}/{repo}/issues{?state,page}", []string{"owner=o", "repo=r", "page=2"}, "repo://o/r/issues?page=2"},
		{"x://{k}", []string{"k=1", "k=2"}, "x://2"}, // the last pair wins, as in prompts get
		{"x://{%41}", []string{"%41=a"}, "x://a"},
	} {
		pairs := tc.pairs
		if pairs == nil {
			pairs = rfcValues
			t, _ := uritemplate.New(tc.tmpl)
			pairs = slices.DeleteFunc(slices.Clone(pairs), func(p string) bool {
				k, _, _ := strings.Cut(p, "=")
				return !slices.Contains(t.Varnames(), k)
			})
		}
		got, _, err := ExpandURITemplate(tc.tmpl, pairs)
		if err != nil || got != tc.want {
			t.Errorf("ExpandURITemplate(%q, %q) = %q, %v; want %q", tc.tmpl, pairs, got, err, tc.want)
		}
	}
}

func TestExpandURITemplateUnset(t *testing.T) {
	got, unset, err := ExpandURITemplate("repo://{owner}/{repo}/issues{?state,page,owner}", []string{"owner=o"})
	if err != nil || got != "repo://o//issues?owner=o" || !slices.Equal(unset, []string{"repo", "state", "page"}) {
		t.Fatalf("got %q, unset %q, %v", got, unset, err)
	}
	if _, unset, _ := ExpandURITemplate("plain://x", nil); unset != nil {
		t.Fatalf("unset = %q, want none", unset)
	}
}

func TestExpandURITemplateErrors(t *testing.T) {
	for _, tc := range []struct {
		tmpl  string
		pairs []string
		want  string
	}{
		{"test://greet/{name", []string{"name=a"}, `URI template "test://greet/{name" does not parse (RFC 6570): incomplete expression at byte 18`},
		{"test://a b/{x}", []string{"x=a"}, `URI template "test://a b/{x}" does not parse (RFC 6570): unacceptable character (hint: use %XX encoding) at byte 8`},
		{"x://{=x}", []string{"x=a"}, `URI template "x://{=x}" does not parse (RFC 6570): unimplemented operator (op-reserved) at byte 6`},
		{"test://greet/{name}", []string{"nme=Ada"}, `URI template "test://greet/{name}" has no variable "nme" (did you mean name?)`},
		{"x://{owner}/{repo}", []string{"zzz=1"}, `URI template "x://{owner}/{repo}" has no variable "zzz" (it has owner, repo)`},
		{"x://plain", []string{"a=1"}, `URI template "x://plain" has no variable "a" (it has none)`},
		{"x://{a\x1b}", []string{"a=1"}, `URI template "x://{a\x1b}" does not parse (RFC 6570): unacceptable variable name at byte 6`},
	} {
		_, _, err := ExpandURITemplate(tc.tmpl, tc.pairs)
		var te *TemplateError
		if !errors.As(err, &te) || err.Error() != tc.want {
			t.Errorf("ExpandURITemplate(%q, %q) = %v; want %s", tc.tmpl, tc.pairs, err, tc.want)
		}
	}
	// A pair is split as prompts get splits it: \= is an = in its key.
	var ae *ArgumentError
	if _, _, err := ExpandURITemplate("x://{a}", []string{"a"}); !errors.As(err, &ae) {
		t.Errorf("a pair without =: %v, want an *ArgumentError", err)
	}
	if _, _, err := ExpandURITemplate("x://{a}", []string{`a\=b=1`}); err == nil || !strings.Contains(err.Error(), `no variable "a=b"`) {
		t.Errorf(`a\=b=1: %v, want no variable "a=b"`, err)
	}
}

// FuzzExpandURITemplate checks the expansion against RFC 6570's rules on
// arbitrary templates and values: a template uritemplate rejects is a
// *TemplateError with its position; an accepted one expands to URI
// characters only (unreserved, reserved, pct-encoded triplets), to what
// uritemplate's own Expand gives where that one is right (values of
// ASCII without % or NUL, which it drops), and a lone simple variable
// decodes back to its value; TemplateValue is the expansion of {x} and
// {+x}.
func FuzzExpandURITemplate(f *testing.F) {
	for _, s := range []string{
		"file:///{path}", "test://greet/{name}", "repo://{owner}/{repo}/issues{?state,page}",
		"db://{+table}{/id}{#frag}", "x://{a,b}/{c*}/{d:3}{.ext}{;p}{&q}", "x://é/{a}%41", "open://{unterminated", "{}", "",
	} {
		f.Add(s, "Ada Lovelace/é%20")
	}
	f.Fuzz(func(t *testing.T, tmpl, value string) {
		parsed, perr := uritemplate.New(tmpl)
		var pairs []string
		if perr == nil {
			for _, v := range parsed.Varnames() {
				pairs = append(pairs, v+"="+value)
			}
		}
		for _, reserved := range []bool{false, true} {
			simple := map[bool]string{false: "{x}", true: "{+x}"}[reserved]
			if want, _, _ := ExpandURITemplate(simple, []string{"x=" + value}); TemplateValue(value, reserved) != want {
				t.Fatalf("TemplateValue(%q, %v) = %q; %s expands to %q", value, reserved, TemplateValue(value, reserved), simple, want)
			}
		}
		got, unset, err := ExpandURITemplate(tmpl, pairs)
		if perr != nil {
			var te *TemplateError
			if !errors.As(err, &te) || te.Reason == "" || te.At > len(tmpl) {
				t.Fatalf("template %q, rejected by uritemplate (%v): %v", tmpl, perr, err)
			}
			return
		}
		if err != nil || unset != nil {
			t.Fatalf("ExpandURITemplate(%q, %q) = %v, unset %q", tmpl, pairs, err, unset)
		}
		for i := 0; i < len(got); i++ {
			if c := got[i]; c == '%' {
				if !isTriplet(got[i:]) {
					t.Fatalf("ExpandURITemplate(%q, %q) = %q: a %% that is no triplet", tmpl, pairs, got)
				}
			} else if !isUnreserved(c) && !strings.ContainsRune(":/?#[]@!$&'()*+,;=", rune(c)) {
				t.Fatalf("ExpandURITemplate(%q, %q) = %q: %q is no URI character", tmpl, pairs, got, c)
			}
		}
		ascii := !strings.ContainsFunc(value+tmpl, func(r rune) bool { return r >= utf8.RuneSelf || r == '%' || r == 0 })
		if want, err := parsed.Expand(valuesOf(parsed, value)); ascii && err == nil && got != want {
			t.Fatalf("ExpandURITemplate(%q, %q) = %q; uritemplate expands %q", tmpl, pairs, got, want)
		}
		if strings.HasPrefix(tmpl, "{") && strings.Count(tmpl, "{") == 1 && strings.HasSuffix(tmpl, "}") && !strings.ContainsAny(tmpl, "+#./;?&,:") && utf8.ValidString(value) {
			if back, err := url.PathUnescape(got); err != nil || back != value {
				t.Fatalf("ExpandURITemplate(%q, %q) = %q, which decodes to %q (%v)", tmpl, pairs, got, back, err)
			}
		}
	})
}

func valuesOf(t *uritemplate.Template, value string) uritemplate.Values {
	vs := uritemplate.Values{}
	for _, v := range t.Varnames() {
		vs.Set(v, uritemplate.String(value))
	}
	return vs
}
