package main

import (
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runRedirectHTTP serves two origins on 127.0.0.1, for the tests of the
// redirect policy and of URL redaction. The first (its URL goes to
// urlFile) answers
//
//	/307, /308  that redirect to the second origin's /mcp
//	/302        a 302 there (a POST becomes a GET, without its body)
//	/fail       HTTP 500
//	/echo       HTTP 500 quoting the request's Authorization and X-Api
//	            headers, and an escape sequence
//	/challenge  HTTP 401 with a WWW-Authenticate challenge of 400 KB
//
// The second origin logs every request it gets to $TEST_LOG ("# other:
// METHOD PATH", then a "# other:   Name: value" line per header) and
// answers 404. It serves until SIGINT or SIGTERM.
func runRedirectHTTP(urlFile string) error {
	first, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	second, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		first.Close()
		return err
	}
	otherURL := "http://" + second.Addr().String() + "/mcp"
	var mu sync.Mutex
	other := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lines := []string{"other: " + r.Method + " " + r.URL.Path}
		var names []string
		for k := range r.Header {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			lines = append(lines, "other:   "+k+": "+strings.Join(r.Header[k], ", "))
		}
		mu.Lock()
		for _, l := range lines {
			logEvent(l)
		}
		mu.Unlock()
		http.NotFound(w, r)
	})
	mux := http.NewServeMux()
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		mux.HandleFunc("/"+strconv.Itoa(status), func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, otherURL, status)
		})
	}
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the widget exploded", http.StatusInternalServerError)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied: Authorization: "+r.Header.Get("Authorization")+", X-Api: "+r.Header.Get("X-Api")+" \x1b[31m", http.StatusInternalServerError)
	})
	mux.HandleFunc("/challenge", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", error_description="`+strings.Repeat("x", 400<<10)+`"`)
		http.Error(w, "no", http.StatusUnauthorized)
	})
	servers := []*http.Server{{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, {Handler: other, ReadHeaderTimeout: 10 * time.Second}}
	go servers[0].Serve(first)
	go servers[1].Serve(second)
	defer func() {
		for _, s := range servers {
			s.Close()
		}
	}()
	return serveUntilSignal(urlFile, "http://"+first.Addr().String())
}
