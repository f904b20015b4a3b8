// Package oauthflow authorizes mcpx with the OAuth authorization server of
// an MCP server reached over HTTP, for every protocol revision that defines
// authorization (2025-03-26 and later; see basic/authorization in the spec).
//
// It plugs into the HTTP transport only through transport.Authorizer:
// Authorization (or AuthorizeRequest, for DPoP-bound tokens, whose proofs
// sign each request) supplies the credentials of every request, and
// Unauthorized reacts to a 401 (obtain a token, then the request is sent
// again) or a 403 insufficient_scope (step up to more scopes). Discovery
// (protected resource metadata, authorization server metadata, the
// 2025-03-26 fallbacks), client identity (pre-registered, Client ID Metadata
// Document, dynamic registration), PKCE, the loopback redirect and the
// token store are here. golang.org/x/oauth2 builds the authorization URL
// and the PKCE verifier; token requests are mcpx's own (tokenreq.go), so
// that every answer a token endpoint gets wrong is said in mcpx's words.
//
// Every step is narrated to the Observer (transport.EventNote, and
// transport.EventHTTP for each request, without headers or bodies), so a
// server author can see why an authorization setup fails. Tokens, client
// secrets and authorization codes never appear in that narration, in
// errors or in events.
package oauthflow

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/transport"
)

// Grant is how mcpx obtains tokens.
type Grant string

// Grants.
const (
	// GrantAuthorizationCode is the authorization code flow with PKCE: a
	// person authorizes in a browser.
	GrantAuthorizationCode Grant = "authorization_code"
	// GrantClientCredentials is machine-to-machine (the MCP OAuth client
	// credentials extension): a pre-registered client with a secret or a
	// private key.
	GrantClientCredentials Grant = "client_credentials"
	// GrantIDJAG is Enterprise-Managed Authorization (the MCP extension,
	// also called Cross-App Access): an ID token from the enterprise IdP is
	// exchanged there for an ID-JAG (RFC 8693), which the MCP server's
	// authorization server takes as a JWT bearer grant (RFC 7523).
	GrantIDJAG Grant = "id-jag"
	// GrantJWTBearer is workload identity federation (the MCP extension,
	// SEP-1933): a JWT the workload's platform issued it (a Kubernetes
	// service account token, a cloud or CI identity token) is presented as
	// an RFC 7523 authorization grant.
	GrantJWTBearer Grant = "jwt-bearer"
)

