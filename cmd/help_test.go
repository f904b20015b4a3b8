package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestEveryCommandHasExample walks mcpx's command tree: every command,
// cobra's help and completion included, shows at least one example.
func TestEveryCommandHasExample(t *testing.T) {
	ios, _, _ := NewTestIOStreams(nil)
	root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 40 {
		t.Fatalf("walked only %d commands", n)
	}
}

// A mistyped shell is an unknown command, said as for mcpx tools (exit 2,
// nothing on stdout for `source <(mcpx completion bsah)` to run), not
// the help on stdout and exit 0; without a shell, mcpx completion asks
// for one as mcpx tools asks for a subcommand.
func TestCompletionUnknownShell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"completion", "bsah"}, `mcpx: unknown command "bsah" for "mcpx completion" (choose one of: bash, fish, powershell, zsh)`},
		{[]string{"tools", "bogus"}, `mcpx: unknown command "bogus" for "mcpx tools" (choose one of: call, list, schema)`},
		{[]string{"completion"}, `mcpx: mcpx completion needs a subcommand: bash, fish, powershell, zsh`},
	} {
		r := runMcpx(t, nil, tc.args...)
		if r.code != ExitUsage || r.stdout != "" || !strings.HasPrefix(r.stderr, tc.want) {
			t.Errorf("mcpx %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.want)
		}
	}
	if r := runMcpx(t, nil, "completion", "bash"); r.code != 0 || !strings.Contains(r.stdout, "bash completion") {
		t.Errorf("mcpx completion bash: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestFlagGroupsCoverGlobalFlags: every global flag is in exactly one
// group of flagGroups, and every name there is a global flag.
func TestFlagGroupsCoverGlobalFlags(t *testing.T) {
	ios, _, _ := NewTestIOStreams(nil)
	root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	fs := root.PersistentFlags()
	in := map[string]int{}
	for _, g := range flagGroups {
		for _, name := range g.flags {
			in[name]++
			if fs.Lookup(name) == nil {
				t.Errorf("group %s lists %s, which is no global flag", g.id, name)
			}
		}
	}
	n := 0
	fs.VisitAll(func(f *pflag.Flag) {
		n++
		if in[f.Name] != 1 && !f.Hidden && f.Name != "help" {
			t.Errorf("--%s is in %d groups of flagGroups, not one", f.Name, in[f.Name])
		}
	})
	if n < 50 {
		t.Fatalf("only %d global flags", n)
	}
}
