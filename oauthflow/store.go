package oauthflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/internal/filelock"
	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/transport"
)

// Client is how mcpx identifies itself to an authorization server.
type Client struct {
	ID string `json:"client_id"`
	// Secret is the client secret, "" for a public client.
	Secret string `json:"client_secret,omitempty"`
	// AuthMethod is the token endpoint authentication method: none,
	// client_secret_basic, client_secret_post or private_key_jwt.
	AuthMethod string `json:"token_endpoint_auth_method"`
	// PrivateKeyFile is the key signing private_key_jwt assertions (the
	// path, never the key).
	PrivateKeyFile string `json:"private_key_file,omitempty"`
	// Source says how the client was obtained: "pre-registered",
	// "client ID metadata document" or "dynamic registration".
	Source string `json:"source"`
	// RedirectURIs are the registered redirect URIs (dynamic registration).
	RedirectURIs []string `json:"redirect_uris,omitempty"`
	// SecretExpiresAt is the registration's client_secret_expires_at
	// (seconds since the epoch, 0 for never).
	SecretExpiresAt int64 `json:"client_secret_expires_at,omitempty"`
}

// TokenRecord is a stored token with what is needed to use and refresh it.
// It is keyed by the resource and the authorization server's issuer.
type TokenRecord struct {
	Version       int    `json:"version"`
	Resource      string `json:"resource"`
	Issuer        string `json:"issuer"`
	TokenEndpoint string `json:"token_endpoint"`
	// Grant is how the token was obtained: authorization_code,
	// client_credentials or id-jag.
	Grant       string `json:"grant"`
	Client      Client `json:"client"`
	AccessToken string `json:"access_token"`
	// TokenType is the token_type the authorization server issued: Bearer,
	// or DPoP for a token bound to DPoPKey.
	TokenType string `json:"token_type,omitempty"`
	// DPoPKey is the private key a DPoP-bound token is bound to (RFC 9449;
	// PKCS #8, base64): the token is useless without it, so it is kept
	// with it, in the same private file.
	DPoPKey         string    `json:"dpop_key,omitempty"`
	RefreshToken    string    `json:"refresh_token,omitempty"`
	Expiry          time.Time `json:"expiry,omitzero"`
	Scopes          []string  `json:"scopes,omitempty"`
	RequestedScopes []string  `json:"requested_scopes,omitempty"`
	Obtained        time.Time `json:"obtained"`
	Updated         time.Time `json:"updated"`

	file string
	dpop *dpopKey // DPoPKey, parsed
}

// DPoPBound reports whether the token is DPoP-bound (RFC 9449): a server
// takes it only with a proof signed by the key stored with it.
func (r *TokenRecord) DPoPBound() bool { return strings.EqualFold(r.TokenType, tokenTypeDPoP) }

// File is where the record is stored, "" when it is not.
func (r *TokenRecord) File() string { return r.file }

// Registration is a client registered dynamically (RFC 7591), kept per
// authorization server (spec draft: basic/authorization/client-registration,
// "Authorization Server Binding").
type Registration struct {
	Version              int       `json:"version"`
	Issuer               string    `json:"issuer"`
	RegistrationEndpoint string    `json:"registration_endpoint"`
	Client               Client    `json:"client"`
	Registered           time.Time `json:"registered"`
}

// Store keeps tokens and client registrations as JSON files in one
// directory, one file per token (per resource and issuer) and per
// registration (per issuer), so that runs storing different servers'
// tokens never touch each other's files: the directory is 0700, every
// file 0600 and written atomically (a temporary file of a unique name
// renamed over the old one), so a crash never leaves a half-written
// token. A token is refreshed and written holding its lock (LockToken).
type Store struct {
	dir string
	// Warn is told about stored files that had to be fixed or skipped,
	// once per message: a run reads the store more than once (a long
	// session, whenever the server refuses its token), and a file it
	// skips stays skipped.
	Warn func(string)

	warnMu sync.Mutex
	warned map[string]bool
}

// StoreDir returns the directory mcpx keeps authorization state in:
// $MCPX_CONFIG_DIR/auth when MCPX_CONFIG_DIR is set, else
// <user config dir>/mcpx/auth (os.UserConfigDir: $XDG_CONFIG_HOME or
// ~/.config on Linux).
func StoreDir(getenv func(string) string) (string, error) {
	if d := getenv("MCPX_CONFIG_DIR"); d != "" {
		return filepath.Join(d, "auth"), nil
	}
	cfg, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no configuration directory to keep tokens in (%v); set MCPX_CONFIG_DIR", err)
	}
	return filepath.Join(cfg, "mcpx", "auth"), nil
}

