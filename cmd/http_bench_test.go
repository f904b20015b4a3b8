package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testservers"
)

// BenchmarkOneShotHTTP measures a one-shot `mcpx tools list --json --url`
// (run in-process, so without the cost of starting the binary) against a
// minimal client doing the same over HTTP — initialize,
// notifications/initialized, tools/list on a fresh connection, nothing
// else — and reports both times and their ratio. mcpx also opens the GET
// stream and ends the session with DELETE, as the spec asks.
//
//	go test ./cmd -run '^$' -bench OneShotHTTP -benchtime 200x
func BenchmarkOneShotHTTP(b *testing.B) {
	targets := map[string]func() string{
		"sdk":                       func() string { return testservers.Streamable(b, testservers.NewServer(), nil, nil) },
		"server-everything":         func() string { return testservers.Everything(b, "streamableHttp") },
		"server-everything-sse-url": func() string { return testservers.Everything(b, "sse") },
	}
	for _, name := range []string{"sdk", "server-everything", "server-everything-sse-url"} {
		b.Run(name, func(b *testing.B) {
			u := targets[name]()
			legacy := strings.HasSuffix(u, "/sse")
			var mcpxTime, minTime time.Duration
			ios, _, _ := NewTestIOStreams(nil)
			ios.Out, ios.ErrOut = io.Discard, io.Discard
			for b.Loop() {
				start := time.Now()
				if code := Run(context.Background(), []string{"tools", "list", "--json", "--url", u}, ios); code != 0 {
					b.Fatalf("mcpx exit %d", code)
				}
				mcpxTime += time.Since(start)
				start = time.Now()
				var err error
				if legacy {
					err = minimalLegacyToolsList(u)
				} else {
					err = minimalToolsList(u)
				}
				if err != nil {
					b.Fatal(err)
				}
				minTime += time.Since(start)
			}
			n := float64(b.N)
			b.ReportMetric(float64(mcpxTime.Microseconds())/n/1000, "mcpx-ms/op")
			b.ReportMetric(float64(minTime.Microseconds())/n/1000, "minimal-ms/op")
			b.ReportMetric(float64(mcpxTime)/float64(minTime), "ratio")
		})
	}
}

// minimalToolsList is the least a Streamable HTTP client can do to list
// tools.
func minimalToolsList(u string) error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	post := func(body, session string) (*http.Response, []byte, error) {
		req, _ := http.NewRequest("POST", u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		return resp, data, err
	}
	resp, _, err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"min","version":"0"}}}`, "")
	if err != nil {
		return err
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if _, _, err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, sid); err != nil {
		return err
	}
	_, data, err := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, sid)
	if err != nil {
		return err
	}
	if !bytes.Contains(data, []byte(`"tools"`)) {
		return fmt.Errorf("no tools in %q", data)
	}
	return nil
}

// minimalLegacyToolsList does the same over HTTP+SSE, knowing the URL is
// an SSE endpoint (mcpx finds out with a POST first).
func minimalLegacyToolsList(u string) error {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf := make([]byte, 0, 64<<10)
	tmp := make([]byte, 32<<10)
	readUntil := func(marker string) (string, error) {
		for {
			if i := bytes.Index(buf, []byte(marker)); i >= 0 {
				s := string(buf)
				buf = buf[:0]
				return s, nil
			}
			n, err := resp.Body.Read(tmp)
			buf = append(buf, tmp[:n]...)
			if err != nil {
				return "", err
			}
		}
	}
	s, err := readUntil("\n\n")
	if err != nil {
		return err
	}
	_, ep, _ := strings.Cut(s, "data: ")
	ep = strings.TrimSpace(ep)
	base, _ := http.NewRequest("GET", u, nil)
	epURL, _ := base.URL.Parse(ep)
	post := func(body string) error {
		r, err := c.Post(epURL.String(), "application/json", strings.NewReader(body))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, r.Body)
		return r.Body.Close()
	}
	if err := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"min","version":"0"}}}`); err != nil {
		return err
	}
	if _, err := readUntil(`"id":1`); err != nil {
		return err
	}
	if err := post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		return err
	}
	if err := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); err != nil {
		return err
	}
	_, err = readUntil(`"id":2`)
	return err
}
