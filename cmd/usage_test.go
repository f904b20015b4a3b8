package cmd

import (
	"testing"

	"github.com/spf13/cobra"
)

// referenceUsageTemplate is the cobra usage template that usageFunc
// replaced (for speed): the usage of every command must stay identical.
const referenceUsageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Additional Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{if .LocalNonPersistentFlags.HasAvailableFlags}}

Flags:
{{.LocalNonPersistentFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}

SEE-ALSO{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// TestUsageMatchesTemplate renders every command's usage in mcpx's tree
// with usageFunc and with the template it replaced, and wants the same
// bytes.
func TestUsageMatchesTemplate(t *testing.T) {
	tree := func() *cobra.Command {
		ios, _, _ := NewTestIOStreams(nil)
		root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
		return root
	}
	got, want := tree(), tree()
	got.SetUsageFunc(usageFunc(func(*cobra.Command) string { return "SEE-ALSO" }))
	want.SetUsageFunc(nil)
	want.SetUsageTemplate(referenceUsageTemplate)
	n := 0
	var walk func(g, w *cobra.Command)
	walk = func(g, w *cobra.Command) {
		n++
		if gu, wu := g.UsageString(), w.UsageString(); gu != wu {
			t.Errorf("usage of %s:\n--- usageFunc\n%s\n--- template\n%s", g.CommandPath(), gu, wu)
		}
		gs, ws := g.Commands(), w.Commands()
		if len(gs) != len(ws) {
			t.Fatalf("%s: %d subcommands against %d", g.CommandPath(), len(gs), len(ws))
		}
		for i := range gs {
			walk(gs[i], ws[i])
		}
	}
	walk(got, want)
	if n < 40 {
		t.Fatalf("compared only %d commands", n)
	}
}
