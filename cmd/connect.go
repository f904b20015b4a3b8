package cmd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/sessiond"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

func latestVersion() string { return mcp.LatestHandshakeVersion }

// client is an open session plus what renders around it.
type client struct {
	sess     *inspector.Session
	conn     transport.Conn // the connection, when there is no session (verify)
	console  *tui.Console
	out      *tui.Printer
	describe string
	closers  []func() error
	once     sync.Once
	closeErr error // the first error of closers
	// untrack lets the run go of the client once it is closed (see
	// runState.track); nil for a view (withOutput).
	untrack func()

	feats *inspector.ClientFeatures
	// clientState is shared by the client and its views (withOutput).
	*clientState
	// oauth is the OAuth authorizer of an HTTP connection, nil otherwise.
	oauth *oauthflow.Authorizer
	// observe, when set (the REPL), sees every notification first.
	observe func(*client, *jsonrpc.Message)
	// held is the open session (@NAME) the connection goes through, as it
	// was when the command attached; nil otherwise.
	held *sessiond.Status
	// rec is the --record recorder, nil without one: views' messages are
	// recorded beside the frames.
	rec *record.Recorder
	// secrets are the credentials the connection sends (and its server's
	// command-line secrets), which --wire does not show where the server
	// echoes them.
	secrets *record.Secrets
	// host is what the application of the named server's entry does
	// with it (-s NAME): zero without one.
	host hostEffects
}

// clientState is what a client and its views share.
type clientState struct {
	sink notifySink // where notifications go (default: console)
	// showLists shows list_changed notifications on the console: with -v
	// and while lingering. Servers often announce their lists at start-up,
	// which is noise in a one-shot command's output.
	showLists  atomic.Bool
	serverName atomic.Value // string, once initialized
	// departures counts the server's departures from the protocol warned
	// about in the session that no REPL line answers for (see
	// client.depart); strictSeen is how many of them a command has
	// answered for already (see strictError).
	departures atomic.Int64
	strictSeen atomic.Int64
	// unsaidMu guards unsaid: how many departures of each sort the
	// session had counted, not shown, when sayUnsaid last said so.
	unsaidMu sync.Mutex
	unsaid   map[string]int
}

// sayUnsaid says, one line a sort, how many of the server's departures
// were counted but not shown since it last said so (inspector.EachShown:
// a server that repeats one with every message is told about in a few
// lines): at the end of a one-shot command, and after each REPL line.
// They were counted for --strict as they came.
func (c *client) sayUnsaid() {
	if c.sess == nil {
		return
	}
	// A watch showed the notifications among them as its output: only
	// the warnings were not said.
	every := c.showsUnsaid()
	c.unsaidMu.Lock()
	defer c.unsaidMu.Unlock()
	for _, u := range c.sess.UnsaidDepartures() {
		if n := u.N - c.unsaid[u.Kind]; n > 0 {
			unsaid := "counted and not shown"
			if every || inspector.ShownAnyway(u.Kind) {
				// (Log messages are shown whatever their warnings.)
				unsaid = "counted and not warned about"
			}
			c.console.Warn(fmt.Sprintf("%d more %s came, %s", n, u.Kind, unsaid))
		}
		if c.unsaid == nil {
			c.unsaid = map[string]int{}
		}
		c.unsaid[u.Kind] = u.N
	}
}

// showsUnsaid reports whether the notifications the session counted as
// departures and did not say are shown all the same: a watch's output is
// every notification (inspector.Options.ShowsUnsaid).
func (c *client) showsUnsaid() bool {
	_, every := c.sink.getEvery()
	return every
}

// unsaidSaid records the counts of us as said (by mcpx check's report),
// so that sayUnsaid says only what came after.
func (c *client) unsaidSaid(us []inspector.Unsaid) {
	c.unsaidMu.Lock()
	defer c.unsaidMu.Unlock()
	for _, u := range us {
		if c.unsaid == nil {
			c.unsaid = map[string]int{}
		}
		c.unsaid[u.Kind] = u.N
	}
}

