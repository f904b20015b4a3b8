package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mcpx-dev/mcpx/internal/userfile"
	"github.com/mcpx-dev/mcpx/oauthflow"
	"github.com/mcpx-dev/mcpx/transport"
	"github.com/mcpx-dev/mcpx/tui"
)

// authFlags are the OAuth flags every command that reaches an HTTP server
// shares.
type authFlags struct {
	clientID          string
	clientSecret      string
	clientMetadataURL string
	grant             string
	privateKey        string
	callbackURL       string
	noBrowser         bool
	storedOnly        bool
	idTokenFile       string
	idpTokenURL       string
	idpClientID       string
	idpClientSecret   string
	assertionFile     string
	noDPoP            bool
}

// oauthDesc is how mcpx authorizes itself with OAuth: the OAuth flags,
// checked, with the files they name read and the secrets the environment
// holds.
type oauthDesc struct {
	grant             oauthflow.Grant
	clientID          string
	clientSecret      string // --client-secret, else $MCPX_CLIENT_SECRET
	clientMetadataURL string
	key               *oauthflow.PrivateKey
	callback          *url.URL
	noBrowser         bool
	storedOnly        bool
	idToken           string
	idpTokenURL       string
	idpClientID       string
	idpClientSecret   string // --idp-client-secret, else $MCPX_IDP_CLIENT_SECRET
	assertionFile     string
	noDPoP            bool
	// fresh makes the authorizer ignore stored tokens (auth login).
	fresh bool
	// scopes are asked for on top of the server's (auth login --scope).
	scopes []string
}

func (a *authFlags) register(f *pflag.FlagSet) {
	f.StringVar(&a.clientID, "client-id", "", "OAuth: use the pre-registered client `ID`")
	f.StringVar(&a.clientSecret, "client-secret", "", "OAuth: the pre-registered client's `SECRET` (default $MCPX_CLIENT_SECRET)")
	f.StringVar(&a.clientMetadataURL, "client-metadata-url", "", "OAuth: use the Client ID Metadata Document at `URL` as client id where the server supports it")
	f.StringVar(&a.grant, "grant", "", "OAuth `GRANT`: authorization_code (browser, default), client_credentials, id-jag or jwt-bearer")
	f.StringVar(&a.privateKey, "private-key", "", "OAuth: authenticate the client with private_key_jwt signed by the PEM key in `FILE` (ES256/RS256)")
	f.StringVar(&a.callbackURL, "callback-url", "", "OAuth: receive the browser's redirect at this loopback `URL` (default http://127.0.0.1:<free port>/callback)")
	f.BoolVar(&a.noBrowser, "no-browser", false, "print URLs instead of opening a browser: OAuth's authorization URL (a pasted redirect URL is then read on stdin) and MCP Apps' view page")
	f.BoolVar(&a.storedOnly, "stored-auth-only", false, "OAuth: never start a browser authorization; use stored tokens (refreshed as needed) only")
	f.StringVar(&a.idTokenFile, "id-token-file", "", "OAuth id-jag grant: the enterprise IdP's ID token, read from `FILE`")
	f.StringVar(&a.idpTokenURL, "idp-token-url", "", "OAuth id-jag grant: the IdP's token endpoint `URL` (token exchange)")
	f.StringVar(&a.idpClientID, "idp-client-id", "", "OAuth id-jag grant: mcpx's client `ID` at the IdP")
	f.StringVar(&a.idpClientSecret, "idp-client-secret", "", "OAuth id-jag grant: mcpx's client `SECRET` at the IdP (default $MCPX_IDP_CLIENT_SECRET)")
	f.StringVar(&a.assertionFile, "assertion-file", "", "OAuth jwt-bearer grant: the workload's JWT from its platform (workload identity federation), read from `FILE` whenever a token is needed")
	f.BoolVar(&a.noDPoP, "no-dpop", false, "OAuth: ask for bearer tokens even where the authorization server offers DPoP-bound ones (RFC 9449)")
}

