package cmd

import (
	"strings"
	"testing"
)

// A mistaken word, flag value or key=value argument is quoted in its
// one-line error bounded, with its control characters escaped: a pasted
// document or a line break must neither flood the terminal nor split the
// line.
func TestErrorsQuoteUserInputBounded(t *testing.T) {
	t.Parallel()
	long := "x" + strings.Repeat("0123456789", 200) + "\a\nEND"
	for _, args := range [][]string{
		withServer("tools", "call", "echo", long),
		withServer("tools", "call", "echo", "--no-validate", long),
		withServer("ping", "--env", long),
		{"tools", "call", "echo", "-H", long, "--url", "http://127.0.0.1:1/mcp"},
		{"servers", long},
		{"sessions", long},
		withServer("ping", "--timeout", long),
	} {
		r := runMcpx(t, nil, args...)
		line := strings.TrimSuffix(r.stderr, "\n")
		if r.code != ExitUsage || strings.Contains(line, "\n") || strings.Contains(line, "END") || strings.Contains(line, "\a") || len(line) > 1000 {
			t.Errorf("mcpx %s: exit %d, stderr (%d bytes) %q", strings.Join(args[:min(2, len(args))], " "), r.code, len(r.stderr), r.stderr)
		}
	}
}