// depart warns about a departure of the server's from the protocol that
// the session read past (inspector.Options.OnDeparture, and the problems
// a command finds in a result), counting it for --strict (see count).
func (c *client) depart(ctx context.Context, msg string) {
	c.count(ctx)
	c.console.Warn(msg)
}

// count counts a departure for --strict: for the REPL line ctx is of,
// the one whose request it is tied to (see lineDepartures), while the
// line runs; else for the session (a one-shot command answers for all
// of its session's).
func (c *client) count(ctx context.Context) {
	if l, ok := ctx.Value(lineDeparturesKey{}).(*lineDepartures); ok && l.charge() {
		return
	}
	c.departures.Add(1)
}

// strictError is the error --strict makes of the session's departures
// warned about since the last command that answered for them (the first:
// since the session opened), nil when there were none or strict is off.
// It is marked inspector.ErrProtocolViolation: exit 5, protocol_violation.
func (c *client) strictError(strict bool) error {
	if !strict {
		return nil
	}
	n := c.departures.Load()
	if d := n - c.strictSeen.Swap(n); d > 0 {
		return &strictError{n: d}
	}
	return nil
}

// unanswered is how many of the session's departures no command has
// answered for (see strictError).
func (c *client) unanswered() int64 { return c.departures.Load() - c.strictSeen.Load() }

// strictError is a command's failure under --strict: the server departed
// from the protocol n times, each warned about as it happened; outside,
// a script's at its end, for the departures no line of it answered for.
type strictError struct {
	n       int64
	outside bool
}

func (e *strictError) Error() string {
	if e.outside {
		return fmt.Sprintf("the server departed from the protocol %d time(s) outside the script's commands (the warnings above); --strict makes that an error", e.n)
	}
	return fmt.Sprintf("the server departed from the protocol %d time(s) (the warnings above); --strict makes that an error", e.n)
}

// Is makes a strictError an inspector.ErrProtocolViolation.
func (e *strictError) Is(target error) bool { return target == inspector.ErrProtocolViolation }

// lineDepartures counts the server's departures that one REPL line
// answers for under --strict: those tied to the line's requests (their
// results, bad answers to them, progress for them: inspector.Options.
// OnDeparture gets the request's context) and those its command finds.
// A departure tied to no request (a bad notification, a frame that is
// not JSON-RPC) is the session's, whichever line runs when it comes; so
// is one tied to a line that has ended (a second answer that comes late).
type lineDepartures struct {
	mu    sync.Mutex
	n     int64
	ended bool
}

type lineDeparturesKey struct{}

// withLineDepartures returns ctx for a REPL line, whose departures the
// returned count gathers.
func withLineDepartures(ctx context.Context) (context.Context, *lineDepartures) {
	l := &lineDepartures{}
	return context.WithValue(ctx, lineDeparturesKey{}, l), l
}

// charge counts a departure for the line, and reports false once the line
// has ended.
func (l *lineDepartures) charge() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.ended {
		l.n++
	}
	return !l.ended
}

// end ends the line and returns how many departures it answers for.
func (l *lineDepartures) end() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ended = true
	return l.n
}

// withOutput returns a view of c for one REPL line run in the background:
// the same session, its results and warnings printed to ios (the line's
// own output, printed once the lines before it are). Closing the view
// closes nothing.
func (c *client) withOutput(ios *IOStreams, out output) *client {
	return &client{sess: c.sess, conn: c.conn, console: newConsole(ios, out, nil), out: newPrinter(ios, out),
		describe: c.describe, feats: c.feats, clientState: c.clientState, oauth: c.oauth, observe: c.observe, held: c.held, rec: c.rec}
}

// Close ends the session (shutting the server down) and releases files;
// a recording is closed last, so that it holds everything. It returns the
// first error closing the files (a trace or --server-stderr file that
// could not be written whole), every time it is called.
func (c *client) Close() error {
	c.once.Do(func() {
		if c.sess != nil {
			c.sess.Close()
		} else if c.conn != nil {
			c.conn.Close()
		}
		if c.feats != nil {
			c.feats.Close()
		}
		for _, f := range c.closers {
			if err := f(); err != nil && c.closeErr == nil {
				c.closeErr = err
			}
		}
		if c.untrack != nil {
			c.untrack()
		}
	})
	return c.closeErr
}

