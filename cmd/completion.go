package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
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
		"record-mode":      {string(record.ModeReplayOnly), string(record.ModeOnce), string(record.ModeUpdate), string(record.ModeNew)},
		"ui-theme":         {"light", "dark", "auto"},
		"on-ui-download":   {"prompt", "decline", "accept"},
	}
}

// registerCompletions adds the completions of root's flags: only a tree
// that completes a shell's words reads them (see reach).
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
	_ = root.RegisterFlagCompletionFunc("server", func(c *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return e.serverNames(c.Context(), false), cobra.ShellCompDirectiveNoFileComp
	})
}

// liveMethod is the list method whose names (URIs for resources and
// skills) complete the first argument of the command at path below mcpx
// (see liveNames); "" for a command whose arguments are not such names.
func liveMethod(path string) string {
	switch path {
	case "tools call", "tools schema":
		return inspector.ListTools
	case "prompts get":
		return inspector.ListPrompts
	case "resources read":
		return inspector.ListResources
	case "skills get", "skills check", "skills pull":
		return inspector.ListSkills
	}
	return ""
}

// completeArgs adds the completions of the arguments of top, a top-level
// command just built, and of its subcommands: server names (mcpx repl
// NAME, mcpx connect NAME), and the live server's names (liveMethod).
func completeArgs(top *cobra.Command, e *env, flags *rootFlags) {
	if n := top.Name(); n == "repl" || n == "connect" {
		top.ValidArgsFunction = e.completeServers
	}
	for _, sub := range top.Commands() {
		if method := liveMethod(top.Name() + " " + sub.Name()); method != "" {
			sub.ValidArgsFunction = liveNames(e, flags, method)
		}
	}
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
		if method == inspector.ListResources && len(own) > 0 && len(server) == 0 {
			// resources read TEMPLATE key=value …: the template's
			// variables, which need no server.
			if out := templateVars(own[0], own[1:], toComplete); len(out) > 0 {
				return out, none | cobra.ShellCompDirectiveNoSpace
			}
			return nil, none
		}
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
		cfg, err := f.validate(c.Context(), validation{ios: &quiet, eraSet: c.Flags().Changed("protocol-era"),
			timeoutSet: c.Flags().Changed("timeout"), maxTimeoutSet: c.Flags().Changed("max-timeout"),
			stderrSet: c.Flags().Changed("server-stderr"), graceSet: c.Flags().Changed("shutdown-grace"), at: e.run.at})
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
		cl, err := k.connect(ctx, &d, cfg.out, attachments{})
		if err != nil {
			return nil, none
		}
		defer cl.Close()
		// A list that stopped early still completes what it has.
		list, _ := cl.sess.List(ctx, method, nil)
		if list == nil {
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
			switch method {
			case inspector.ListResources:
				word = item.URI
			case inspector.ListSkills:
				// A skill's description is in its frontmatter.
				if sk, _ := inspector.ParseSkill(it); sk != nil {
					word, item.Description = sk.URI, sk.Description
				}
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

// templateVars completes a word after resources read's URI template with
// the variables not given a value yet in given, as NAME= (the value
// follows without a space); nothing once the word has its =, nor after a
// URI that is no template.
func templateVars(tmpl string, given []string, toComplete string) []cobra.Completion {
	if strings.Contains(toComplete, "=") {
		return nil
	}
	_, vars, err := inspector.ExpandURITemplate(tmpl, nil)
	if err != nil {
		return nil
	}
	var out []cobra.Completion
	for _, v := range vars {
		if !strings.HasPrefix(v, toComplete) || slices.ContainsFunc(given, func(p string) bool {
			k, _, err := inspector.StringPair(p)
			return err == nil && k == v
		}) {
			continue
		}
		out = append(out, v+"=")
	}
	return out
}

// bashInitCompletion is the function of cobra's bash script (V2) that
// splits the command line, which calls _get_comp_words_by_ref from the
// bash-completion package: without that package (macOS's bash, many
// images) every Tab printed "_get_comp_words_by_ref: command not found"
// and completed nothing. bashInitFallback replaces it with one that uses
// the package where it is loaded and otherwise the words bash split,
// joined again where bash split them at = or : (--color=al, http://…), as
// the package's -n =: does.
const bashInitCompletion = `__mcpx_init_completion()
{
    COMPREPLY=()
    _get_comp_words_by_ref "$@" cur prev words cword
}`

const bashInitFallback = `__mcpx_init_completion()
{
    COMPREPLY=()
    if declare -F _get_comp_words_by_ref >/dev/null 2>&1; then
        _get_comp_words_by_ref "$@" cur prev words cword
        return
    fi
    local i w
    words=()
    cword=0
    for ((i = 0; i < ${#COMP_WORDS[@]}; i++)); do
        w=${COMP_WORDS[i]}
        if ((${#words[@]} > 0)) && [[ $w == "=" || $w == ":" || ${COMP_WORDS[i-1]} == "=" || ${COMP_WORDS[i-1]} == ":" ]]; then
            words[${#words[@]}-1]+=$w
        else
            words+=("$w")
        fi
        if ((i == COMP_CWORD)); then
            cword=$((${#words[@]} - 1))
        fi
    done
    cur=${words[cword]}
    prev=${words[cword-1]}
}`

// bashCompletionLong is mcpx completion bash's help: cobra's says the
// script needs the bash-completion package, which mcpx's does not.
const bashCompletionLong = `Generate the autocompletion script for the bash shell. It works with or
without the bash-completion package.

To load completions in your current shell session:

	source <(mcpx completion bash)

To load completions for every new session, add that line to ~/.bashrc or,
with the bash-completion package, execute once:

#### Linux:

	mcpx completion bash > /etc/bash_completion.d/mcpx

#### macOS:

	mcpx completion bash > $(brew --prefix)/etc/bash_completion.d/mcpx

You will need to start a new shell for this setup to take effect.`

// bashCompletion writes mcpx's bash completion script: cobra's, which
// needs no bash-completion package (see bashInitCompletion).
func bashCompletion(root *cobra.Command, w io.Writer, descriptions bool) error {
	var b bytes.Buffer
	if err := root.GenBashCompletionV2(&b, descriptions); err != nil {
		return err
	}
	script := b.String()
	if !strings.Contains(script, bashInitCompletion) {
		// cobra changed its script: it is written as it is.
		_, err := io.WriteString(w, script)
		return err
	}
	_, err := io.WriteString(w, strings.Replace(script, bashInitCompletion, bashInitFallback, 1))
	return err
}