// set reports the OAuth flags given, by name.
func (a *authFlags) set() []string {
	var names []string
	for _, f := range []struct {
		on   bool
		name string
	}{
		{a.clientID != "", "--client-id"}, {a.clientSecret != "", "--client-secret"}, {a.clientMetadataURL != "", "--client-metadata-url"},
		{a.grant != "", "--grant"}, {a.privateKey != "", "--private-key"}, {a.callbackURL != "", "--callback-url"},
		{a.noBrowser, "--no-browser"}, {a.storedOnly, "--stored-auth-only"}, {a.idTokenFile != "", "--id-token-file"},
		{a.idpTokenURL != "", "--idp-token-url"}, {a.idpClientID != "", "--idp-client-id"}, {a.idpClientSecret != "", "--idp-client-secret"},
		{a.assertionFile != "", "--assertion-file"}, {a.noDPoP, "--no-dpop"},
	} {
		if f.on {
			names = append(names, f.name)
		}
	}
	return names
}

// tokenFileLimit bounds --id-token-file, a JWT of a few kilobytes: a
// path to something endless must not fill memory.
const tokenFileLimit = 1 << 20

// validate checks the OAuth flags before anything connects, reading the
// key and token files they name (a named pipe's wait for its writer ends
// with ctx, told on console).
func (f authFlags) validate(ctx context.Context, h httpFlags, ios *IOStreams, console *tui.Console) (oauthDesc, error) {
	given := f.set()
	a := f
	// Secrets may also come from the environment, which is not "giving a
	// flag": a stdio command must not fail because they are set.
	if a.clientSecret == "" && a.clientID != "" {
		a.clientSecret = ios.Getenv("MCPX_CLIENT_SECRET")
	}
	if a.idpClientSecret == "" && a.grant == string(oauthflow.GrantIDJAG) {
		a.idpClientSecret = ios.Getenv("MCPX_IDP_CLIENT_SECRET")
	}
	d := oauthDesc{
		grant: oauthflow.Grant(a.grant), clientID: a.clientID, clientSecret: a.clientSecret, clientMetadataURL: a.clientMetadataURL,
		noBrowser: a.noBrowser, storedOnly: a.storedOnly, idpTokenURL: a.idpTokenURL, idpClientID: a.idpClientID,
		idpClientSecret: a.idpClientSecret, assertionFile: a.assertionFile, noDPoP: a.noDPoP,
	}
	if len(given) == 0 {
		return d, nil
	}
	if h.url == "" {
		return d, usageErrorf("%s applies to HTTP servers; give the server with --url URL", given[0])
	}
	// (--no-browser is also --ui's: it may come with fixed credentials.)
	if oauthOnly := slices.DeleteFunc(slices.Clone(given), func(n string) bool { return n == "--no-browser" }); len(oauthOnly) > 0 {
		if h.bearer != "" {
			return d, usageErrorf("--bearer sends a fixed token, so OAuth flags such as %s do not apply; drop one or the other", oauthOnly[0])
		}
		for _, line := range h.headers {
			if name, _, _ := strings.Cut(line, ":"); strings.EqualFold(strings.TrimSpace(name), "Authorization") {
				return d, usageErrorf("-H gives the Authorization header, so OAuth flags such as %s do not apply; drop one or the other", oauthOnly[0])
			}
		}
	}
	switch oauthflow.Grant(a.grant) {
	case "", oauthflow.GrantAuthorizationCode:
	case oauthflow.GrantClientCredentials:
		if a.clientID == "" || (a.clientSecret == "" && a.privateKey == "") {
			return d, usageErrorf("--grant client_credentials needs a pre-registered client: --client-id ID with --client-secret SECRET or --private-key FILE")
		}
	case oauthflow.GrantIDJAG:
		if a.idTokenFile == "" || a.idpTokenURL == "" {
			return d, usageErrorf("--grant id-jag needs --id-token-file FILE (the IdP's ID token) and --idp-token-url URL")
		}
		if a.clientID == "" && a.clientMetadataURL == "" {
			return d, usageErrorf("--grant id-jag needs the client registered with the MCP server's authorization server: --client-id ID (or --client-metadata-url URL)")
		}
	case oauthflow.GrantJWTBearer:
		if a.assertionFile == "" {
			return d, usageErrorf("--grant jwt-bearer needs --assertion-file FILE (the workload's JWT)")
		}
	default:
		return d, usageErrorf("--grant must be authorization_code, client_credentials, id-jag or jwt-bearer, not %q", a.grant)
	}
	if a.assertionFile != "" {
		if oauthflow.Grant(a.grant) != oauthflow.GrantJWTBearer {
			return d, usageErrorf("--assertion-file applies to --grant jwt-bearer")
		}
		if _, err := oauthflow.ReadAssertion(ctx, a.assertionFile, pipeWaitNote(console, "--assertion-file")); err != nil {
			return d, fileFlagError(ctx, "--assertion-file", err)
		}
	}
	if oauthflow.Grant(a.grant) != oauthflow.GrantIDJAG {
		for _, f := range []struct {
			on   bool
			name string
		}{{a.idTokenFile != "", "--id-token-file"}, {a.idpTokenURL != "", "--idp-token-url"}, {a.idpClientID != "", "--idp-client-id"}} {
			if f.on {
				return d, usageErrorf("%s applies to --grant id-jag", f.name)
			}
		}
	}
	if a.clientSecret != "" && a.clientID == "" {
		return d, usageErrorf("--client-secret goes with --client-id (the pre-registered client it belongs to)")
	}
	if a.clientMetadataURL != "" {
		u, err := url.Parse(a.clientMetadataURL)
		if err != nil || u.Scheme != "https" || u.Host == "" || strings.Trim(u.Path, "/") == "" {
			return d, usageErrorf("--client-metadata-url %q: a Client ID Metadata Document URL must be https with a path, e.g. https://example.com/mcpx-client.json", a.clientMetadataURL)
		}
	}
	if a.privateKey != "" {
		if a.clientID == "" && a.clientMetadataURL == "" {
			return d, usageErrorf("--private-key authenticates a client: give it with --client-id ID")
		}
		key, err := oauthflow.LoadPrivateKey(ctx, a.privateKey, pipeWaitNote(console, "--private-key"))
		if err != nil {
			return d, fileFlagError(ctx, "--private-key", err)
		}
		d.key = key
	}
	if a.callbackURL != "" {
		u, err := oauthflow.ParseCallbackURL(a.callbackURL)
		var ce *oauthflow.CallbackURLError
		if errors.As(err, &ce) {
			return d, usageErrorf("--callback-url %q: %s", ce.URL, ce.Reason)
		}
		if err != nil {
			return d, &usageError{err: err}
		}
		d.callback = u
	}
	if a.idTokenFile != "" {
		b, err := userfile.Read(ctx, a.idTokenFile, tokenFileLimit, pipeWaitNote(console, "--id-token-file"))
		if err != nil {
			return d, fileFlagError(ctx, "--id-token-file", err)
		}
		if d.idToken = strings.TrimSpace(string(b)); d.idToken == "" {
			return d, usageErrorf("--id-token-file %s is empty", a.idTokenFile)
		}
	}
	if a.idpTokenURL != "" {
		if u, err := url.Parse(a.idpTokenURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return d, usageErrorf("--idp-token-url %q: expected an http(s) URL", a.idpTokenURL)
		}
	}
	return d, nil
}