// closeAfter closes c after the failure that ends the command: a file
// that could not be written whole (a trace, --server-stderr FILE) is
// warned about beside it.
func (c *client) closeAfter() {
	if err := c.Close(); err != nil {
		c.console.Warn(err.Error())
	}
}

// newConsole returns the stderr console of ios, coloured as out says.
// Progress is a bar redrawn in place only on a terminal that can erase a
// line: not TERM=dumb, which got the bar's escape codes as text.
//
// Its lines wait while a person answers a form (prompter, when not nil).
func newConsole(ios *IOStreams, out output, prompter *tui.Prompter) *tui.Console {
	w := ios.ErrOut
	if prompter != nil {
		w = prompter.Gate(w)
	}
	c := tui.NewConsole(w, ios.ErrTTY && !ios.dumbTerminal(), ios.colorEnabled(out.color, ios.ErrTTY))
	c.SetWidth(ios.errWidth)
	return c
}

// newPrinter returns the stdout printer of ios, coloured as out says.
// The binary contents it summarises point to --json, which every command
// has; a command with -o (resources read, tools call) says so itself.
func newPrinter(ios *IOStreams, out output) *tui.Printer {
	return tui.NewPrinter(ios.Out, ios.colorEnabled(out.color, ios.OutTTY)).WithSaveHint("use --json to get it")
}

// connector opens the connections and sessions of one run. It builds
// what a session needs from a connection description — the transport,
// the recorder, the taps, the authorizer, the client features, the
// lifecycle — dials with the caller's context and hands the connection to
// inspector.Connect. What it learns lasts the run: the era a server
// speaks (the REPL's :reconnect, verify's sessions).
type connector struct {
	// ios are the streams the consoles and prompts use.
	ios *IOStreams
	// track is told of every client opened, to close it if mcpx panics;
	// the client's Close calls what it returns, to be let go of.
	track func(*client) (untrack func())
	// prompter asks the person at the terminal: the consoles' lines wait
	// while it does (nil: nobody is asked).
	prompter *tui.Prompter
	// sharedIn is set when others read ios.In too (the REPL's commands):
	// OAuth then reads a pasted address only through prompter.
	sharedIn bool
	eraCache inspector.EraCache
	// shared, when set, is the era cache of the connector this one
	// stands beside (verify --parallel's traces): what one learns, the
	// others use, as one connector's sessions do.
	shared *inspector.EraCache
	// gate lets one OAuth authorization at a time run among the
	// connector's sessions, and sharedGate, when set, is the gate of the
	// connector this one stands beside (verify --parallel's traces): the
	// sessions that wait take the token the first stored rather than each
	// asking the person in a browser.
	gate       oauthflow.Gate
	sharedGate *oauthflow.Gate
}

// authGate returns the gate of the connector's OAuth authorizations.
func (k *connector) authGate() *oauthflow.Gate {
	if k.sharedGate != nil {
		return k.sharedGate
	}
	return &k.gate
}

// eras returns the cache of the eras the servers speak.
func (k *connector) eras() *inspector.EraCache {
	if k.shared != nil {
		return k.shared
	}
	return &k.eraCache
}

