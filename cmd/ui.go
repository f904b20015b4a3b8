package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/tui"
)

// MCP Apps (extension io.modelcontextprotocol/ui, package apps) from the
// command line: --ui declares the extension, and tools call --ui opens
// the tool's view in a browser through an apps.Host whose handlers go to
// the terminal. This file only wires: the host side of the extension is
// package apps.

// uiFlags are --ui and how views are shown (--no-browser is shared with
// OAuth: authFlags holds it).
type uiFlags struct {
	on         bool
	theme      string
	timeout    time.Duration
	downloads  string
	onDownload string
}

func (f *uiFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.on, "ui", false, "MCP Apps: declare the io.modelcontextprotocol/ui extension; tools call --ui opens the tool's view in a browser")
	fs.StringVar(&f.theme, "ui-theme", "auto", "MCP Apps: the views' `THEME`: light, dark, or auto (the terminal's, from $COLORFGBG, else the browser's)")
	fs.DurationVar(&f.timeout, "ui-timeout", time.Minute, "MCP Apps: how long (`DURATION`) to wait for a browser to show a view, and for the view to initialize")
	fs.StringVar(&f.downloads, "ui-downloads", "", "MCP Apps: save the files a view asks to download, once you say yes, in `DIR` (default the current directory)")
	fs.StringVar(&f.onDownload, "on-ui-download", "", "MCP Apps: answer a view's downloads with `POLICY`: prompt, decline or accept (default prompt on a terminal, else decline)")
}

// uiDesc is how views are shown, checked.
type uiDesc struct {
	on bool
	// theme is light, dark, or "" for the browser's preference.
	theme     string
	timeout   time.Duration
	noBrowser bool
	// person is asked before a view's link is opened or its download
	// saved; nil without a terminal (both are then declined).
	person inspector.Person
	// downloads is the directory where views' downloads are saved
	// (--ui-downloads), absolute; "" for the current directory.
	downloads string
	// onDownload answers views' downloads (--on-ui-download): prompt
	// (person is asked), decline or accept.
	onDownload string
}

// validate checks the --ui flags; noBrowser is --no-browser, person the
// one who answers on the terminal (nil without one).
func (f uiFlags) validate(noBrowser bool, ios *IOStreams, person inspector.Person) (uiDesc, error) {
	d := uiDesc{on: f.on, timeout: f.timeout, noBrowser: noBrowser, person: person}
	switch f.theme {
	case "light", "dark":
		d.theme = f.theme
	case "auto":
		d.theme = terminalTheme(ios.Getenv("COLORFGBG"))
	default:
		return d, usageErrorf("--ui-theme must be light, dark or auto, not %q", f.theme)
	}
	if f.timeout <= 0 {
		return d, usageErrorf("--ui-timeout must be positive")
	}
	if f.downloads != "" {
		dir, err := filepath.Abs(f.downloads)
		if err == nil {
			var fi os.FileInfo
			if fi, err = os.Stat(dir); err == nil && !fi.IsDir() {
				err = errors.New("not a directory")
			}
		}
		if err != nil {
			// The cause, without the path again.
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return d, usageErrorf("--ui-downloads %s: %v; give an existing directory", f.downloads, err)
		}
		d.downloads = dir
	}
	d.onDownload = f.onDownload
	switch f.onDownload {
	case "":
		// Asked, or declined without a terminal to ask on (which the
		// warning says).
		d.onDownload = downloadPrompt
	case downloadPrompt:
		if person == nil {
			return d, usageErrorf("--on-ui-download prompt needs a terminal on stdin and stderr; use decline or accept")
		}
	case downloadDecline, downloadAccept:
	default:
		return d, usageErrorf("--on-ui-download must be prompt, decline or accept, not %q", f.onDownload)
	}
	return d, nil
}

// The answers --on-ui-download gives a view's downloads.
const (
	downloadPrompt  = "prompt"
	downloadDecline = "decline"
	downloadAccept  = "accept"
)

// terminalTheme guesses the terminal's theme from $COLORFGBG ("fg;bg",
// set by rxvt, Konsole, iTerm2 and others): a background colour of 0-6
// or 8 is dark, 7 and 9-15 light; "" when unknown.
func terminalTheme(colorfgbg string) string {
	parts := strings.Split(colorfgbg, ";")
	bg, err := strconv.Atoi(parts[len(parts)-1])
	if colorfgbg == "" || err != nil || bg < 0 || bg > 15 {
		return ""
	}
	if bg <= 6 || bg == 8 {
		return "dark"
	}
	return "light"
}

