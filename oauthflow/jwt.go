package oauthflow

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"
)

// PrivateKey signs private_key_jwt client assertions (RFC 7523 section
// 2.2): an ECDSA P-256 key (ES256) or an RSA key (RS256).
type PrivateKey struct {
	signer crypto.Signer
	// Alg is the JWS algorithm the key signs with: ES256 or RS256.
	Alg string
	// File is where the key was read from.
	File string
}

// LoadPrivateKey reads a PEM private key (PKCS #8, SEC 1 "EC PRIVATE KEY"
// or PKCS #1 "RSA PRIVATE KEY").
func LoadPrivateKey(file string) (*PrivateKey, error) {
	data, err := os.ReadFile(file)
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
		return &PrivateKey{signer: k, Alg: "ES256", File: file}, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("%s: an RSA key must have at least 2048 bits", file)
		}
		return &PrivateKey{signer: k, Alg: "RS256", File: file}, nil
	}
	return nil, fmt.Errorf("%s: unsupported key type %T (use an ECDSA P-256 or RSA key)", file, key)
}

// assertion returns a signed client assertion JWT: issuer and subject the
// client id, audience the authorization server's issuer identifier, valid
// for a few minutes, with a unique jti.
func (k *PrivateKey) assertion(clientID, audience string, now time.Time) (string, error) {
	jti, err := randomString(16)
	if err != nil {
		return "", err
	}
	return signJWT(k.signer, map[string]any{"alg": k.Alg, "typ": "JWT"}, map[string]any{
		"iss": clientID,
		"sub": clientID,
		"aud": audience,
		"iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(),
		"jti": jti,
	})
}

// signJWT returns the compact JWS of claims with header, signed by an
// ECDSA P-256 key (ES256) or an RSA key (RS256), as header["alg"] says.
func signJWT(signer crypto.Signer, header, claims map[string]any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", err
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(h) + "." + enc.EncodeToString(c)
	sum := sha256.Sum256([]byte(signing))
	var sig []byte
	switch key := signer.(type) {
	case *ecdsa.PrivateKey:
		r, s, err := ecdsa.Sign(rand.Reader, key, sum[:])
		if err != nil {
			return "", err
		}
		// JWS ES256 signatures are R || S, each 32 bytes (RFC 7518 section 3.4).
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		s.FillBytes(sig[32:])
	case *rsa.PrivateKey:
		if sig, err = rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:]); err != nil {
			return "", err
		}
	default:
		return "", errors.New("unsupported key")
	}
	return signing + "." + enc.EncodeToString(sig), nil
}
