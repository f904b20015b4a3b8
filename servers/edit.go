package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/tailscale/hujson"
)

// ErrExists is Add's error (wrapped) for a name the file already has,
// when replacing was not asked for.
var ErrExists = errors.New("a server of that name already exists")

// ErrBadName is Add's error (wrapped) for a name that cannot be used.
var ErrBadName = errors.New("a server name is letters, digits, '.', '_' and '-', not starting with '-' or '.'")

// ValidName reports whether name can name a server in mcpx's file: it
// must survive a shell, a SOURCE:NAME reference and an @NAME session
// reference unchanged.
func ValidName(name string) bool {
	if name == "" || name[0] == '-' || name[0] == '.' {
		return false
	}
	for _, c := range name {
		if !(c == '-' || c == '_' || c == '.' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9')) {
			return false
		}
	}
	return true
}

// Add writes the definition s under name into mcpx's own file at path
// (OwnFile), creating the file if needed. Of s only the definition is
// used: Transport, Command, Args, Env, EnvFile, Cwd for stdio; Transport,
// URL, Headers otherwise (TransportAuto writes no type). An existing name
// is an error wrapping ErrExists unless replace is set. The file keeps its
// comments; it is written atomically with mode 0600, since it may hold
// secrets.
func Add(ctx context.Context, path, name string, s *Server, replace bool) error {
	if !ValidName(name) {
		return fmt.Errorf("%q: %w", name, ErrBadName)
	}
	def, err := definitionJSON(s)
	if err != nil {
		return err
	}
	return editOwn(ctx, path, func(root *hujson.Value, servers *hujson.Object) error {
		for i := range servers.Members {
			if servers.Members[i].Name.Value.(hujson.Literal).String() != name {
				continue
			}
			if !replace {
				return fmt.Errorf("%q in %s: %w", name, path, ErrExists)
			}
			servers.Members[i].Value.Value = def.Value
			return nil
		}
		// A comment on the line of the last member stays there: it is
		// in the object's closing extra, which the new member would
		// otherwise come before.
		var before hujson.Extra
		if nl := bytes.IndexByte(servers.AfterExtra, '\n'); nl >= 0 && len(servers.Members) > 0 {
			before, servers.AfterExtra = servers.AfterExtra[:nl+1], servers.AfterExtra[nl+1:]
		}
		servers.Members = append(servers.Members, hujson.ObjectMember{
			Name: hujson.Value{BeforeExtra: before, Value: hujson.String(name)}, Value: def})
		return nil
	})
}

// Remove deletes name from mcpx's own file at path; a name the file does
// not have is an error wrapping ErrNotFound.
func Remove(ctx context.Context, path, name string) error {
	return editOwn(ctx, path, func(root *hujson.Value, servers *hujson.Object) error {
		for i := range servers.Members {
			if servers.Members[i].Name.Value.(hujson.Literal).String() == name {
				servers.Members = append(servers.Members[:i], servers.Members[i+1:]...)
				return nil
			}
		}
		return fmt.Errorf("%q in %s: %w", name, path, ErrNotFound)
	})
}

// editOwn reads mcpx's file (an empty document when missing), lets change
// edit its mcpServers object, and writes it back.
func editOwn(ctx context.Context, path string, change func(*hujson.Value, *hujson.Object) error) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte("{}")
	} else if err != nil {
		return fmt.Errorf("reading %s: %s", path, bareError(err))
	}
	root, err := hujson.Parse(data)
	if err != nil {
		return fmt.Errorf("%s is not valid JSON (%s); fix it by hand first", path, strings.TrimPrefix(err.Error(), "hujson: "))
	}
	obj, ok := root.Value.(*hujson.Object)
	if !ok {
		return fmt.Errorf("%s is not a JSON object; fix it by hand first", path)
	}
	var servers *hujson.Object
	for i := range obj.Members {
		if obj.Members[i].Name.Value.(hujson.Literal).String() == "mcpServers" {
			servers, ok = obj.Members[i].Value.Value.(*hujson.Object)
			if !ok {
				return fmt.Errorf("mcpServers in %s is not an object; fix it by hand first", path)
			}
		}
	}
	if servers == nil {
		obj.Members = append(obj.Members, hujson.ObjectMember{
			Name: hujson.Value{Value: hujson.String("mcpServers")}, Value: hujson.Value{Value: &hujson.Object{}}})
		servers = obj.Members[len(obj.Members)-1].Value.Value.(*hujson.Object)
	}
	if err := change(&root, servers); err != nil {
		return err
	}
	want, err := standardValue(&root)
	if err != nil {
		return fmt.Errorf("editing %s: %w", path, err)
	}
	root.Format()
	out := root.Pack()
	// The formatter moves comments around; make sure that what is
	// written reads back as exactly the data intended.
	check, err := hujson.Parse(out)
	if err != nil {
		return fmt.Errorf("editing %s made invalid JSON (%v); the file is left as it was", path, err)
	}
	if got, err := standardValue(&check); err != nil || !reflect.DeepEqual(got, want) {
		return fmt.Errorf("editing %s would change more than asked; the file is left as it was", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the directory of %s: %s", path, bareError(err))
	}
	if err := outfile.WriteFile(ctx, path, out, outfile.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// standardValue is the data of v, comments aside. (Standardize works in
// place, on bytes the value shares with its source: it is run on a packed
// copy.)
func standardValue(v *hujson.Value) (any, error) {
	std, err := hujson.Standardize(v.Pack())
	if err != nil {
		return nil, err
	}
	var out any
	err = decode(std, &out)
	return out, err
}

// definitionJSON is s as an entry of mcpx's file.
func definitionJSON(s *Server) (hujson.Value, error) {
	type def struct {
		Type    string            `json:"type,omitempty"`
		Command string            `json:"command,omitempty"`
		Args    []string          `json:"args,omitempty"`
		Env     map[string]string `json:"env,omitempty"`
		EnvFile string            `json:"envFile,omitempty"`
		Cwd     string            `json:"cwd,omitempty"`
		URL     string            `json:"url,omitempty"`
		Headers map[string]string `json:"headers,omitempty"`
	}
	var d def
	switch s.Transport {
	case TransportStdio, "":
		if s.Command == "" {
			return hujson.Value{}, errors.New("a stdio server needs a command")
		}
		d = def{Type: string(TransportStdio), Command: s.Command, Args: s.Args, Env: s.Env, EnvFile: s.EnvFile, Cwd: s.Cwd}
	case TransportHTTP, TransportSSE, TransportAuto:
		u, err := url.Parse(s.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return hujson.Value{}, fmt.Errorf("%q is not an http:// or https:// URL", s.URL)
		}
		d = def{Command: "", URL: s.URL, Headers: s.Headers}
		if s.Transport != TransportAuto {
			d.Type = string(s.Transport)
		}
	default:
		return hujson.Value{}, fmt.Errorf("unknown transport %q", s.Transport)
	}
	b, err := json.Marshal(d)
	if err != nil {
		return hujson.Value{}, err
	}
	return hujson.Parse(b)
}
