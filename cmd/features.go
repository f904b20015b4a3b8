package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/servers"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// listOptions serve every paginated list command.
type listOptions struct {
	e      *env
	method string
	cursor string
	wide   bool
	// render prints the merged items for people.
	render func(p *tui.Printer, items []json.RawMessage)
	// instead completes the usage error for an era without the method.
	instead string
	// arg names the list's one argument ("" for none): resources dir
	// URI lists the directory URI.
	arg   string
	value string
	// fetch reads the list; nil: Session.List of method.
	fetch func(ctx context.Context, c *client, arg string, cursor *string) (*inspector.ListResult, error)
}

func newListCmd(e *env, use, short, method string, render func(*tui.Printer, []json.RawMessage)) *cobra.Command {
	return (&listOptions{e: e, method: method, render: render}).command(use, short)
}

func (o *listOptions) command(use, short string) *cobra.Command {
	family, _, _ := strings.Cut(o.method, "/")
	arg, n := "", 0
	if o.arg != "" {
		arg, n = " "+o.arg, 1
	}
	c := &cobra.Command{
		Use:     use + arg + " [flags] -- <server command>",
		Short:   short,
		Example: fmt.Sprintf("  mcpx %[1]s %[2]s -- node server.js\n  mcpx %[1]s %[2]s --wide --url http://127.0.0.1:3001/mcp\n  mcpx %[1]s %[2]s --json -- node server.js | jq .", family, use+arg),
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, n, n); err != nil {
				return err
			}
			if n == 1 {
				o.value = own[0]
			}
			if o.wide && c.Flags().Changed("json") {
				return usageErrorf("--wide shapes the table, which --json replaces; give one of them")
			}
			var cursor *string
			if c.Flags().Changed("cursor") {
				cursor = &o.cursor
			}
			return o.run(c.Context(), server, cursor)
		},
	}
	c.Flags().StringVar(&o.cursor, "cursor", "", "fetch one page starting at `CURSOR` (\"\" for the first page) instead of all pages")
	c.Flags().BoolVar(&o.wide, "wide", false, "on a terminal, print whole lines instead of fitting the table to its width")
	return c
}

func (o *listOptions) run(ctx context.Context, server []string, cursor *string) error {
	return o.e.withClient(ctx, server, func(c *client) error {
		var list *inspector.ListResult
		var err error
		if o.fetch != nil {
			list, err = o.fetch(ctx, c, o.value, cursor)
		} else {
			list, err = c.sess.List(ctx, o.method, cursor)
		}
		if errors.Is(err, inspector.ErrNotInThisEra) {
			return usageErrorf("%v%s", err, o.instead)
		}
		if list == nil {
			return err
		}
		// A list that stopped early (err) is shown as far as it came, then
		// the error says where it stopped and why; its JSON ends with the
		// nextCursor of the page it lacks (see ListResult.JSON), which
		// only --json builds: a table needs no second copy of the items.
		// What the named server's application hides of the tools.
		filter := c.host.tools
		if o.method != inspector.ListTools {
			filter = nil
		}
		if o.e.cfg.out.json {
			c.out.JSON(hiddenToolsJSON(list.JSON(), filter, list.Items))
		} else {
			out := c.out
			if !o.wide && !o.e.cfg.out.verbose {
				out = out.WithWidth(o.e.ios.outWidth())
			}
			if filter != nil {
				out = out.WithHiddenTools(filter.App, func(name string) (bool, string) {
					ok, why := filter.Allows(name)
					return !ok, why
				})
			}
			o.render(out, list.Items)
			if h := tui.CacheHint(list.First(), o.e.cfg.out.verbose); h != "" {
				c.console.Note(h)
			}
		}
		// After the list, where a person reading a long table sees them.
		// Every problem is a departure, those the last line counts too:
		// --strict's count is exact.
		problems, n := c.sess.ListProblems(o.method, list.Items)
		for _, p := range problems {
			c.console.Warn(o.method + ": " + p)
		}
		for range n {
			c.count(ctx)
		}
		if filter != nil && err == nil && list.NextCursor == nil && cursor == nil {
			// Of the whole list only: a name may be on another page.
			if unknown := filter.Unknown(inspector.ItemNames(list.Items)); len(unknown) > 0 {
				c.console.Warn(tui.EscapeLine(unknownEntriesNote(c.host.server, filter, unknown)))
			}
		}
		if next := list.NextCursor; next != nil && !o.e.cfg.out.json {
			if *next == "" {
				// --cursor "" is the first page.
				c.console.Note(`more results: the next cursor is "" (empty), which --cursor cannot ask for; without --cursor, mcpx follows it`)
			} else {
				c.console.Note(fmt.Sprintf("more results: next cursor %q (use --cursor to fetch it)", *next))
			}
		}
		return err
	})
}

