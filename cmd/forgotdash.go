package cmd

import (
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/transport"
)

// strayArgsError marks a usage error about a command's words — too many
// arguments, a word that is not key=value, a flag the command does not
// know — which a server command typed without "--" before it causes:
// forgotDash then says so instead.
type strayArgsError struct{ err error }

func (e *strayArgsError) Error() string { return e.err.Error() }
func (e *strayArgsError) Unwrap() error { return e.err }

// runners are the programs servers are commonly started with, which are
// server commands even where they are not installed. (A list, not a map
// built when mcpx starts: only a usage error reads it.)
var runners = []string{
	"node", "npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx", "deno",
	"python", "python3", "uv", "uvx", "pipx", "poetry",
	"docker", "podman", "go", "java", "ruby", "php", "dotnet", "cargo",
}

// forgotDash turns err, the usage error a command c ended with, into
// "did you forget --?" when mcpx's command line args has no "--" and one
// of c's words after its fixed arguments looks like a server command (a
// common runner, a path to a file, a program on $PATH): mcpx tools list
// node server.js; and "give --url" when one is a URL (mcpx tools list
// http://…). Other errors are returned as they are.
func forgotDash(c *cobra.Command, args []string, err error) error {
	var stray *strayArgsError
	var ae *inspector.ArgumentError
	switch {
	case c == nil, slices.Contains(args, "--"), !strings.Contains(c.Use, "<server command>"):
		return err
	case errors.As(err, &stray):
	case errors.As(err, &ae) && ae.Key == "":
		// A prompt argument that is not key=value.
	default:
		return err
	}
	if f := c.Flags().Lookup("url"); f != nil && f.Changed {
		return err // the server is at the URL
	}
	words := positionals(c, args)
	if n := fixedArgs(c); len(words) > n {
		words = words[n:]
	} else {
		return err
	}
	for _, i := range words {
		if !c.HasParent() && len(c.SuggestionsFor(args[i])) > 0 {
			return err // a mistyped command (mcpx toolz)
		}
		if w := args[i]; strings.HasPrefix(w, "http://") || strings.HasPrefix(w, "https://") {
			// mcpx tools list http://…: a server at a URL is given with
			// --url (the URL's credentials, if any, are not repeated).
			fixed := slices.Concat([]string{"mcpx"}, args[:i], []string{"--url", w}, args[i+1:])
			return usageErrorf("a server at a URL is given with --url (try: %s)", transport.RedactURLs(shellJoin(fixed)))
		}
		if w := args[i]; !strings.Contains(w, "=") && looksLikeCommand(w) {
			fixed := slices.Concat([]string{"mcpx"}, args[:i], []string{"--"}, args[i:])
			return usageErrorf("did you forget -- before the server command %q? (try: %s)", w, shellJoin(fixed))
		}
	}
	return err
}

// positionals returns the indexes in args of c's positional words: not
// the names of the commands on c's path, flags or their values.
func positionals(c *cobra.Command, args []string) []int {
	path := strings.Fields(c.CommandPath())[1:]
	fs := c.Flags()
	var out []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			if f := fs.Lookup(name); f != nil && !hasValue && takesValue(f) {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// -H value, -Hvalue, -v.
			if f := fs.ShorthandLookup(a[1:2]); f != nil && len(a) == 2 && takesValue(f) {
				i++
			}
		case len(path) > 0 && a == path[0]:
			path = path[1:]
		default:
			out = append(out, i)
		}
	}
	return out
}

func takesValue(f *pflag.Flag) bool { return f.NoOptDefVal == "" }

// fixedArgs counts the arguments c's usage line names before its
// optional ones (tools call NAME …: 1), which are never server commands
// (a tool may well be called echo).
func fixedArgs(c *cobra.Command) int {
	if !c.HasParent() {
		return 0 // mcpx <command>: the command is not among the words
	}
	n := 0
	for _, w := range strings.Fields(c.Use)[1:] {
		if strings.HasPrefix(w, "[") || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "(") || strings.Contains(w, "=") {
			break
		}
		n++
	}
	return n
}

// looksLikeCommand reports whether w looks like the start of a server
// command line.
func looksLikeCommand(w string) bool {
	if slices.Contains(runners, w) {
		return true
	}
	if strings.ContainsAny(w, `/\`) {
		fi, err := os.Stat(w)
		return err == nil && fi.Mode().IsRegular()
	}
	_, err := exec.LookPath(w)
	return err == nil
}
