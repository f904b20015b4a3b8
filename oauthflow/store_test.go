package oauthflow

import (
	"context"
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
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func mode(t *testing.T, p string) os.FileMode {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("file modes are POSIX")
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

// Tokens live in a 0700 directory, in 0600 files written atomically (no
// temporary file left), keyed by resource and issuer.
func TestStore(t *testing.T) {
	root := t.TempDir()
	dir, err := StoreDir(func(k string) string { return map[string]string{"MCPX_CONFIG_DIR": root}[k] })
	if err != nil || dir != filepath.Join(root, "auth") {
		t.Fatalf("StoreDir = %q, %v", dir, err)
	}
	s := NewStore(dir)
	if recs, err := s.Tokens(); err != nil || len(recs) != 0 {
		t.Fatalf("empty store: %v %v", recs, err)
	}
	now := time.Now()
	a := &TokenRecord{Resource: "https://mcp.example.com", Issuer: "https://as1", AccessToken: "A", Updated: now.Add(-time.Hour)}
	b := &TokenRecord{Resource: "https://mcp.example.com/team/mcp", Issuer: "https://as1", AccessToken: "B", Updated: now.Add(-2 * time.Hour)}
	c := &TokenRecord{Resource: "https://mcp.example.com", Issuer: "https://as2", AccessToken: "C", Updated: now}
	for _, r := range []*TokenRecord{a, b, c} {
		if err := s.SaveToken(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("directory mode %04o", m)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("files: %v", entries)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
		if m := mode(t, filepath.Join(dir, e.Name())); m != 0o600 {
			t.Errorf("%s mode %04o", e.Name(), m)
		}
	}
	// The most specific resource first, then the most recent.
	recs, err := s.Matching("https://mcp.example.com/team/mcp")
	if err != nil || len(recs) != 3 || recs[0].AccessToken != "B" || recs[1].AccessToken != "C" || recs[2].AccessToken != "A" {
		t.Fatalf("Matching = %v, %v", tokensOf(recs), err)
	}
	if recs, _ := s.Matching("https://mcp.example.com/other"); len(recs) != 2 {
		t.Errorf("other path: %v", tokensOf(recs))
	}
	if recs, _ := s.Matching("https://elsewhere.example.com/team/mcp"); len(recs) != 0 {
		t.Errorf("another origin got tokens: %v", tokensOf(recs))
	}
	// Saving the same resource and issuer replaces the record.
	a.AccessToken = "A2"
	if err := s.SaveToken(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if all, _ := s.Tokens(); len(all) != 3 {
		t.Errorf("after replacing: %v", tokensOf(all))
	}
	// A file others can read is made private.
	os.Chmod(a.File(), 0o644)
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	s.Tokens()
	if m := mode(t, a.File()); m != 0o600 || len(warned) != 1 {
		t.Errorf("mode %04o after reading, warnings %q", m, warned)
	}
	if err := s.DeleteToken(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveRegistration(&Registration{Issuer: "https://as1", Client: Client{ID: "cid"}}); err != nil {
		t.Fatal(err)
	}
	if reg, err := s.Registration("https://as1"); err != nil || reg == nil || reg.Client.ID != "cid" {
		t.Errorf("Registration = %+v, %v", reg, err)
	}
	if reg, _ := s.Registration("https://as2"); reg != nil {
		t.Errorf("registration for another issuer: %+v", reg)
	}
	n, err := s.DeleteAll(t.Context())
	if err != nil || n != 3 {
		t.Errorf("DeleteAll = %d, %v", n, err)
	}
	if all, _ := s.Tokens(); len(all) != 0 {
		t.Errorf("after DeleteAll: %v", tokensOf(all))
	}
}

func tokensOf(recs []*TokenRecord) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.AccessToken)
	}
	return out
}

// A directory that exists with a looser mode is tightened before use.
func TestStoreTightensDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "auth")
	os.MkdirAll(dir, 0o755)
	s := NewStore(dir)
	if err := s.SaveToken(t.Context(), &TokenRecord{Resource: "https://x", Issuer: "https://y", AccessToken: "t"}); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, dir); m != 0o700 {
		t.Errorf("mode %04o", m)
	}
}

func writePEM(t *testing.T, typ string, der []byte) string {
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func decodeJWT(t *testing.T, jwt string) (header, claims map[string]any, signing string, sig []byte) {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWS: %q", jwt)
	}
	dec := func(s string, v any) {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		if v != nil {
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatal(err)
			}
		}
	}
	dec(parts[0], &header)
	dec(parts[1], &claims)
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	return header, claims, parts[0] + "." + parts[1], sig
}