// Config configures an Authorizer.
type Config struct {
	// ServerURL is the MCP endpoint being authorized for.
	ServerURL string
	// HTTPClient makes discovery, registration and token requests (it
	// should trust the same certificates as the MCP connection); without
	// a CheckRedirect of its own it follows transport.RedirectPolicy, as
	// a nil one (a default client) does.
	HTTPClient *http.Client
	// Store keeps tokens and registrations; nil keeps them for this run only.
	Store *Store
	// UserAgent is sent on OAuth requests.
	UserAgent string
	// ProtocolVersion is sent as MCP-Protocol-Version on discovery
	// requests (2025-03-26: basic/authorization).
	ProtocolVersion string
	// ClientName and ClientVersion describe mcpx in dynamic registration.
	ClientName, ClientVersion string

	// Grant is the grant to use ("" means the authorization code flow).
	Grant Grant
	// ClientID and ClientSecret are a pre-registered client.
	ClientID, ClientSecret string
	// ClientMetadataURL is mcpx's Client ID Metadata Document, used as the
	// client id where the authorization server supports it.
	ClientMetadataURL string
	// PrivateKey authenticates the client with private_key_jwt.
	PrivateKey *PrivateKey
	// IDToken, IDPTokenURL, IDPClientID and IDPClientSecret drive the
	// id-jag grant: the ID token exchanged at the IdP's token endpoint.
	IDToken, IDPTokenURL, IDPClientID, IDPClientSecret string
	// AssertionFile holds the workload's JWT for the jwt-bearer grant. It
	// is read each time a token is needed, since platforms rotate it.
	AssertionFile string
	// NoDPoP asks for bearer tokens even where the authorization server
	// supports DPoP-bound ones (RFC 9449).
	NoDPoP bool

	// CallbackURL fixes the loopback redirect URI; nil picks a free port.
	CallbackURL *url.URL
	// Browser shows the authorization URL; nil prints it through Notify
	// for the person to open (--no-browser).
	Browser Browser
	// Stdin, when set, is read for a pasted redirect URL (a browser on
	// another machine). Its reading goes on after the authorization (a
	// read cannot be interrupted): for a reader nothing else uses.
	Stdin io.Reader
	// ReadLine, when set, is used instead of Stdin: it reads one line the
	// person types or pastes, and is asked for lines only while the
	// authorization waits for the browser; its context ends with the
	// wait. A reader shared with others (the prompts on a terminal, the
	// REPL's editor, as tui.Prompter.ReadLine) so loses no line to a wait
	// that is over.
	ReadLine func(ctx context.Context, prompt string) (string, error)
	// NoInteraction, when set, says why no person can complete a browser
	// authorization here; such an authorization then fails at once.
	NoInteraction string
	// StoredOnly forbids starting a browser authorization: only stored
	// tokens (refreshed as needed) and non-interactive grants are used.
	StoredOnly bool
	// Fresh ignores stored tokens (mcpx auth login) and authorizes anew.
	Fresh bool
	// Scopes are asked for in every authorization on top of those the
	// server's challenge names (mcpx auth login --scope): those a step-up
	// would ask for later, when no person may be there to authorize it
	// (a run without a terminal, a session held by mcpx connect).
	Scopes []string
	// Gate, when set, is shared by the Authorizers of one run that may
	// authorize at once (verify --parallel's sessions): one authorization
	// at a time runs, and the others, when their turn comes, take the
	// token it stored instead of each asking the person in a browser.
	Gate *Gate

	// Observer receives the narration (EventNote) and the OAuth HTTP
	// requests (EventHTTP).
	Observer transport.Observer
	// Notify shows what the person must see or do (open this URL).
	Notify func(string)
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Limits on how often mcpx authorizes in one run, so that a server that
// keeps refusing cannot loop it (spec: basic/authorization, "Step-Up
// Authorization Flow": retry limits).
const (
	maxFlows   = 4
	maxStepUps = 2
	// refreshMargin is how long before its expiry a token is refreshed.
	refreshMargin = 30 * time.Second
)

// ErrAuthorization is matched by every authorization failure this package
// reports (exit code 3).
var ErrAuthorization = errors.New("authorization failed")

// ErrInteraction is matched when an authorization needs a person in a
// browser but none can be asked (Config.StoredOnly, Config.NoInteraction).
var ErrInteraction = errors.New("authorization needs a person")

// ErrNoResponse is matched when the wait for the browser's authorization
// response ended without one (cancelled or timed out).
var ErrNoResponse = errors.New("no authorization response")

type authError struct{ err error }

func (e *authError) Error() string        { return transport.RedactURLs(e.err.Error()) }
func (e *authError) Unwrap() error        { return e.err }
func (e *authError) Is(target error) bool { return target == ErrAuthorization }

func authErrorf(format string, args ...any) error {
	return &authError{err: fmt.Errorf(format, args...)}
}

// tokenOrigin says where the current token came from.
type tokenOrigin int

const (
	fromStore   tokenOrigin = iota // loaded from the store
	fromRefresh                    // refreshed in this run
	fromFlow                       // obtained by a grant in this run
)

// Authorizer obtains, refreshes and stores the tokens of one MCP server. It
// implements transport.Authorizer and is safe for concurrent use.
type Authorizer struct {
	cfg  Config
	http *http.Client

	// flowMu serializes reactions to refusals: one authorization at a time.
	flowMu  sync.Mutex
	flows   int
	stepUps int
	disc    *Discovery
	discKey string

	// dpopOnly is set once the server challenged with the DPoP scheme and
	// not Bearer: it takes DPoP-bound tokens only. Guarded by flowMu.
	dpopOnly bool
	// nonces are the DPoP nonces servers supplied.
	nonces dpopNonces

	// accepted holds the transport.CredentialIDs of the latest credentials
	// a server took (Accepted): a current token among them was good once.
	// It has a lock of its own, as a refresh holds mu for its request and
	// Accepted is on the path of every answer.
	accMu    sync.Mutex
	accepted map[string]bool

	mu        sync.Mutex // guards the fields below
	rec       *TokenRecord
	origin    tokenOrigin
	loaded    bool
	requested []string // scopes asked for so far, for step-up unions
	saveErr   error    // why rec could not be stored (StoreError)
	// dropped fingerprints (transport.CredentialID of the access token)
	// the tokens this run gave up: refused by the server, or expired and
	// not refreshable. storedReplacement never takes them up again.
	dropped map[string]bool
	// refreshErr is why the token that expired could not be refreshed,
	// for the error of a run that may not authorize anew: it is all the
	// person needs to know (a revoked refresh token), said with -v only.
	refreshErr error
}

// New returns an Authorizer for cfg.ServerURL.
func New(cfg Config) (*Authorizer, error) {
	if _, err := CanonicalResource(cfg.ServerURL); err != nil {
		return nil, err
	}
	if cfg.Grant == "" {
		cfg.Grant = GrantAuthorizationCode
	}
	switch cfg.Grant {
	case GrantAuthorizationCode:
	case GrantClientCredentials:
		if cfg.ClientID == "" || (cfg.ClientSecret == "" && cfg.PrivateKey == nil) {
			return nil, errors.New("the client_credentials grant needs a pre-registered client: ClientID with ClientSecret or PrivateKey")
		}
	case GrantIDJAG:
		if cfg.IDToken == "" || cfg.IDPTokenURL == "" {
			return nil, errors.New("the id-jag grant needs the IdP's ID token and token endpoint")
		}
		if cfg.ClientID == "" && cfg.ClientMetadataURL == "" {
			return nil, errors.New("the id-jag grant needs a client registered with the MCP server's authorization server: ClientID or ClientMetadataURL")
		}
	case GrantJWTBearer:
		if cfg.AssertionFile == "" {
			return nil, errors.New("the jwt-bearer grant needs the file holding the workload's JWT")
		}
	default:
		return nil, fmt.Errorf("unknown grant %q", cfg.Grant)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ClientName == "" {
		cfg.ClientName = "mcpx"
	}
	return &Authorizer{cfg: cfg, http: loggingClient(cfg.HTTPClient, cfg.Observer)}, nil
}

func (a *Authorizer) note(format string, args ...any) {
	if a.cfg.Observer != nil {
		a.cfg.Observer(transport.Event{Time: time.Now(), Kind: transport.EventNote, Text: "auth: " + transport.RedactURLs(fmt.Sprintf(format, args...))})
	}
}

func (a *Authorizer) notify(msg string) {
	if a.cfg.Notify != nil {
		a.cfg.Notify(msg)
	}
}

// loadLocked picks the stored token for the server, once.
func (a *Authorizer) loadLocked() {
	if a.loaded {
		return
	}
	a.loaded = true
	if a.cfg.Fresh || a.cfg.Store == nil {
		return
	}
	recs, err := a.cfg.Store.Matching(a.cfg.ServerURL)
	if err != nil {
		a.note("cannot read the token store: %v", err)
		return
	}
	for _, r := range recs {
		if !a.keyed(r) {
			continue
		}
		a.rec, a.origin, a.requested = r, fromStore, r.RequestedScopes
		a.note("using the stored token for resource %s from %s (scopes %s, %s) in %s",
			r.Resource, r.Issuer, scopeString(r.Scopes), a.expiryText(r), r.File())
		return
	}
	a.note("no stored token for %s (store: %s)", a.cfg.ServerURL, a.cfg.Store.Dir())
}

// keyed reports whether the stored r can be used: a DPoP-bound token needs
// its key (then parsed into r). One that lost it is useless and removed,
// and a new token is obtained when the server asks.
func (a *Authorizer) keyed(r *TokenRecord) bool {
	if !r.DPoPBound() {
		return true
	}
	key, err := parseDPoPKey(r.DPoPKey)
	if r.DPoPKey == "" {
		err = errors.New("the DPoP key is missing")
	}
	if err != nil {
		a.note("the stored DPoP-bound token for %s cannot be used (%v); removing it from %s", r.Resource, err, r.File())
		if err := a.cfg.Store.deleteToken(r); err != nil {
			a.note("cannot remove it: %v", err)
		}
		return false
	}
	r.dpop = key
	return true
}

func (a *Authorizer) expiryText(r *TokenRecord) string {
	if r.Expiry.IsZero() {
		return "no expiry"
	}
	d := r.Expiry.Sub(a.cfg.Now()).Round(time.Second)
	if d <= 0 {
		return fmt.Sprintf("expired %s ago", -d)
	}
	return fmt.Sprintf("expires in %s", d)
}

// expiring reports whether r is to be refreshed before it is sent: it
// expires within refreshMargin, or within half its lifetime when that is
// shorter. (A token issued for less than refreshMargin was otherwise
// refreshed before every request, each refresh issuing another such
// token.)
func (a *Authorizer) expiring(r *TokenRecord) bool {
	if r.Expiry.IsZero() {
		return false
	}
	margin := refreshMargin
	if life := r.Expiry.Sub(r.Updated); !r.Updated.IsZero() && life > 0 && life/2 < margin {
		margin = life / 2
	}
	return !a.cfg.Now().Add(margin).Before(r.Expiry)
}

func (a *Authorizer) expired(r *TokenRecord) bool {
	return !r.Expiry.IsZero() && !a.cfg.Now().Before(r.Expiry)
}

// usableLocked returns the token to send with the next request: the
// current one, refreshed first when it is about to expire, or nil when
// there is none yet (the server's 401 starts the authorization). a.mu is
// held.
func (a *Authorizer) usableLocked(ctx context.Context) (*TokenRecord, error) {
	a.loadLocked()
	r := a.rec
	if r == nil {
		return nil, nil
	}
	if a.expiring(r) {
		if r.RefreshToken != "" {
			a.note("the token %s; refreshing it", a.expiryText(r))
			if err := a.refreshLocked(ctx); err == nil {
				return a.rec, nil
			} else if ctx.Err() != nil || errors.Is(err, ErrStoreLocked) {
				return nil, err // what was waited for, with ctx's error
			} else {
				a.note("refreshing failed: %v", err)
				a.refreshErr = err
			}
		}
		if a.expired(r) {
			a.note("the token %s and cannot be refreshed; sending none", a.expiryText(r))
			a.dropLocked(r)
			a.rec = nil
			return nil, nil
		}
	}
	return r, nil
}

// authHeader is the Authorization header value that presents r: the DPoP
// scheme for a DPoP-bound token (RFC 9449 section 7.1), else Bearer.
func authHeader(r *TokenRecord) string {
	if r.dpop != nil {
		return tokenTypeDPoP + " " + r.AccessToken
	}
	return "Bearer " + r.AccessToken
}

// Authorization returns the Authorization header for the next request, ""
// when there is no token yet. A DPoP-bound token also needs the proof
// AuthorizeRequest adds; the HTTP transport calls that instead.
func (a *Authorizer) Authorization(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, err := a.usableLocked(ctx)
	if r == nil || err != nil {
		return "", err
	}
	return authHeader(r), nil
}

// AuthorizeRequest sets req's credentials (transport.RequestAuthorizer):
// the Authorization header and, for a DPoP-bound token, a DPoP proof for
// req's method and URL with the token's hash and the server's latest
// nonce (RFC 9449 sections 4.2 and 7.1).
func (a *Authorizer) AuthorizeRequest(ctx context.Context, req *http.Request) error {
	a.mu.Lock()
	r, err := a.usableLocked(ctx)
	a.mu.Unlock()
	req.Header.Del("Authorization")
	req.Header.Del("DPoP")
	if r == nil || err != nil {
		return err
	}
	req.Header.Set("Authorization", authHeader(r))
	if r.dpop != nil {
		proof, err := r.dpop.proof(req.Method, req.URL, time.Now(), a.nonces.get(req.URL), r.AccessToken)
		if err != nil {
			return fmt.Errorf("signing the DPoP proof: %w", err)
		}
		req.Header.Set("DPoP", proof)
	}
	return nil
}

// currentLocked returns the current token and the transport.CredentialID
// of the Authorization header that presents it.
func (a *Authorizer) currentLocked() (*TokenRecord, string) {
	if a.rec == nil {
		return nil, ""
	}
	return a.rec, transport.CredentialID(authHeader(a.rec))
}

// Accepted records that the server took the credentials with this
// transport.CredentialID (transport.AcceptedAuthorizer): a later refusal
// of the same token is one of a token that expired or was revoked there,
// which a refresh may cure, not of one the server never takes.
func (a *Authorizer) Accepted(credentialID string) {
	a.accMu.Lock()
	defer a.accMu.Unlock()
	if a.accepted[credentialID] {
		return
	}
	if len(a.accepted) >= maxAccepted || a.accepted == nil {
		// Tokens change a few times an hour: those of long ago are
		// no longer anyone's current token.
		a.accepted = map[string]bool{}
	}
	a.accepted[credentialID] = true
}

// maxAccepted bounds how many accepted credentials are remembered.
const maxAccepted = 8

// wasAccepted reports whether a server took the credentials with this
// transport.CredentialID.
func (a *Authorizer) wasAccepted(credentialID string) bool {
	a.accMu.Lock()
	defer a.accMu.Unlock()
	return credentialID != "" && a.accepted[credentialID]
}

// Unauthorized reacts to a refusal. A 401 refreshes the token or runs a
// new authorization (the request is then sent again); a 403 with
// insufficient_scope re-authorizes for the union of the scopes asked so
// far and the challenge's (step-up). A refusal of a token already replaced
// is simply retried. Limits keep a server that keeps refusing from
// looping mcpx.
func (a *Authorizer) Unauthorized(ctx context.Context, e *transport.UnauthorizedError) (bool, error) {
	a.flowMu.Lock()
	defer a.flowMu.Unlock()
	challenges := ParseChallenges(e.Challenge)
	ch, bearer := Bearer(challenges)
	dch, dpop := DPoP(challenges)
	if !bearer {
		ch = dch
	}
	if dpop && !bearer && !a.dpopOnly && !a.cfg.NoDPoP {
		a.dpopOnly = true
		a.note("the server challenges with the DPoP scheme only: it takes DPoP-bound tokens (RFC 9449)")
	}
	a.mu.Lock()
	a.loadLocked()
	cur, curID := a.currentLocked()
	origin := a.origin
	a.mu.Unlock()
	accepted := a.wasAccepted(curID)
	if cur != nil && e.CredentialID != curID {
		a.note("%s %s was refused with a token since replaced; sending it again with the current one", e.Method, e.URL)
		return true, nil
	}
	if e.Status == http.StatusUnauthorized && cur != nil && cur.dpop != nil && dpop && dch.Param("error") == "use_dpop_nonce" {
		// RFC 9449 section 9: the resource server wants a nonce of its
		// own in the proof; the transport bounds how often one request is
		// sent again.
		if u, err := url.Parse(e.URL); err == nil && a.nonces.set(u, e.Header.Get("DPoP-Nonce")) {
			a.note("%s %s: HTTP 401 use_dpop_nonce; sending it again with a proof carrying the nonce the server supplied", e.Method, e.URL)
			return true, nil
		}
		a.note("%s %s: HTTP 401 use_dpop_nonce without a usable DPoP-Nonce header", e.Method, e.URL)
	}
	switch e.Status {
	case http.StatusForbidden:
		if ch.Param("error") != "insufficient_scope" {
			return false, nil
		}
		a.note("%s %s: HTTP 403 insufficient_scope; the server asks for scopes %s", e.Method, e.URL, transport.Excerpt(scopeString(ch.Scopes())))
		return a.stepUp(ctx, ch, cur)
	case http.StatusUnauthorized:
	default:
		return false, nil
	}
	if cur == nil {
		a.note("%s %s: HTTP 401; WWW-Authenticate: %s", e.Method, e.URL, orNone(transport.Excerpt(e.Challenge)))
	} else {
		a.note("%s %s: HTTP 401 with the current token; WWW-Authenticate: %s", e.Method, e.URL, orNone(transport.Excerpt(e.Challenge)))
		// The refused token may mean that the server moved to another
		// authorization server: discover anew.
		a.disc = nil
		switch {
		case cur.RefreshToken != "" && (origin == fromStore || accepted):
			// A stored token, or one the server took in this run (a long
			// session), may have expired or been revoked there since.
			a.mu.Lock()
			err := a.refreshLocked(ctx)
			if err != nil {
				a.refreshErr = err
			}
			a.mu.Unlock()
			if err == nil {
				return true, nil
			}
			if ctx.Err() != nil || errors.Is(err, ErrStoreLocked) {
				return false, err
			}
			a.note("refreshing failed: %v", err)
		case origin == fromFlow:
			d, err := a.discovery(ctx, ch)
			if err != nil {
				return false, err
			}
			if d.Issuer == cur.Issuer {
				return false, authErrorf("the server refused the token %s just issued for resource %s; check that the server accepts tokens from that authorization server for that resource",
					cur.Issuer, cur.Resource)
			}
		}
		a.mu.Lock()
		a.dropLocked(cur)
		if a.rec == cur {
			a.rec = nil
		}
		a.mu.Unlock()
	}
	if a.storedReplacement(nil) {
		return true, nil
	}
	return a.authorize(ctx, ch, cur)
}

// dropLocked remembers that this run gave up r (a.mu is held).
func (a *Authorizer) dropLocked(r *TokenRecord) {
	if len(a.dropped) >= maxDropped || a.dropped == nil {
		a.dropped = map[string]bool{}
	}
	a.dropped[transport.CredentialID(r.AccessToken)] = true
}

// maxDropped bounds how many given-up tokens are remembered.
const maxDropped = 16

// storedReplacement makes current a token the store holds for the server
// that this run has not given up (and that accept takes, when not nil),
// and reports whether it found one. A long session (mcpx connect, the
// REPL) whose token was revoked, or whose refresh token no longer works,
// or lacks the scopes of a step-up, so takes the token the person stored
// meanwhile with mcpx auth login, as the error of its last command
// advised, instead of failing until it is restarted. A run that ignores
// the store (Config.Fresh) takes nothing from it.
func (a *Authorizer) storedReplacement(accept func(*TokenRecord) bool) bool {
	if a.cfg.Store == nil || a.cfg.Fresh {
		return false
	}
	recs, err := a.cfg.Store.Matching(a.cfg.ServerURL)
	if err != nil {
		a.note("cannot read the token store: %v", err)
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range recs {
		if a.dropped[transport.CredentialID(r.AccessToken)] || (accept != nil && !accept(r)) || !a.keyed(r) {
			continue
		}
		a.note("the store holds another token for resource %s from %s (%s), stored by another mcpx run since this one read it (mcpx auth login); using it",
			r.Resource, r.Issuer, a.expiryText(r))
		a.rec, a.origin, a.requested, a.saveErr, a.refreshErr = r, fromStore, r.RequestedScopes, nil, nil
		return true
	}
	return false
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// cannotInteract reports why a browser authorization cannot run, nil
// when it can (or the grant needs no person).
func (a *Authorizer) cannotInteract() error {
	if a.cfg.Grant != GrantAuthorizationCode {
		return nil
	}
	a.mu.Lock()
	refreshErr := a.refreshErr
	a.mu.Unlock()
	if a.cfg.StoredOnly {
		return &authError{err: &NoTokenError{ServerURL: a.cfg.ServerURL, StoredOnly: true, Refresh: refreshErr}}
	}
	if a.cfg.NoInteraction != "" {
		why := ""
		if refreshErr != nil {
			why = fmt.Sprintf(" (refreshing the stored token failed: %v)", refreshErr)
		}
		return &authError{err: fmt.Errorf("%w%s, but %s", ErrInteraction, why, a.cfg.NoInteraction)}
	}
	return nil
}

// Flows is how many authorizations (grants) this Authorizer has run, so
// that a caller timing a connection can tell a person's sign-in from the
// server's own start (Codex's startup bound, for one, does not cover a
// sign-in: it authorizes beforehand, with codex mcp login).
func (a *Authorizer) Flows() int {
	a.flowMu.Lock()
	defer a.flowMu.Unlock()
	return a.flows
}

// authorize runs a full authorization after a 401; refused is the token
// the server refused, nil when it was sent none.
func (a *Authorizer) authorize(ctx context.Context, ch Challenge, refused *TokenRecord) (bool, error) {
	if err := a.cannotInteract(); err != nil {
		return false, err
	}
	if a.flows >= maxFlows {
		return false, authErrorf("gave up after %d authorizations in this run: the server keeps refusing", a.flows)
	}
	d, err := a.discovery(ctx, ch)
	if err != nil {
		return false, err
	}
	if refused != nil && d.Issuer != refused.Issuer {
		if err := a.migrated(ctx, d, refused); err != nil {
			return false, err
		}
	}
	leave, err := a.enterGate(ctx)
	if err != nil {
		return false, err
	}
	defer leave()
	// Another session of the run may have stored a token since this one
	// was refused: while this one waited for the gate, or before it
	// reached the gate at all (its discovery took longer than the
	// other's whole authorization).
	if a.storedReplacement(nil) {
		return true, nil
	}
	scopes, why := SelectScopes(ch, d.PRM)
	a.mu.Lock()
	prev := a.requested
	a.mu.Unlock()
	if len(prev) > 0 && !Subset(prev, scopes) {
		scopes, why = Union(prev, scopes), why+", plus those asked for before"
	}
	if len(a.cfg.Scopes) > 0 && !Subset(a.cfg.Scopes, scopes) {
		scopes, why = Union(scopes, a.cfg.Scopes), why+", plus those configured (mcpx auth login --scope)"
	}
	return a.obtain(ctx, d, scopes, why)
}

// stepUp re-authorizes for more scopes after a 403 insufficient_scope
// (spec draft: basic/authorization, "Step-Up Authorization Flow").
func (a *Authorizer) stepUp(ctx context.Context, ch Challenge, cur *TokenRecord) (bool, error) {
	need := ch.Scopes()
	if cur == nil {
		return a.authorize(ctx, ch, nil)
	}
	held := cur.Scopes
	if len(held) == 0 {
		held = cur.RequestedScopes
	}
	if len(need) == 0 {
		return false, authErrorf("the server answered insufficient_scope without saying which scopes it needs")
	}
	if Subset(need, held) {
		return false, authErrorf("the server still answers insufficient_scope, asking for %s, which the token already has; authorizing again cannot help",
			scopeString(need))
	}
	if a.stepUps >= maxStepUps {
		return false, authErrorf("gave up after %d step-up authorizations in this run: the server keeps asking for more scopes", a.stepUps)
	}
	prev := cur.RequestedScopes
	if len(prev) == 0 {
		prev = held
	}
	want := Union(prev, need)
	covers := func(r *TokenRecord) bool {
		has := r.Scopes
		if len(has) == 0 {
			has = r.RequestedScopes
		}
		return r.AccessToken != cur.AccessToken && Subset(need, has)
	}
	if a.storedReplacement(covers) {
		return true, nil
	}
	if err := a.cannotInteract(); err != nil {
		return false, &StepUpError{ServerURL: a.cfg.ServerURL, Scopes: want, Err: err}
	}
	if a.flows >= maxFlows {
		return false, authErrorf("gave up after %d authorizations in this run: the server keeps refusing", a.flows)
	}
	leave, err := a.enterGate(ctx)
	if err != nil {
		return false, err
	}
	defer leave()
	if a.storedReplacement(covers) { // stored meanwhile, as above
		return true, nil
	}
	a.stepUps++
	d, err := a.discovery(ctx, ch)
	if err != nil {
		return false, err
	}
	return a.obtain(ctx, d, want, "step-up: the scopes asked for before plus the challenge's")
}

// Gate lets one authorization at a time run among the Authorizers that
// share it (Config.Gate). Its zero value is ready to use.
type Gate struct {
	once sync.Once
	turn chan struct{}
}

// enter waits for the gate's turn, until ctx ends, calling waiting first
// when another authorization holds it.
func (g *Gate) enter(ctx context.Context, waiting func()) (leave func(), err error) {
	g.once.Do(func() { g.turn = make(chan struct{}, 1) })
	leave = func() { <-g.turn }
	select {
	case g.turn <- struct{}{}:
		return leave, nil
	default:
	}
	waiting()
	select {
	case g.turn <- struct{}{}:
		return leave, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// enterGate waits for the turn of Config.Gate, when there is one.
func (a *Authorizer) enterGate(ctx context.Context) (leave func(), err error) {
	if a.cfg.Gate == nil {
		return func() {}, nil
	}
	return a.cfg.Gate.enter(ctx, func() {
		a.note("another session of this run is being authorized; waiting for it, to use the token it stores")
	})
}

// discovery returns the discovery for the challenge, reusing the last one
// when the challenge points at the same metadata.
func (a *Authorizer) discovery(ctx context.Context, ch Challenge) (*Discovery, error) {
	key := ch.Param("resource_metadata")
	if a.disc != nil && a.discKey == key {
		return a.disc, nil
	}
	d, err := a.discover(ctx, ch)
	if err != nil {
		if ctx.Err() != nil {
			// -v narrates the request that was waited for.
			return nil, &transport.WaitError{For: "the discovery of the OAuth authorization server did not finish", Err: ctx.Err()}
		}
		var ae *authError
		if !errors.As(err, &ae) {
			err = &authError{err: err}
		}
		return nil, err
	}
	a.disc, a.discKey = d, key
	return d, nil
}

// maxScopes bounds the scope parameter (the scopes, space-separated)
// mcpx asks an authorization server for. It goes whole into the
// authorization URL the browser opens (and into token requests), where
// servers and proxies refuse a request line much longer (nginx's buffer
// for one is 8 KiB) and a browser is handed whatever it is; a server's
// challenge or scopes_supported can be as long as a header or a metadata
// document (a megabyte). A hundred scopes named by URLs fit.
const maxScopes = 8 << 10

// checkScopes refuses scopes, chosen as why says, when they are longer
// than an authorization request carries (maxScopes). Cutting the list
// would ask for other scopes than the server named, which it would
// refuse again (insufficient_scope) after the person approved them: the
// server's setup is what is wrong, which the error says, naming it.
func (a *Authorizer) checkScopes(scopes []string, why string) error {
	n := len(scopeString(scopes))
	if n <= maxScopes {
		return nil
	}
	return authErrorf("the scopes to ask %s for (%s) are %d, %d bytes in all, more than the %s mcpx puts in an authorization request (it goes whole into the URL the browser opens); the server should name the few scopes a client needs in its challenge's scope or its metadata's scopes_supported: tell its operator",
		a.cfg.ServerURL, why, len(scopes), n, transport.FormatSize(maxScopes))
}

// obtain runs the configured grant for scopes and makes its token current.
func (a *Authorizer) obtain(ctx context.Context, d *Discovery, scopes []string, why string) (bool, error) {
	a.flows++
	var (
		res *grantResult
		err error
	)
	key, err := a.dpopFor(d)
	if err != nil {
		return false, &authError{err: err}
	}
	if a.cfg.Grant == GrantAuthorizationCode {
		var added bool
		if scopes, added = WithOfflineAccess(scopes, &d.AS); added {
			why += "; offline_access added, as the authorization server supports it (for a refresh token)"
		}
	}
	if err := a.checkScopes(scopes, why); err != nil {
		return false, err
	}
	switch a.cfg.Grant {
	case GrantClientCredentials:
		a.note("scopes asked for: %s (%s)", scopeString(scopes), why)
		res, err = a.clientCredentials(ctx, d, scopes, key)
	case GrantIDJAG:
		a.note("scopes asked for: %s (%s)", scopeString(scopes), why)
		res, err = a.idJAG(ctx, d, scopes, key)
	case GrantJWTBearer:
		a.note("scopes asked for: %s (%s)", scopeString(scopes), why)
		res, err = a.jwtBearer(ctx, d, scopes, key)
	default:
		a.note("scopes asked for: %s (%s)", scopeString(scopes), why)
		res, err = a.authorizationCode(ctx, d, scopes, key)
	}
	if err != nil {
		if ctx.Err() != nil {
			// Cancelled or out of time: the error says which wait (the
			// browser's is ErrNoResponse, a token request names its
			// endpoint), and carries ctx's error for the exit code.
			if !errors.Is(err, ctx.Err()) {
				err = fmt.Errorf("%w: %w", err, ctx.Err())
			}
			return false, err
		}
		var ae *authError
		if !errors.As(err, &ae) && !errors.Is(err, ErrNoResponse) {
			err = &authError{err: err}
		}
		return false, err
	}
	now := a.cfg.Now()
	rec := &TokenRecord{
		Resource:        d.Resource,
		Issuer:          d.Issuer,
		TokenEndpoint:   d.AS.TokenEndpoint,
		Grant:           string(a.cfg.Grant),
		Client:          *res.client,
		RequestedScopes: scopes,
		Obtained:        now,
		Updated:         now,
	}
	res.apply(rec, scopes, now)
	if err := a.bind(rec, key); err != nil {
		return false, &authError{err: err}
	}
	a.note("token obtained from %s: scopes granted %s; %s; refresh token: %s", d.Issuer, scopeString(rec.Scopes), a.expiryText(rec), yesNo(rec.RefreshToken != ""))
	serr := a.save(ctx, rec)
	a.mu.Lock()
	a.rec, a.origin, a.requested, a.saveErr, a.refreshErr = rec, fromFlow, scopes, serr, nil
	a.mu.Unlock()
	return true, nil
}

// migrated handles a server whose protected resource metadata now names
// another authorization server than the one that issued the refused token
// (spec 2026-07-28: basic/authorization/client-registration,
// "Authorization Server Binding"): tokens and client registrations belong
// to the server that issued them, so mcpx forgets the refused token and
// authorizes with the new server, registering anew there. A pre-registered
// client belongs to the old server: mcpx stops and says so rather than
// presenting it to another.
func (a *Authorizer) migrated(ctx context.Context, d *Discovery, refused *TokenRecord) error {
	a.note("the server moved to another authorization server: its protected resource metadata now names %s, and it refused the token from %s. Tokens and client registrations belong to the server that issued them: mcpx authorizes anew with %s (registering there), using nothing of %s's",
		d.Issuer, refused.Issuer, d.Issuer, refused.Issuer)
	if a.cfg.Store != nil && refused.File() != "" {
		if err := a.cfg.Store.DeleteToken(ctx, refused); err != nil {
			a.note("cannot remove the refused token: %v", err)
		} else {
			a.note("removed the token from %s, which the server no longer accepts", refused.Issuer)
		}
	}
	if refused.Client.Source == "pre-registered" && a.cfg.ClientID == refused.Client.ID {
		return &authError{err: &ClientError{Problem: ClientMoved, Issuer: d.Issuer, ClientID: refused.Client.ID,
			Detail: fmt.Sprintf("the server's authorization server changed from %s to %s, and the pre-registered client %s was registered with %s: register mcpx with %s",
				refused.Issuer, d.Issuer, refused.Client.ID, refused.Issuer, d.Issuer)}}
	}
	return nil
}

// dpopFor decides whether to ask d's authorization server for a
// DPoP-bound token (RFC 9449), and returns a new key to bind it to if so:
// where the server lists ES256 in dpop_signing_alg_values_supported, or
// where the MCP server challenged with the DPoP scheme only.
func (a *Authorizer) dpopFor(d *Discovery) (*dpopKey, error) {
	if a.cfg.NoDPoP {
		return nil, nil
	}
	algs := d.AS.DPoPSigningAlgValuesSupported
	switch {
	case slices.Contains(algs, dpopAlg):
		a.note("DPoP: the authorization server takes DPoP proofs (dpop_signing_alg_values_supported: %s); asking for a token bound to a new %s key (RFC 9449)",
			strings.Join(algs, " "), dpopAlg)
	case len(algs) > 0 && !a.dpopOnly:
		a.note("DPoP: the authorization server takes DPoP proofs signed with %s only, and mcpx signs with %s; asking for a bearer token",
			strings.Join(algs, " "), dpopAlg)
		return nil, nil
	case a.dpopOnly:
		a.note("DPoP: the server takes DPoP-bound tokens only; asking for a token bound to a new %s key (RFC 9449)", dpopAlg)
	default:
		return nil, nil
	}
	return newDPoPKey()
}

// bind keeps key with rec when the authorization server bound the token to
// it (token_type DPoP, RFC 9449 section 5). A server that issued a bearer
// token despite the proof does not support DPoP: the token is sent as a
// bearer token.
func (a *Authorizer) bind(rec *TokenRecord, key *dpopKey) error {
	rec.DPoPKey, rec.dpop = "", nil
	if key == nil {
		return nil
	}
	if !rec.DPoPBound() {
		a.note("DPoP: the authorization server issued a %s token despite the proof; sending it as a bearer token", orNone(rec.TokenType))
		return nil
	}
	enc, err := key.marshal()
	if err != nil {
		return err
	}
	rec.DPoPKey, rec.dpop = enc, key
	a.note("DPoP: the token is bound to the key (thumbprint %s); every request carries a proof signed with it", key.jkt)
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// save stores rec, saying where; a store that cannot be written leaves the
// token usable for this run.
func (a *Authorizer) save(ctx context.Context, rec *TokenRecord) error {
	if a.cfg.Store == nil {
		return nil
	}
	return a.saved(rec, a.cfg.Store.SaveToken(ctx, rec))
}

// saveHeld is save for a caller holding the lock of the stored token.
func (a *Authorizer) saveHeld(rec *TokenRecord) error {
	return a.saved(rec, a.cfg.Store.saveToken(rec))
}

func (a *Authorizer) saved(rec *TokenRecord, err error) error {
	if err != nil {
		a.notify(fmt.Sprintf("warning: cannot store the token (%v); it is used for this run only", err))
		return err
	}
	a.note("token stored in %s", rec.File())
	return nil
}

// StoreError returns why the current token could not be stored, nil when
// it was (or there is no store, or no token). The token is used all the
// same; a command whose purpose is to store it (mcpx auth login) fails.
func (a *Authorizer) StoreError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.saveErr
}

// refreshLocked refreshes the current token with its refresh token (RFC
// 6749 section 6, with the resource indicator of RFC 8707). a.mu is held.
//
// Another mcpx run may refresh the same token at the same time, or have
// refreshed it since this one read it: the refresh token held here may
// then have been rotated away (OAuth 2.1 section 4.3.1: a public client's
// refresh tokens are single-use), so refreshing with it would fail and
// send the person to the browser again, and could make the server revoke
// the grant (RFC 6749 section 10.4). So the whole of it (reading the
// stored token, refreshing it if it still needs it, storing the new one)
// is done holding the lock of the stored token (Store.LockToken): a run
// that waited for it finds the newer token another stored meanwhile and
// takes it, refreshing it only if it too is about to expire.
func (a *Authorizer) refreshLocked(ctx context.Context) error {
	r := a.rec
	stored := a.cfg.Store != nil // whether the new token is stored
	if a.cfg.Store != nil {
		unlock, err := a.cfg.Store.lockToken(ctx, r.Resource, r.Issuer, func(lockFile string) {
			a.note("another mcpx run is refreshing or storing the token (it holds %s); waiting for it", lockFile)
		})
		if err != nil {
			if ctx.Err() == nil {
				err = &authError{err: err}
			}
			return err
		}
		defer unlock()
		if s := a.storedNewer(r); s != nil && (!a.expiring(s) || s.RefreshToken != "") {
			a.note("the stored token in %s was updated by another mcpx run since this one read it (%s); using it", s.File(), a.expiryText(s))
			a.rec, a.origin, a.saveErr = s, fromStore, nil
			if !a.expiring(s) {
				return nil
			}
			r = s
		} else if r.File() != "" && a.gone(r) {
			a.note("the token was removed from the store (%s) since this run read it (mcpx auth logout): refreshing it for this run only, without storing it again", r.File())
			stored = false
		}
	}
	nr, err := a.refresh(ctx, r)
	if err != nil {
		return err
	}
	a.rec, a.origin, a.saveErr, a.refreshErr = nr, fromRefresh, nil, nil
	if stored {
		a.saveErr = a.saveHeld(nr)
	}
	return nil
}

// gone reports whether the store no longer holds a token for r's
// resource and issuer.
func (a *Authorizer) gone(r *TokenRecord) bool {
	_, err := os.Stat(r.File())
	return errors.Is(err, fs.ErrNotExist)
}

// storedNewer returns the store's record for r's resource and issuer when
// it holds another token, updated later than r, nil otherwise.
func (a *Authorizer) storedNewer(r *TokenRecord) *TokenRecord {
	if a.cfg.Store == nil {
		return nil
	}
	s, err := a.cfg.Store.Token(r.Resource, r.Issuer)
	if err != nil {
		a.note("cannot read the token store: %v", err)
		return nil
	}
	if s == nil || s.AccessToken == r.AccessToken || !s.Updated.After(r.Updated) || !a.keyed(s) {
		return nil
	}
	return s
}

// Token returns the access token for the server, from the store,
// refreshed when it is about to expire. It never starts an authorization
// (mcpx auth token).
func (a *Authorizer) Token(ctx context.Context) (string, *TokenRecord, error) {
	h, err := a.Authorization(ctx)
	if err != nil {
		return "", nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if h == "" || a.rec == nil {
		return "", nil, &authError{err: &NoTokenError{ServerURL: a.cfg.ServerURL, Refresh: a.refreshErr}}
	}
	return a.rec.AccessToken, a.rec, nil
}

// Current returns the current token record (nil when there is none). The
// record holds secrets: show it with Summary.
func (a *Authorizer) Current() *TokenRecord {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.rec
}

// pipeWait tells the person (through Notify) that reading a key or token
// file waits for the writer of a named pipe, and that Ctrl-C stops.
func (a *Authorizer) pipeWait(path string) {
	a.notify(fmt.Sprintf("waiting for the named pipe %s to be written; Ctrl-C stops", path))
}
