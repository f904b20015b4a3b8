package cmd

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"

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
	flags []string // the names of its flags
}

// flagGroups are the groups of the global flags, in the order mcpx help
// flags shows them. A flag in no group's flags is shown under "other", so
// that a new flag is never hidden; give it its group here. (A table, not
// a map built when mcpx starts: most runs read none of it.)
var flagGroups = []flagGroup{
	{"server", "server", "Server (a command given after --, or a named one)", []string{
		"env", "cwd", "server-stderr", "shutdown-grace", "server", "input", "trust"}},
	{"http", "HTTP", "HTTP (a server at --url)", []string{
		"url", "transport", "header", "bearer", "ca-cert", "insecure"}},
	{"auth", "authorization", "Authorization (OAuth, for HTTP servers)", []string{
		"client-id", "client-secret", "client-metadata-url", "grant",
		"private-key", "callback-url", "no-browser", "stored-auth-only",
		"id-token-file", "idp-token-url", "idp-client-id", "idp-client-secret",
		"assertion-file", "no-dpop"}},
	{"session", "session", "Session and protocol", []string{
		"max-message-size", "timeout", "max-timeout", "protocol-version", "protocol-era"}},
	{"features", "client features", "Client features (what mcpx offers the server)", []string{
		"root", "on-sampling", "on-elicit", "no-sampling", "no-elicitation", "log-level", "linger",
		"ui", "ui-theme", "ui-timeout", "ui-downloads", "on-ui-download"}},
	{"output", "output", "Output", []string{"json", "wire", "verbose", "color", "strict"}},
	{"record", "recording", "Recording, replay and verify", []string{
		"record", "record-mode", "stable", "force", "redact", "no-redact", "ignore", "normalize"}},
	{"other", "", "Other", nil},
}

// flagGroupOf returns the id of the group of the global flag name, ""
// for none.
func flagGroupOf(name string) string {
	for _, g := range flagGroups {
		if slices.Contains(g.flags, name) {
			return g.id
		}
	}
	return ""
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

// usageFunc writes a command's usage: cobra's usage with the command's
// own flags only, and a line that points at the global flags (seeAlso).
// It is written out rather than a cobra usage template because executing
// the template was a sixth of mcpx --help's start-up (reflection for every
// field of every listed command); usage_test.go keeps the bytes identical
// to the template this replaced.
func usageFunc(seeAlso func(*cobra.Command) string) func(*cobra.Command) error {
	return func(c *cobra.Command) error {
		var b strings.Builder
		writeUsage(&b, c, seeAlso(c))
		_, err := io.WriteString(c.OutOrStderr(), b.String())
		return err
	}
}

// writeUsage writes c's usage to b (see usageFunc).
func writeUsage(b *strings.Builder, c *cobra.Command, seeAlso string) {
	// First: it merges the parents' persistent flags into c's, which
	// UseLine's "[flags]" depends on.
	own := c.LocalNonPersistentFlags()
	b.WriteString("Usage:")
	if c.Runnable() {
		b.WriteString("\n  " + c.UseLine())
	}
	subs := c.HasAvailableSubCommands()
	if subs {
		b.WriteString("\n  " + c.CommandPath() + " [command]")
	}
	if len(c.Aliases) > 0 {
		b.WriteString("\n\nAliases:\n  " + c.NameAndAliases())
	}
	if c.HasExample() {
		b.WriteString("\n\nExamples:\n" + c.Example)
	}
	if subs {
		listed := func(sub *cobra.Command) bool { return sub.IsAvailableCommand() || sub.Name() == "help" }
		line := func(sub *cobra.Command) {
			b.WriteString("\n  " + rpad(sub.Name(), sub.NamePadding()) + " " + sub.Short)
		}
		cmds := c.Commands()
		if len(c.Groups()) == 0 {
			b.WriteString("\n\nAvailable Commands:")
			for _, sub := range cmds {
				if listed(sub) {
					line(sub)
				}
			}
		} else {
			for _, g := range c.Groups() {
				b.WriteString("\n\n" + g.Title)
				for _, sub := range cmds {
					if sub.GroupID == g.ID && listed(sub) {
						line(sub)
					}
				}
			}
			if !c.AllChildCommandsHaveGroup() {
				b.WriteString("\n\nAdditional Commands:")
				for _, sub := range cmds {
					if sub.GroupID == "" && listed(sub) {
						line(sub)
					}
				}
			}
		}
	}
	if own.HasAvailableFlags() {
		b.WriteString("\n\nFlags:\n" + strings.TrimRightFunc(own.FlagUsages(), unicode.IsSpace))
	}
	b.WriteString("\n\n" + seeAlso)
	if c.HasHelpSubCommands() {
		b.WriteString("\n\nAdditional help topics:")
		for _, sub := range c.Commands() {
			if sub.IsAdditionalHelpTopicCommand() {
				b.WriteString("\n  " + rpad(sub.CommandPath(), sub.CommandPathPadding()) + " " + sub.Short)
			}
		}
	}
	if subs {
		b.WriteString("\n\nUse \"" + c.CommandPath() + " [command] --help\" for more information about a command.")
	}
	b.WriteString("\n")
}

// rpad pads s with spaces on the right to n characters, as cobra's
// template function of that name.
func rpad(s string, n int) string {
	if pad := n - len([]rune(s)); pad > 0 {
		return s + strings.Repeat(" ", pad)
	}
	return s
}

// globalSeeAlso is the last line of c's usage in mcpx's tree: where the
// global flags are described, or for a command that takes only some of
// them (readsGlobals), which.
func globalSeeAlso(c *cobra.Command) string {
	reads, restricted := c.Annotations[globalsAnnotation]
	if !restricted {
		return "Global flags (" + groupNames() + "): see mcpx help flags"
	}
	names := strings.Fields(reads)
	for _, n := range []string{"json", "color"} { // (alwaysRead's)
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	// A group it takes whole is named as such when the list is long.
	var groups []string
	if len(names) > 8 {
		for _, g := range flagGroups {
			if len(g.flags) > 0 && !slices.ContainsFunc(g.flags, func(n string) bool { return !slices.Contains(names, n) }) {
				groups = append(groups, g.short)
				names = slices.DeleteFunc(names, func(n string) bool { return slices.Contains(g.flags, n) })
			}
		}
	}
	fs := c.Root().PersistentFlags()
	for i, n := range names {
		names[i] = flagName(fs.Lookup(n))
	}
	var took []string
	if len(groups) > 0 {
		took = append(took, "the "+strings.Join(groups, ", ")+" flags")
	}
	if len(names) > 0 {
		took = append(took, strings.Join(names, ", "))
	}
	return "Global flags it takes: " + strings.Join(took, "; ") + " (see mcpx help flags)"
}

// setHelp gives root (mcpx's tree) its usage function, the help topic
// mcpx help flags, the help command and the completion command: built
// when withCompletion is set, else its shell (see topCommand).
func setHelp(root *cobra.Command, withCompletion bool) {
	root.SetUsageFunc(usageFunc(globalSeeAlso))
	root.AddCommand(newFlagsTopic(root))
	// cobra adds help and completion when it runs; added now, they get
	// examples like every other command.
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			readsGlobals(c, "prints help")
			c.Run, c.RunE = nil, helpTopic
			c.Example = "  mcpx help tools call\n  mcpx help flags"
		}
	}
	if !withCompletion {
		// (Its shell stops cobra from adding its own when it runs.)
		root.AddCommand(completionShell.shell())
		return
	}
	addCompletionCmd(root)
}