// private_key_jwt assertions (RFC 7523 section 2.2) verify with the public
// key: ES256 as R||S, RS256 as PKCS #1 v1.5.
func TestClientAssertion(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	now := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		file string
		alg  string
	}{
		{writePEM(t, "PRIVATE KEY", der), "ES256"},
		{writePEM(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rk)), "RS256"},
	} {
		k, err := LoadPrivateKey(context.Background(), tc.file, nil)
		if err != nil || k.Alg != tc.alg {
			t.Fatalf("LoadPrivateKey: %v %v", k, err)
		}
		jwt, err := k.assertion("client-1", "https://as.example", now)
		if err != nil {
			t.Fatal(err)
		}
		h, c, signing, sig := decodeJWT(t, jwt)
		if h["alg"] != tc.alg || h["typ"] != "JWT" || len(h) != 2 || len(c) != 6 || c["iss"] != "client-1" || c["sub"] != "client-1" || c["aud"] != "https://as.example" ||
			c["iat"] != float64(now.Unix()) || c["exp"] != float64(now.Add(5*time.Minute).Unix()) || c["jti"] == "" {
			t.Errorf("%s: header %v claims %v", tc.alg, h, c)
		}
		sum := sha256.Sum256([]byte(signing))
		switch tc.alg {
		case "ES256":
			if len(sig) != 64 || !ecdsa.Verify(&ec.PublicKey, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
				t.Error("ES256 signature does not verify")
			}
		case "RS256":
			if err := rsa.VerifyPKCS1v15(&rk.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
				t.Errorf("RS256 signature: %v", err)
			}
		}
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	der384, _ := x509.MarshalPKCS8PrivateKey(p384)
	for _, bad := range []string{writePEM(t, "PRIVATE KEY", der384), writePEM(t, "PRIVATE KEY", []byte("junk")), filepath.Join(t.TempDir(), "missing.pem")} {
		if _, err := LoadPrivateKey(context.Background(), bad, nil); err == nil {
			t.Errorf("%s loaded", bad)
		}
	}
}

