package cmd

import (
	"strings"
	"testing"
)

// goLog writes the library's lines as mcpx's: net/http's line about
// unsolicited bytes in plain words, any other prefixed; the server's
// bytes escaped, never raw, and cut short.
func TestGoLog(t *testing.T) {
	var b strings.Builder
	g := goLog{w: &b}
	long := strings.Repeat("x", 5000)
	g.Write([]byte(unsolicited + `"HTTP/1.1 200 OK\r\n\x1b[31m` + long + `"; err=<nil>` + "\n"))
	g.Write([]byte("http2: something \x1b[2J happened\n"))
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("wrote %d lines:\n%s", len(lines), b.String())
	}
	if !strings.HasPrefix(lines[0], `warning: an HTTP server sent data no request was waiting for `) ||
		!strings.Contains(lines[0], `starting with "HTTP/1.1 200 OK\x0d\x0a\x1b[31mxxx`) ||
		!strings.HasSuffix(lines[0], `… (5022 bytes)"; mcpx closed that connection`) {
		t.Errorf("line 1 = %s", lines[0])
	}
	if lines[1] != `mcpx: from Go's library: http2: something \x1b[2J happened` {
		t.Errorf("line 2 = %s", lines[1])
	}
	if strings.Contains(b.String(), "\x1b") {
		t.Error("an escape sequence went through raw")
	}
}