// attachments are what a caller adds to a connection beyond its
// description: the REPL sees every notification and every frame first,
// and switches the display of frames (:wire).
type attachments struct {
	observe func(*client, *jsonrpc.Message)
	frames  func(*client, time.Time, transport.Direction, transport.Frame)
	wire    func() bool
	// listen says the caller shows what the server sends on its own
	// (watch, resources subscribe): see listens.
	listen bool
	// sink, when set, is where notifications go from the start of the
	// session (see notifySink) instead of the console: every one of them,
	// as the command's output (watch).
	sink func(*jsonrpc.Message)
	// events receives the transport's events (the server's stderr, HTTP
	// exchanges) for a recording the caller makes (verify --update).
	events transport.Observer
	// secrets, when set, are the secrets the connection knows (see
	// connDesc.knownSecrets), told the access tokens OAuth presents:
	// verify redacts them from what the live server says, the REPL from
	// what :wire shows and tells them to a :record started later. Without
	// them the connection has its own.
	secrets *record.Secrets
	// departures, when set, gets the server's departures from the
	// protocol in place of the console (they are counted all the same):
	// mcpx check reports those of the session's opening with the rest.
	departures func(string)
}

// listens reports whether the session shows what the server sends on its
// own — watch, resources subscribe, --linger, the REPL (which observes
// every notification) — so that over Streamable HTTP the GET stream is
// opened with the session. Other sessions leave it to the session to open
// when the server may call back (inspector.Options.ServerStreamOnDemand).
func (a attachments) listens(d *connDesc) bool {
	return a.listen || a.observe != nil || d.feat.linger > 0
}

// connect starts the server d describes (or reaches the one at its URL)
// and opens an MCP session over the connection, with ctx: starting the
// server, the first contact and the handshake end when it does.
//
// d is not changed; it is passed by pointer, as it is to open,
// newFeatures and lifecycle, so that the frames under which the session
// runs do not each hold a copy (see env.descFor).
func (k *connector) connect(ctx context.Context, d *connDesc, out output, a attachments) (*client, error) {
	// From the start of the server to the end of the handshake: what the
	// named server's application gives it (hostEffects.startup).
	start := time.Now()
	c, conn, rec, err := k.open(ctx, d, out, a)
	if err != nil {
		return nil, err
	}
	if d.session.traceErr != nil {
		// Said, not fatal: a value some other tool left in the
		// environment does not stop the command; it is not sent.
		c.console.Warn(d.session.traceErr.Error())
	}
	c.host = d.named.host
	if c.held != nil {
		d = d.inSession(*c.held)
		// The entry's application's effects, as the session's opener
		// knew them.
		c.host = hostOfHeld(c.held.Host)
	}
	c.feats = newFeatures(d, c)
	c.observe = a.observe
	c.rec = rec
	life := lifecycle(d, c.feats, c.console.Note, k.eras())
	if out.verbose && (c.held == nil || c.held.Era == eraModern) {
		// (Through a handshake-era session, what it offered when it
		// opened counts.)
		if note := inspector.OpeningNote(life); note != "" {
			c.console.Note(note)
		}
	}
	onNote := c.console.Note
	if rec != nil {
		onNote = func(s string) { rec.Note(s); c.console.Note(s) }
	}
	onDeparture := c.depart
	if a.departures != nil {
		onDeparture = func(ctx context.Context, s string) { c.count(ctx); a.departures(s) }
	}
	var onLate func(jsonrpc.ID, inspector.Progress)
	if out.verbose {
		onLate = c.console.LateProgress
	}
	sess, err := inspector.Connect(ctx, conn, inspector.Options{
		Lifecycle:      life,
		Handlers:       c.feats.HandlersFor(life),
		OnNotification: c.onNotification,
		// (Counted with their warnings, not shown: see sayUnsaid.)
		OnNotificationUnsaid: c.onNotificationUnsaid,
		ShowsUnsaid:          c.showsUnsaid,
		OnServerRequest:      c.console.ServerRequest,
		OnInputRequest:       c.console.InputRequest,
		OnWarning:            c.console.Warn,
		OnDeparture:          onDeparture,
		// (Counted for --strict, not shown: see sayUnsaid.)
		OnDepartureUnsaid: c.count,
		OnNote:            onNote,
		OnLateProgress:    onLate,
		Timeout:           orNone(d.session.timeout),
		MaxTimeout:        orNone(d.session.maxTimeout),
		// The GET stream only when something listens on it (issue 13).
		ServerStreamOnDemand: !a.listens(d),
		TraceContext:         d.session.traceContext,
	})
	if err != nil {
		keepTrace(c.console, rec, d.rec, err)
		conn.Close()
		c.closeAfter()
		return nil, markVersionEra(err, d.session.protocolVersion)
	}
	c.sess = sess
	c.conn = nil
	if c.held == nil && (c.oauth == nil || c.oauth.Flows() == 0) {
		// (A held session started before this command; a sign-in is the
		// person's time, which no application counts as the server's.)
		if msg, over := d.named.host.startup.Exceeded(time.Since(start)); over {
			c.console.Warn(tui.EscapeLine(d.named.host.server + ": " + msg))
		}
	}
	if ds, ok := conn.(transport.Describer); ok {
		// Described after the handshake: over HTTP the transport is chosen
		// by the first request.
		c.describe = ds.Describe()
	}
	if _, ok := transport.Find[*transport.StdioConn](conn); ok {
		// (mcpx info shows it, and -v.)
		c.describe = stdioTarget(d.server)
	}
	if out.verbose && d.http.url != "" {
		c.console.Note("connected: " + c.describe)
	}
	if out.verbose {
		info := sess.Server()
		c.console.Note(info.OpenedNote())
		c.console.Note(fmt.Sprintf("protocol era %s (%s)", info.Era, orDefault(info.EraReason, "the default")))
	}
	c.afterConnect(ctx, d.feat.logLevel)
	return c, nil
}

