package transport_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// A transport the caller chose is described with the caller's reason
// (mcpx names its flag there); the transport names none of its own.
func TestDescribeSaysWhyTheModeWasChosen(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	}))
	t.Cleanup(ts.Close)
	for reason, want := range map[string]string{
		"chosen with --transport http": "(chosen with --transport http)",
		"":                             "(chosen by the caller)",
	} {
		conn, err := transport.NewHTTP(transport.HTTPOptions{URL: ts.URL + "/mcp", Mode: transport.ModeStreamable, ModeReason: reason})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := conn.Write(ctx, transport.Frame{Data: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)}); err != nil {
			t.Fatal(err)
		}
		cancel()
		if d := conn.Describe(); !strings.HasSuffix(d, want) || strings.Contains(d, "--") && reason == "" {
			t.Errorf("reason %q: Describe = %q, want …%s", reason, d, want)
		}
		conn.Close()
	}
}