// unknownEntriesNote says which entries of a named server's tool filter
// name no tool the server lists: `codex:x: Codex's enabled_tools names
// "a", "b": no tool the server lists (…)`.
func unknownEntriesNote(server string, f *servers.ToolFilter, unknown []servers.UnknownEntry) string {
	var fields []string
	byField := map[string][]string{}
	for _, u := range unknown {
		if len(byField[u.Field]) == 0 {
			fields = append(fields, u.Field)
		}
		byField[u.Field] = append(byField[u.Field], fmt.Sprintf("%q", u.Entry))
	}
	var parts []string
	for _, fl := range fields {
		parts = append(parts, fl+" names "+strings.Join(byField[fl], ", "))
	}
	return fmt.Sprintf("%s: %s's %s: no tool the server lists (a typo, or a tool it no longer has)", server, f.App, strings.Join(parts, ", "))
}

// hiddenToolsJSON is the tools/list result raw with, when filter hides
// any of its tools, a member hiddenTools added: for each, its name and
// the application and field that hide it. The server's members are left
// as it sent them.
func hiddenToolsJSON(raw json.RawMessage, filter *servers.ToolFilter, items []json.RawMessage) json.RawMessage {
	if filter == nil {
		return raw
	}
	type hiddenTool struct {
		Name string `json:"name"`
		App  string `json:"app"`
		Why  string `json:"why"`
	}
	var hidden []hiddenTool
	for _, n := range inspector.ItemNames(items) {
		if ok, why := filter.Allows(n); n != "" && !ok {
			hidden = append(hidden, hiddenTool{Name: n, App: filter.App, Why: why})
		}
	}
	if len(hidden) == 0 {
		return raw
	}
	v, err := json.Marshal(hidden)
	if err != nil {
		return raw
	}
	return rawjson.AppendMember(raw, "hiddenTools", v)
}

func newToolsCmd(e *env) *cobra.Command {
	return groupCmd("tools",
		newListCmd(e, "list", "List the server's tools (all pages)", inspector.ListTools, (*tui.Printer).Tools),
		newToolsCallCmd(e),
		newToolsSchemaCmd(e),
	)
}

type toolsSchemaOptions struct {
	e      *env
	output bool
}

