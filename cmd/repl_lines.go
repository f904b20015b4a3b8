package cmd

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/tui"
)

func newResourcesUnsubscribeCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "unsubscribe URI",
		Short: "End a subscription made with resources subscribe (REPL)",
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return g.withClient(c.Context(), server, func(cl *client) error {
				return g.repl.unsubscribe(c.Context(), cl, own[0])
			})
		},
	}
}

// exec runs one command line.
func (s *replSession) exec(ctx context.Context, words []string) repl.Result {
	res := s.exec1(ctx, words)
	s.last.Store(int32(res.Code))
	return res
}

func (s *replSession) exec1(ctx context.Context, words []string) repl.Result {
	switch name := words[0]; {
	case name == "exit" || name == "quit":
		code := 0
		if len(words) > 2 {
			return repl.Result{Code: s.report(usageErrorf("usage: exit [STATUS]"))}
		}
		if len(words) == 2 {
			n, err := strconv.Atoi(words[1])
			if err != nil || n < 0 || n > 255 {
				return repl.Result{Code: s.report(usageErrorf("exit %s: the status must be a number from 0 to 255", words[1]))}
			}
			code = n
		}
		return repl.Result{Code: code, Quit: true}
	case name == "help" && len(words) == 1:
		s.help()
		return repl.Result{}
	case name == "help":
		return repl.Result{Code: s.run(ctx, append(words[1:], "--help"))}
	case strings.HasPrefix(name, ":"):
		return repl.Result{Code: s.replCommand(ctx, words)}
	}
	return repl.Result{Code: s.run(ctx, words)}
}

// run executes one mcpx command on the session, through the same command
// tree as a one-shot command.
func (s *replSession) run(ctx context.Context, args []string) int {
	root, lg := s.tree()
	root.SetArgs(args)
	wire := s.wire.Load()
	err := root.ExecuteContext(ctx)
	s.wire.Store(wire) // --wire lasts for its command
	if err == nil {
		return ExitOK
	}
	if !lg.started {
		err = &usageError{err: err}
	}
	return lg.report(err)
}

// allowedLineFlags are the global flags a REPL command may carry: the
// others choose or shape the session, which is open already.
var allowedLineFlags = map[string]bool{"json": true, "wire": true, "verbose": true, "help": true}

// tree builds the command tree for one REPL command: mcpx's own, with
// the server flags hidden and refused, help texts without the server
// part, resources unsubscribe, and tools call NAME --help describing the
// tool.
func (s *replSession) tree() (*cobra.Command, *globalOptions) {
	root, lg := newRootCmd(s.ios)
	lg.repl = s
	lg.json = s.json.Load()
	lg.verbose = s.g.verbose
	lg.color = s.g.color
	lg.feat = s.g.feat
	root.CompletionOptions.DisableDefaultCmd = true
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !allowedLineFlags[f.Name] {
			f.Hidden = true
		}
	})
	for _, c := range root.Commands() {
		switch c.Name() {
		case "auth":
			root.RemoveCommand(c)
		case "resources":
			c.AddCommand(newResourcesUnsubscribeCmd(lg))
		case "tools":
			for _, sub := range c.Commands() {
				if sub.Name() == "call" {
					s.toolHelpOn(sub)
				}
			}
		}
	}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.Use = strings.TrimSuffix(c.Use, " -- <server command>")
		c.Example = replExamples(c.Example)
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
	return root, lg
}

var exampleLine = regexp.MustCompile(`(?m)^(\s*)mcpx (.*?)(?:\s+--\s.*|\s+--url\s+\S+)?$`)

// replExamples rewrites one-shot examples for the REPL: no program name,
// no server.
func replExamples(ex string) string { return exampleLine.ReplaceAllString(ex, "$1$2") }

// checkLine refuses what a REPL command cannot change: the server and the
// session's flags.
func (s *replSession) checkLine(c *cobra.Command, lg *globalOptions) error {
	var bad []string
	c.Flags().Visit(func(f *pflag.Flag) {
		if c.Root().PersistentFlags().Lookup(f.Name) != nil && !allowedLineFlags[f.Name] {
			bad = append(bad, "--"+f.Name)
		}
	})
	if len(bad) > 0 {
		return usageErrorf("%s chooses or shapes the session, which is open already: give it to mcpx repl (in the REPL: :wire, :json, :log, :roots, :reconnect)", strings.Join(bad, ", "))
	}
	if c.Flags().ArgsLenAtDash() >= 0 {
		return usageErrorf("the REPL is connected to its server already: leave out -- and the server command")
	}
	if lg.wire {
		s.wire.Store(true)
	}
	return nil
}