// uiExtensions is what --ui declares in the client capabilities.
func uiExtensions() map[string]json.RawMessage {
	return map[string]json.RawMessage{apps.ExtensionID: apps.ClientCapability()}
}

// sessionBackend is an apps.Backend over the session of the client
// current returns (the REPL's may change with :reconnect).
type sessionBackend struct{ current func() (*client, error) }

func (b sessionBackend) ListTools(ctx context.Context) ([]json.RawMessage, error) {
	c, err := b.current()
	if err != nil {
		return nil, err
	}
	return c.sess.ListedTools(ctx)
}

func (b sessionBackend) CallTool(ctx context.Context, params json.RawMessage) (json.RawMessage, error) {
	c, err := b.current()
	if err != nil {
		return nil, err
	}
	res, err := c.sess.CallToolParams(ctx, params)
	return res, viewError(err)
}

func (b sessionBackend) ReadResource(ctx context.Context, uri string) (json.RawMessage, error) {
	c, err := b.current()
	if err != nil {
		return nil, err
	}
	res, err := c.sess.Call(ctx, mcp.MethodResourcesRead, map[string]string{"uri": uri})
	return res, viewError(err)
}

// ListedResource answers from the session's copy of resources/list,
// listing only when it has none (or a stale one).
func (b sessionBackend) ListedResource(ctx context.Context, uri string) (json.RawMessage, error) {
	c, err := b.current()
	if err != nil {
		return nil, err
	}
	return c.sess.ListedResource(ctx, uri)
}

// viewError hands the server's JSON-RPC error to the view as the server
// sent it.
func viewError(err error) error {
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return &apps.Error{Code: int64(rpc.Code), Message: rpc.Message, Data: rpc.Data}
	}
	return err
}

// viewHostOptions are what a host of views is made of: the session it
// talks to, where its messages and questions go.
type viewHostOptions struct {
	ui      uiDesc
	console *tui.Console
	current func() (*client, error)
	// wire says whether --wire (or :wire) shows the views' messages.
	wire func() bool
	// recorders are told every message (--record, :record).
	recorders func() []viewRecorder
	// openURL opens a link in the browser.
	openURL func(string) error
	// callable says that the person can call a view's own tools (the
	// REPL's :ui call); the one-shot command only lists them.
	callable bool
	// sampler answers the views' sampling/createMessage as the server's
	// (--on-sampling); nil (--no-sampling) offers views no sampling.
	sampler *inspector.Sampler
	// states, when set, is told the views' states (the one-shot waits on
	// it); sends never block. A view's failure (no page, no
	// initialization) is then the command's error, not a warning too.
	states chan apps.State
}

// viewRecorders returns the client's --record recorder as the traces of
// its views' messages.
func (c *client) viewRecorders() []viewRecorder {
	if c.rec == nil {
		return nil
	}
	return []viewRecorder{c.rec}
}

// viewRecorder is a trace that takes view events (record.Recorder).
type viewRecorder interface {
	View(dir record.Direction, v record.ViewInfo, data []byte)
}

// newViewHost starts an MCP Apps host on two loopback origins.
func newViewHost(o viewHostOptions) (*apps.Host, error) {
	con := o.console
	h, err := apps.NewHost(apps.Options{
		Backend:        sessionBackend{current: o.current},
		HostInfo:       apps.Implementation{Name: "mcpx", Version: Version()},
		Theme:          o.ui.theme,
		Handlers:       viewHandlers(o),
		ConnectTimeout: o.ui.timeout,
		InitTimeout:    o.ui.timeout,
		Observer: func(m apps.WireMessage) {
			if o.wire() {
				con.ViewWire(m)
			}
			dir := record.HostToView
			if m.Direction == apps.FromView {
				dir = record.ViewToHost
			}
			for _, r := range o.recorders() {
				r.View(dir, record.ViewInfo{ID: m.View.ID, Tool: m.View.Tool, URI: m.View.ResourceURI}, m.Raw)
			}
		},
	})
	if err == nil && h.SandboxSharesCookies() {
		con.Warn("views run on 127.0.0.1, as local services do, and can read their cookies: this system has no 127.0.0.2 to give them (on macOS: sudo ifconfig lo0 alias 127.0.0.2 up)")
	}
	return h, err
}