func newToolsSchemaCmd(e *env) *cobra.Command {
	o := &toolsSchemaOptions{e: e}
	c := &cobra.Command{
		Use:   "schema NAME [flags] -- <server command>",
		Short: "Print a tool's input schema exactly as the server sent it",
		Long: `Print a tool's inputSchema (or, with --output-schema, its outputSchema)
exactly as the server sent it in tools/list: the same members in the same
order, $ref and $defs untouched. mcpx never dereferences or fetches a schema.`,
		Example: `  mcpx tools schema search -- node server.js > search.schema.json
  mcpx tools schema search --output-schema -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			if c.Flags().Changed("output") {
				e.console().Warn("--output is now --output-schema (elsewhere -o, --output names a FILE)")
			}
			return o.run(c.Context(), own[0], server)
		},
	}
	c.Flags().BoolVar(&o.output, "output-schema", false, "print the outputSchema instead of the inputSchema")
	// It was --output, which elsewhere (-o, --output FILE) names a file:
	// mcpx tools schema NAME --output s.json took s.json for an argument.
	// It stays, hidden, for the scripts that use it (pflag's own notice of
	// a deprecated flag goes to standard output, into the schema).
	c.Flags().BoolVar(&o.output, "output", false, "the old name of --output-schema")
	c.Flags().Lookup("output").Hidden = true
	return c
}

func (o *toolsSchemaOptions) run(ctx context.Context, name string, server []string) error {
	return o.e.withClient(ctx, server, func(c *client) error {
		schema, err := c.sess.ToolSchema(ctx, name, o.output)
		var nf *inspector.NotFoundError
		var ns *inspector.NoSchemaError
		if errorsAs(err, &nf) || errorsAs(err, &ns) {
			return &usageError{err: err}
		}
		if err != nil {
			return err
		}
		if o.e.cfg.out.json || !o.e.ios.OutTTY {
			// The bytes as received, one line: what a script wants; what a
			// terminal must not get raw escaped as JSON, the same JSON.
			fmt.Fprintln(o.e.ios.Out, tui.EscapeJSON(string(schema)))
			return nil
		}
		c.out.JSON(schema)
		return nil
	})
}

type toolsCallOptions struct {
	e          *env
	args       string
	output     string
	task       bool
	ttl        time.Duration
	noValidate bool
}

func newToolsCallCmd(e *env) *cobra.Command {
	o := &toolsCallOptions{e: e}
	c := &cobra.Command{
		Use:   "call NAME [key=value ...] [flags] -- <server command>",
		Short: "Call a tool",
		Long: `Call a tool with key=value arguments, typed by the tool's input schema:
a=2 is a number where the schema says number, zip=012 stays a string where it
says string, and arrays and objects take JSON (tags='["a","b"]'). A dotted key
builds nested objects (user.address.city=Paris), tags[0]=x and tags[]=x array
elements. --args gives the whole arguments object as JSON (or @file.json, or
@- for standard input); key=value pairs are merged into it. The arguments are
checked against the tool's inputSchema before the call is sent; --no-validate
sends them anyway.

Binary content is summarised, never dumped: -o FILE writes the result's first
image, audio or embedded blob (or, without one, its first text) to FILE, and
prints the rest (-o - writes it to stdout when that is not a terminal).

With --ui (MCP Apps), a tool that has a view (_meta.ui.resourceUri) is shown
in the browser too (--no-browser prints its URL): mcpx stays until Ctrl-C or
until the page is closed, then tears the view down.`,
		Example: `  mcpx tools call echo message=hi -- node server.js
  mcpx tools call get-sum a=2 b=3 --json -- node server.js
  mcpx tools call search --args @query.json -- node server.js
  jq -n '{query: "mcp"}' | mcpx tools call search --args @- -- node server.js
  mcpx tools call screenshot -o shot.png -- node server.js
  mcpx tools call get-time --ui -- npx -y @modelcontextprotocol/server-basic-vanillajs --stdio`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, -1); err != nil {
				return err
			}
			return o.run(c.Context(), own[0], own[1:], server)
		},
	}
	c.Flags().StringVar(&o.args, "args", "", "the arguments object as `JSON`, @file.json, or @- (read from stdin)")
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the result's first binary content (else its first text) to `FILE` (- for stdout)")
	c.Flags().BoolVar(&o.task, "task", false, "run the call as a task (2025-11-25): poll its status, then fetch its result; Ctrl-C cancels the task")
	c.Flags().DurationVar(&o.ttl, "ttl", 0, "with --task, ask the server to keep the task for `DURATION`")
	c.Flags().BoolVar(&o.noValidate, "no-validate", false, "send the arguments even when they do not match the tool's inputSchema")
	c.SetHelpFunc(func(c *cobra.Command, args []string) {
		if o.liveHelp(c) {
			toolHelpTail(c, false, o.e.ios.outWidth())
			return
		}
		c.Parent().HelpFunc()(c, args)
	})
	return c
}

// toolHelpTail ends tools call NAME --help after the tool's own
// description: its usage line and where the command's flags are
// described, not the ~35 lines of them, which pushed the tool's
// arguments off the screen (as kubectl and gh point to their global
// options rather than repeat them).
// In the REPL (repl), the pointer is what is typed there. On a terminal
// (width) the pointer is broken at words, as the tool's help is.
func toolHelpTail(c *cobra.Command, repl bool, width int) {
	w := c.OutOrStdout()
	path := c.CommandPath()
	if repl {
		path = strings.TrimPrefix(path, c.Root().Name()+" ")
	}
	fmt.Fprintf(w, "Usage:\n  %s\n\n", c.UseLine())
	fmt.Fprintln(w, tui.WrapText("Its flags, and how key=value arguments are typed: "+path+" --help", width))
}

// liveHelp describes the tool named in tools call NAME --help from the
// server given (after --, with --url or -s), as the REPL does, and
// reports whether it did: the command's help then only points at its
// flags (toolHelpTail). Without a server (or in the REPL, which does this
// itself) it does nothing; a server that cannot tell is a warning.
func (o *toolsCallOptions) liveHelp(c *cobra.Command) bool {
	e := o.e
	own, server := splitServer(c, c.Flags().Args())
	given := func(name string) bool { f := c.Flag(name); return f != nil && f.Value.String() != "" }
	if e.repl != nil || len(own) == 0 || len(server) == 0 && !given("url") && !given("server") {
		return false
	}
	// Help runs without the root's PersistentPreRunE, which validates the
	// flags into e.cfg: run it here.
	err := c.Root().PersistentPreRunE(c, c.Flags().Args())
	if err == nil {
		err = e.withClient(c.Context(), server, func(cl *client) error {
			t, err := inspector.NewCatalog(cl.sess).Tool(c.Context(), own[0])
			if err != nil {
				return err
			}
			cl.out.WithWidth(e.ios.outWidth()).ToolHelp(*t)
			fmt.Fprintln(e.ios.Out)
			return nil
		})
	}
	if err != nil {
		fmt.Fprintln(e.ios.ErrOut, tui.WrapText(fmt.Sprintf("warning: cannot describe tool %q from the server: %s", own[0], errorMessage(err)), e.ios.errWidth()))
		return false
	}
	return true
}

// outputClash refuses -o naming a file another flag writes (see README,
// "Output files": one file for two things): the --record trace, which
// the contents would replace, or the --server-stderr file, whose lines
// appended before -o replaces it would be lost, and those after go to
// the file replaced. A device (/dev/null) takes both.
func (e *env) outputClash(output string) error {
	if sameFile(output, e.cfg.conn.rec.file) {
		return usageErrorf("-o and --record both write to %s: the contents would replace the trace; give each its own file", output)
	}
	if se := e.cfg.conn.stdio.stderr; se != "show" && se != "hide" && sameFile(output, se) {
		if fi, err := os.Stat(output); err == nil && !fi.Mode().IsRegular() {
			return nil
		}
		return usageErrorf("-o and --server-stderr both write to %s: the contents would replace the server's stderr lines; give each its own file", output)
	}
	return nil
}

func (o *toolsCallOptions) run(ctx context.Context, name string, pairs, server []string) error {
	if o.output == "-" && o.e.cfg.out.json {
		return usageErrorf("-o - and --json both write to stdout; choose one")
	}
	if o.output == "-" && o.e.ios.OutTTY {
		return usageErrorf("-o - would write raw contents to the terminal; redirect stdout or give a file name")
	}
	if err := o.e.outputClash(o.output); err != nil {
		return err
	}
	var base json.RawMessage
	if o.args != "" {
		b, err := readJSONArg(ctx, "--args", o.args, o.e.argSource("--args"))
		if err != nil {
			return err
		}
		if err := inspector.CheckObject(b); err != nil {
			return usageErrorf("--args must be a JSON object: %v", err)
		}
		base = b
	}
	for _, p := range pairs {
		if k, _, ok := strings.Cut(p, "="); !ok || k == "" {
			return &usageError{err: &strayArgsError{err: fmt.Errorf("argument %s: expected key=value", transport.QuoteExcerpt(p))}}
		}
	}
	if o.ttl != 0 && !o.task {
		return usageErrorf("--ttl only applies with --task")
	}
	if o.ttl < 0 {
		return usageErrorf("--ttl must not be negative")
	}
	if o.ttl > 0 && o.ttl < time.Millisecond {
		// Sent as 0: keep the task for no time at all.
		return usageErrorf("--ttl is sent in whole milliseconds: give at least 1ms")
	}
	grace := defaultPageGrace // how long a one-shot's view outlives its page
	if o.e.cfg.conn.feat.ui.on && o.e.repl == nil {
		g, err := pageGrace(o.e.ios)
		if err != nil {
			return err
		}
		grace = g
	}
	return o.e.withClient(ctx, server, func(c *client) error {
		args, warnings, err := c.sess.PrepareToolArguments(ctx, name, inspector.ToolInput{Pairs: pairs, Base: base, Validate: !o.noValidate})
		if err != nil {
			var ae *inspector.ArgumentError
			var ie *inspector.InvalidArgumentsError
			var ne *inspector.NumberRangeError
			var pe *inspector.PatternWorkError
			var we *inspector.CheckWorkError
			if errorsAs(err, &ae) || errorsAs(err, &ie) || errorsAs(err, &ne) || errorsAs(err, &pe) || errorsAs(err, &we) {
				for _, w := range warnings {
					c.console.Warn(w)
				}
				return &usageError{err: err}
			}
			return err
		}
		for _, w := range warnings {
			c.console.Warn(w)
		}
		view, states, stop, err := o.openView(ctx, c, name, args)
		if err != nil {
			return err
		}
		defer stop()
		call := inspector.ToolCall{
			Name:     name,
			Args:     args,
			Task:     o.task,
			TTL:      o.ttl,
			Progress: func(p inspector.Progress) { c.console.Progress(name, p) },
			OnNote:   c.console.Warn,
		}
		if c.feats.Elicitor != nil {
			call.URLRequired = c.feats.Elicitor.Required
		}
		if o.task {
			show, restore := c.showTaskStatus()
			defer restore()
			call.OnTaskStatus = show
		}
		if ok, why := c.host.tools.Allows(name); !ok {
			// Called all the same: the person asked for it.
			c.console.Warn(tui.EscapeLine(fmt.Sprintf("%s hides tool %q from its model (%s in %s's entry); calling it anyway", c.host.tools.App, name, why, c.host.server)))
		}
		res, err := c.sess.RunTool(ctx, call)
		c.console.ClearProgress()
		var saveErr error
		switch {
		case res != nil && o.output != "" && err == nil:
			saveErr = o.save(ctx, c, res)
		case res != nil:
			o.e.emit(c, res, func() {
				// -o would write one block: only its summary offers -o.
				pick := -1
				if contents, err := inspector.ToolContents(res); err == nil {
					pick = inspector.SavedContent(contents)
				}
				c.out.WithSaveHint("use -o FILE or --json to get it").WithSavable(pick).ToolResult(res)
			})
		}
		if view != nil {
			giveOutcome(view, res, err, ctx.Err() != nil)
			if o.e.repl == nil && ctx.Err() == nil && saveErr == nil {
				if werr := waitView(ctx, c, view, states, grace); err == nil {
					err = werr
				}
			}
		}
		if saveErr != nil {
			return saveErr
		}
		return err
	})
}

// save is tools call -o: the result's first binary content (else its
// first text) goes to the file, as resources read -o writes (atomically,
// decoded as it is written), and the rest of the result is printed.
func (o *toolsCallOptions) save(ctx context.Context, c *client, res json.RawMessage) error {
	contents, err := inspector.ToolContents(res)
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.output, err)
	}
	pick := inspector.SavedContent(contents)
	if pick < 0 {
		o.e.emit(c, res, func() { c.out.ToolResult(res) })
		return fmt.Errorf("-o %s: the result has no content to write (text, image, audio or an embedded resource)", o.output)
	}
	content := contents[pick]
	if err := content.Check(); err != nil {
		return fmt.Errorf("-o %s: %w", o.output, err)
	}
	if o.output == "-" {
		_, err = content.WriteTo(o.e.ios.Out)
		return err
	}
	n, err := outfile.WriteFrom(ctx, o.output, content, outfile.Options{})
	if err != nil {
		return fmt.Errorf("-o %s: %w", o.output, err)
	}
	o.e.emit(c, res, func() {
		c.out.WithSaved(pick).WithSaveHint("use --json to get it").ToolResult(res)
		fmt.Fprintf(o.e.ios.Out, "wrote %s (%s) to %s\n", tui.HumanSize(n), tui.EscapeLine(orDefault(content.MimeType, content.Type)), tui.EscapeLine(o.output))
	})
	return nil
}

// openView opens the view of tool name for a call made with --ui (spec
// io.modelcontextprotocol/ui, "Resource Discovery": its resource read
// before the call): in the REPL's host, which keeps it for the session,
// or in a host of the command's own, closed when the command ends. It
// returns a nil view when the call opens none, and what stops the
// command's own host (tearing its view down).
func (o *toolsCallOptions) openView(ctx context.Context, c *client, name string, args json.RawMessage) (*apps.View, <-chan apps.State, func(), error) {
	ui := o.e.cfg.conn.feat.ui
	stop := func() {}
	if !ui.on {
		return nil, nil, stop, nil
	}
	tool, err := viewFor(ctx, c, name)
	if err != nil || tool == nil {
		return nil, nil, stop, err
	}
	var host *apps.Host
	var states chan apps.State
	if o.e.repl != nil {
		host, err = o.e.repl.viewHost(c)
	} else {
		states = make(chan apps.State, 64)
		host, err = newViewHost(viewHostOptions{
			ui: ui, console: c.console, current: func() (*client, error) { return c, nil },
			wire: func() bool { return o.e.cfg.out.wire }, recorders: c.viewRecorders,
			openURL: openURL(o.e.ios), states: states, sampler: o.e.cfg.conn.feat.sampler,
		})
		if err == nil {
			stop = func() { closeViews(ctx, host) }
		}
	}
	if err != nil {
		return nil, nil, stop, err
	}
	view, err := host.Open(ctx, apps.Call{Tool: tool, Arguments: args})
	if err != nil {
		stop()
		return nil, nil, func() {}, fmt.Errorf("cannot open the view of tool %q: %w", name, err)
	}
	c.console.ViewPolicy(view.Info(), view.Policy(), o.e.cfg.out.verbose)
	showView(c, ui, host, view, openURL(o.e.ios))
	return view, states, stop, nil
}

func newResourcesCmd(e *env) *cobra.Command {
	return groupCmd("resources",
		newListCmd(e, "list", "List the server's resources (all pages)", inspector.ListResources, (*tui.Printer).Resources),
		newListCmd(e, "templates", "List the server's resource templates (all pages)", inspector.ListResourceTemplates, (*tui.Printer).Templates),
		newResourcesReadCmd(e),
		newResourcesDirCmd(e),
		newResourcesSubscribeCmd(e),
	)
}

type resourcesReadOptions struct {
	e      *env
	output string
}

func newResourcesReadCmd(e *env) *cobra.Command {
	o := &resourcesReadOptions{e: e}
	c := &cobra.Command{
		Use:   "read URI [key=value ...] [flags] -- <server command>",
		Short: "Read a resource",
		Long: `Read a resource. Text is printed; binary contents are summarised (type and
size) unless -o writes them to a file (-o - writes them to stdout when it is
not a terminal).

With key=value pairs after it, URI is a resource template (RFC 6570, as
mcpx resources templates lists it) and the resource read is the URI it
expands to with those values, encoded as the template says.`,
		Example: `  mcpx resources read demo://readme -- node server.js
  mcpx resources read 'demo://greeting/{name}' name='Ada Lovelace' -- node server.js
  mcpx resources read file:///logo.png -o logo.png -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, -1); err != nil {
				return err
			}
			return o.run(c.Context(), own[0], own[1:], server)
		},
	}
	c.Flags().StringVarP(&o.output, "output", "o", "", "write the contents to `FILE` (- for stdout)")
	return c
}