// open starts the server d describes, reaches the one at its URL, or
// attaches to the open session it names (@NAME), without opening a
// session: the connection carries the recorder (--record) and a tap
// (--wire, or the REPL's). The client owns the connection until a session
// takes it over. rec is the recorder, nil without --record.
func (k *connector) open(ctx context.Context, d *connDesc, out output, a attachments) (c *client, conn transport.Conn, rec *record.Recorder, err error) {
	c = &client{console: newConsole(k.ios, out, k.prompter), out: newPrinter(k.ios, out), clientState: &clientState{}}
	c.showLists.Store(out.verbose)
	if a.sink != nil {
		c.sink.setEvery(a.sink, true)
	}
	c.untrack = k.track(c)
	if d.rec.file != "" {
		// Only a trace writes what it knows before a token is presented
		// (its session's name): a connection without one learns the
		// token as OAuth presents it (toldAuth), and an HTTP one-shot
		// does not read the token store for nothing.
		d.http.stored = storedCredentials(k.ios.Getenv, *d)
	}
	rec, replay, err := k.recorder(ctx, c, *d, out)
	if err != nil {
		return nil, nil, nil, err
	}
	wireOn := func() bool { return out.wire || (a.wire != nil && a.wire()) }
	c.secrets = a.secrets
	if c.secrets == nil {
		c.secrets = d.knownSecrets()
	}
	var dialer transport.Dialer
	if replay > 0 {
		// The recorded server's stderr goes where the live server's would.
		var stderr transport.Observer
		if stderr, err = stderrSink(ctx, c, d.stdio.stderr); err == nil {
			dialer = d.replayDialer(replay, c.console.Warn, tee(stderr, a.events))
		}
	} else {
		dialer, err = k.dialer(ctx, c, *d, out, teeObserver(a.events, rec), tellSecret(rec, c.secrets), wireOn)
	}
	if err != nil {
		c.closeAfter()
		return nil, nil, nil, err
	}
	conn, err = dialer.Dial(ctx)
	if err != nil {
		if _, isHTTP := dialer.(transport.HTTPOptions); isHTTP && ctx.Err() == nil {
			err = &usageError{err: err} // the options were refused
		}
		keepTrace(c.console, rec, d.rec, err)
		c.closeAfter()
		return nil, nil, nil, err
	}
	switch sc := conn.(type) {
	case *transport.StdioConn:
		if out.verbose {
			c.console.Note("started " + stdioTarget(d.server) + fmt.Sprintf(" (pid %d)", sc.PID()))
		}
	case *sessiond.Conn:
		st := sc.Status()
		c.held = &st
		// The session's credentials, which the server may echo: --wire,
		// the trace and the error messages redact them as they would
		// over a connection of the command's own.
		// They are looked for from 4 bytes on, as the command's own
		// credentials are (the session handed over those of its
		// values that are long enough to be).
		for _, v := range sc.Secrets() {
			if rec != nil {
				rec.Credential(v)
			}
			c.secrets.AddCredential(v)
		}
		if out.verbose {
			c.console.Note(fmt.Sprintf("through session %s: %s, %s (pid %d)", d.at.name, st.Server, st.Target, st.PID))
		}
		if err := settledBySession(d, st, c.console.Warn); err != nil {
			conn.Close()
			c.closeAfter()
			return nil, nil, nil, err
		}
	}
	if rec != nil {
		conn = rec.Wrap(conn)
	}
	switch {
	case a.frames != nil:
		conn = transport.Tap(conn, func(t time.Time, dir transport.Direction, f transport.Frame) { a.frames(c, t, dir, f) })
	case out.wire:
		conn = transport.Tap(conn, c.wire)
	}
	c.conn = conn
	return c, conn, rec, nil
}

