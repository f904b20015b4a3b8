package oauthflow

// DPoP, OAuth 2.0 Demonstrating Proof of Possession (RFC 9449), as the MCP
// DPoP extension (SEP-1932) adopts it unchanged: where the authorization
// server supports it, mcpx asks for an access token bound to a key it
// generates, and proves possession of that key on every request with a
// proof JWT signed for the request's method and URL. A stolen DPoP-bound
// token is useless without the key.
//
// The key is an ephemeral ECDSA P-256 key (proofs are ES256), made for
// each new token and kept with it in the token store (a 0600 file), since
// the token (and a refresh token issued to a public client) only works
// with it. It is never shown; proofs are redacted in --wire output.

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpx-dev/mcpx/transport"
)

// dpopAlg is the JWS algorithm of mcpx's DPoP proofs.
const dpopAlg = string(jose.ES256)

// tokenTypeDPoP is the token_type of a DPoP-bound access token (RFC 9449
// section 5), and the authorization scheme it is sent with (section 7.1).
const tokenTypeDPoP = "DPoP"

// dpopKey is the key a DPoP-bound token is bound to.
type dpopKey struct {
	priv *ecdsa.PrivateKey
	// signer signs proofs: ES256, typ dpop+jwt, the public key as the jwk
	// header (RFC 9449 section 4.2). It keeps no state between signatures.
	signer jose.Signer
	// jkt is the JWK SHA-256 thumbprint (RFC 7638) the authorization server
	// binds the token to (its cnf.jkt claim, RFC 9449 section 6.1).
	jkt string
}

// newDPoPKey generates a new key.
func newDPoPKey() (*dpopKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating a DPoP key: %w", err)
	}
	return dpopKeyFrom(priv)
}

func dpopKeyFrom(priv *ecdsa.PrivateKey) (*dpopKey, error) {
	if priv.Curve != elliptic.P256() {
		return nil, errors.New("a DPoP key must use P-256")
	}
	if _, err := priv.PublicKey.Bytes(); err != nil {
		return nil, errors.New("a DPoP key must be a valid P-256 key")
	}
	jkt, err := jwkThumbprint(&priv.PublicKey)
	if err != nil {
		return nil, err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(dpopAlg), Key: priv},
		(&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt"))
	if err != nil {
		return nil, fmt.Errorf("a DPoP signer: %w", err)
	}
	return &dpopKey{priv: priv, signer: signer, jkt: jkt}, nil
}

// jwkThumbprint is the JWK SHA-256 thumbprint (RFC 7638) of pub, base64url
// as the cnf.jkt claim carries it (RFC 9449 section 6.1).
func jwkThumbprint(pub *ecdsa.PublicKey) (string, error) {
	sum, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return "", fmt.Errorf("the DPoP key's thumbprint: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(sum), nil
}

// marshal encodes the private key for the token store (PKCS #8, base64).
func (k *dpopKey) marshal() (string, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.priv)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(der), nil
}

// parseDPoPKey decodes a key stored by marshal.
func parseDPoPKey(s string) (*dpopKey, error) {
	der, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("the stored DPoP key is not base64")
	}
	key, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("the stored DPoP key is not a PKCS #8 private key")
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("the stored DPoP key is not an ECDSA key")
	}
	return dpopKeyFrom(ec)
}

// dpopClaims are the claims of a proof besides jti and iat (RFC 9449
// section 4.2).
type dpopClaims struct {
	Method string `json:"htm"`
	URI    string `json:"htu"`
	Nonce  string `json:"nonce,omitempty"`
	// AccessTokenHash is ath.
	AccessTokenHash string `json:"ath,omitempty"`
}