// NewStore returns the store in dir. Nothing is created until something
// is saved.
func NewStore(dir string) *Store { return &Store{dir: dir} }

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) warn(format string, args ...any) {
	if s.Warn == nil {
		return
	}
	msg := fmt.Sprintf(format, args...)
	s.warnMu.Lock()
	said := s.warned[msg]
	if !said && len(s.warned) < maxWarned {
		if s.warned == nil {
			s.warned = map[string]bool{}
		}
		s.warned[msg] = true
	}
	s.warnMu.Unlock()
	if !said {
		s.Warn(msg)
	}
}

// maxWarned bounds how many warnings a Store remembers having said.
const maxWarned = 64

func hashKey(parts ...string) string {
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(sum[:10])
}

func (s *Store) tokenFile(resource, issuer string) string {
	return filepath.Join(s.dir, "token-"+hashKey(resource, issuer)+".json")
}

func (s *Store) clientFile(issuer string) string {
	return filepath.Join(s.dir, "client-"+hashKey(issuer)+".json")
}

// ensureDir creates the directory (and missing parents) with mode 0700,
// and tightens it to 0700 if it exists with a looser mode.
func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("creating the token store %s: %w", s.dir, err)
	}
	fi, err := os.Stat(s.dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != 0o700 {
		if err := os.Chmod(s.dir, 0o700); err != nil {
			return fmt.Errorf("making %s private: %w", s.dir, err)
		}
	}
	return nil
}

// writeFile writes v as JSON to name with mode 0600, atomically (see
// internal/outfile: a temporary file beside it, synced, renamed over it).
// The store's files are mcpx's own, so nothing waits here: no context.
func (s *Store) writeFile(name string, v any) error {
	if err := s.ensureDir(); err != nil {
		return err
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(context.Background(), name, append(data, '\n'), outfile.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// readFile decodes the JSON file name into v. A file readable by others
// is made private first.
func (s *Store) readFile(name string, v any) error {
	fi, err := os.Stat(name)
	if err != nil {
		return err
	}
	if readableByOthers(runtime.GOOS, fi.Mode()) {
		if err := os.Chmod(name, 0o600); err != nil {
			return fmt.Errorf("%s is readable by others and cannot be made private: %w", name, err)
		}
		s.warn("%s was readable by others (mode %04o); made it 0600", name, fi.Mode().Perm())
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		problem, ok := timeProblem(data, v)
		if !ok {
			problem = jsonProblem(data, err, false)
		}
		return fmt.Errorf("%s: not a file mcpx stored: %s", name, problem)
	}
	return nil
}

// timeProblem names the field of v (a pointer to a struct) whose time in
// data is not an RFC 3339 time, as mcpx writes them: encoding/json
// reports only the time package's parse error, which names neither the
// field nor the format plainly.
func timeProblem(data []byte, v any) (string, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(data, &fields) != nil {
		return "", false
	}
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return "", false
	}
	t = t.Elem()
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Type != reflect.TypeFor[time.Time]() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		raw, ok := fields[key]
		if !ok {
			continue
		}
		var tm time.Time
		if json.Unmarshal(raw, &tm) == nil {
			continue
		}
		// (Not quoted: the file holds secrets, and a hand edit may have
		// put one in the wrong place.)
		if kind := rawjson.Kind(raw); kind != "a string" {
			return fmt.Sprintf("its %s is %s, not an RFC 3339 time", key, kind), true
		}
		return fmt.Sprintf("its %s is not an RFC 3339 time", key), true
	}
	return "", false
}

// readableByOthers reports whether a file of mode m on the system goos
// lets other users read it. Windows has no such bits: Go reports every
// file there as 0666 (0444 when read-only) whatever its ACL says, and
// chmod only sets the read-only attribute, so the check would warn on
// every read and fix nothing; the store's privacy there is its
// directory's ACL (%APPDATA% is the user's own).
func readableByOthers(goos string, m fs.FileMode) bool {
	return goos != "windows" && m.Perm()&0o077 != 0
}

// replaceable checks that the file name, about to be replaced, is
// missing or one mcpx can read into v: a file that does not decode (cut
// short by a full disk, edited by hand, written by something else) may
// hold the only copy of a refresh token or a client secret, and mcpx
// must not lose it without a word. Reading skips such a file with a
// warning (Tokens); writing over it is refused, saying why, and the new
// token is then used for the run only.
func (s *Store) replaceable(name string, v any) error {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot read %s to replace it: %w", name, err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is not a file mcpx stored (%s): mcpx does not write over it; repair it or remove it", name, jsonProblem(data, err, false))
	}
	return nil
}