// toolHelpOn makes tools call NAME --help describe the tool from the live
// server before the usual help.
func (s *replSession) toolHelpOn(call *cobra.Command) {
	def := call.HelpFunc()
	call.SetHelpFunc(func(c *cobra.Command, args []string) {
		if names := c.Flags().Args(); len(names) > 0 {
			s.toolHelp(names[0])
			fmt.Fprintln(s.ios.Out)
		}
		def(c, args)
	})
}

func (s *replSession) toolHelp(name string) {
	s.mu.Lock()
	cat, c := s.catalog, s.c
	s.mu.Unlock()
	if cat == nil || c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
	defer cancel()
	t, err := cat.Tool(ctx, name)
	if err != nil {
		c.console.Warn(err.Error())
		return
	}
	p := tui.NewPrinter(s.ios.Out, s.ios.colorEnabled(s.g.color, s.ios.OutTTY))
	p.ToolHelp(*t)
}

// help lists what can be typed.
func (s *replSession) help() {
	root, _ := s.tree()
	w := tabwriter.NewWriter(s.ios.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "Protocol commands (as in mcpx, without the server; `help COMMAND` or COMMAND --help for more):")
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() || c.Name() == "repl" {
			continue
		}
		subs := c.Commands()
		if len(subs) == 0 {
			fmt.Fprintf(w, "  %s\t%s\n", c.Name(), c.Short)
			continue
		}
		for _, sub := range subs {
			if sub.IsAvailableCommand() {
				fmt.Fprintf(w, "  %s %s\t%s\n", c.Name(), sub.Name(), sub.Short)
			}
		}
	}
	w.Flush()
	fmt.Fprintln(s.ios.Out, "\nREPL commands:")
	w = tabwriter.NewWriter(s.ios.Out, 0, 4, 2, ' ', 0)
	for _, h := range replCommands {
		fmt.Fprintf(w, "  %s\t%s\n", h.use, h.short)
	}
	w.Flush()
	fmt.Fprintln(s.ios.Out, "\nPer command: --json, --wire, -v. Quote words with spaces ('a b'); JSON needs no quotes.")
	fmt.Fprintln(s.ios.Out, "Ctrl-C cancels the command running; Ctrl-D or exit leaves.")
}

// report prints a REPL command's error the way mcpx reports errors, and
// returns its exit status.
func (s *replSession) report(err error) int {
	lg := &globalOptions{io: s.ios, json: s.json.Load(), repl: s}
	return lg.report(err)
}

// reportPlain reports what the runner meets outside a command.
func (s *replSession) reportPlain(err error, usage bool) int {
	if usage {
		err = &usageError{err: err}
	}
	return s.report(err)
}

// completer completes commands from the grammar and the live server.
func (s *replSession) completer() *repl.Completer {
	return &repl.Completer{
		Root: s.node,
		Source: func() repl.Source {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.catalog == nil {
				return nil
			}
			return s.catalog
		},
		Roots: func() []string {
			c, err := s.current()
			if err != nil || c.feats.Roots == nil {
				return nil
			}
			var out []string
			for _, r := range c.feats.Roots.List() {
				out = append(out, r.URI)
			}
			return out
		},
	}
}

// grammar describes the command tree (and the REPL commands) for
// completion.
func (s *replSession) grammar() *repl.Node {
	root, _ := s.tree()
	var build func(c *cobra.Command, path string) *repl.Node
	build = func(c *cobra.Command, path string) *repl.Node {
		n := &repl.Node{Name: c.Name(), Path: path}
		c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				n.Flags = append(n.Flags, repl.Flag{Long: f.Name, Short: f.Shorthand, Value: f.Value.Type() != "bool"})
			}
		})
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && sub.Name() != "repl" {
				p := sub.Name()
				if path != "" {
					p = path + " " + sub.Name()
				}
				n.Children = append(n.Children, build(sub, p))
			}
		}
		return n
	}
	node := build(root, "")
	node.Flags = nil
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if allowedLineFlags[f.Name] && f.Name != "help" {
			node.Flags = append(node.Flags, repl.Flag{Long: f.Name, Short: f.Shorthand})
		}
	})
	for _, h := range replCommands {
		node.Children = append(node.Children, &repl.Node{Name: h.name, Path: h.name})
	}
	return node
}
