package cmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/userfile"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// validate checks the HTTP flags before anything connects.
// named says a configured server was named (-s), which may be at a URL:
// resolveNamed then checks the HTTP flags against it. server is what
// the flags say about a server command, which --url refuses.
func (f httpFlags) validate(server stdioDesc, ios *IOStreams, named bool) (httpDesc, error) {
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
	if f.url == "" && named {
		if f.bearer != "" {
			return d, checkBearer(d)
		}
		return d, nil
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
	if err := checkURL("--url", f.url); err != nil {
		return d, err
	}
	if err := checkBearer(d); err != nil {
		return d, err
	}
	if f.bearer != "" && header.Get("Authorization") != "" {
		return d, usageErrorf("--bearer and -H 'Authorization: …' both give the Authorization header; give one")
	}
	if f.insecure && f.caCert != "" {
		return d, usageErrorf("--insecure verifies no certificate, so --ca-cert would not be used; give one")
	}
	if len(server.env) > 0 || server.dir != "" {
		return d, usageErrorf("--env and --cwd apply to a server command after --, not to --url")
	}
	if server.graceSet {
		return d, usageErrorf("--shutdown-grace applies to a server command after --; a server at --url is not mcpx's to shut down")
	}
	if f.caCert != "" {
		if _, err := os.Stat(f.caCert); err != nil {
			return d, usageErrorf("--ca-cert: %v", err)
		}
	}
	return d, nil
}

// checkBearer refuses a bearer token that no HTTP header can carry (a
// line break or other control character, typically from a token file
// with Windows line endings), which would otherwise fail each request as
// a transport failure. The token is not shown.
func checkBearer(d httpDesc) error {
	if !strings.ContainsFunc(d.sentBearer(), func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil
	}
	from := "--bearer"
	if !d.bearerFlag {
		from = "$MCPX_BEARER_TOKEN"
	}
	return usageErrorf("%s: the token contains a line break or another control character, which no HTTP header can carry (copied from a file with its line ending?); its value is not shown", from)
}

// checkURL checks the URL of a server reached over HTTP, given as what
// (--url, or the entry that holds it): a mistake is a usage error that
// says what is wrong and how to write it (transport.ParseEndpoint).
func checkURL(what, u string) error {
	_, err := transport.ParseEndpoint(u)
	var ue *transport.URLError
	if errors.As(err, &ue) {
		return usageErrorf("%s %q: %s", what, ue.URL, ue.Detail())
	}
	if err != nil {
		return &usageError{err: err}
	}
	return nil
}

// malformedHeader shows a -H flag that is no 'Name: value' in its error
// without what may be its credential ('Authorization Bearer TOKEN',
// 'X-Api-Key=KEY', the token alone): the header name it begins with, if
// it begins with one, and how long the rest is.
func malformedHeader(f string) string {
	i := strings.IndexAny(f, " \t=:")
	if i > 0 && transport.ValidHeaderName(f[:i]) {
		return fmt.Sprintf("%s (then %d bytes, not shown)", transport.QuoteExcerpt(f[:i]), len(f)-i)
	}
	return fmt.Sprintf("(%d bytes, not shown)", len(f))
}

// parseHeaders turns -H 'Name: value' flags into a header set.
func parseHeaders(flags []string) (http.Header, error) {
	h := http.Header{}
	for _, f := range flags {
		name, value, ok := strings.Cut(f, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
			return nil, usageErrorf("-H %s: expected 'Name: value'", malformedHeader(f))
		}
		if !transport.ValidHeaderName(name) {
			return nil, usageErrorf("-H %s: not a header name (letters, digits and !#$%%&'*+-.^_`|~ only); its value is not shown", transport.QuoteExcerpt(name))
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

// caCertLimit bounds the --ca-cert bundle (a system's whole bundle is
// a few hundred kilobytes): a path to something endless must not fill
// memory.
const caCertLimit = 16 << 20

// httpOptions are the transport options for --url, without credentials;
// obs sees the transport's events. The --ca-cert file is read now (a
// named pipe's wait for its writer ends with ctx, told on console).
func (d connDesc) httpOptions(ctx context.Context, obs transport.Observer, console *tui.Console) (transport.HTTPOptions, error) {
	var caCerts []byte
	if d.http.caCert != "" {
		var err error
		if caCerts, err = userfile.Read(ctx, d.http.caCert, caCertLimit, pipeWaitNote(console, "--ca-cert")); err != nil {
			return transport.HTTPOptions{}, fileFlagError(ctx, "--ca-cert", err)
		}
	}
	return transport.HTTPOptions{
		URL:             d.http.url,
		Mode:            d.http.mode,
		ModeReason:      orDefault(d.http.modeReason, "chosen with --transport "+string(d.http.mode)),
		Header:          d.http.header.Clone(),
		UserAgent:       "mcpx/" + Version(),
		CACerts:         caCerts,
		CACertFile:      d.http.caCert,
		Insecure:        d.http.insecure,
		ProtocolVersion: d.session.offered(),
		Observer:        obs,
		MaxMessageSize:  d.session.maxMessageSize,
	}, nil
}

// httpObserver shows the HTTP layer when wireOn says so (--wire, :wire),
// and the transport's (and OAuth's) decisions and SSE stream metadata
// (priming events) then or with -v.
func httpObserver(console *tui.Console, wireOn func() bool, verbose bool) transport.Observer {
	show := func(ev transport.Event) {
		ev.Text = transport.RedactURLs(ev.Text) // already done at the source; never shown raw
		console.Event(ev)
	}
	return func(ev transport.Event) {
		switch ev.Kind {
		case transport.EventHTTP:
			if wireOn() {
				show(ev)
			}
		case transport.EventNote, transport.EventStream:
			if wireOn() || verbose {
				show(ev)
			}
		default:
			show(ev)
		}
	}
}