// storeLockWait bounds every wait for the lock of a stored token: it is
// held for one refresh (one token request) or one write at most, so a
// longer wait means that its holder is stuck.
var storeLockWait = 60 * time.Second

// ErrStoreLocked is matched by the error of a run that could not take the
// lock of a stored token (LockToken): another mcpx run held it for longer
// than a refresh takes, or an error kept it from being taken.
var ErrStoreLocked = errors.New("cannot take the lock of the stored token")

// LockToken takes the lock of the stored token for resource and issuer
// (internal/filelock: the file beside it, NAME.lock), waiting for another
// mcpx run that holds it until ctx ends or storeLockWait passes, and
// returns the function that lets go of it. Runs that use the same token
// hold it while they read the stored token, refresh it if it still needs
// it and store the new one: a refresh token an authorization server
// rotates (RFC 6749 section 10.4; OAuth 2.1 section 4.3.1) is then sent
// once, and the next run finds the new token instead of sending the old
// refresh token again, which the server would refuse (invalid_grant) and
// might answer by revoking the whole grant.
func (s *Store) LockToken(ctx context.Context, resource, issuer string) (unlock func(), err error) {
	return s.lockToken(ctx, resource, issuer, nil)
}

// lockToken is LockToken, calling waiting when it has to wait.
func (s *Store) lockToken(ctx context.Context, resource, issuer string, waiting func(lockFile string)) (unlock func(), err error) {
	name := s.tokenFile(resource, issuer)
	if _, err := os.Stat(s.dir); errors.Is(err, fs.ErrNotExist) {
		// The lock file goes beside the token, in the store. (An existing
		// store is left as it is: in one that cannot be written, the
		// token file itself is locked.)
		if err := s.ensureDir(); err != nil {
			return nil, fmt.Errorf("%w %s: %w", ErrStoreLocked, name, err)
		}
	}
	l := filelock.New(name)
	if waiting != nil {
		l.OnWait = func() { waiting(l.Path()) }
	}
	err = l.Lock(ctx, storeLockWait)
	var be *filelock.BusyError
	switch {
	case err == nil:
		return l.Close, nil
	case !errors.As(err, &be):
		l.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrStoreLocked, name, err)
	case be.Err != nil:
		l.Close()
		return nil, &transport.WaitError{For: fmt.Sprintf("waiting for the lock %s of the stored token, held by another mcpx run", be.Path), Err: be.Err}
	}
	l.Close()
	return nil, fmt.Errorf("%w %s: another mcpx run held its lock %s for %s; is it stuck refreshing the token?", ErrStoreLocked, name, be.Path, be.Waited.Round(time.Second))
}

// SaveToken stores rec (replacing the record for the same resource and
// issuer), holding the lock of the stored token (LockToken).
func (s *Store) SaveToken(ctx context.Context, rec *TokenRecord) error {
	unlock, err := s.LockToken(ctx, rec.Resource, rec.Issuer)
	if err != nil {
		return err
	}
	defer unlock()
	return s.saveToken(rec)
}

// saveToken is SaveToken for a caller that holds the lock.
func (s *Store) saveToken(rec *TokenRecord) error {
	rec.Version = 1
	name := s.tokenFile(rec.Resource, rec.Issuer)
	if err := s.replaceable(name, &TokenRecord{}); err != nil {
		return err
	}
	if err := s.writeFile(name, rec); err != nil {
		return err
	}
	rec.file = name
	return nil
}