// storedCredentials returns the OAuth tokens stored for the server at d's
// URL (access and refresh tokens) when the connection may present them,
// read from the store without a word (the authorizer says what it uses).
// They are secrets the connection knows before it presents one, which
// it tells only then (toldAuth), after a trace has written its session
// name: a name that holds the command's arguments, which may hold the
// token (message=$(mcpx auth token --url U)).
func storedCredentials(getenv func(string) string, d connDesc) []string {
	if d.http.url == "" || d.http.sentBearer() != "" || d.http.oauthOff() != "" || transport.IsSocketURL(d.http.url) || d.oauth.fresh {
		return nil
	}
	dir, err := oauthflow.StoreDir(getenv)
	if err != nil {
		return nil
	}
	recs, err := oauthflow.NewStore(dir).Matching(d.http.url)
	if err != nil {
		return nil
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.AccessToken)
		if r.RefreshToken != "" {
			out = append(out, r.RefreshToken)
		}
	}
	return out
}

// tokenStore opens the token store, or returns nil (tokens kept for this
// run only) with a note when there is no place for it.
func tokenStore(ios *IOStreams, c *tui.Console) *oauthflow.Store {
	dir, err := oauthflow.StoreDir(ios.Getenv)
	if err != nil {
		c.Warn(err.Error())
		return nil
	}
	s := oauthflow.NewStore(dir)
	s.Warn = c.Warn
	return s
}

