package servers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcpx-dev/mcpx/internal/outfile"
)

// TrustStore remembers which server definitions the person has confirmed:
// one record per file, entry name and entry Hash, so that an edited entry
// (another command, other arguments, another environment) is asked about
// again. It is a JSON file, private to the user (0600 in a 0700
// directory), replaced atomically on every change. The library only
// records decisions; asking is the caller's.
type TrustStore struct {
	path string
	// Now stamps new records; nil means time.Now.
	Now func() time.Time
}

// trustFile is the stored form.
type trustFile struct {
	Version int           `json:"version"`
	Trusted []trustRecord `json:"trusted"`
}

type trustRecord struct {
	Path string `json:"path"`
	Name string `json:"name"`
	// Source and Workspace tell apart the entries of one name in one
	// file (~/.claude.json's user scope and each project's local scope);
	// records written before they were kept have neither.
	Source    string `json:"source,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Hash      string `json:"hash"`
	// Command or URL is what was confirmed, for a person reading the
	// file.
	Command []string  `json:"command,omitempty"`
	URL     string    `json:"url,omitempty"`
	At      time.Time `json:"at"`
}

// NewTrustStore returns the store kept in the file at path
// (DefaultTrustFile). Nothing is created until something is trusted.
func NewTrustStore(path string) *TrustStore { return &TrustStore{path: path} }

// Path is the store's file.
func (t *TrustStore) Path() string { return t.path }

func (t *TrustStore) read() (*trustFile, error) {
	data, err := readFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &trustFile{Version: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the trust store %s: %s", t.path, bareError(err))
	}
	var f trustFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("the trust store %s is damaged (%v); remove it to start afresh", t.path, err)
	}
	return &f, nil
}

func (r trustRecord) matches(s *Server) bool {
	return r.Path == s.Source.Path && r.Name == s.Name && r.Hash == s.Hash
}

// of reports whether r is a record of s's entry, whatever its content.
func (r trustRecord) of(s *Server) bool {
	return r.Path == s.Source.Path && r.Name == s.Name && (r.Source == "" || r.Source == s.Source.ID) &&
		r.Workspace == recordedWorkspace(s)
}

// recordedWorkspace is the workspace a record keeps: Claude Code's local
// scope's, which tells apart entries of one file. A project file's is
// its path's, and is not kept.
func recordedWorkspace(s *Server) string {
	if s.Source.Scope == ScopeLocal {
		return s.Source.Workspace
	}
	return ""
}

// Trusted reports whether the person has confirmed s as it is now. A
// server that does not need trust (NeedsTrust false) is trusted.
func (t *TrustStore) Trusted(s *Server) (bool, error) {
	if !s.NeedsTrust() {
		return true, nil
	}
	f, err := t.read()
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(f.Trusted, func(r trustRecord) bool { return r.matches(s) }), nil
}

// Trust records that the person confirmed s as it is now. Earlier records
// of the same entry (older contents) are replaced.
func (t *TrustStore) Trust(ctx context.Context, s *Server) error {
	return t.update(ctx, func(f *trustFile) {
		f.Trusted = slices.DeleteFunc(f.Trusted, func(r trustRecord) bool { return r.of(s) })
		now := time.Now
		if t.Now != nil {
			now = t.Now
		}
		r := trustRecord{Path: s.Source.Path, Name: s.Name, Source: s.Source.ID, Workspace: recordedWorkspace(s),
			Hash: s.Hash, URL: recordedURL(s.URL), At: now().UTC()}
		if s.Transport == TransportStdio {
			r.Command = append([]string{s.Command}, s.Args...)
		}
		f.Trusted = append(f.Trusted, r)
	})
}

// Revoke forgets every record of s's entry (whatever its content).
func (t *TrustStore) Revoke(ctx context.Context, s *Server) error {
	return t.update(ctx, func(f *trustFile) {
		f.Trusted = slices.DeleteFunc(f.Trusted, func(r trustRecord) bool { return r.of(s) })
	})
}

func (t *TrustStore) update(ctx context.Context, change func(*trustFile)) error {
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return fmt.Errorf("creating the trust store's directory: %s", bareError(err))
	}
	// Two confirmations at once must both be kept.
	unlock, err := lockFor(ctx, t.path)
	if err != nil {
		return err
	}
	defer unlock()
	f, err := t.read()
	if err != nil {
		return err
	}
	change(f)
	f.Version = 1
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := outfile.WriteFile(ctx, t.path, append(data, '\n'), outfile.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("writing the trust store %s: %w", t.path, err)
	}
	return nil
}

// recordedURL is the URL a record shows a person: without a password and
// without its query, either of which may hold a credential written into
// the entry. The record is told apart by its Hash, not by this.
func recordedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	u.RawQuery, u.ForceQuery = "", false
	return u.String()
}
