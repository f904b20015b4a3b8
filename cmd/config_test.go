package cmd

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/transport"
)

// --shutdown-grace is a Go duration, positive and at most a minute; left
// out, it is the transport's own default, so that the stdio server is
// shut down as it was before the flag.
func TestShutdownGrace(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
		err  string // the start of the usage error; "" for none
	}{
		{nil, transport.DefaultCloseGrace, ""},
		{[]string{"--shutdown-grace", "2s"}, 2 * time.Second, ""},
		{[]string{"--shutdown-grace=1500ms"}, 1500 * time.Millisecond, ""},
		{[]string{"--shutdown-grace", "1m"}, time.Minute, ""},
		{[]string{"--shutdown-grace", "1ns"}, time.Nanosecond, ""},
		{[]string{"--shutdown-grace", "0"}, 0, "--shutdown-grace 0s: give a positive duration, e.g. 2s (the default is 20ms)"},
		{[]string{"--shutdown-grace", "-1s"}, 0, "--shutdown-grace -1s: give a positive duration"},
		{[]string{"--shutdown-grace", "1m0.001s"}, 0, "--shutdown-grace 1m0.001s: give at most 1m"},
		{[]string{"--shutdown-grace", "2h"}, 0, "--shutdown-grace 2h0m0s: give at most 1m"},
	} {
		var f rootFlags
		fs := pflag.NewFlagSet("mcpx", pflag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		d, err := f.server.validate()
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.err == "" && d.grace != tc.want:
			t.Errorf("%q: grace %v, want %v", tc.args, d.grace, tc.want)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err) || !errors.As(err, new(*usageError))):
			t.Errorf("%q: error %v, want a usage error starting %q", tc.args, err, tc.err)
		}
	}
}

// A value that is not a Go duration is refused by the flag's parser.
func TestShutdownGraceSyntax(t *testing.T) {
	for _, v := range []string{"2", "soon", "2 s", ""} {
		var f rootFlags
		fs := pflag.NewFlagSet("mcpx", pflag.ContinueOnError)
		fs.SetOutput(&strings.Builder{})
		f.register(fs)
		err := fs.Parse([]string{"--shutdown-grace=" + v})
		if err == nil || !strings.Contains(err.Error(), `"--shutdown-grace"`) {
			t.Errorf("--shutdown-grace=%q: %v, want the flag's parse error", v, err)
		}
	}
}
