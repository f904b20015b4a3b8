package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/internal/userfile"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/transport"
)

// withClient connects to the server after "--" (or at --url), runs fn
// and closes the session, shutting the server down. In the REPL, fn runs
// on the REPL's session, which stays open.
func (e *env) withClient(ctx context.Context, server []string, fn func(*client) error) error {
	return e.withClientListening(ctx, server, attachments{}, fn)
}

// withListeningClient is withClient for a command that shows what the
// server sends on its own (watch, resources subscribe): over Streamable
// HTTP its GET stream opens with the session.
func (e *env) withListeningClient(ctx context.Context, server []string, fn func(*client) error) error {
	return e.withClientListening(ctx, server, attachments{listen: true}, fn)
}

// withWatchingClient is withListeningClient for a command whose output
// is every notification (watch): show gets them from the start of the
// session, so that what a server sends while the session is being set up
// (during logging/setLevel, before fn runs) is shown like the rest. In
// the REPL the session is open already and fn sets where they go.
func (e *env) withWatchingClient(ctx context.Context, server []string, show func(*jsonrpc.Message), fn func(*client) error) error {
	return e.withClientListening(ctx, server, attachments{listen: true, sink: show}, fn)
}

func (e *env) withClientListening(ctx context.Context, server []string, a attachments, fn func(*client) error) error {
	if e.repl != nil {
		return e.repl.with(e, server, fn)
	}
	d, err := e.descFor(ctx, server)
	if err != nil {
		return err
	}
	return e.session(ctx, d, a, fn)
}

// descFor returns the description of the connection a command makes to
// server (or to the URL of the flags). The description (the size of a
// few hundred pointers) is built here, in a frame of its own that is gone
// by the time the session runs, and handed on by pointer: built and
// copied in the frames the session runs under, it made the deepest call of
// a one-shot HTTP command need a second doubling of its goroutine's stack
// (a copy of 16 KiB and a 32 KiB stack, issue 13).
//
//go:noinline
func (e *env) descFor(ctx context.Context, server []string) (*connDesc, error) {
	d, err := e.connFor(ctx, e.cfg.conn, server, "mcpx tools list")
	if err != nil {
		return nil, err
	}
	return &d, nil
}

// withSession opens the session d describes, runs fn, lingers as --linger
// says and closes the session.
func (e *env) withSession(ctx context.Context, d connDesc, fn func(*client) error) (err error) {
	return e.session(ctx, &d, attachments{}, fn)
}

// session is withSession for d, which it does not change, with a.
func (e *env) session(ctx context.Context, d *connDesc, a attachments, fn func(*client) error) (err error) {
	if a.secrets == nil {
		a.secrets = d.knownSecrets()
	}
	if e.run != nil {
		e.run.secrets = a.secrets // (told the access tokens OAuth presents)
	}
	c, err := e.conns.connect(ctx, d, e.cfg.out, a)
	if err != nil {
		return err
	}
	defer func() {
		// A trace or --server-stderr file that could not be written is an
		// error of its own.
		if cerr := c.Close(); cerr != nil && err == nil {
			err = cerr
		} else if cerr != nil {
			c.console.Warn(cerr.Error())
		}
	}()
	err = fn(c)
	keepTrace(c.console, c.rec, d.rec, err)
	lingerAfter(ctx, c, d.feat.linger, e.cfg.out.verbose)
	c.sayUnsaid()
	if err == nil {
		// After the output (and --linger's): --strict fails a command
		// that worked.
		err = c.strictError(e.cfg.out.strict)
	}
	return err
}

// emit prints a result: exactly the raw JSON with --json, else human.
func (e *env) emit(c *client, raw json.RawMessage, human func()) {
	if e.cfg.out.json {
		c.out.JSON(raw)
		return
	}
	human()
}

func wantArgs(c *cobra.Command, own []string, min, max int) error {
	if len(own) >= min && (max < 0 || len(own) <= max) {
		return nil
	}
	// Which: the first argument missing, as the usage line names it
	// (mcpx tools call: NAME), or the first one too many.
	var which string
	switch words := strings.Fields(c.Use)[1:]; {
	case len(own) < min && len(own) < len(words) && placeholder(words[len(own)]):
		which = ": " + strings.TrimSuffix(words[len(own)], "...") + " is missing"
	case len(own) < min:
	case max == 0:
		which = ": it takes none, but was given " + transport.QuoteExcerpt(own[0])
	default:
		which = fmt.Sprintf(": %s is one too many", transport.QuoteExcerpt(own[max]))
	}
	return &usageError{err: &strayArgsError{err: fmt.Errorf("%s: wrong number of arguments%s; usage: %s", c.CommandPath(), which, c.UseLine())}}
}

