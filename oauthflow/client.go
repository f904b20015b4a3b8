package oauthflow

import (
	"bytes"
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

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/transport"
)

// Client identity, in the spec's priority order (2025-11-25 and later:
// basic/authorization, "Client Registration Approaches"): pre-registered
// credentials; a Client ID Metadata Document where the authorization server
// supports them; dynamic client registration (RFC 7591); else an error
// saying how to pre-register.

// staticClient returns the pre-registered client, or the Client ID
// Metadata Document client where the server supports it, nil otherwise.
func (a *Authorizer) staticClient(d *Discovery) *Client {
	if a.cfg.ClientID != "" {
		return a.preRegistered(d)
	}
	if a.cfg.ClientMetadataURL == "" {
		return nil
	}
	if !d.AS.ClientIDMetadataDocumentSupported {
		a.note("the authorization server does not advertise client_id_metadata_document_supported, so the client ID metadata document %s is not used", a.cfg.ClientMetadataURL)
		return nil
	}
	c := &Client{ID: a.cfg.ClientMetadataURL, AuthMethod: "none", Source: "client ID metadata document"}
	if a.cfg.PrivateKey != nil {
		c.AuthMethod, c.PrivateKeyFile = "private_key_jwt", a.cfg.PrivateKey.File
	}
	a.note("client: the client ID metadata document %s (the authorization server fetches it; token endpoint auth %s)", c.ID, c.AuthMethod)
	return c
}

// preRegistered returns the pre-registered client (Config.ClientID), authenticating
// with the method the server supports for what it has (a key, a secret,
// or nothing).
func (a *Authorizer) preRegistered(d *Discovery) *Client {
	c := &Client{ID: a.cfg.ClientID, Secret: a.cfg.ClientSecret, Source: "pre-registered"}
	supported := d.AS.authMethods()
	if d.Defaults {
		supported = nil
	}
	switch {
	case a.cfg.PrivateKey != nil:
		c.AuthMethod, c.PrivateKeyFile = "private_key_jwt", a.cfg.PrivateKey.File
		if supported != nil && !slices.Contains(supported, "private_key_jwt") {
			a.note("warning: token_endpoint_auth_methods_supported (%s) does not list private_key_jwt; using it anyway, as the client has a private key (%s)", strings.Join(supported, " "), a.cfg.PrivateKey.File)
		}
		if algs := d.AS.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, a.cfg.PrivateKey.Alg) {
			a.note("warning: token_endpoint_auth_signing_alg_values_supported (%s) does not list %s, the algorithm of %s", strings.Join(algs, " "), a.cfg.PrivateKey.Alg, a.cfg.PrivateKey.File)
		}
	case c.Secret != "":
		c.AuthMethod = secretMethod(supported)
	default:
		c.AuthMethod = "none"
	}
	a.note("client: pre-registered client_id %s (token endpoint auth %s)", c.ID, c.AuthMethod)
	return c
}

// secretMethod picks how to send a client secret: client_secret_basic
// where supported (or nothing is said), else client_secret_post.
func secretMethod(supported []string) string {
	if supported == nil || slices.Contains(supported, "client_secret_basic") || !slices.Contains(supported, "client_secret_post") {
		return "client_secret_basic"
	}
	return "client_secret_post"
}

// registeredClient returns a dynamically registered client for redirect:
// the stored registration when it was made for this redirect URI, else a
// new registration; without a registration endpoint, an error that says
// how to register mcpx by hand.
func (a *Authorizer) registeredClient(ctx context.Context, d *Discovery, reg *Registration, redirect string) (*Client, error) {
	if d.AS.RegistrationEndpoint == "" {
		return nil, noRegistrationError(d.Issuer, redirect, d.AS.ClientIDMetadataDocumentSupported)
	}
	if err := checkEndpoint("registration endpoint", d.AS.RegistrationEndpoint, a.cfg.ServerURL); err != nil {
		return nil, err
	}
	if reg != nil && slices.Contains(reg.Client.RedirectURIs, redirect) && reg.RegistrationEndpoint == d.AS.RegistrationEndpoint &&
		(reg.Client.SecretExpiresAt == 0 || a.cfg.Now().Unix() < reg.Client.SecretExpiresAt) {
		c := reg.Client
		a.note("client: registered dynamically on %s (stored), client_id %s (token endpoint auth %s)", reg.Registered.Format("2006-01-02"), c.ID, c.AuthMethod)
		return &c, nil
	}
	return a.register(ctx, d, redirect)
}