// proof returns a DPoP proof JWT (RFC 9449 section 4.2) for a request with
// method to u: typ dpop+jwt, the public key in the jwk header, a unique
// jti, htm, htu (u without query and fragment), iat; the server's nonce
// when it supplied one (sections 8 and 9); and ath, the hash of the access
// token, on requests that carry one (section 4.2, for resource servers).
func (k *dpopKey) proof(method string, u *url.URL, now time.Time, nonce, accessToken string) (string, error) {
	jti, err := randomString(18)
	if err != nil {
		return "", err
	}
	c := dpopClaims{Method: method, URI: dpopHTU(u), Nonce: nonce}
	if accessToken != "" {
		c.AccessTokenHash = accessTokenHash(accessToken)
	}
	return jwt.Signed(k.signer).Claims(jwt.Claims{ID: jti, IssuedAt: jwt.NewNumericDate(now)}).Claims(c).Serialize()
}

// dpopHTU is the htu claim for a request to u: the target URI without its
// query and fragment (RFC 9449 section 4.2), scheme and host lower-cased.
func dpopHTU(u *url.URL) string {
	c := url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: u.Path, RawPath: u.RawPath}
	return c.String()
}

// accessTokenHash is the ath claim: the base64url SHA-256 of the access
// token's ASCII bytes (RFC 9449 section 4.2).
func accessTokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// maxNonce is the longest DPoP-Nonce mcpx takes. A nonce goes back in the
// proof of every request to its server, in a header, and net/http takes
// a response header of up to 10 MB; the nonce is an opaque value of the
// server's (RFC 9449 sections 8 and 9), which a few dozen random bytes
// make.
const maxNonce = 4 << 10

// dpopNonces are the nonces servers supplied (DPoP-Nonce, RFC 9449
// sections 8 and 9), by origin: each is sent back in proofs to the server
// that gave it, until it gives another.
type dpopNonces struct {
	mu sync.Mutex
	m  map[string]string
}

func nonceOrigin(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

func (n *dpopNonces) get(u *url.URL) string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.m[nonceOrigin(u)]
}

// set remembers a nonce from u's server; a value that is not a valid nonce
// (RFC 9449 section 8.1: printable ASCII without space, '"' or '\') is
// ignored, and so is one longer than maxNonce. It reports whether the
// nonce was taken.
func (n *dpopNonces) set(u *url.URL, nonce string) bool {
	if nonce == "" || len(nonce) > maxNonce {
		return false
	}
	for i := 0; i < len(nonce); i++ {
		if c := nonce[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]string{}
	}
	n.m[nonceOrigin(u)] = nonce
	return true
}

// dpopTransport adds a DPoP proof to every token request, keeps the nonces
// the authorization server supplies, and answers its use_dpop_nonce error
// by sending the request once more with the nonce (RFC 9449 section 8).
type dpopTransport struct {
	base   http.RoundTripper
	key    *dpopKey
	nonces *dpopNonces
	note   func(format string, args ...any)
}

func (t *dpopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if transport.LeftOrigin(r) {
		// A redirect to another origin carries no credential, and a proof
		// is one (transport.RedirectPolicy).
		return t.base.RoundTrip(r)
	}
	for attempt := 0; ; attempt++ {
		req := r.Clone(r.Context())
		if attempt > 0 {
			body, err := r.GetBody()
			if err != nil {
				return nil, err
			}
			req.Body = body
		}
		proof, err := t.key.proof(req.Method, req.URL, time.Now(), t.nonces.get(req.URL), "")
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, fmt.Errorf("signing the DPoP proof: %w", err)
		}
		req.Header.Set("DPoP", proof)
		resp, err := t.base.RoundTrip(req)
		if err != nil {
			return nil, err
		}
		took := t.nonces.set(req.URL, resp.Header.Get("DPoP-Nonce"))
		if attempt > 0 || !took || resp.StatusCode != http.StatusBadRequest || r.GetBody == nil {
			return resp, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error != "use_dpop_nonce" {
			resp.Body = io.NopCloser(bytes.NewReader(body))
			return resp, nil
		}
		t.note("%s %s answered use_dpop_nonce: sending the request again with a proof carrying the nonce it supplied (RFC 9449 section 8)",
			req.Method, redactURL(req.URL))
	}
}
