package inspector

import (
	"context"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// The catalog's background fetches are its own: Close ends them — here a
// prefetch the server never answers — and returns once they have ended;
// after it, a list change starts none.
func TestCatalogCloseEndsAndWaitsForBackgroundFetches(t *testing.T) {
	s, srv := catalogSession(t, `{"tools":{"listChanged":true}}`)
	c := NewCatalog(s)
	c.AutoRefresh(context.Background())
	c.Prefetch(context.Background())
	srv.nextRequest("tools/list") // never answered

	closed := make(chan struct{})
	go func() {
		c.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("Close did not end the prefetch the server never answered")
	}
	c.mu.Lock()
	loading := c.lists["tools/list"].loading
	c.mu.Unlock()
	if loading != nil {
		t.Error("Close returned while the prefetch was still running")
	}
	if m := srv.next(); m.Method != "notifications/cancelled" {
		t.Errorf("the session sent %s, want the prefetch cancelled", m.Raw)
	}

	c.Notify(&jsonrpc.Message{Method: "notifications/tools/list_changed"})
	srv.quietUntil(mark(t, s))
}
