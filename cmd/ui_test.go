package cmd

import (
	"strings"
	"testing"
)

// $COLORFGBG says whether the terminal is dark or light; anything else
// leaves the theme to the browser.
func TestTerminalTheme(t *testing.T) {
	for in, want := range map[string]string{
		"15;0": "dark", "0;15": "light", "7;default;8": "dark", "0;7": "light", "": "", "x": "", "1;99": "",
	} {
		if got := terminalTheme(in); got != want {
			t.Errorf("COLORFGBG=%q: %q, want %q", in, got, want)
		}
	}
}

// The --ui flags' mistakes are usage errors before any server starts;
// --no-browser with a server command is --ui's, not a misplaced OAuth
// flag.
func TestUIFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tools", "list", "--ui-theme", "pink", "--", "false"}, `--ui-theme must be light, dark or auto, not "pink"`},
		{[]string{"tools", "list", "--ui-timeout", "0s", "--", "false"}, "--ui-timeout must be positive"},
	} {
		r := runMcpx(t, nil, tc.args...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want a usage error with %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	r := runMcpx(t, nil, "ping", "--no-browser", "--", "false")
	if strings.Contains(r.stderr, "applies to HTTP servers") {
		t.Errorf("--no-browser with a server command: %s", r.stderr)
	}
}
