package oauthflow

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcpx-dev/mcpx/internal/userfile"
)

// keyFileLimit bounds a key or token file (a PEM key, a JWT), whose
// content is a few kilobytes: a path to something endless must not fill
// memory.
const keyFileLimit = 1 << 20

// PrivateKey signs private_key_jwt client assertions (RFC 7523 section
// 2.2): an ECDSA P-256 key (ES256) or an RSA key (RS256).
type PrivateKey struct {
	key any // *ecdsa.PrivateKey or *rsa.PrivateKey
	// Alg is the JWS algorithm the key signs with: ES256 or RS256.
	Alg string
	// File is where the key was read from.
	File string
}

// LoadPrivateKey reads a PEM private key (PKCS #8, SEC 1 "EC PRIVATE KEY"
// or PKCS #1 "RSA PRIVATE KEY"). A named pipe's wait for its writer ends
// with ctx; onWait, when not nil, is told of it (see userfile.Read).
func LoadPrivateKey(ctx context.Context, file string, onWait func(path string)) (*PrivateKey, error) {
	data, err := userfile.Read(ctx, file, keyFileLimit, onWait)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM block", file)
	}
	var key any
	switch block.Type {
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: not a private key: %v", file, err)
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("%s: an ECDSA key must use P-256 (ES256)", file)
		}
		return &PrivateKey{key: k, Alg: string(jose.ES256), File: file}, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("%s: an RSA key must have at least 2048 bits", file)
		}
		return &PrivateKey{key: k, Alg: string(jose.RS256), File: file}, nil
	}
	return nil, fmt.Errorf("%s: unsupported key type %T (use an ECDSA P-256 or RSA key)", file, key)
}

// assertion returns a signed client assertion JWT (RFC 7523 section 3):
// issuer and subject the client id, audience the authorization server's
// issuer identifier, valid for a few minutes, with a unique jti; the
// header is alg and typ JWT.
func (k *PrivateKey) assertion(clientID, audience string, now time.Time) (string, error) {
	jti, err := randomString(16)
	if err != nil {
		return "", err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(k.Alg), Key: k.key},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(jwt.Claims{
		Issuer:   clientID,
		Subject:  clientID,
		Audience: jwt.Audience{audience},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(5 * time.Minute)),
		ID:       jti,
	}).Serialize()
}
