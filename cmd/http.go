package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// mustHeaders parses -H flags already validated.
func mustHeaders(flags []string) http.Header {
	h, _ := parseHeaders(flags)
	return h
}

// validateHTTP checks the HTTP flags before anything connects.
func (g *globalOptions) validateHTTP() error {
	switch transport.HTTPMode(g.transport) {
	case transport.ModeAuto, transport.ModeStreamable, transport.ModeSSE:
	default:
		return usageErrorf("--transport must be auto, http or sse, not %q", g.transport)
	}
	if _, err := parseHeaders(g.headers); err != nil {
		return err
	}
	if g.url == "" {
		for _, f := range []struct {
			set  bool
			name string
		}{{len(g.headers) > 0, "-H"}, {g.bearer != "", "--bearer"}, {g.caCert != "", "--ca-cert"}, {g.insecure, "--insecure"}, {g.transport != "auto", "--transport"}} {
			if f.set {
				return usageErrorf("%s applies to HTTP servers; give the server with --url URL", f.name)
			}
		}
		return nil
	}
	u, err := url.Parse(g.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageErrorf("--url %q: expected an http:// or https:// URL, e.g. http://127.0.0.1:3001/mcp", g.url)
	}
	if len(g.env) > 0 || g.cwd != "" {
		return usageErrorf("--env and --cwd apply to a server command after --, not to --url")
	}
	if g.caCert != "" {
		if _, err := os.Stat(g.caCert); err != nil {
			return usageErrorf("--ca-cert: %v", err)
		}
	}
	return nil
}

// parseHeaders turns -H 'Name: value' flags into a header set.
func parseHeaders(flags []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return nil, usageErrorf("-H %q: expected 'Name: value'", f)
		}
		if !transport.ValidHeaderName(name) {
			return nil, usageErrorf("-H %q: %q is not a header name (letters, digits and !#$%%&'*+-.^_`|~ only)", f, name)
		}
		if strings.ContainsAny(value, "\r\n") {
			return nil, usageErrorf("-H %q: a header value cannot contain a line break", name)
		}
		if strings.ContainsFunc(value, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }) {
			return nil, usageErrorf("-H %q: a header value cannot contain control characters", name)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// httpOptions are the transport options for --url (without credentials).
func (g *globalOptions) httpOptions(console *tui.Console) (transport.HTTPOptions, error) {
	header, err := parseHeaders(g.headers)
	if err != nil {
		return transport.HTTPOptions{}, err
	}
	offered := g.protocolVersion
	if offered == "" {
		offered = latestVersion()
	}
	return transport.HTTPOptions{
		URL:             g.url,
		Mode:            transport.HTTPMode(g.transport),
		ModeReason:      "chosen with --transport " + g.transport,
		Header:          header,
		UserAgent:       "mcpx/" + Version(),
		CACertFile:      g.caCert,
		Insecure:        g.insecure,
		ProtocolVersion: offered,
		Observer:        g.httpObserverFor(console),
		MaxMessageSize:  g.maxMessageSize,
	}, nil
}

// dialHTTP builds the HTTP connection for --url. Nothing is sent until the
// session's first request. Credentials: --bearer (or MCPX_BEARER_TOKEN) is
// a fixed token; an Authorization header given with -H is sent as is;
// otherwise OAuth (package oauthflow) answers the server's 401s.
func (g *globalOptions) dialHTTP(c *client, rec *record.Recorder) (*transport.HTTPConn, error) {
	opts, err := g.httpOptions(c.console)
	if err != nil {
		return nil, err
	}
	opts.Observer = teeObserver(opts.Observer, rec)
	bearer := g.bearer
	if bearer == "" {
		bearer = g.io.Getenv("MCPX_BEARER_TOKEN")
	}
	if g.insecure {
		c.console.Warn("--insecure: the server's TLS certificate is not verified, so anyone between mcpx and the server can read and change this session")
	}
	switch why := g.oauthDisabled(opts.Header); {
	case bearer != "":
		opts.Authorizer = transport.BearerToken(bearer)
	case why != "":
		if g.verbose || g.wire {
			c.console.Note("OAuth is off: " + why)
		}
	default:
		client, err := transport.NewHTTPClient(opts)
		if err != nil {
			return nil, &usageError{err: err}
		}
		az, err := g.newAuthorizer(c.console, opts.Observer, client, false)
		if err != nil {
			return nil, &usageError{err: err}
		}
		c.oauth = az
		opts.Authorizer = az
	}
	conn, err := transport.NewHTTP(opts)
	if err != nil {
		return nil, &usageError{err: err}
	}
	return conn, nil
}

// httpObserverFor shows the HTTP layer with --wire and the transport's
// (and OAuth's) decisions and SSE stream metadata (priming events) with
// --wire or -v.
func (g *globalOptions) httpObserverFor(console *tui.Console) transport.Observer {
	return func(ev transport.Event) {
		ev.Text = transport.RedactURLs(ev.Text) // already done at the source; never shown raw
		switch ev.Kind {
		case transport.EventHTTP:
			if g.wireOn() {
				console.Event(ev)
			}
		case transport.EventNote, transport.EventStream:
			if g.wireOn() || g.verbose {
				console.Event(ev)
			}
		default:
			console.Event(ev)
		}
	}
}

// wireOn reports whether frames and HTTP exchanges are shown: --wire, or
// :wire on in the REPL.
func (g *globalOptions) wireOn() bool {
	return g.wire || (g.live != nil && g.live.wire.Load())
}

// httpHint says what to do about an HTTP failure, after its message.
func (g *globalOptions) httpHint(err error) string {
	if errors.Is(err, oauthflow.ErrNoResponse) && errors.Is(err, context.DeadlineExceeded) {
		return " (the browser authorization took longer than --timeout; run `mcpx auth login --url URL`, which waits 5 minutes, or raise --timeout)"
	}
	if errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, oauthflow.ErrAuthorization) {
		switch {
		case g.bearer != "" || g.io.Getenv("MCPX_BEARER_TOKEN") != "":
			return " (the server refused the bearer token)"
		case g.url != "" && g.oauthDisabled(mustHeaders(g.headers)) != "":
			return " (the server refused the Authorization header given with -H)"
		case errors.Is(err, oauthflow.ErrInteraction), g.verbose, g.wire:
			return ""
		case errors.Is(err, oauthflow.ErrAuthorization):
			return " (-v shows every authorization step)"
		}
		var ue *transport.UnauthorizedError
		if errors.As(err, &ue) && ue.Status == http.StatusForbidden && ue.CredentialID == "" && ue.Challenge == "" {
			// Not an authorization matter: the request carried no
			// credentials and the server asked for none.
			return " (the server refused the request without asking for credentials)"
		}
		if errors.As(err, &ue) && ue.Status == http.StatusForbidden {
			return " (the server refuses this request to the authorized client; -v shows the authorization steps)"
		}
		return " (-v shows the authorization steps; --bearer TOKEN sends a token of your own)"
	}
	if errors.Is(err, transport.ErrConnect) && isTLSError(err) {
		return " (if the server's certificate comes from a private CA, trust it with --ca-cert FILE)"
	}
	return ""
}

// isTLSError reports a failure to verify the server's certificate or to
// speak TLS with it.
func isTLSError(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidErr x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	return errors.As(err, &certErr) || errors.As(err, &unknownCA) || errors.As(err, &hostErr) ||
		errors.As(err, &invalidErr) || errors.As(err, &recErr)
}
