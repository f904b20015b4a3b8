package testservers

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeUnix serves NewServer over HTTP on a Unix domain socket at path,
// as a server that VS Code names with unix://PATH#/mcp does:
//
//	/mcp    Streamable HTTP
//	/sse    HTTP+SSE (2024-11-05); its message endpoint is /sse?sessionid=…
//	/moved  HTTP 307 to /mcp (on the socket)
//	/away   HTTP 307 to http://127.0.0.1:1/mcp (off the socket)
//
// Each request is logged to log, when set, as "unix: METHOD PATH?QUERY
// Host: HOST". stop closes the server and removes the socket.
func ServeUnix(path string, log io.Writer) (stop func(), err error) {
	srv := NewServer()
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/mcp", http.StatusTemporaryRedirect)
	})
	var mu sync.Mutex
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if log != nil {
			mu.Lock()
			fmt.Fprintf(log, "unix: %s %s Host: %s\n", r.Method, r.URL.RequestURI(), r.Host)
			mu.Unlock()
		}
		mux.ServeHTTP(w, r)
	})
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(l)
	return func() {
		hs.Close()
		os.Remove(path)
	}, nil
}

// UnixSocket returns the path of a socket ServeUnix serves on for the
// rest of the test, in a directory of its own: short, as a socket's path
// must be (about a hundred bytes), which t.TempDir's may not be.
func UnixSocket(t testing.TB, log io.Writer) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "mx")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := dir + string(os.PathSeparator) + "s.sock"
	stop, err := ServeUnix(path, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return path
}