// viewHandlers hand what views ask for to the terminal: logs, messages
// and model context shown, links opened once the person said yes.
func viewHandlers(o viewHostOptions) apps.Handlers {
	con := o.console
	samplers := viewSamplers{base: o.sampler, current: o.current, m: map[string]*inspector.Sampler{}}
	var sample func(context.Context, apps.ViewInfo, json.RawMessage) (json.RawMessage, error)
	if o.sampler != nil {
		sample = func(ctx context.Context, v apps.ViewInfo, params json.RawMessage) (json.RawMessage, error) {
			res, err := samplers.get(v).Handle(ctx, mcp.MethodSamplingCreateMessage, params)
			if err != nil {
				// The sampler's refusals are mcpx's JSON-RPC errors, not
				// the server's: their message says it.
				why := err.Error()
				var rpc *jsonrpc.Error
				if errors.As(err, &rpc) {
					why = rpc.Message
				}
				con.Warn(fmt.Sprintf("view %s asked for an LLM completion (sampling/createMessage): %s", tui.EscapeName(v.Tool), tui.EscapeLine(why)))
			} else if o.sampler.Policy.Mode == inspector.PolicyFile {
				con.Note(fmt.Sprintf("view %s asked for an LLM completion (sampling/createMessage): answered from %s", tui.EscapeName(v.Tool), o.sampler.Policy.File))
			}
			return res, viewError(err)
		}
	}
	return apps.Handlers{
		Log: func(v apps.ViewInfo, params json.RawMessage) { con.ViewLog(v, params) },
		Message: func(_ context.Context, v apps.ViewInfo, params json.RawMessage) error {
			con.ViewMessage(v, params)
			return nil
		},
		ModelContext: func(_ context.Context, v apps.ViewInfo, params json.RawMessage) error {
			con.ViewModelContext(v, params)
			return nil
		},
		OpenLink: func(ctx context.Context, v apps.ViewInfo, url string) error {
			if o.ui.person == nil {
				con.Warn(fmt.Sprintf("view %s asked to open %s: declined (no terminal to ask)", v.Tool, url))
				return fmt.Errorf("%w: there is no terminal to ask", apps.ErrDenied)
			}
			ok, err := o.ui.person.Confirm(ctx, linkQuestion(v, url), false)
			if err != nil {
				return err
			}
			if !ok {
				return apps.ErrDenied
			}
			if o.ui.noBrowser {
				con.Note("open " + url + " yourself (--no-browser)")
				return nil
			}
			return o.openURL(url)
		},
		DownloadFile: func(ctx context.Context, v apps.ViewInfo, files []apps.Download) error {
			return saveDownloads(ctx, o, v, files)
		},
		Sample: sample,
		ViewTools: func(v apps.ViewInfo, tools []apps.AppTool) {
			con.Note(viewToolsLine(v, tools, o.callable))
		},
		Problem: func(v apps.ViewInfo, err error) {
			if o.states != nil && (errors.Is(err, apps.ErrNoPage) || errors.Is(err, apps.ErrNoInitialize)) {
				return // the command fails with it
			}
			con.ViewProblem(v, err)
		},
		State: func(v apps.ViewInfo, s apps.State) {
			if s == apps.StateClosed {
				samplers.forget(v)
			}
			if o.states != nil {
				select {
				case o.states <- s:
				default:
				}
			}
		},
	}
}

// viewToolsLine tells the tools a view offers of its own (draft spec
// "App-Provided Tools"): mcpx has no model to offer them to, so the
// person is shown them, and told how to call one where they can.
func viewToolsLine(v apps.ViewInfo, tools []apps.AppTool, callable bool) string {
	tool := tui.EscapeName(v.Tool)
	if len(tools) == 0 {
		return fmt.Sprintf("view %s offers no tools of its own now", tool)
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = tui.EscapeName(t.Name)
	}
	line := fmt.Sprintf("view %s offers tools: %s", tool, strings.Join(names, ", "))
	if callable {
		line += fmt.Sprintf(" (:ui call %s TOOL [JSON] calls one)", tool)
	} else {
		line += " (mcpx has no model to call them; the REPL's :ui call does)"
	}
	return line
}

