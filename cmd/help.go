package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The help: a command's help shows its own flags and one line pointing
// at `mcpx help flags`, which shows the global flags by group. Without
// that, every command listed some 45 global flags (mostly OAuth) after
// its own few.

// flagGroup is one heading of mcpx help flags.
type flagGroup struct {
	id    string
	short string // in the see-also line; "" leaves the group out of it
	title string
}

// flagGroups are the groups of the global flags, in the order mcpx help
// flags shows them. A flag not in flagGroupOf is shown under "other", so
// that a new flag is never hidden; give it its group there.
var flagGroups = []flagGroup{
	{"server", "server", "Server (a command given after --, or a named one)"},
	{"http", "HTTP", "HTTP (a server at --url)"},
	{"auth", "authorization", "Authorization (OAuth, for HTTP servers)"},
	{"session", "session", "Session and protocol"},
	{"features", "client features", "Client features (what mcpx offers the server)"},
	{"output", "output", "Output"},
	{"record", "recording", "Recording, replay and verify"},
	{"other", "", "Other"},
}

// flagGroupOf maps each global flag to its group.
var flagGroupOf = map[string]string{
	"env": "server", "cwd": "server", "server-stderr": "server", "server": "server", "input": "server", "trust": "server",

	"url": "http", "transport": "http", "header": "http", "bearer": "http", "ca-cert": "http", "insecure": "http",

	"client-id": "auth", "client-secret": "auth", "client-metadata-url": "auth", "grant": "auth",
	"private-key": "auth", "callback-url": "auth", "no-browser": "auth", "stored-auth-only": "auth",
	"id-token-file": "auth", "idp-token-url": "auth", "idp-client-id": "auth", "idp-client-secret": "auth",
	"assertion-file": "auth", "no-dpop": "auth",

	"max-message-size": "session", "timeout": "session", "max-timeout": "session",
	"protocol-version": "session", "protocol-era": "session",

	"root": "features", "on-sampling": "features", "on-elicit": "features", "no-sampling": "features",
	"no-elicitation": "features", "log-level": "features", "linger": "features",
	"ui": "features", "ui-theme": "features", "ui-timeout": "features",

	"json": "output", "wire": "output", "verbose": "output", "color": "output",

	"record": "record", "record-mode": "record", "stable": "record", "force": "record", "redact": "record", "no-redact": "record",
	"ignore": "record", "normalize": "record",
}

// groupNames lists the groups' short names for the see-also line.
func groupNames() string {
	var names []string
	for _, g := range flagGroups {
		if g.short != "" {
			names = append(names, g.short)
		}
	}
	return strings.Join(names, ", ")
}

// usageTemplate is cobra's usage template with the command's own flags
// only, and a line that points at the global flags (see also).
func usageTemplate(seeAlso string) string {
	return `Usage:{{if .Runnable}}
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

` + seeAlso + `{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`
}

// setHelp gives root (mcpx's tree) its usage template and the help
// topic mcpx help flags.
func setHelp(root *cobra.Command) {
	root.SetUsageTemplate(usageTemplate("Global flags (" + groupNames() + "): see mcpx help flags"))
	root.AddCommand(newFlagsTopic(root))
	// cobra adds help and completion when it runs; added now, they get
	// examples like every other command.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	completionExamples := map[string]string{
		"bash":       `  source <(mcpx completion bash)`,
		"zsh":        `  mcpx completion zsh > "${fpath[1]}/_mcpx"`,
		"fish":       `  mcpx completion fish > ~/.config/fish/completions/mcpx.fish`,
		"powershell": `  mcpx completion powershell | Out-String | Invoke-Expression`,
	}
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Example = "  mcpx help tools call\n  mcpx help flags"
		case "completion":
			c.Example = completionExamples["bash"] + "\n" + completionExamples["zsh"]
			for _, sub := range c.Commands() {
				sub.Example = completionExamples[sub.Name()]
			}
		}
	}
}

// newFlagsTopic is mcpx help flags: the global flags, by group.
func newFlagsTopic(root *cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   "flags",
		Short: "The global flags, by group (" + groupNames() + ")",
		Long: `The global flags go before or after the command (not after --, which starts
the server's command line) and apply to every command that connects.`,
		Example: `  mcpx help flags
  mcpx tools list --url https://mcp.example.com/mcp --grant client_credentials --client-id ID`,
	}
	c.SetHelpFunc(func(c *cobra.Command, _ []string) {
		w := c.OutOrStdout()
		fmt.Fprintln(w, c.Long)
		writeFlagGroups(w, root.PersistentFlags())
		fmt.Fprintf(w, "\nExamples:\n%s\n", c.Example)
	})
	return c
}

// writeFlagGroups writes the flags of fs under their group headings.
func writeFlagGroups(w io.Writer, fs *pflag.FlagSet) {
	sets := map[string]*pflag.FlagSet{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		g, ok := flagGroupOf[f.Name]
		if !ok {
			g = "other"
		}
		if sets[g] == nil {
			sets[g] = pflag.NewFlagSet(g, pflag.ContinueOnError)
			sets[g].SortFlags = false
		}
		sets[g].AddFlag(f)
	})
	for _, g := range flagGroups {
		if s := sets[g.id]; s != nil {
			fmt.Fprintf(w, "\n%s:\n%s", g.title, s.FlagUsages())
		}
	}
}