// newAuthorizer builds the OAuth authorizer for the server at d's URL,
// asking the person on ios's terminal (or a browser) when it must. A
// pasted redirect address is read through prompter when it is
// interactive, which leaves the lines typed after the authorization to
// the next prompt (or the REPL's editor); else from ios.In, unless
// sharedIn says others read it too (a REPL's commands). gate, when set,
// is shared by the authorizers of sessions that may authorize at once.
func newAuthorizer(ios *IOStreams, d connDesc, console *tui.Console, obs transport.Observer, client *http.Client, storedOnly bool,
	prompter *tui.Prompter, sharedIn bool, gate *oauthflow.Gate) (*oauthflow.Authorizer, error) {
	a := d.oauth
	cfg := oauthflow.Config{
		ServerURL:         d.http.url,
		HTTPClient:        client,
		Store:             tokenStore(ios, console),
		UserAgent:         "mcpx/" + Version(),
		ProtocolVersion:   d.session.offered(),
		ClientName:        "mcpx",
		ClientVersion:     Version(),
		Grant:             a.grant,
		ClientID:          a.clientID,
		ClientSecret:      a.clientSecret,
		ClientMetadataURL: a.clientMetadataURL,
		PrivateKey:        a.key,
		IDToken:           a.idToken,
		IDPTokenURL:       a.idpTokenURL,
		IDPClientID:       a.idpClientID,
		IDPClientSecret:   a.idpClientSecret,
		AssertionFile:     a.assertionFile,
		NoDPoP:            a.noDPoP,
		CallbackURL:       a.callback,
		StoredOnly:        a.storedOnly || storedOnly,
		Fresh:             a.fresh,
		Scopes:            a.scopes,
		Gate:              gate,
		Observer:          obs,
		Notify: func(msg string) {
			for _, line := range strings.Split(msg, "\n") {
				if line == "" {
					console.Println("")
					continue
				}
				console.Tell(line)
			}
		},
	}
	browser := ios.Getenv("BROWSER")
	paste := false
	switch {
	case a.noBrowser:
		paste = true
	case browser != "":
		cfg.Browser = oauthflow.CommandBrowser(browser)
	case ios.InTTY || ios.ErrTTY:
		cfg.Browser = oauthflow.SystemBrowser()
		paste = ios.InTTY
	case a.fresh:
		// mcpx auth login itself: it takes no --bearer, and is what to run.
		cfg.NoInteraction = "mcpx cannot ask anyone to authorize in a browser here: there is no terminal and BROWSER is not set " +
			"(run it in a terminal, set BROWSER, or use --grant client_credentials)"
	default:
		cfg.NoInteraction = fmt.Sprintf("mcpx cannot ask anyone to authorize in a browser here: there is no terminal and BROWSER is not set "+
			"(run `mcpx auth login --url %s` in a terminal first, set BROWSER, use --grant client_credentials, or pass a token with --bearer)", d.http.url)
	}
	switch {
	case !paste:
	case prompter.Interactive():
		cfg.ReadLine = prompter.ReadLine
	case !sharedIn:
		cfg.Stdin = ios.In
	}
	return oauthflow.New(cfg)
}

