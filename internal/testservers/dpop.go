package testservers

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// dpopProof is what a checked DPoP proof (RFC 9449) says.
type dpopProof struct {
	jkt   string // the JWK SHA-256 thumbprint of its key (RFC 7638)
	jti   string
	nonce string
	ath   string
}

// checkDPoPProof checks a DPoP proof JWT the way RFC 9449 section 4.3 says
// a server must, written independently of mcpx's code: one compact JWS;
// typ dpop+jwt; alg ES256 with a public P-256 jwk (no private part); a
// valid signature by that key; jti; htm the request's method; htu the
// request's URI without query or fragment; iat within a minute of now.
func checkDPoPProof(proof, method, uri string, now time.Time) (*dpopProof, error) {
	parts := strings.Split(proof, ".")
	if len(parts) != 3 {
		return nil, errors.New("not a compact JWS")
	}
	dec := base64.RawURLEncoding
	hb, err1 := dec.DecodeString(parts[0])
	cb, err2 := dec.DecodeString(parts[1])
	sig, err3 := dec.DecodeString(parts[2])
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, errors.New("not base64url")
	}
	var h struct {
		Typ string            `json:"typ"`
		Alg string            `json:"alg"`
		JWK map[string]string `json:"jwk"`
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	switch {
	case h.Typ != "dpop+jwt":
		return nil, fmt.Errorf("typ %q", h.Typ)
	case h.Alg != "ES256":
		return nil, fmt.Errorf("alg %q", h.Alg)
	case h.JWK == nil || h.JWK["kty"] != "EC" || h.JWK["crv"] != "P-256":
		return nil, errors.New("jwk is not a P-256 key")
	case h.JWK["d"] != "":
		return nil, errors.New("jwk holds the private key")
	case len(h.JWK) != 4:
		return nil, fmt.Errorf("jwk has members other than kty, crv, x, y: %v", h.JWK)
	}
	x, err1 := dec.DecodeString(h.JWK["x"])
	y, err2 := dec.DecodeString(h.JWK["y"])
	if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
		return nil, errors.New("jwk coordinates")
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		return nil, fmt.Errorf("jwk: %v", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if len(sig) != 64 || !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("bad signature")
	}
	var c struct {
		Jti   string   `json:"jti"`
		Htm   string   `json:"htm"`
		Htu   string   `json:"htu"`
		Iat   *float64 `json:"iat"`
		Nonce string   `json:"nonce"`
		Ath   string   `json:"ath"`
	}
	if err := json.Unmarshal(cb, &c); err != nil {
		return nil, fmt.Errorf("claims: %v", err)
	}
	switch {
	case len(c.Jti) < 16:
		return nil, fmt.Errorf("jti %q is missing or short", c.Jti)
	case c.Htm != method:
		return nil, fmt.Errorf("htm %q, want %q", c.Htm, method)
	case c.Htu != uri:
		return nil, fmt.Errorf("htu %q, want %q", c.Htu, uri)
	case c.Iat == nil || now.Sub(time.Unix(int64(*c.Iat), 0)).Abs() > time.Minute:
		return nil, errors.New("iat missing or not now")
	}
	// RFC 7638: the required members, in lexicographic order (which is
	// how encoding/json writes a map), without whitespace.
	canon, _ := json.Marshal(map[string]string{"crv": "P-256", "kty": "EC", "x": h.JWK["x"], "y": h.JWK["y"]})
	th := sha256.Sum256(canon)
	return &dpopProof{jkt: dec.EncodeToString(th[:]), jti: c.Jti, nonce: c.Nonce, ath: c.Ath}, nil
}

// tokenHash is the ath of an access token.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
