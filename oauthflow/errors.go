package oauthflow

import (
	"fmt"
	"strings"
)

// NoTokenError reports that no usable token is stored for a server and
// that no new authorization may start here: the configuration allows
// stored tokens only (Config.StoredOnly), or the call never authorizes
// (Authorizer.Token). An authorization run elsewhere, which stores its
// token, is the way out. It matches ErrAuthorization, and ErrInteraction
// when StoredOnly.
type NoTokenError struct {
	// ServerURL is the MCP server's URL.
	ServerURL string
	// StoredOnly is true when the configuration forbids a new
	// authorization.
	StoredOnly bool
	// Refresh is why the stored token (expired, or refused by the server)
	// could not be refreshed (the authorization server's refusal), nil
	// when that is not why.
	Refresh error
}

func (e *NoTokenError) Error() string {
	msg := "no usable stored token for " + e.ServerURL
	if e.Refresh != nil {
		msg += fmt.Sprintf(" (refreshing it failed: %v)", e.Refresh)
	}
	if e.StoredOnly {
		return fmt.Sprintf("%v: %s, and only stored tokens may be used", ErrInteraction, msg)
	}
	return msg
}

// Is makes errors.Is(err, ErrInteraction) true when a new authorization
// was forbidden.
func (e *NoTokenError) Is(target error) bool { return e.StoredOnly && target == ErrInteraction }

// StepUpError is a step-up authorization (a 403 insufficient_scope) that
// could not run because no person can be asked here (Config.StoredOnly,
// Config.NoInteraction). A new authorization elsewhere that does not ask
// for the scopes the server wants stores a token that is refused the same
// way: the way out is one that asks for Scopes (Config.Scopes).
type StepUpError struct {
	// ServerURL is the MCP server's URL.
	ServerURL string
	// Scopes are those to ask for: the ones asked for before and the
	// challenge's.
	Scopes []string
	// Err is why the authorization could not run.
	Err error
}

func (e *StepUpError) Error() string {
	return fmt.Sprintf("%v; the server wants a token with scopes %s", e.Err, scopeString(e.Scopes))
}

func (e *StepUpError) Unwrap() error { return e.Err }

// ClientProblem says why an authorization has no client of its own (see
// ClientError).
type ClientProblem int

const (
	// NoRegistration: the authorization server offers no dynamic client
	// registration (no registration_endpoint).
	NoRegistration ClientProblem = iota + 1
	// RegistrationRefused: it refused mcpx's registration.
	RegistrationRefused
	// UnsupportedAuthMethods: it authenticates clients at its token
	// endpoint only in ways mcpx cannot register with (AuthMethods).
	UnsupportedAuthMethods
	// NeedsStaticClient: the grant needs a client mcpx cannot register:
	// pre-registered, or a client ID metadata document.
	NeedsStaticClient
	// ClientMoved: the resource moved to another authorization server,
	// and the pre-registered client (ClientID) belongs to the old one.
	ClientMoved
)

// ClientError reports that an authorization needs a client mcpx could not
// get by itself (spec 2025-11-25: basic/authorization, "Client
// Registration Approaches"): a client registered by hand with Issuer
// (Config.ClientID, with Config.ClientSecret or Config.PrivateKey for a
// confidential one), or a client ID metadata document where Issuer
// accepts them (Config.ClientMetadataURL), is the way out. It matches
// ErrAuthorization.
type ClientError struct {
	Problem ClientProblem
	// Issuer is the authorization server the client is for.
	Issuer string
	// Detail says what happened, for people.
	Detail string
	// RedirectURI is the redirect URI a client registered by hand must
	// allow (browser flows; NoRegistration), "" otherwise.
	RedirectURI string
	// MetadataDocuments is true when Issuer accepts a client ID metadata
	// document instead of a registration.
	MetadataDocuments bool
	// AuthMethods are the token endpoint authentication methods Issuer
	// accepts (UnsupportedAuthMethods).
	AuthMethods []string
	// ClientID is the pre-registered client that belongs to the old
	// authorization server (ClientMoved).
	ClientID string
}

func (e *ClientError) Error() string { return e.Detail }

// Is makes errors.Is(err, ErrAuthorization) true.
func (e *ClientError) Is(target error) bool { return target == ErrAuthorization }

// noRegistrationError is the ClientError of an authorization server
// without dynamic client registration.
func noRegistrationError(issuer, redirect string, metadataDocuments bool) *ClientError {
	msg := fmt.Sprintf("mcpx cannot register itself with the authorization server %s: it offers no dynamic client registration (no registration_endpoint)", issuer)
	if metadataDocuments {
		msg += ", but it supports client ID metadata documents"
	}
	msg += "; a client registered there by hand needs the redirect URI " + redirect
	return &ClientError{Problem: NoRegistration, Issuer: issuer, Detail: msg, RedirectURI: redirect, MetadataDocuments: metadataDocuments}
}

// unsupportedAuthMethodsError is the ClientError of an authorization
// server that authenticates clients only in ways mcpx cannot register
// with.
func unsupportedAuthMethodsError(issuer string, methods []string) *ClientError {
	return &ClientError{Problem: UnsupportedAuthMethods, Issuer: issuer, AuthMethods: methods,
		Detail: fmt.Sprintf("the authorization server %s authenticates clients only with %s at its token endpoint; mcpx registers with none, client_secret_basic or client_secret_post",
			issuer, strings.Join(methods, ", "))}
}

// CallbackURLError reports a callback URL (Config.CallbackURL) mcpx
// cannot receive the authorization redirect on.
type CallbackURLError struct {
	URL string
	// Reason says what is wrong with it.
	Reason string
}

func (e *CallbackURLError) Error() string { return fmt.Sprintf("callback URL %q: %s", e.URL, e.Reason) }