// viewSamplers are the samplers of a host's views: one for each view, a
// clone of --on-sampling's, so that a reply file's results are used in
// turn by each view's requests (as by a server's) and the person is told
// which view asks.
type viewSamplers struct {
	base    *inspector.Sampler
	current func() (*client, error)
	mu      sync.Mutex
	m       map[string]*inspector.Sampler
}

func (s *viewSamplers) get(v apps.ViewInfo) *inspector.Sampler {
	s.mu.Lock()
	defer s.mu.Unlock()
	if vs := s.m[v.ID]; vs != nil {
		return vs
	}
	vs := s.base.Clone()
	// Draft spec "Host Capabilities": the host declares sampling.tools.
	vs.Tools, vs.View = true, true
	vs.Who = func() string {
		who := "the view of " + v.Tool
		if c, err := s.current(); err == nil {
			if name, _ := c.serverName.Load().(string); name != "" {
				who += " (" + name + ")"
			}
		}
		return who
	}
	s.m[v.ID] = vs
	return vs
}

func (s *viewSamplers) forget(v apps.ViewInfo) {
	s.mu.Lock()
	delete(s.m, v.ID)
	s.mu.Unlock()
}

// linkQuestion asks whether to open the link a view asked for, pointing
// out what makes it easy to misread (a user name before the host, a host
// that may imitate another, no HTTPS), as a URL-mode elicitation's
// question does (inspector.URLWarnings).
func linkQuestion(v apps.ViewInfo, link string) string {
	q := fmt.Sprintf("The view of %s asks to open %s", tui.EscapeName(v.Tool), tui.EscapeLine(link))
	if u, err := url.Parse(link); err == nil {
		for _, w := range inspector.URLWarnings(u) {
			q += " (warning: " + tui.EscapeLine(w) + ")"
		}
	}
	return q + ". Open it?"
}

// saveDownloads saves the files of a view's ui/download-file into the
// --ui-downloads directory once the person said yes, or as
// --on-ui-download says (by default declined without a terminal), and
// says where each went; one that cannot be saved is a warning, and the
// files after it are not saved.
func saveDownloads(ctx context.Context, o viewHostOptions, v apps.ViewInfo, files []apps.Download) error {
	con := o.console
	dir := o.ui.downloads
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			con.Warn(fmt.Sprintf("view %s asked to download %s: the current directory: %v", v.Tool, fileList(files), err))
			return err
		}
	}
	switch {
	case o.ui.onDownload == downloadAccept:
	case o.ui.onDownload == downloadDecline:
		con.Warn(fmt.Sprintf("view %s asked to download %s: declined (--on-ui-download decline)", v.Tool, fileList(files)))
		return fmt.Errorf("%w: --on-ui-download decline", apps.ErrDenied)
	case o.ui.person == nil:
		con.Warn(fmt.Sprintf("view %s asked to download %s: declined (no terminal to ask)", v.Tool, fileList(files)))
		return fmt.Errorf("%w: there is no terminal to ask", apps.ErrDenied)
	default:
		ok, err := o.ui.person.Confirm(ctx, downloadQuestion(v, files, dir), false)
		if err != nil {
			return err
		}
		if !ok {
			return apps.ErrDenied
		}
	}
	for _, f := range files {
		path, err := apps.SaveDownload(dir, f)
		if err != nil {
			con.Warn(fmt.Sprintf("view %s: %v", v.Tool, err))
			return err
		}
		con.Note(fmt.Sprintf("view %s: saved %s (%s)", v.Tool, path, tui.HumanSize(int64(len(f.Data)))))
	}
	return nil
}

// downloadQuestion asks whether to save the files a view asked to
// download, naming each (as it will be saved, unless taken), its type
// as the view gave it, its size, and the directory.
func downloadQuestion(v apps.ViewInfo, files []apps.Download, dir string) string {
	what := "a file"
	if len(files) > 1 {
		what = strconv.Itoa(len(files)) + " files"
	}
	var list []string
	for _, f := range files {
		d := tui.EscapeLine(f.Name) + " ("
		if f.MIMEType != "" {
			d += tui.EscapeLine(rawjson.Shorten(f.MIMEType, 60)) + ", "
		}
		list = append(list, d+tui.HumanSize(int64(len(f.Data)))+")")
	}
	them := "it"
	if len(files) > 1 {
		them = "them"
	}
	return fmt.Sprintf("The view of %s asks to download %s into %s: %s. Save %s?",
		tui.EscapeName(v.Tool), what, tui.EscapeLine(dir), strings.Join(list, ", "), them)
}

