package cmd

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// testTrees returns mcpx's whole tree and the tree of an invocation that
// names no command (every top-level command a shell).
func testTrees(t *testing.T) (full, shells *cobra.Command) {
	t.Helper()
	ios, _, _ := NewTestIOStreams(nil)
	full, _ = newRootCmd(&env{ios: ios, run: &runState{}})
	shells, _ = newRootCmdFor(&env{ios: ios, run: &runState{}}, nil)
	return full, shells
}

// TestShellsMatchCommands compares each shell (topCommands, and cobra's
// completion command) with the command built in its place: what mcpx's
// help, mcpx help, the suggestions and the completion of command names
// read of it must be the same.
func TestShellsMatchCommands(t *testing.T) {
	full, shells := testTrees(t)
	n := 0
	for _, s := range shells.Commands() {
		c, _, err := full.Find([]string{s.Name()})
		if err != nil || c == full {
			t.Errorf("shell %s: no such command in the whole tree", s.Name())
			continue
		}
		if !isShell(s) {
			if s.Name() != "help" && s.Name() != "flags" {
				t.Errorf("%s: built for an invocation that does not name it", s.Name())
			}
			continue
		}
		n++
		for _, d := range []struct {
			what        string
			shell, full any
		}{
			{"Name", s.Name(), c.Name()},
			{"Short", s.Short, c.Short},
			{"GroupID", s.GroupID, c.GroupID},
			{"Aliases", s.Aliases, c.Aliases},
			{"SuggestFor", s.SuggestFor, c.SuggestFor},
			{"Hidden", s.Hidden, c.Hidden},
			{"Deprecated", s.Deprecated, c.Deprecated},
			{"IsAvailableCommand", s.IsAvailableCommand(), c.IsAvailableCommand()},
			{"IsAdditionalHelpTopicCommand", s.IsAdditionalHelpTopicCommand(), c.IsAdditionalHelpTopicCommand()},
			{"ValidArgs", s.ValidArgs, c.ValidArgs},
		} {
			if !equalAny(d.shell, d.full) {
				t.Errorf("%s: the shell's %s is %#v, the command's %#v", s.Name(), d.what, d.shell, d.full)
			}
		}
	}
	if want := len(full.Commands()) - 2; n != want || n < 20 { // (help and flags are built)
		t.Errorf("%d shells for the %d commands of the whole tree", n, want)
	}
	if s, f := shells.UsageString(), full.UsageString(); s != f {
		t.Errorf("mcpx's help with shells:\n%s\n--- with the whole tree:\n%s", s, f)
	}
	// The suggestions for mistyped commands, in cobra's order.
	for _, c := range full.Commands() {
		for _, typo := range []string{c.Name()[:len(c.Name())-1], c.Name()[1:], c.Name()[:2], c.Name() + "s"} {
			if s, f := shells.SuggestionsFor(typo), full.SuggestionsFor(typo); !slices.Equal(s, f) {
				t.Errorf("suggestions for %q: %q with shells, %q with the whole tree", typo, s, f)
			}
		}
	}
}

func equalAny(a, b any) bool {
	if as, ok := a.([]string); ok {
		bs, _ := b.([]string)
		return slices.Equal(as, bs)
	}
	return a == b
}

// treeCommands returns the paths of the commands of root's tree, and the
// names of its top-level commands that were built (not shells).
func treeCommands(root *cobra.Command) (all, built []string) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		all = append(all, c.CommandPath())
		if c.Parent() == root && !isShell(c) && c.Name() != "help" && c.Name() != "flags" {
			built = append(built, c.Name())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return all, built
}

