package cmd

import (
	"io"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// goLog receives what the standard library logs on its own through
// package log's default logger, which mcpx itself never uses. net/http
// logs there when a server sends bytes on a kept-alive connection that no
// request is waiting for (a response longer than its Content-Length said,
// or one never asked for): a dated "Unsolicited response received on idle
// HTTP channel starting with "…"; err=<nil>" that quotes up to 4 KiB of
// the server's bytes. goLog writes it to w as one of mcpx's warnings, in
// plain words, with the server's bytes escaped and cut short; any other
// line is passed on as the library's, escaped. Main installs it (Run does
// not: the default logger is the process's, and tests run Run side by
// side).
type goLog struct{ w io.Writer }

// unsolicited starts the line net/http logs for bytes no request waits
// for (net/http's persistConn.readLoopPeekFailLocked).
const unsolicited = "Unsolicited response received on idle HTTP channel starting with "

func (g goLog) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if _, err := io.WriteString(g.w, goLogLine(line)+"\n"); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// goLogLine is the line goLog writes for line, one the library logged.
func goLogLine(line string) string {
	if rest, ok := strings.CutPrefix(line, unsolicited); ok {
		start := rest
		if q, err := strconv.QuotedPrefix(rest); err == nil {
			start, _ = strconv.Unquote(q)
		}
		return "warning: an HTTP server sent data no request was waiting for (more than its response's Content-Length, or an answer never asked for), starting with " +
			transport.QuoteExcerpt(start) + "; mcpx closed that connection"
	}
	return "mcpx: from Go's library: " + tui.EscapeLine(transport.Excerpt(line))
}