// fileList names the files of a download, for a warning.
func fileList(files []apps.Download) string {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// viewFor returns the definition of tool name when it has a view to open
// with --ui; nil (with a warning) when it has none, nil without one when
// the server does not list it (the call says so).
func viewFor(ctx context.Context, c *client, name string) (json.RawMessage, error) {
	tool, err := c.sess.ListedTool(ctx, name)
	if err != nil || tool == nil {
		return nil, err
	}
	ui, err := apps.ParseToolUI(tool)
	switch {
	case err != nil:
		c.console.Warn(fmt.Sprintf("tool %q: %v; calling it without its view", name, err))
		return nil, nil
	case !ui.HasView():
		c.console.Warn(fmt.Sprintf("tool %q has no view (no _meta.ui.resourceUri); calling it without one", name))
		return nil, nil
	}
	return tool, nil
}

// showView points a browser at the view (or, with --no-browser, says
// where to point one), unless a host page shows the views already.
func showView(c *client, ui uiDesc, h *apps.Host, v *apps.View, open func(string) error) {
	what := fmt.Sprintf("the view of %s", v.Info().Tool)
	switch {
	case h.Connected():
		c.console.Note(what + " is shown in the open page " + v.URL())
	case ui.noBrowser:
		c.console.Note(what + ": open " + v.URL() + " in a browser")
	default:
		if err := open(v.URL()); err != nil {
			c.console.Warn(fmt.Sprintf("%v; open %s in a browser", err, v.URL()))
			return
		}
		c.console.Note(what + " is opening in the browser: " + v.URL())
	}
}

// giveOutcome tells the view how the call ended: its result, or
// ui/notifications/tool-cancelled when there is none.
func giveOutcome(v *apps.View, res json.RawMessage, err error, interrupted bool) {
	switch {
	case res != nil:
		v.SetResult(res)
	case interrupted:
		v.Cancel("the call was interrupted")
	case err != nil:
		v.Cancel(errorMessage(err))
	default:
		v.Cancel("the call returned nothing")
	}
}

// defaultPageGrace is how long a one-shot waits for a page that went
// away (closed, or reloading) to come back before it ends.
const defaultPageGrace = 5 * time.Second

// pageGraceEnv overrides defaultPageGrace (a duration): longer for a slow
// reload, shorter for scripts and tests that close the page on purpose.
const pageGraceEnv = "MCPX_UI_PAGE_GRACE"

// pageGrace returns the page grace: $MCPX_UI_PAGE_GRACE, else the default.
func pageGrace(ios *IOStreams) (time.Duration, error) {
	v := strings.TrimSpace(ios.Getenv(pageGraceEnv))
	if v == "" {
		return defaultPageGrace, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, usageErrorf("$%s is %q: want a duration such as 5s or 500ms", pageGraceEnv, v)
	}
	return d, nil
}

// waitView keeps a one-shot's view open until the person ends it: Ctrl-C
// (ctx), the page closed (and not back within grace), the view closed
// (it asked to be, or failed: its error is returned), or the server gone.
func waitView(ctx context.Context, c *client, v *apps.View, states <-chan apps.State, grace time.Duration) error {
	c.console.Note(fmt.Sprintf("the view of %s stays open until Ctrl-C or its page is closed", v.Info().Tool))
	var graceOver <-chan time.Time
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-v.Done():
			if err := v.Err(); err != nil {
				return fmt.Errorf("the view of %s: %w", v.Info().Tool, err)
			}
			return nil
		case <-c.sess.Done():
			return fmt.Errorf("the view of %s: %w", v.Info().Tool, c.sess.Err())
		case s := <-states:
			switch s {
			case apps.StatePageGone:
				if timer == nil {
					timer = time.NewTimer(grace)
					graceOver = timer.C
				}
			case apps.StateShown:
				if timer != nil {
					timer.Stop()
					timer, graceOver = nil, nil
				}
			}
		case <-graceOver:
			c.console.Note("the page was closed")
			return nil
		}
	}
}

// closeViews tears the host's views down (ui/resource-teardown, answered
// or not within the host's bound) and stops it, even after Ctrl-C.
func closeViews(ctx context.Context, h *apps.Host) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = h.Close(cctx) // problems were reported as they happened
}