// placeholder reports whether w, a word of a usage line, stands for one
// argument: NAME, URI, FILE... (not [optional ones], (--a | --b) or a
// flag).
func placeholder(w string) bool {
	w = strings.TrimSuffix(w, "...")
	return w != "" && strings.ToUpper(w) == w && !strings.ContainsAny(w, "[]()|-=")
}

// stdin is what @- reads: standard input, except in the REPL, which
// reads its commands there.
func (e *env) stdin() io.Reader {
	if e.repl != nil {
		return errReader{errors.New("the REPL reads its commands from standard input; give the JSON inline or as @file.json")}
	}
	return e.ios.In
}

// ownInput reports whether the file name is what the REPL reads its
// commands from — its standard input (/dev/stdin, /dev/fd/0, the terminal
// device, a pipe) or the controlling terminal (/dev/tty) —, which @file
// must not read, as @- must not: it would take the person's next lines,
// typed blind in the editor's raw mode, or the rest of a piped script. A
// regular file, opened anew, takes nothing from the REPL, unless the name
// opens standard input itself (dupsStdin). Outside the REPL it reports
// false.
func (e *env) ownInput(name string) bool {
	if e.repl == nil {
		return false
	}
	fi, err := os.Stat(name)
	if err != nil || fi.Mode().IsRegular() && !dupsStdin(runtime.GOOS, name) {
		return false // a file read anew takes nothing from the REPL
	}
	if f, ok := e.ios.In.(*os.File); ok {
		if in, err := f.Stat(); err == nil && os.SameFile(fi, in) {
			return true
		}
	}
	if e.ios.InTTY {
		if tty, err := os.Stat("/dev/tty"); err == nil && os.SameFile(fi, tty) {
			return true
		}
	}
	return false
}

// dupsStdin reports whether opening name on the system goos shares the
// offset of standard input, when it is a regular file: on Linux,
// /dev/stdin and /dev/fd/0 open the file anew, from its start, but on the
// BSDs and macOS they are dup(0), so reading one reads the rest of a
// script the REPL reads from a file (mcpx repl < script.txt).
func dupsStdin(goos, name string) bool {
	if goos == "linux" || goos == "android" {
		return false
	}
	switch filepath.Clean(name) {
	case "/dev/stdin", "/dev/fd/0":
		return true
	}
	return false
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// argSource is where readJSONArg reads an argument given as @file or @-.
type argSource struct {
	stdin io.Reader // what @- reads (env.stdin)
	limit int64     // the most bytes read: the --max-message-size the argument must fit in
	// onWait, when not nil, is told when a named pipe's open has waited a
	// second for its writer (userfile.Read).
	onWait func(name string)
	// ownInput, when not nil, reports a file that is what the REPL reads
	// its commands from (env.ownInput), which @file must not read either.
	ownInput func(name string) bool
}

// argSource returns what a JSON argument given to flag reads.
func (e *env) argSource(flag string) argSource {
	return argSource{stdin: e.stdin(), limit: e.cfg.conn.session.maxMessageSize, onWait: pipeWaitNote(e.console(), flag), ownInput: e.ownInput}
}

// readJSONArg reads a JSON argument given inline, as @file, or as @-
// (from stdin). A file or standard input is read up to src.limit bytes,
// and ctx ends a read that waits: a FIFO without a writer, a terminal, a
// pipe that never ends. A file is read as every file the user names is
// (userfile.Read).
func readJSONArg(ctx context.Context, flag, v string, src argSource) (json.RawMessage, error) {
	data := []byte(v)
	if name, ok := strings.CutPrefix(v, "@"); ok {
		if name != "-" && src.ownInput != nil && src.ownInput(name) {
			return nil, usageErrorf("%s: %s is what the REPL reads its commands from; give the JSON inline or as @file.json", flag, name)
		}
		var b []byte
		var err error
		if name == "-" {
			b, err = readStdinArg(ctx, src.stdin, src.limit)
		} else {
			b, err = userfile.Read(ctx, name, src.limit, src.onWait)
		}
		what := name
		if name == "-" {
			what = "standard input"
		}
		var tooBig *userfile.TooLargeError
		switch {
		case errors.As(err, &tooBig):
			return nil, usageErrorf("%s: %s is larger than the maximum message size (%s); raise --max-message-size", flag, what, transport.FormatSize(src.limit))
		case err != nil && ctx.Err() != nil && name == "-":
			return nil, fmt.Errorf("%s: reading %s: %w", flag, what, err)
		case err != nil && name == "-":
			return nil, usageErrorf("%s: reading standard input: %v", flag, err)
		case err != nil:
			return nil, fileFlagError(ctx, flag, err)
		}
		data = b
	}
	if !json.Valid(data) {
		// Where it breaks, so that a long argument or file can be fixed.
		return nil, usageErrorf("%s: not valid JSON: %s", flag, rawjson.FindSyntaxProblem(data))
	}
	return data, nil
}

// readStdinArg reads stdin up to limit bytes (more is a
// *userfile.TooLargeError). The read runs in a goroutine so that ctx can
// end it: a terminal or a pipe waits for its writer, and a blocking read
// cannot be interrupted otherwise. A read that never returns leaves its
// goroutine until the process exits (a one-shot command ends then; the
// REPL does not read @- at all, see env.stdin).
func readStdinArg(ctx context.Context, stdin io.Reader, limit int64) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := io.ReadAll(io.LimitReader(stdin, limit+1))
		if err == nil && int64(len(b)) > limit {
			err = &userfile.TooLargeError{Limit: limit}
		}
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.b, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type infoOptions struct{ e *env }

func newInfoCmd(e *env) *cobra.Command {
	o := &infoOptions{e: e}
	return &cobra.Command{
		Use: "info [flags] -- <server command>",
		Example: `  mcpx info -- node server.js
  mcpx info --json --url http://127.0.0.1:3001/mcp`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 0, 0); err != nil {
				return err
			}
			return o.run(c.Context(), server)
		},
	}
}