// A stored record whose token is not printable ASCII (not one mcpx
// stored: checkToken refuses such tokens) is skipped with a warning, so it
// is neither sent nor printed by mcpx auth token.
func TestStoreSkipsUnprintableTokens(t *testing.T) {
	s := NewStore(t.TempDir())
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	for _, r := range []*TokenRecord{
		{Resource: "https://a.example", Issuer: "https://as", AccessToken: "at\r\nX-Evil: 1"},
		{Resource: "https://b.example", Issuer: "https://as", AccessToken: "ok", RefreshToken: "\x1b[2J"},
		{Resource: "https://c.example", Issuer: "https://as", AccessToken: "ok"},
	} {
		if err := s.SaveToken(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.Tokens()
	if err != nil || len(recs) != 1 || recs[0].Resource != "https://c.example" {
		t.Fatalf("Tokens = %v, %v", tokensOf(recs), err)
	}
	if len(warned) != 2 || !strings.Contains(warned[0], "its token has characters no token may have") || strings.Contains(strings.Join(warned, ""), "Evil") {
		t.Errorf("warnings: %q", warned)
	}
}

// A token file cut short or mistyped is skipped with a warning that says
// what is wrong in JSON's terms (a time that is not one, naming its
// field), without quoting the file (it holds secrets); the other tokens
// are still found.
func TestStoreSkipsBrokenFiles(t *testing.T) {
	s := NewStore(t.TempDir())
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	good := &TokenRecord{Resource: "https://c.example", Issuer: "https://as", AccessToken: "secret-at"}
	if err := s.SaveToken(t.Context(), good); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good.File())
	cut := filepath.Join(s.Dir(), "token-cut.json")
	os.WriteFile(cut, data[:len(data)/2], 0o600)
	typed := filepath.Join(s.Dir(), "token-typed.json")
	os.WriteFile(typed, []byte(`{"resource":"https://d.example","access_token":"secret-at","scopes":"mcp"}`), 0o600)
	when := filepath.Join(s.Dir(), "token-when.json")
	os.WriteFile(when, []byte(`{"resource":"https://e.example","access_token":"secret-at","expiry":"secret-notatime"}`), 0o600)
	numbered := filepath.Join(s.Dir(), "token-numbered.json")
	os.WriteFile(numbered, []byte(`{"resource":"https://f.example","access_token":"secret-at","updated":1700000000}`), 0o600)
	recs, err := s.Tokens()
	if err != nil || len(recs) != 1 || recs[0].Resource != "https://c.example" {
		t.Fatalf("Tokens = %v, %v", tokensOf(recs), err)
	}
	want := []string{
		"skipping " + cut + ": not a file mcpx stored: it is not valid JSON (it is cut short after ",
		"skipping " + typed + ": not a file mcpx stored: its scopes is a string, not an array",
		"skipping " + when + ": not a file mcpx stored: its expiry is not an RFC 3339 time\n",
		"skipping " + numbered + ": not a file mcpx stored: its updated is a number, not an RFC 3339 time\n",
	}
	all := strings.Join(warned, "\n") + "\n"
	for _, w := range want {
		if !strings.Contains(all, w) {
			t.Errorf("warnings lack %q:\n%s", w, all)
		}
	}
	if strings.Contains(all, "secret") {
		t.Errorf("a warning quotes the file:\n%s", all)
	}
	// Reading the store again (a long session does, each time the server
	// refuses its token) says nothing new: each skipped file is said once.
	n := len(warned)
	if _, err := s.Matching("https://d.example"); err != nil || len(warned) != n {
		t.Errorf("read again: %v; warnings:\n%s", err, strings.Join(warned, "\n"))
	}
}

// A stored file mcpx cannot read is never written over, as it may hold
// the only copy of a refresh token or a client secret: saving the token
// (or the registration) it would be replaced by fails saying why, and the
// file keeps its bytes. A new authorization silently replaced a token
// file cut short or edited by hand. The Authorizer then uses its new
// token for the run only, and StoreError says why it was not stored.
func TestStoreKeepsUnreadableFiles(t *testing.T) {
	s := newFakeAS(t)
	store := NewStore(t.TempDir())
	resource, issuer := s.URL+"/mcp", s.URL
	broken := []byte(`{"refresh_token":"rt-precious`)
	tokFile, regFile := store.tokenFile(resource, issuer), store.clientFile(issuer)
	os.MkdirAll(store.Dir(), 0o700)
	for _, f := range []string{tokFile, regFile} {
		if err := os.WriteFile(f, broken, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	err := store.SaveToken(t.Context(), &TokenRecord{Resource: resource, Issuer: issuer, AccessToken: "at"})
	want := tokFile + " is not a file mcpx stored (it is not valid JSON (it is cut short after 29 bytes)): mcpx does not write over it; repair it or remove it"
	if err == nil || err.Error() != want {
		t.Errorf("SaveToken: %v\nwant %s", err, want)
	}
	if err := store.SaveRegistration(&Registration{Issuer: issuer, Client: Client{ID: "c"}}); err == nil || !strings.Contains(err.Error(), regFile+" is not a file mcpx stored") {
		t.Errorf("SaveRegistration: %v", err)
	}

	a, err, notes := authorizeOnce(t, s, func(c *Config) { c.Store = store })
	if err != nil {
		t.Fatal(err)
	}
	if a.Current() == nil || a.Current().AccessToken != "at-1" || a.StoreError() == nil || !strings.Contains(a.StoreError().Error(), tokFile+" is not a file mcpx stored") {
		t.Errorf("current %+v, StoreError %v", a.Current(), a.StoreError())
	}
	if !strings.Contains(notes.String(), "cannot store the registration: "+regFile+" is not a file mcpx stored") {
		t.Errorf("notes:\n%s", notes)
	}
	for _, f := range []string{tokFile, regFile} {
		if b, _ := os.ReadFile(f); string(b) != string(broken) {
			t.Errorf("%s was replaced: %q", f, b)
		}
	}

	// Once it is gone, the token is stored.
	os.Remove(tokFile)
	a, err, _ = authorizeOnce(t, s, func(c *Config) { c.Store = store })
	if err != nil || a.StoreError() != nil || a.Current().File() != tokFile {
		t.Errorf("err %v, StoreError %v, file %q", err, a.StoreError(), a.Current().File())
	}
}

// Only systems with permission bits have files readable by others to
// fix: on Windows every file's mode is 0666 to Go, and a warning on each
// read of a token would be noise that fixes nothing.
func TestReadableByOthers(t *testing.T) {
	for _, c := range []struct {
		goos string
		mode os.FileMode
		want bool
	}{
		{"linux", 0o600, false},
		{"linux", 0o644, true},
		{"darwin", 0o640, true},
		{"windows", 0o666, false},
		{"windows", 0o444, false},
	} {
		if got := readableByOthers(c.goos, c.mode); got != c.want {
			t.Errorf("readableByOthers(%s, %04o) = %v", c.goos, c.mode, got)
		}
	}
	// A token saved and read again is no cause for a warning, here.
	s := NewStore(filepath.Join(t.TempDir(), "auth"))
	var warned []string
	s.Warn = func(m string) { warned = append(warned, m) }
	if err := s.SaveToken(t.Context(), &TokenRecord{Resource: "https://mcp.example.com", Issuer: "https://as", AccessToken: "A"}); err != nil {
		t.Fatal(err)
	}
	if recs, err := s.Tokens(); err != nil || len(recs) != 1 || len(warned) != 0 {
		t.Errorf("Tokens = %d records, %v; warnings %q", len(recs), err, warned)
	}
}