// completionCmdName is the name of cobra's completion command.
const completionCmdName = "completion"

// completionShell is the shell of cobra's completion command (its name and
// summary are cobra's).
var completionShell = topCommand{name: completionCmdName, short: "Generate the autocompletion script for the specified shell"}

// addCompletionCmd adds cobra's completion command to root, with mcpx's
// examples, arguments and bash script.
func addCompletionCmd(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	completionExamples := map[string]string{
		"bash":       `  source <(mcpx completion bash)`,
		"zsh":        `  mcpx completion zsh > "${fpath[1]}/_mcpx"`,
		"fish":       `  mcpx completion fish > ~/.config/fish/completions/mcpx.fish`,
		"powershell": `  mcpx completion powershell | Out-String | Invoke-Expression`,
	}
	for _, c := range root.Commands() {
		if c.Name() != completionCmdName {
			continue
		}
		// A mistyped shell is an error, not the help on stdout (which
		// source <(mcpx completion bsah) would run).
		c.Args, c.RunE = cobra.ArbitraryArgs, needSubcommand
		c.Example = completionExamples["bash"] + "\n" + completionExamples["zsh"]
		readsGlobals(c, "writes a shell's completion script")
		for _, sub := range c.Commands() {
			sub.Args = noArgs
			if sub.Name() == "bash" {
				sub.Long = bashCompletionLong
				sub.RunE = func(b *cobra.Command, _ []string) error {
					noDesc, _ := b.Flags().GetBool("no-descriptions")
					return bashCompletion(root, b.OutOrStdout(), !noDesc)
				}
				sub.Run = nil
			}
			sub.Example = completionExamples[sub.Name()]
			readsGlobals(sub, "writes a shell's completion script")
		}
	}
}

// helpTopic is the RunE of mcpx help: the help of the command args name.
// A topic that names no command is a usage error naming it, with a
// suggestion (cobra's printed "Unknown help topic" and mcpx's help on
// stdout, exit 0, and mcpx help tools bogus the help of mcpx tools). Words
// after a command without subcommands are its arguments, as with --help.
func helpTopic(h *cobra.Command, args []string) error {
	root := h.Root()
	target, rest, err := root.Find(args)
	if err != nil || target == nil || len(rest) > 0 && target.HasSubCommands() {
		if target == nil || err != nil {
			target = root
		}
		word := args[len(args)-len(rest)]
		if len(rest) == 0 {
			word = args[0]
		}
		msg := fmt.Sprintf("unknown help topic %q", strings.Join(args, " "))
		if target.SuggestionsMinimumDistance <= 0 {
			target.SuggestionsMinimumDistance = 2 // (cobra sets it only on the path it runs)
		}
		if s := target.SuggestionsFor(word); len(s) > 0 {
			msg += " (did you mean " + strings.TrimSpace(target.CommandPath()+" "+strings.Join(s, ", ")) + "?)"
		}
		return usageErrorf("%s; mcpx help lists the commands", msg)
	}
	target.InitDefaultHelpFlag()
	target.InitDefaultVersionFlag()
	return target.Help()
}

// newFlagsTopic is mcpx help flags: the global flags, by group.
func newFlagsTopic(root *cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:   "flags",
		Short: "The global flags, by group (" + groupNames() + ")",
		Long: `The global flags go before or after the command (not after --, which starts
the server's command line) and apply to every command that connects.`,
		Example: `  mcpx help flags
  mcpx tools list --url https://mcp.example.com/mcp --grant client_credentials --client-id ID --client-secret "$SECRET"`,
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
		g := flagGroupOf(f.Name)
		if g == "" {
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