func (o *infoOptions) run(ctx context.Context, server []string) error {
	return o.e.withClient(ctx, server, func(c *client) error {
		info := c.sess.Server()
		o.e.emit(c, info.Raw, func() { c.out.WithWidth(o.e.ios.outWidth()).Info(info, c.describe) })
		return nil
	})
}

type pingOptions struct{ e *env }

func newPingCmd(e *env) *cobra.Command {
	o := &pingOptions{e: e}
	return &cobra.Command{
		Use: "ping [flags] -- <server command>",
		Example: `  mcpx ping -- node server.js
  mcpx ping --timeout 5s --url http://127.0.0.1:3001/mcp`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 0, 0); err != nil {
				return err
			}
			return o.run(c.Context(), server)
		},
	}
}

func (o *pingOptions) run(ctx context.Context, server []string) error {
	return o.e.withClient(ctx, server, func(c *client) error {
		var note func(string)
		if o.e.cfg.out.verbose {
			note = c.console.Note
		}
		res, err := c.sess.Ping(ctx, note)
		if err != nil {
			return err
		}
		o.e.emit(c, res.Raw, func() {
			rtt := res.RTT.Round(10 * time.Microsecond)
			if res.Instead != "" {
				fmt.Fprintf(o.e.ios.Out, "pong (%s, %s)\n", rtt, res.Instead)
				return
			}
			fmt.Fprintf(o.e.ios.Out, "pong (%s)\n", rtt)
		})
		return nil
	})
}

type rawCallOptions struct {
	e      *env
	notify bool
}

func newCallCmd(e *env) *cobra.Command {
	o := &rawCallOptions{e: e}
	return &cobra.Command{
		Use: "call METHOD [JSON-params | @file.json] [flags] -- <server command>",
		Example: `  mcpx call tools/list '{}' -- node server.js
  mcpx call resources/read '{"uri":"file:///tmp/x"}' --json -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 2); err != nil {
				return err
			}
			return o.run(c.Context(), own, server)
		},
	}
}

func newNotifyCmd(e *env) *cobra.Command {
	o := &rawCallOptions{e: e, notify: true}
	return &cobra.Command{
		Use:     "notify METHOD [JSON-params | @file.json] [flags] -- <server command>",
		Example: `  mcpx notify notifications/roots/list_changed -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 2); err != nil {
				return err
			}
			return o.run(c.Context(), own, server)
		},
	}
}

func (o *rawCallOptions) run(ctx context.Context, own, server []string) error {
	method := own[0]
	var params json.RawMessage
	if len(own) == 2 {
		p, err := readJSONArg(ctx, "params", own[1], o.e.argSource("params"))
		if err != nil {
			return err
		}
		params = p
	}
	return o.e.withClient(ctx, server, func(c *client) error {
		if o.notify {
			if err := c.sess.Notify(ctx, method, params); err != nil {
				return err
			}
			if o.e.cfg.out.verbose {
				c.console.Note("sent " + method)
			}
			return nil
		}
		// The params go out as given: no progress token is added.
		res, err := c.sess.Call(ctx, method, params)
		if err != nil {
			return err
		}
		c.out.JSON(res)
		return nil
	})
}
