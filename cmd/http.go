package cmd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/transport"
)

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
		if strings.ContainsAny(value, "\r\n") {
			return nil, usageErrorf("-H %q: a header value cannot contain a line break", name)
		}
		h.Add(name, strings.TrimSpace(value))
	}
	return h, nil
}

// dialHTTP builds the HTTP connection for --url. Nothing is sent until the
// session's first request.
func (g *globalOptions) dialHTTP(c *client, rec *record.Recorder) (*transport.HTTPConn, error) {
	header, err := parseHeaders(g.headers)
	if err != nil {
		return nil, err
	}
	bearer := g.bearer
	if bearer == "" {
		bearer = g.io.Getenv("MCPX_BEARER_TOKEN")
	}
	var auth transport.Authorizer
	if bearer != "" {
		auth = transport.BearerToken(bearer)
	}
	if g.insecure {
		c.console.Warn("--insecure: the server's TLS certificate is not verified, so anyone between mcpx and the server can read and change this session")
	}
	offered := g.protocolVersion
	if offered == "" {
		offered = latestVersion()
	}
	conn, err := transport.NewHTTP(transport.HTTPOptions{
		URL:             g.url,
		Mode:            transport.HTTPMode(g.transport),
		Header:          header,
		UserAgent:       "mcpx/" + Version(),
		Authorizer:      auth,
		CACertFile:      g.caCert,
		Insecure:        g.insecure,
		ProtocolVersion: offered,
		Observer:        teeObserver(g.httpObserver(c), rec),
	})
	if err != nil {
		return nil, &usageError{err: err}
	}
	return conn, nil
}

// httpObserver shows the HTTP layer with --wire and the transport's
// decisions with --wire or -v.
func (g *globalOptions) httpObserver(c *client) transport.Observer {
	return func(ev transport.Event) {
		switch ev.Kind {
		case transport.EventHTTP:
			if g.wire {
				c.console.Event(ev)
			}
		case transport.EventNote:
			if g.wire || g.verbose {
				c.console.Event(ev)
			}
		default:
			c.console.Event(ev)
		}
	}
}

// httpHint says what to do about an HTTP failure, after its message.
func (g *globalOptions) httpHint(err error) string {
	if errors.Is(err, transport.ErrUnauthorized) {
		if g.bearer != "" || g.io.Getenv("MCPX_BEARER_TOKEN") != "" {
			return " (the server refused the bearer token)"
		}
		return " (the server wants credentials: pass a token with --bearer TOKEN or MCPX_BEARER_TOKEN)"
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