// registrationRequest is the client metadata sent to the registration
// endpoint (RFC 7591 section 2).
type registrationRequest struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	// ApplicationType "native" suits a CLI with a loopback redirect (spec
	// draft: basic/authorization/client-registration, "Application Type").
	ApplicationType string `json:"application_type"`
	SoftwareID      string `json:"software_id,omitempty"`
	SoftwareVersion string `json:"software_version,omitempty"`
}

type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret"`
	ClientSecretExpiresAt   int64    `json:"client_secret_expires_at"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	RedirectURIs            []string `json:"redirect_uris"`
	Error                   string   `json:"error"`
	ErrorDescription        string   `json:"error_description"`
}

// register performs dynamic client registration (RFC 7591) as a public
// native client where the server allows it, asking for the refresh_token
// grant too (spec draft: basic/authorization, "Refresh Tokens").
func (a *Authorizer) register(ctx context.Context, d *Discovery, redirect string) (*Client, error) {
	method := "none"
	if !d.Defaults {
		supported := d.AS.authMethods()
		switch {
		case slices.Contains(supported, "none"):
		case slices.Contains(supported, "client_secret_basic"):
			method = "client_secret_basic"
		case slices.Contains(supported, "client_secret_post"):
			method = "client_secret_post"
		default:
			return nil, unsupportedAuthMethodsError(d.Issuer, supported)
		}
	}
	body, err := json.Marshal(registrationRequest{
		ClientName:              a.cfg.ClientName,
		RedirectURIs:            []string{redirect},
		GrantTypes:              []string{"authorization_code", "refresh_token"},
		ResponseTypes:           []string{"code"},
		TokenEndpointAuthMethod: method,
		ApplicationType:         "native",
		SoftwareID:              a.cfg.ClientName,
		SoftwareVersion:         a.cfg.ClientVersion,
	})
	if err != nil {
		return nil, err
	}
	rctx, cancel := a.requestContext(ctx)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, d.AS.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if a.cfg.UserAgent != "" {
		req.Header.Set("User-Agent", a.cfg.UserAgent)
	}
	what, endpoint := "dynamic client registration at "+d.AS.RegistrationEndpoint, "the OAuth registration endpoint "+d.AS.RegistrationEndpoint
	resp, err := a.http.Do(req)
	if err != nil {
		return nil, requestFailed(what, endpoint, ctx, rctx, unwrapURLError(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadata+1))
	if err != nil {
		return nil, requestFailed(what+" (reading the answer)", endpoint, ctx, rctx, err)
	}
	if len(data) > maxMetadata {
		return nil, fmt.Errorf("%s: the answer is larger than %s, which no registration is", what, transport.FormatSize(maxMetadata))
	}
	var rr registrationResponse
	jerr := json.Unmarshal(data, &rr)
	// RFC 7591 section 3.2.2: an error response has an error member (some
	// servers send it with 200).
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK || jerr == nil && rr.Error != "" {
		msg := fmt.Sprintf("dynamic client registration at %s was refused: HTTP %d", transport.ShortURL(d.AS.RegistrationEndpoint), resp.StatusCode)
		if jerr == nil && rr.Error != "" {
			msg += ": " + transport.Excerpt(rr.Error)
			if rr.ErrorDescription != "" {
				msg += ": " + transport.Excerpt(rr.ErrorDescription)
			}
		}
		return nil, &ClientError{Problem: RegistrationRefused, Issuer: d.Issuer, Detail: msg, MetadataDocuments: d.AS.ClientIDMetadataDocumentSupported}
	}
	if err := a.checkRegistration(resp, data, jerr, &rr); err != nil {
		return nil, fmt.Errorf("%s answered HTTP %d %w", what, resp.StatusCode, err)
	}
	c := &Client{ID: rr.ClientID, Secret: rr.ClientSecret, AuthMethod: rr.TokenEndpointAuthMethod, Source: "dynamic registration",
		RedirectURIs: rr.RedirectURIs, SecretExpiresAt: rr.ClientSecretExpiresAt}
	if len(c.RedirectURIs) == 0 {
		c.RedirectURIs = []string{redirect}
	}
	if c.AuthMethod == "" {
		c.AuthMethod = registeredMethod(method, c.Secret != "", d)
	}
	switch c.AuthMethod {
	case "none", "client_secret_basic", "client_secret_post":
	default:
		return nil, fmt.Errorf("%s registered mcpx with token_endpoint_auth_method %s, which mcpx cannot authenticate with (it asked for %s)", what, quoted(c.AuthMethod), method)
	}
	if c.AuthMethod != "none" && c.Secret == "" {
		return nil, fmt.Errorf("dynamic client registration at %s: the client must authenticate with %s but got no client_secret", transport.ShortURL(d.AS.RegistrationEndpoint), c.AuthMethod)
	}
	a.note("client: registered dynamically at %s: client_id %s (token endpoint auth %s%s)", transport.ShortURL(d.AS.RegistrationEndpoint), transport.Excerpt(c.ID), c.AuthMethod,
		map[bool]string{true: ", with a client secret", false: ""}[c.Secret != ""])
	if a.cfg.Store != nil {
		reg := &Registration{Issuer: d.Issuer, RegistrationEndpoint: d.AS.RegistrationEndpoint, Client: *c, Registered: a.cfg.Now()}
		if err := a.cfg.Store.SaveRegistration(reg); err != nil {
			a.note("cannot store the registration: %v", err)
		}
	}
	return c, nil
}

// checkRegistration accepts the answer of a registration that succeeded
// (RFC 7591 section 3.2.1), data decoded into rr with jerr: JSON with a
// client_id, and a client secret that has not already expired. What is
// wrong is said after "answered HTTP 201": how the body begins when it is
// not JSON (redacted: it may hold the secret issued), the member of the
// wrong type, the missing client_id.
func (a *Authorizer) checkRegistration(resp *http.Response, data []byte, jerr error, rr *registrationResponse) error {
	if jerr != nil {
		var se *json.SyntaxError
		if !errors.As(jerr, &se) {
			return fmt.Errorf("with a registration mcpx cannot use: %s", rawjson.DecodeProblem(jerr))
		}
		what := "no Content-Type"
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			what = quoted(ct)
		}
		if len(bytes.TrimSpace(data)) == 0 {
			return fmt.Errorf("with no body (%s), not a registration", what)
		}
		return fmt.Errorf("with %s that is not a registration (%s): %s", what, rawjson.DecodeProblem(jerr),
			bodyExcerpt(data, resp.Header.Get("Content-Type"), transport.RedactCredentials))
	}
	if rr.ClientID == "" {
		return errors.New("without a client_id")
	}
	if rr.ClientSecret != "" && rr.ClientSecretExpiresAt != 0 && !a.cfg.Now().Before(time.Unix(rr.ClientSecretExpiresAt, 0)) {
		return fmt.Errorf("with a client secret that has expired already (client_secret_expires_at %d is %s; RFC 7591 section 3.2.1): mcpx cannot use it",
			rr.ClientSecretExpiresAt, time.Unix(rr.ClientSecretExpiresAt, 0).UTC().Format(time.RFC3339))
	}
	return nil
}

// registeredMethod decides how a registered client authenticates when the
// registration response does not say: none without a secret; with one,
// what was asked for, unless that was none — then a secret method the
// server supports, or RFC 7591's default (client_secret_basic) when it
// says nothing, or none when none is all it supports.
func registeredMethod(asked string, hasSecret bool, d *Discovery) string {
	if !hasSecret {
		return "none"
	}
	if asked != "none" {
		return asked
	}
	if d.Defaults {
		return "client_secret_basic"
	}
	supported := d.AS.authMethods()
	switch {
	case slices.Contains(supported, "client_secret_basic"):
		return "client_secret_basic"
	case slices.Contains(supported, "client_secret_post"):
		return "client_secret_post"
	}
	return "none"
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