// dialer returns what opens the connection d describes: the open session
// to attach to (@NAME), which holds the server; the server command to
// start, with its stderr going where --server-stderr says; or the HTTP
// connection with its credentials (--bearer, -H Authorization, or OAuth
// answering the server's 401s). tell, when set, is told the access tokens
// OAuth presents (see tellSecret), or those a held session's presents.
func (k *connector) dialer(ctx context.Context, c *client, d connDesc, out output, rec transport.Observer, tell func(string), wireOn func() bool) (transport.Dialer, error) {
	if d.at.name != "" {
		dir, err := sessiond.Dir(k.ios.Getenv)
		if err != nil {
			return nil, err
		}
		// What the session's connection drops for its size is told as a
		// connection of the command's own would tell it (EventDropped).
		return sessionDialer{dir: dir, at: d.at, maxMessageSize: d.session.maxMessageSize, timeout: d.session.timeout,
			observer: tee(notesIf(c.console.Event, wireOn, out.verbose), rec), onNote: c.console.Note, onSecret: tell}, nil
	}
	if d.http.url == "" {
		stderr, err := stderrSink(ctx, c, d.stdio.stderr)
		if err != nil {
			return nil, err
		}
		return transport.StdioOptions{
			Command:  d.server[0],
			Args:     d.server[1:],
			Env:      d.stdio.env,
			Dir:      d.stdio.dir,
			Observer: tee(notesIf(stderr, wireOn, out.verbose), rec),

			CloseGrace:     d.stdio.grace,
			MaxMessageSize: d.session.maxMessageSize,
		}, nil
	}
	opts, err := d.httpOptions(ctx, tee(httpObserver(c.console, wireOn, out.verbose), rec), c.console)
	if err != nil {
		return nil, err
	}
	if d.http.insecure {
		c.console.Warn("--insecure: the server's TLS certificate is not verified, so anyone between mcpx and the server can read and change this session")
	}
	switch why := d.http.oauthOff(); {
	case d.http.sentBearer() != "":
		opts.Authorizer = transport.BearerToken(d.http.sentBearer())
	case why != "":
		if out.verbose || out.wire {
			c.console.Note("OAuth is off: " + why)
		}
	case transport.IsSocketURL(d.http.url):
		if out.verbose || out.wire {
			c.console.Note("OAuth is off: " + socketNoOAuth)
		}
	default:
		client, err := transport.NewHTTPClient(opts)
		if err != nil {
			return nil, &usageError{err: err}
		}
		az, err := newAuthorizer(k.ios, d, c.console, opts.Observer, client, false, k.prompter, k.sharedIn, k.authGate())
		if err != nil {
			return nil, &usageError{err: err}
		}
		c.oauth = az
		opts.Authorizer = az
		if tell != nil {
			opts.Authorizer = toldAuth{Authorizer: az, tell: tell}
		}
	}
	return opts, nil
}

