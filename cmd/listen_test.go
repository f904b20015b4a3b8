package cmd

import (
	"net/http"
	"strings"
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

// watch and resources subscribe against a server that refuses the GET
// stream (405, which the spec allows) say that only what comes with
// answers can be shown: the refusal was a note for -v only, and watch
// waited in silence. A server that takes the stream gets no such warning.
func TestWatchWarnsWithoutServerStream(t *testing.T) {
	t.Parallel()
	refusing := sdkURL(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				http.Error(w, "no stream here", http.StatusMethodNotAllowed)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	const warning = "warning: the server opened no stream for messages of its own (GET "
	// (The test server takes no subscription: subscribe fails after the
	// warning, which is what is looked at.)
	for _, args := range [][]string{
		{"watch", "--for", "10ms"},
		{"resources", "subscribe", "test://static/1", "--for", "10ms"},
	} {
		r := runMcpx(t, nil, append(args, "--url", refusing)...)
		if r.code != 0 && args[0] == "watch" || !strings.Contains(r.stderr, warning) || !strings.Contains(r.stderr, "405") {
			t.Errorf("%s: exit %d: %s", args[0], r.code, r.stderr)
		}
		r = runMcpx(t, nil, append(args, "--url", sdkURL(t, nil))...)
		if r.code != 0 && args[0] == "watch" || strings.Contains(r.stderr, "no stream for messages") {
			t.Errorf("%s, a server with the stream: exit %d: %s", args[0], r.code, r.stderr)
		}
	}
}
