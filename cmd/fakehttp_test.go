package cmd

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// fakeRequest is a JSON-RPC request a fakeHTTPServer got.
type fakeRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	// r is the HTTP request that carried it.
	r *http.Request
}

// fakeHTTPServer is a hand-written Streamable HTTP server (no session,
// no GET stream: 405) on 127.0.0.1 for the cases an SDK server will not
// play: answer writes the response to each request (with its headers);
// notifications and responses get 202. It returns the endpoint's URL.
func fakeHTTPServer(t *testing.T, answer func(w http.ResponseWriter, req fakeRequest)) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "no stream", http.StatusMethodNotAllowed)
			return
		}
		req := fakeRequest{r: r}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.ID) == 0 || req.Method == "" {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer(w, req)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}
