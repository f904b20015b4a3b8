package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/repl"
	"github.com/mcpx-dev/mcpx/tui"
)

// Shell completion (mcpx completion SHELL; the shell runs mcpx __complete):
// the values of enumerated flags, and the names of the live server's
// tools, prompts and resources when the words before the one completed
// name a server (--url URL, or an open session: mcpx @NAME …).

// liveCompletionTimeout bounds a completion that asks the server: a shell
// waits for it.
const liveCompletionTimeout = 2 * time.Second

// flagValues are the values of the global flags that take one of a few.
func flagValues() map[string][]string {
	return map[string][]string{
		"transport":        {"auto", "http", "sse"},
		"protocol-era":     {"legacy", "modern", "auto"},
		"protocol-version": append(append([]string{}, mcp.HandshakeVersions...), mcp.ModernVersions...),
		"color":            {"auto", "always", "never"},
		"on-elicit":        {inspector.PolicyPrompt, inspector.PolicyDecline, inspector.PolicyCancel, inspector.PolicyAcceptDefaults, inspector.PolicyFile + ":"},
		"on-sampling":      {inspector.PolicyPrompt, inspector.PolicyDecline, inspector.PolicyFile + ":"},
		"log-level":        inspector.LogLevels,
		"grant":            {string(oauthflow.GrantAuthorizationCode), string(oauthflow.GrantClientCredentials), string(oauthflow.GrantIDJAG), string(oauthflow.GrantJWTBearer)},
		"server-stderr":    {"show", "hide"},
	}
}

// registerCompletions adds the completions of root's flags and of the
// commands that name a tool, a prompt or a resource.
func registerCompletions(root *cobra.Command, e *env, flags *rootFlags) {
	for name, values := range flagValues() {
		if root.PersistentFlags().Lookup(name) == nil {
			continue
		}
		dir := cobra.ShellCompDirectiveNoFileComp
		if name == "server-stderr" {
			dir = cobra.ShellCompDirectiveDefault // or a file
		}
		_ = root.RegisterFlagCompletionFunc(name, func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			var out []cobra.Completion
			for _, v := range values {
				if strings.HasPrefix(v, toComplete) {
					out = append(out, v)
				}
			}
			return out, dir
		})
	}
	live := map[string]string{
		"tools call":     inspector.ListTools,
		"tools schema":   inspector.ListTools,
		"prompts get":    inspector.ListPrompts,
		"resources read": inspector.ListResources,
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), root.Name()+" ")
		if method, ok := live[path]; ok {
			c.ValidArgsFunction = liveNames(e, flags, method)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// liveNames completes a command's first argument with the names (URIs for
// resources) the server lists for method, when the command line names a
// server. The server is asked without a terminal, recording, lingering or
// a browser authorization, for at most liveCompletionTimeout; whatever
// fails completes nothing and prints nothing.
func liveNames(e *env, flags *rootFlags, method string) cobra.CompletionFunc {
	return func(c *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		const none = cobra.ShellCompDirectiveNoFileComp
		own, server := splitServer(c, args)
		if len(own) > 0 {
			return nil, none
		}
		quiet := *e.ios
		quiet.In, quiet.ErrOut = bytes.NewReader(nil), io.Discard
		quiet.InTTY, quiet.OutTTY, quiet.ErrTTY = false, false, false
		f := *flags
		f.rec.file, f.feat.linger = "", 0
		if f.http.url != "" {
			f.auth.storedOnly = true // never a browser
		} else {
			f.server.stderr = "hide"
		}
		f.out = outputFlags{color: "never"}
		cfg, err := f.validate(validation{ios: &quiet, eraSet: c.Flags().Changed("protocol-era"), at: e.run.at})
		if err != nil {
			return nil, none
		}
		d, err := cfg.conn.forServer(server, "")
		if err != nil {
			return nil, none
		}
		e.run.interrupts.watch() // (completion runs no PersistentPreRunE)
		ctx, cancel := context.WithTimeout(c.Context(), liveCompletionTimeout)
		defer cancel()
		k := &connector{ios: &quiet, track: e.run.track}
		cl, err := k.connect(ctx, d, cfg.out, attachments{})
		if err != nil {
			return nil, none
		}
		defer cl.Close()
		list, err := cl.sess.List(ctx, method, nil)
		if err != nil {
			return nil, none
		}
		var out []cobra.Completion
		for _, it := range list.Items {
			var item struct {
				Name        string `json:"name"`
				URI         string `json:"uri"`
				Description string `json:"description"`
			}
			if json.Unmarshal(it, &item) != nil {
				continue
			}
			word := item.Name
			if method == inspector.ListResources {
				word = item.URI
			}
			if word == "" || !strings.HasPrefix(word, toComplete) || strings.IndexFunc(word, unicode.IsSpace) >= 0 || repl.UnsafeForTerminal(word) {
				continue
			}
			desc, _, _ := strings.Cut(item.Description, "\n")
			out = append(out, cobra.CompletionWithDesc(word, tui.EscapeLine(desc)))
		}
		return out, none
	}
}