func newAuthCmd(e *env) *cobra.Command {
	c := groupCmd("auth",
		newAuthLoginCmd(e),
		// -s NAME names the server at a URL these take (namedBeforeRun),
		// with its --input and --trust.
		readsGlobals(newAuthStatusCmd(e), "reads the token store only", "url", "server", "input", "trust", "verbose", "json"),
		readsGlobals(newAuthLogoutCmd(e), "deletes stored tokens only", "url", "server", "input", "trust", "verbose"),
		// A refresh talks to the authorization server: the HTTP and OAuth
		// flags, and --timeout, apply.
		readsGlobals(newAuthTokenCmd(e), "talks to the authorization server only", "@http", "@auth", "server", "input", "trust",
			"timeout", "max-message-size", "protocol-version", "wire", "verbose"))
	c.Long = `mcpx authorizes itself with OAuth whenever an HTTP server answers 401 (or 403
insufficient_scope), following the server's protocol revision: protected resource
metadata, authorization server discovery, client registration, the browser with
PKCE, and a token stored for the next run. -v narrates every step.

Tokens are stored under the user configuration directory (mcpx/auth, or
$MCPX_CONFIG_DIR/auth), in private files (0600), keyed by the resource and the
authorization server, and refreshed before they expire. They are sent only to
the server they were issued for, and never printed — except by "mcpx auth token".`
	return c
}