func (o *resourcesReadOptions) run(ctx context.Context, uri string, pairs, server []string) error {
	// key=value pairs make uri a template to expand (the URI read, and
	// named in errors, is the expansion).
	var unset []string
	if len(pairs) > 0 {
		var err error
		if uri, unset, err = inspector.ExpandURITemplate(uri, pairs); err != nil {
			return &usageError{err: err}
		}
	}
	if o.output == "-" && o.e.cfg.out.json {
		return usageErrorf("-o - and --json both write to stdout; choose one")
	}
	if o.output == "-" && o.e.ios.OutTTY {
		return usageErrorf("-o - would write raw contents to the terminal; redirect stdout or give a file name")
	}
	if err := o.e.outputClash(o.output); err != nil {
		return err
	}
	return o.e.withClient(ctx, server, func(c *client) error {
		if len(unset) > 0 {
			what := "variable " + unset[0] + " has"
			if len(unset) > 1 {
				what = "variables " + strings.Join(unset, ", ") + " have"
			}
			c.console.Warn(fmt.Sprintf("the template's %s no value: RFC 6570 expands an undefined variable to nothing; reading %s", what, uri))
		}
		res, err := c.sess.ReadResource(ctx, uri, c.withProgress(uri))
		c.console.ClearProgress()
		if err != nil {
			return err
		}
		if o.output == "" {
			o.e.emit(c, res, func() {
				// -o writes the first contents only.
				c.out.WithSaveHint("use -o FILE to save it").WithSavable(0).ReadResult(res)
				if h := tui.CacheHint(res, o.e.cfg.out.verbose); h != "" {
					c.console.Note(h)
				}
			})
			return nil
		}
		contents, err := inspector.DecodeContents(res)
		if err != nil {
			return fmt.Errorf("resources/read %q: %w", uri, err)
		}
		if len(contents) == 0 {
			return fmt.Errorf("resources/read %q: the result has no contents to write", uri)
		}
		if len(contents) > 1 {
			c.console.Warn(fmt.Sprintf("the resource has %d contents; writing the first (%s); see --json for all", len(contents), contents[0].URI))
		}
		// The content is decoded as it is written, never held whole; a
		// blob that does not decode is refused before anything is written.
		content := contents[0]
		if err := content.Check(); err != nil {
			return fmt.Errorf("resources/read %q: %w", uri, err)
		}
		if o.output == "-" {
			_, err = content.WriteTo(o.e.ios.Out)
			return err
		}
		n, err := outfile.WriteFrom(ctx, o.output, content, outfile.Options{})
		if err != nil {
			return fmt.Errorf("-o %s: %w", o.output, err)
		}
		o.e.emit(c, res, func() {
			fmt.Fprintf(o.e.ios.Out, "wrote %s (%s) to %s\n", tui.HumanSize(n), tui.EscapeLine(orDefault(content.MimeType, "unknown type")), tui.EscapeLine(o.output))
		})
		return nil
	})
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func newPromptsCmd(e *env) *cobra.Command {
	return groupCmd("prompts",
		newListCmd(e, "list", "List the server's prompts (all pages)", inspector.ListPrompts, (*tui.Printer).Prompts),
		newPromptsGetCmd(e),
	)
}

type promptsGetOptions struct {
	e          *env
	noValidate bool
}

func newPromptsGetCmd(e *env) *cobra.Command {
	o := &promptsGetOptions{e: e}
	c := &cobra.Command{
		Use:   "get NAME [key=value ...] [flags] -- <server command>",
		Short: "Get a prompt with arguments",
		Long: `Get a prompt with key=value arguments, which are always strings (\= is an = in a key).
Arguments are checked against prompts/list before sending, REPL and @NAME alike; --no-validate sends anyway.`,
		Example: `  mcpx prompts get args-prompt city=Paris -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, -1); err != nil {
				return err
			}
			return o.run(c.Context(), own[0], own[1:], server)
		},
	}
	c.Flags().BoolVar(&o.noValidate, "no-validate", false, "send the arguments even when the prompt does not declare them or a required one is missing")
	return c
}

func (o *promptsGetOptions) run(ctx context.Context, name string, pairs, server []string) error {
	if _, err := inspector.StringArguments(pairs); err != nil {
		return &usageError{err: err}
	}
	return o.e.withClient(ctx, server, func(c *client) error {
		args, warnings, err := c.sess.PreparePromptArguments(ctx, name, pairs, !o.noValidate)
		for _, w := range warnings {
			c.console.Warn(w)
		}
		var pe *inspector.PromptArgumentsError
		if errorsAs(err, &pe) {
			return &usageError{err: err}
		}
		if err != nil {
			return err
		}
		res, err := c.sess.GetPrompt(ctx, name, args, c.withProgress(name))
		c.console.ClearProgress()
		if err != nil {
			return err
		}
		o.e.emit(c, res, func() { c.out.PromptResult(res) })
		return nil
	})
}

type completeOptions struct {
	e        *env
	prompt   string
	resource string
	context  []string
}

func newCompleteCmd(e *env) *cobra.Command {
	o := &completeOptions{e: e}
	c := &cobra.Command{
		Use: "complete (--prompt NAME | --resource TEMPLATE) ARG=PARTIAL [flags] -- <server command>",
		Example: `  mcpx complete --prompt code-review language=py -- node server.js
  mcpx complete --resource 'file:///{path}' path=src/ -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			return o.run(c.Context(), own[0], server)
		},
	}
	c.Flags().StringVar(&o.prompt, "prompt", "", "complete an argument of prompt `NAME`")
	c.Flags().StringVar(&o.resource, "resource", "", "complete a variable of the resource `TEMPLATE` (a URI template)")
	stringsVar(c.Flags(), &o.context, "context", "", "an already-chosen argument value `k=v` (repeatable)")
	return c
}