// Tokens returns every stored token record, most recently updated first.
// Unreadable files are skipped with a warning.
func (s *Store) Tokens() ([]*TokenRecord, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the token store: %w", err)
	}
	var out []*TokenRecord
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasPrefix(n, "token-") || !strings.HasSuffix(n, ".json") {
			continue
		}
		rec := &TokenRecord{}
		p := filepath.Join(s.dir, n)
		if err := s.readFile(p, rec); err != nil {
			s.warn("skipping %v", err)
			continue
		}
		if rec.Resource == "" || rec.AccessToken == "" {
			s.warn("skipping %s: it holds no resource or token", p)
			continue
		}
		if rec.unsendable() {
			s.warn("skipping %s: its token has characters no token may have (RFC 6749 Appendix A: printable ASCII only)", p)
			continue
		}
		rec.file = p
		out = append(out, rec)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// unsendable reports a record whose access or refresh token has a
// character no token may have (RFC 6749 Appendix A: printable ASCII
// only): not one mcpx stored (checkToken), it could not be sent in a
// header, nor printed as it is.
func (rec *TokenRecord) unsendable() bool {
	return badTokenChar(rec.AccessToken) >= 0 || rec.RefreshToken != "" && badTokenChar(rec.RefreshToken) >= 0
}

// Token returns the stored record for resource and issuer, nil when there
// is none (or none usable: see Tokens).
func (s *Store) Token(resource, issuer string) (*TokenRecord, error) {
	p := s.tokenFile(resource, issuer)
	rec := &TokenRecord{}
	err := s.readFile(p, rec)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rec.Resource != resource || rec.Issuer != issuer || rec.AccessToken == "" ||
		rec.unsendable() {
		return nil, nil
	}
	rec.file = p
	return rec, nil
}

// Matching returns the records whose resource covers serverURL, the most
// specific resource first, then the most recently updated.
func (s *Store) Matching(serverURL string) ([]*TokenRecord, error) {
	all, err := s.Tokens()
	if err != nil {
		return nil, err
	}
	var out []*TokenRecord
	for _, r := range all {
		if Covers(r.Resource, serverURL) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i].Resource) > len(out[j].Resource) })
	return out, nil
}

// DeleteToken removes a stored record, holding its lock (LockToken): a
// refresh under way in another run then finishes first, and does not
// store the token again after it.
func (s *Store) DeleteToken(ctx context.Context, rec *TokenRecord) error {
	unlock, err := s.LockToken(ctx, rec.Resource, rec.Issuer)
	if err != nil {
		return err
	}
	defer unlock()
	return s.deleteToken(rec)
}

// deleteToken is DeleteToken for a caller that holds the lock.
func (s *Store) deleteToken(rec *TokenRecord) error {
	name := rec.file
	if name == "" {
		name = s.tokenFile(rec.Resource, rec.Issuer)
	}
	if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeLocked removes the token file name holding its lock.
func (s *Store) removeLocked(ctx context.Context, name string) error {
	l := filelock.New(name)
	defer l.Close()
	if err := l.Lock(ctx, storeLockWait); err != nil {
		return fmt.Errorf("%w %s: %w", ErrStoreLocked, name, err)
	}
	return os.Remove(name)
}

// Registration returns the stored dynamic registration for issuer, nil
// when there is none.
func (s *Store) Registration(issuer string) (*Registration, error) {
	reg := &Registration{}
	err := s.readFile(s.clientFile(issuer), reg)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if reg.Issuer != issuer || reg.Client.ID == "" {
		return nil, nil
	}
	return reg, nil
}

// SaveRegistration stores a dynamic registration.
func (s *Store) SaveRegistration(reg *Registration) error {
	reg.Version = 1
	name := s.clientFile(reg.Issuer)
	if err := s.replaceable(name, &Registration{}); err != nil {
		return err
	}
	return s.writeFile(name, reg)
}

// DeleteAll removes every token and registration mcpx stored, and reports
// how many files it removed. Each token is removed holding its lock, as
// DeleteToken does.
func (s *Store) DeleteAll(ctx context.Context) (int, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		name := e.Name()
		// Temporary files a crash left: .NAME.tmp-* (and .tmp-* from
		// earlier versions).
		temp := strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
		if e.IsDir() || !strings.HasSuffix(name, ".json") && !temp {
			continue
		}
		p := filepath.Join(s.dir, name)
		var err error
		if strings.HasPrefix(name, "token-") && strings.HasSuffix(name, ".json") {
			err = s.removeLocked(ctx, p)
		} else {
			err = os.Remove(p)
		}
		if err != nil {
			return n, err
		}
		if strings.HasSuffix(name, ".json") {
			n++
		}
	}
	return n, nil
}
