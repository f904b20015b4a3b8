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
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// validate checks the HTTP flags before anything connects.
func (f httpFlags) validate(server serverFlags, ios *IOStreams) (httpDesc, error) {
	var d httpDesc
	switch transport.HTTPMode(f.transport) {
	case transport.ModeAuto, transport.ModeStreamable, transport.ModeSSE:
	default:
		return d, usageErrorf("--transport must be auto, http or sse, not %q", f.transport)
	}
	header, err := parseHeaders(f.headers)
	if err != nil {
		return d, err
	}
	d = httpDesc{
		url: f.url, mode: transport.HTTPMode(f.transport), header: header, headerLines: f.headers,
		bearer: f.bearer, bearerFlag: f.bearer != "", caCert: f.caCert, insecure: f.insecure,
	}
	if d.bearer == "" {
		d.bearer = ios.Getenv("MCPX_BEARER_TOKEN")
	}
	if f.url == "" {
		for _, g := range []struct {
			set  bool
			name string
		}{{len(f.headers) > 0, "-H"}, {f.bearer != "", "--bearer"}, {f.caCert != "", "--ca-cert"}, {f.insecure, "--insecure"}, {f.transport != "auto", "--transport"}} {
			if g.set {
				return d, usageErrorf("%s applies to HTTP servers; give the server with --url URL", g.name)
			}
		}
		return d, nil
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return d, usageErrorf("--url %q: expected an http:// or https:// URL, e.g. http://127.0.0.1:3001/mcp", f.url)
	}
	if len(server.env) > 0 || server.cwd != "" {
		return d, usageErrorf("--env and --cwd apply to a server command after --, not to --url")
	}
	if f.caCert != "" {
		if _, err := os.Stat(f.caCert); err != nil {
			return d, usageErrorf("--ca-cert: %v", err)
		}
	}
	return d, nil
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

// httpOptions are the transport options for --url, without credentials;
// obs sees the transport's events.
func (d connDesc) httpOptions(obs transport.Observer) transport.HTTPOptions {
	return transport.HTTPOptions{
		URL:             d.http.url,
		Mode:            d.http.mode,
		ModeReason:      "chosen with --transport " + string(d.http.mode),
		Header:          d.http.header.Clone(),
		UserAgent:       "mcpx/" + Version(),
		CACertFile:      d.http.caCert,
		Insecure:        d.http.insecure,
		ProtocolVersion: d.session.offered(),
		Observer:        obs,
		MaxMessageSize:  d.session.maxMessageSize,
	}
}

// httpObserver shows the HTTP layer when wireOn says so (--wire, :wire),
// and the transport's (and OAuth's) decisions and SSE stream metadata
// (priming events) then or with -v.
func httpObserver(console *tui.Console, wireOn func() bool, verbose bool) transport.Observer {
	return func(ev transport.Event) {
		ev.Text = transport.RedactURLs(ev.Text) // already done at the source; never shown raw
		switch ev.Kind {
		case transport.EventHTTP:
			if wireOn() {
				console.Event(ev)
			}
		case transport.EventNote, transport.EventStream:
			if wireOn() || verbose {
				console.Event(ev)
			}
		default:
			console.Event(ev)
		}
	}
}

// hintFacts are what the advice after an HTTP failure depends on.
type hintFacts struct {
	bearer     bool // a bearer token was sent
	authHeader bool // -H gave an Authorization header
	narrated   bool // -v or --wire shows the authorization steps
}

// hintFacts returns the facts of the connection d describes, shown as out
// says.
func (d connDesc) hintFacts(out output) hintFacts {
	return hintFacts{bearer: d.http.bearer != "", authHeader: d.http.url != "" && d.http.oauthOff() != "", narrated: out.verbose || out.wire}
}

// httpHint says what to do about an HTTP failure, after its message.
func httpHint(err error, f hintFacts) string {
	if errors.Is(err, oauthflow.ErrNoResponse) && errors.Is(err, context.DeadlineExceeded) {
		return " (the browser authorization took longer than --timeout; run `mcpx auth login --url URL`, which waits 5 minutes, or raise --timeout)"
	}
	if errors.Is(err, transport.ErrUnauthorized) || errors.Is(err, oauthflow.ErrAuthorization) {
		switch {
		case f.bearer:
			return " (the server refused the bearer token)"
		case f.authHeader:
			return " (the server refused the Authorization header given with -H)"
		case errors.Is(err, oauthflow.ErrInteraction), f.narrated:
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
