package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/sessiond"
)

// Through a handshake-era session the client's capabilities were declared
// when it opened, and the session answers roots/list: a command's --root,
// --no-sampling and --no-elicitation would change nothing, and are
// refused rather than ignored. In the 2026-07-28 era each request
// declares the command's own. --ui on a session that does not declare MCP
// Apps is warned about.
func TestSettledBySession(t *testing.T) {
	ios, _, _ := NewTestIOStreams(nil)
	desc := func(f featureFlags) *connDesc {
		t.Helper()
		feat, err := f.validate(context.Background(), ios, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return &connDesc{at: sessionRef{name: "dev"}, feat: feat}
	}
	legacy := sessiond.Status{Era: eraLegacy}
	for _, tc := range []struct {
		name  string
		flags featureFlags
		st    sessiond.Status
		want  string // "" for none
	}{
		{"nothing", featureFlags{}, legacy, ""},
		{"policies are the command's", featureFlags{onSampling: "decline", onElicit: "cancel"}, legacy, ""},
		{"root", featureFlags{roots: []string{"."}}, legacy,
			"--root: session dev declared the client's capabilities when it opened, and answers the server's roots/list itself; give --root to mcpx connect dev, or leave it out"},
		{"no sampling", featureFlags{noSampling: true}, legacy,
			"--no-sampling: session dev declared the client's capabilities when it opened; give --no-sampling to mcpx connect dev, or leave it out (--on-sampling decline declines this command's sampling requests)"},
		{"both", featureFlags{noSampling: true, noElicitation: true}, legacy,
			"--no-sampling, --no-elicitation: session dev declared the client's capabilities when it opened; give --no-sampling, --no-elicitation to mcpx connect dev, or leave it out"},
		{"modern", featureFlags{roots: []string{"."}, noSampling: true}, sessiond.Status{Era: eraModern}, ""},
	} {
		err := settledBySession(desc(tc.flags), tc.st, func(s string) { t.Errorf("%s: warned %q", tc.name, s) })
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want):
			t.Errorf("%s: %v\nwant %s", tc.name, err, tc.want)
		}
		if err != nil {
			if code, _ := classify(err); code != ExitUsage {
				t.Errorf("%s: exit %d", tc.name, code)
			}
		}
	}

	// The REPL declares roots with an empty list, for :roots.
	repl := desc(featureFlags{})
	repl.feat.roots = []inspector.Root{}
	if err := settledBySession(repl, legacy, func(s string) { t.Errorf("warned %q", s) }); err != nil {
		t.Errorf("the REPL's empty roots: %v", err)
	}

	ui := desc(featureFlags{})
	ui.feat.ui.on = true
	var warned []string
	warn := func(s string) { warned = append(warned, s) }
	if err := settledBySession(ui, legacy, warn); err != nil || len(warned) != 1 ||
		!strings.HasPrefix(warned[0], "session dev does not declare MCP Apps (mcpx connect dev --ui declares it)") {
		t.Errorf("--ui on a session without MCP Apps: %v, %q", err, warned)
	}
	warned = nil
	if err := settledBySession(ui, sessiond.Status{Era: eraLegacy, Extensions: []string{apps.ExtensionID}}, warn); err != nil || len(warned) != 0 {
		t.Errorf("--ui on a session with MCP Apps: %v, %q", err, warned)
	}
}