// socketNoOAuth says why a server on a Unix socket or a named pipe gets
// no OAuth: OAuth's discovery and its tokens are bound to an origin (a
// host), which a socket has not; whoever can open the socket is on this
// machine. --bearer and -H still send credentials.
const socketNoOAuth = "the server is reached over a socket or a pipe, which has no origin to authorize for (--bearer and -H still send credentials)"

// wire shows a frame (--wire), without the secrets the connection knows
// where the server echoes them (a whoami tool): the HTTP layer shows
// Authorization as [redacted], and so does what the server says.
func (c *client) wire(t time.Time, dir transport.Direction, f transport.Frame) {
	f.Data = c.secrets.Frame(f.Data)
	c.console.Wire(t, dir, f)
}

// tellSecret returns what tells a secret value to the --record recorder
// (nil without one) and to verify's secrets (nil outside verify); nil when
// neither is there.
func tellSecret(rec *record.Recorder, secrets *record.Secrets) func(string) {
	switch {
	case rec == nil && secrets == nil:
		return nil
	case rec == nil:
		return secrets.Add
	case secrets == nil:
		return rec.Secret
	}
	return func(v string) { rec.Secret(v); secrets.Add(v) }
}

// orNone maps a flag's 0 ("disabled") to the session's "none" (-1).
func orNone(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// stderrSink decides where the server's stderr goes (--server-stderr:
// show, hide or a file).
func stderrSink(ctx context.Context, c *client, mode string) (transport.Observer, error) {
	switch mode {
	case "show":
		return c.console.Event, nil
	case "hide":
		return func(ev transport.Event) {
			if ev.Kind != transport.EventStderr {
				c.console.Event(ev)
			}
		}, nil
	}
	f, err := openServerStderr(ctx, mode)
	if err != nil {
		return nil, err
	}
	c.closers = append(c.closers, f.Close)
	return func(ev transport.Event) {
		if ev.Kind != transport.EventStderr {
			c.console.Event(ev)
			return
		}
		fmt.Fprintln(f, ev.Text)
	}, nil
}

// notesIf passes the transport's notes (EventNote: details such as the
// size of a dropped message at its end) to show only with --wire or -v,
// as httpObserver does, so that a message dropped for its size is told
// in one line whatever the transport; every other event always.
func notesIf(show transport.Observer, wireOn func() bool, verbose bool) transport.Observer {
	return func(ev transport.Event) {
		if ev.Kind == transport.EventNote && !verbose && !wireOn() {
			return
		}
		show(ev)
	}
}

// serverStderrFile is the --server-stderr FILE the server's stderr is
// appended to. Its first failed write is reported when it is closed, and
// drops the lines after it.
type serverStderrFile struct {
	name string
	mu   sync.Mutex
	f    *outfile.File
}

// openServerStderr opens --server-stderr FILE for appending (see
// internal/outfile: links followed, FIFOs and devices written through).
func openServerStderr(ctx context.Context, name string) (*serverStderrFile, error) {
	f, err := outfile.Append(ctx, name, outfile.Options{})
	switch {
	case errors.Is(err, context.Canceled):
		return nil, err
	case errors.Is(err, outfile.ErrDirectory):
		return nil, usageErrorf("--server-stderr %s: that is a directory; give a file name", name)
	case err != nil:
		// A file that cannot be opened is output that could not be
		// written (exit 1, as for --record and -o), not a mistake that
		// --help would explain.
		return nil, fmt.Errorf("--server-stderr %s: %w", name, err)
	}
	return &serverStderrFile{name: name, f: f}, nil
}

func (s *serverStderrFile) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Write(p)
}

// Close closes the file and returns its first error.
func (s *serverStderrFile) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.f.Close(); err != nil {
		return fmt.Errorf("--server-stderr %s: %w", s.name, err)
	}
	return nil
}

// withProgress returns the call option that shows progress for label.
func (c *client) withProgress(label string) inspector.CallOption {
	return inspector.WithProgress(func(p inspector.Progress) { c.console.Progress(label, p) })
}