// TestOneShotBuildsOnlyItsCommands builds the tree of one-shot
// invocations and counts the commands built: only the top-level commands
// the arguments name, with their subcommands; the others are shells.
func TestOneShotBuildsOnlyItsCommands(t *testing.T) {
	ios, _, _ := NewTestIOStreams(nil)
	whole, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	wholeAll, wholeBuilt := treeCommands(whole)
	if len(wholeBuilt) != len(topCommands())+1 { // (and completion)
		t.Fatalf("the whole tree built %d top-level commands, not %d: %q", len(wholeBuilt), len(topCommands())+1, wholeBuilt)
	}
	for _, tc := range []struct {
		args  []string
		built []string
		max   int // commands in the tree
	}{
		{[]string{"--version"}, nil, len(topCommands()) + 4},
		{[]string{"--help"}, nil, len(topCommands()) + 4},
		{[]string{"tools", "list", "--url", "http://127.0.0.1:1/mcp"}, []string{"tools"}, len(topCommands()) + 8},
		{[]string{"tools", "list", "--help"}, []string{"tools"}, len(topCommands()) + 8},
		{[]string{"help", "trace", "show"}, []string{"trace"}, len(topCommands()) + 8},
		{[]string{"__complete", "prompts", "get", ""}, []string{"prompts"}, len(topCommands()) + 8},
		{[]string{"completion", "bash"}, []string{"completion"}, len(topCommands()) + 9},
		{[]string{"-s", "github", "verify", "t.jsonl"}, []string{"verify"}, len(topCommands()) + 5},
	} {
		root, _ := newRootCmdFor(&env{ios: ios, run: &runState{}}, tc.args)
		all, built := treeCommands(root)
		if !slices.Equal(built, tc.built) {
			t.Errorf("mcpx %s built %q, want %q", strings.Join(tc.args, " "), built, tc.built)
		}
		if len(all) > tc.max {
			t.Errorf("mcpx %s: %d commands in the tree (the whole tree has %d), want at most %d: %q", strings.Join(tc.args, " "), len(all), len(wholeAll), tc.max, all)
		}
	}
	// The REPL's lines may name any command.
	s := &replSession{}
	root, _ := newRootCmdFor(&env{ios: ios, run: &runState{}, repl: s}, nil)
	if _, built := treeCommands(root); len(built) < len(topCommands())-4 {
		t.Errorf("a REPL's tree built only %q", built)
	}
}

// TestOneShotTreeBehavesAsWholeTree runs invocations that read more of
// the tree than the command they run (help, suggestions, completion,
// usage errors) with newRootCmdFor's tree and with the whole tree, and
// wants the same output and exit status.
func TestOneShotTreeBehavesAsWholeTree(t *testing.T) {
	t.Parallel()
	whole := func(e *env, _ []string) (*cobra.Command, *rootFlags) { return newRootCmd(e) }
	for _, args := range [][]string{
		{}, {"--help"}, {"-h"}, {"help"}, {"--version"}, {"version"}, {"--json", "version"},
		{"toolz"}, {"tols", "list"}, {"toolz", "--help"}, {"tools", "bogus", "-h"}, {"veri"}, {"sesions"},
		{"help", "tools"}, {"help", "tools", "call"}, {"help", "toolz"}, {"help", "flags"}, {"help", "completion", "bash"}, {"help", "help"},
		{"tools"}, {"tools", "--help"}, {"trace", "show", "--help"}, {"auth", "login", "--help"}, {"servers", "--help"},
		{"completion"}, {"completion", "bsah"}, {"completion", "zsh", "--help"}, {"completion", "fish"},
		{"__complete", ""}, {"__complete", "t"}, {"__complete", "help", ""}, {"__complete", "help", "to"},
		{"__complete", "tools", ""}, {"__complete", "--transport", ""}, {"__complete", "tools", "list", "--color", ""},
		{"__complete", "--"}, {"__complete", "tools", "list", "--"}, {"__completeNoDesc", ""}, {"__complete", "completion", ""},
		{"--wire"}, {"-json"}, {"tools", "list", "node", "server.js"}, {"tools", "list", "-server", "x"},
		{"tools", "list", "--wire", "true"}, {"sessions", "x"}, {"trace", "show", "--timeout", "5s"}, {"tools", "list", "--version"},
		{"ping", "--url"}, {"resources"}, {"tools", "call", "--message", "hi"}, {"@s", "servers"}, {"--cwd", "-v"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		run := func(tree func(*env, []string) (*cobra.Command, *rootFlags)) runResult {
			ios, out, errOut := NewTestIOStreams(map[string]string{"MCPX_CONFIG_DIR": t.TempDir()})
			code := runTree(ctx, args, ios, tree)
			return runResult{code: code, stdout: out.String(), stderr: errOut.String()}
		}
		got, want := run(newRootCmdFor), run(whole)
		cancel()
		if got != want {
			t.Errorf("mcpx %s:\n%+v\nwith the whole tree:\n%+v", strings.Join(args, " "), got, want)
		}
	}
}

// BenchmarkStartUp measures what Run costs in a process where the
// runtime and the packages are initialised already: the tree, the parse,
// and the help or version printed.
func BenchmarkStartUp(b *testing.B) {
	for _, args := range [][]string{{"--version"}, {"--help"}, {"tools", "list", "--help"}} {
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ios, _, _ := NewTestIOStreams(nil)
				Run(context.Background(), args, ios)
			}
		})
	}
}
