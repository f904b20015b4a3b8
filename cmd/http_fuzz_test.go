package cmd

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// FuzzHeaderFlag checks -H 'Name: value' parsing on arbitrary flags: a
// flag is refused as a usage error (exit 2) or becomes one header that
// net/http sends as it is, with the name and the trimmed value written.
func FuzzHeaderFlag(f *testing.F) {
	for _, s := range []string{"Authorization: Bearer abc", "X-Api-Key:k", "X-Empty:", "Host: example.com", " X-Spaced :  v  ",
		"no colon", ": no name", "Bad Name: v", "X-Line: a\r\nInjected: 1", "X-Tab: a\tb", "X-Ctl: a\x01b", "X-Del: \x7f",
		"X-Utf8: café", "Näme: v", "X(y): v", "X-Colon: a:b"} {
		f.Add(s)
	}
	errDial := errors.New("dial refused by the test")
	rt := &http.Transport{DialContext: func(context.Context, string, string) (net.Conn, error) { return nil, errDial }}
	f.Fuzz(func(t *testing.T, flag string) {
		h, err := parseHeaders([]string{flag})
		if err != nil {
			var ue *usageError
			if !errors.As(err, &ue) {
				t.Fatalf("parseHeaders(%q): %T %v, want a usage error", flag, err, err)
			}
			return
		}
		name, value, _ := strings.Cut(flag, ":")
		if len(h) != 1 || h.Get(strings.TrimSpace(name)) != strings.TrimSpace(value) {
			t.Fatalf("parseHeaders(%q) = %q", flag, h)
		}
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/mcp", nil)
		req.Header = h
		if _, err := rt.RoundTrip(req); !errors.Is(err, errDial) {
			t.Fatalf("parseHeaders(%q) accepted %q, which net/http refuses: %v", flag, h, err)
		}
	})
}