func newAuthLoginCmd(e *env) *cobra.Command {
	var scope string
	c := &cobra.Command{
		Use: "login --url URL",
		Example: `  mcpx auth login --url https://mcp.example.com/mcp
  mcpx auth login --url https://mcp.example.com/mcp --scope "mcp:tools mcp:admin"
  mcpx auth login --url https://mcp.example.com/mcp --grant client_credentials --client-id ID --client-secret "$SECRET"`,
		Short: "Authorize mcpx for the server at --url now, and store the token",
		Long: `Connects to the server at --url without using a stored token, so that it asks for
authorization, runs the authorization (a browser, unless --grant says otherwise),
stores the token and checks that the server accepts it. The wait for the
browser is bounded by --timeout, 5 minutes unless given.

The scopes asked for are those the server names; --scope adds more, such as
those a server asks for later with 403 insufficient_scope (a step-up), which
a run without a terminal or a session held by mcpx connect cannot authorize.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			d := e.cfg.conn
			if d.http.url == "" {
				return usageErrorf("auth login needs the server: --url URL")
			}
			// OAuth is what it runs: fixed credentials turn it off (the
			// environment's default token does not: it is not sent here).
			if !d.http.bearerFlag {
				d.http.bearer = ""
			}
			switch why := d.http.oauthOff(); {
			case d.http.bearerFlag:
				return usageErrorf("auth login runs OAuth, and --bearer sends a fixed token instead: leave --bearer out")
			case why != "":
				return usageErrorf("auth login runs OAuth, which is off for this server: %s", why)
			case transport.IsSocketURL(d.http.url):
				return usageErrorf("auth login runs OAuth, which is off for this server: %s", socketNoOAuth)
			}
			if !c.Flags().Changed("timeout") {
				d.session.timeout = 5 * time.Minute
			}
			d.oauth.fresh = true
			d.oauth.scopes = strings.Fields(scope)
			e.run.login = true
			return e.withSession(c.Context(), d, func(cl *client) error {
				if cl.oauth == nil {
					return usageErrorf("OAuth is off for this server")
				}
				rec := cl.oauth.Current()
				if rec == nil {
					// Some servers take initialize without a token and want
					// one for everything else: ask them something.
					if _, err := cl.sess.Ping(c.Context(), nil); err != nil {
						return err
					}
					rec = cl.oauth.Current()
				}
				if rec == nil {
					cl.console.Note("the server did not ask for authorization (initialize and ping succeeded without a token); nothing was stored")
					if e.cfg.out.json {
						cl.out.JSON(json.RawMessage(`{"authorized":false}`))
					}
					return nil
				}
				// Storing the token is what auth login is for: a token
				// that could not be stored is a failure (the warning said
				// why), not "Authorized".
				if err := cl.oauth.StoreError(); err != nil {
					return fmt.Errorf("the server accepts the new token, but it could not be stored: %w", err)
				}
				if rec.File() == "" {
					return errors.New("the server accepts the new token, but there is no token store to keep it in")
				}
				st := statusOf(rec, time.Now())
				if e.cfg.out.json {
					b, _ := json.Marshal(st)
					cl.out.JSON(b)
					return nil
				}
				fmt.Fprintf(e.ios.Out, "Authorized mcpx for %s with %s.\n", tui.EscapeLine(st.Resource), tui.EscapeLine(st.Issuer))
				printStatusDetails(e.ios.Out, st)
				return nil
			})
		},
	}
	c.Flags().StringVar(&scope, "scope", "", "also ask for these `SCOPES` (separated by spaces), on top of those the server names")
	return c
}

// tokenStatus is what mcpx shows about a stored token: never the token.
type tokenStatus struct {
	Resource     string    `json:"resource"`
	Issuer       string    `json:"issuer"`
	Grant        string    `json:"grant"`
	ClientID     string    `json:"clientId"`
	ClientSource string    `json:"clientSource"`
	Scopes       []string  `json:"scopes"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Expired      bool      `json:"expired"`
	RefreshToken bool      `json:"refreshToken"`
	DPoP         bool      `json:"dpop"`
	Updated      time.Time `json:"updated"`
	File         string    `json:"file,omitempty"`
}

func statusOf(r *oauthflow.TokenRecord, now time.Time) tokenStatus {
	s := tokenStatus{
		Resource: r.Resource, Issuer: r.Issuer, Grant: r.Grant, ClientID: r.Client.ID, ClientSource: r.Client.Source,
		Scopes: r.Scopes, Expiry: r.Expiry, RefreshToken: r.RefreshToken != "", DPoP: r.DPoPBound(), Updated: r.Updated, File: r.File(),
	}
	if s.Scopes == nil {
		s.Scopes = []string{}
	}
	s.Expired = !r.Expiry.IsZero() && !now.Before(r.Expiry)
	return s
}

func printStatusDetails(w io.Writer, st tokenStatus) {
	esc := tui.EscapeLine
	fmt.Fprintf(w, "  client:        %s (%s)\n", esc(st.ClientID), esc(st.ClientSource))
	fmt.Fprintf(w, "  grant:         %s\n", esc(st.Grant))
	scopes := strings.Join(st.Scopes, " ")
	if scopes == "" {
		scopes = "(none)"
	}
	fmt.Fprintf(w, "  scopes:        %s\n", esc(scopes))
	switch {
	case st.Expiry.IsZero():
		fmt.Fprintf(w, "  expires:       never said\n")
	case st.Expired:
		fmt.Fprintf(w, "  expires:       expired %s ago (%s)\n", time.Since(st.Expiry).Round(time.Second), st.Expiry.Local().Format(time.RFC3339))
	default:
		fmt.Fprintf(w, "  expires:       in %s (%s)\n", time.Until(st.Expiry).Round(time.Second), st.Expiry.Local().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  refresh token: %s\n", map[bool]string{true: "yes", false: "no"}[st.RefreshToken])
	if st.DPoP {
		fmt.Fprintf(w, "  DPoP-bound:    yes (RFC 9449; the key is stored with the token)\n")
	}
	if st.File != "" {
		fmt.Fprintf(w, "  stored in:     %s\n", st.File)
	}
}

func newAuthStatusCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use: "status [--url URL]",
		Example: `  mcpx auth status
  mcpx auth status --url https://mcp.example.com/mcp`,
		Short: "Show the stored tokens (for --url, or all): server, authorization server, scopes, expiry — never the token",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			console := e.console()
			store := tokenStore(e.ios, console)
			if store == nil {
				return errors.New("no token store")
			}
			var recs []*oauthflow.TokenRecord
			var err error
			if e.cfg.conn.http.url != "" {
				recs, err = store.Matching(e.cfg.conn.http.url)
			} else {
				recs, err = store.Tokens()
			}
			if err != nil {
				return err
			}
			now := time.Now()
			if e.cfg.out.json {
				list := make([]tokenStatus, 0, len(recs))
				for _, r := range recs {
					list = append(list, statusOf(r, now))
				}
				b, _ := json.Marshal(map[string]any{"store": store.Dir(), "tokens": list})
				e.printer().JSON(b)
				return nil
			}
			if len(recs) == 0 {
				if e.cfg.conn.http.url != "" {
					fmt.Fprintf(e.ios.Out, "No stored token for %s (store: %s).\n", shownURL(e.cfg.conn.http.url), store.Dir())
				} else {
					fmt.Fprintf(e.ios.Out, "No stored tokens (store: %s).\n", store.Dir())
				}
				return nil
			}
			for i, r := range recs {
				if i > 0 {
					fmt.Fprintln(e.ios.Out)
				}
				st := statusOf(r, now)
				fmt.Fprintf(e.ios.Out, "%s\n  authorization server: %s\n", tui.EscapeLine(st.Resource), tui.EscapeLine(st.Issuer))
				printStatusDetails(e.ios.Out, st)
			}
			return nil
		},
	}
}