func (o *completeOptions) run(ctx context.Context, arg string, server []string) error {
	if (o.prompt == "") == (o.resource == "") {
		return usageErrorf("complete: give exactly one of --prompt NAME or --resource TEMPLATE")
	}
	// Names are split as prompts get splits them (\= is an = in one).
	name, partial, err := inspector.StringPair(arg)
	if err != nil {
		return usageErrorf("complete: expected ARG=PARTIAL, got %s", transport.QuoteExcerpt(arg))
	}
	ctxArgs := map[string]string{}
	for _, kv := range o.context {
		k, v, err := inspector.StringPair(kv)
		if err != nil {
			return usageErrorf("--context %s: expected k=v", transport.QuoteExcerpt(kv))
		}
		ctxArgs[k] = v
	}
	return o.e.withClient(ctx, server, func(c *client) error {
		res, err := c.sess.Complete(ctx, inspector.CompletionRef{Prompt: o.prompt, URI: o.resource}, name, partial, ctxArgs)
		if err != nil {
			return err
		}
		for _, p := range inspector.CompleteResultProblems(res) {
			c.depart(ctx, "the completion result departs from the spec (server/utilities/completion): "+p)
		}
		o.e.emit(c, res, func() { c.out.Completion(res) })
		return nil
	})
}
