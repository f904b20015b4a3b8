package cmd

import (
	"net/http"
	"sync/atomic"
	"testing"
)

// Over Streamable HTTP a command opens the GET stream for server-initiated
// messages only when something will listen on it (issue 13): watch,
// resources subscribe and --linger do; tools list never; tools call does
// when it declares a capability the server may call back into (sampling and
// elicitation are declared by default), and not without one.
func TestHTTPGetStreamOnlyWhenListened(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		gets int
	}{
		{"tools list", []string{"tools", "list"}, 0},
		{"info", []string{"info"}, 0},
		{"tools call", []string{"tools", "call", "add", "a=2", "b=3"}, 1},
		{"tools call without callbacks", []string{"tools", "call", "add", "a=2", "b=3", "--no-sampling", "--no-elicitation"}, 0},
		{"tools list --linger", []string{"tools", "list", "--linger", "10ms"}, 1},
		{"watch", []string{"watch", "--for", "10ms"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var gets atomic.Int64
			u := sdkURL(t, func(h http.Handler) http.Handler {
				return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodGet {
						gets.Add(1)
					}
					h.ServeHTTP(w, r)
				})
			})
			r := runMcpx(t, nil, append(tc.args, "--url", u)...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if got := gets.Load(); got != int64(tc.gets) {
				t.Errorf("%d GET requests, want %d", got, tc.gets)
			}
		})
	}
}