func newAuthLogoutCmd(e *env) *cobra.Command {
	var all bool
	c := &cobra.Command{
		Use: "logout --url URL | --all",
		Example: `  mcpx auth logout --url https://mcp.example.com/mcp
  mcpx auth logout --all`,
		Short: "Delete the stored token for --url, or every stored token and client registration with --all",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if all == (e.cfg.conn.http.url != "") {
				return usageErrorf("auth logout needs exactly one of --url URL or --all")
			}
			console := e.console()
			store := tokenStore(e.ios, console)
			if store == nil {
				return errors.New("no token store")
			}
			if all {
				n, err := store.DeleteAll(c.Context())
				if err != nil {
					return err
				}
				fmt.Fprintf(e.ios.Out, "Removed %d stored file(s) from %s.\n", n, store.Dir())
				return nil
			}
			recs, err := store.Matching(e.cfg.conn.http.url)
			if err != nil {
				return err
			}
			if len(recs) == 0 {
				fmt.Fprintf(e.ios.Out, "No stored token for %s.\n", shownURL(e.cfg.conn.http.url))
				return nil
			}
			for _, r := range recs {
				if err := store.DeleteToken(c.Context(), r); err != nil {
					return err
				}
				fmt.Fprintf(e.ios.Out, "Removed the token for %s (authorization server %s).\n", tui.EscapeLine(r.Resource), tui.EscapeLine(r.Issuer))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&all, "all", false, "delete every stored token and client registration")
	return c
}

func newAuthTokenCmd(e *env) *cobra.Command {
	return &cobra.Command{
		Use:     "token --url URL",
		Example: `  curl -H "Authorization: Bearer $(mcpx auth token --url https://mcp.example.com/mcp)" …`,
		Short:   "Print the stored access token for --url (refreshed if needed), for scripts",
		Long: `Prints the access token stored for the server at --url on stdout — the only
command that ever shows a token. It is refreshed first when it is about to
expire; no new authorization is started (use mcpx auth login for that).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if e.cfg.conn.http.url == "" {
				return usageErrorf("auth token needs the server: --url URL")
			}
			if transport.IsSocketURL(e.cfg.conn.http.url) {
				return usageErrorf("auth token prints an OAuth token, and OAuth is off for this server: %s", socketNoOAuth)
			}
			console := e.console()
			d, out := e.cfg.conn, e.cfg.out
			obs := httpObserver(console, func() bool { return out.wire }, out.verbose)
			opts, err := d.httpOptions(c.Context(), obs, console)
			if err != nil {
				return err
			}
			client, err := transport.NewHTTPClient(opts)
			if err != nil {
				return &usageError{err: err}
			}
			az, err := newAuthorizer(e.ios, d, console, obs, client, true, nil, false, nil)
			if err != nil {
				return &usageError{err: err}
			}
			ctx, cancel := context.WithTimeout(c.Context(), durationOr(d.session.timeout, time.Minute))
			defer cancel()
			tok, rec, err := az.Token(ctx)
			if err != nil {
				return err
			}
			if rec.DPoPBound() {
				console.Warn("this token is DPoP-bound (RFC 9449): the server takes it only with a DPoP proof signed by the key mcpx keeps, which it does not export")
			}
			fmt.Fprintln(e.ios.Out, tok)
			return nil
		},
	}
}

func durationOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// shownURL is a URL given on the command line as mcpx prints it: without
// the credentials it may carry (user info, a token in its query), control
// characters escaped.
func shownURL(u string) string { return tui.EscapeLine(transport.RedactURL(u)) }
