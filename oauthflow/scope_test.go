package oauthflow

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A scope list longer than an authorization request carries (a server's
// challenge or scopes_supported of hundreds of kilobytes) is refused
// before the browser opens, in one line naming the server, where the
// scopes came from and how long they are, never quoting them whole;
// mcpx built an authorization URL of that length and opened it. A long
// list that fits is asked for as it is.
func TestLongScopesRefused(t *testing.T) {
	many := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("https://api.example.com/auth/scope.%05d", i)
		}
		return strings.Join(s, " ")
	}
	t.Run("too long", func(t *testing.T) {
		s := newFakeAS(t)
		scope := many(5000) // about 200 KB
		a, notes := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.Browser = getBrowser(t) })
		_, err := a.authorize(ctxT(t), challenge(`Bearer scope="`+scope+`"`), nil)
		want := fmt.Sprintf("the scopes to ask %s for (from the WWW-Authenticate challenge) are 5000, %d bytes in all, more than the 8 KiB mcpx puts in an authorization request", s.URL+"/mcp", len(scope))
		if !errors.Is(err, ErrAuthorization) || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v\nwant it to say %q", err, want)
		}
		if strings.Contains(err.Error(), "\n") || len(err.Error()) > 1000 {
			t.Errorf("the error is not one short line: %d bytes", len(err.Error()))
		}
		if n := s.authorized.Load(); n != 0 {
			t.Errorf("the authorization endpoint was reached %d times", n)
		}
		if len(notes.String()) > 20000 {
			t.Errorf("the notes quote the scopes whole: %d bytes", len(notes.String()))
		}
	})
	t.Run("long but fits", func(t *testing.T) {
		s := newFakeAS(t)
		scope := many(150) // about 6 KB
		a, _ := newTestAuthorizer(t, s.URL+"/mcp", func(c *Config) { c.Browser = getBrowser(t) })
		if _, err := a.authorize(ctxT(t), challenge(`Bearer scope="`+scope+`"`), nil); err != nil {
			t.Fatalf("authorize: %v", err)
		}
		asked := strings.Join(a.requested, " ")
		if asked != scope {
			t.Errorf("asked for %d bytes of scopes, want the %d of the challenge", len(asked), len(scope))
		}
	})
}
