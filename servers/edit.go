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
	"slices"

	"github.com/mcpx-dev/mcpx/internal/outfile"
)

// ErrExists is Add's error (wrapped) for a name the file already has,
// when replacing was not asked for.
var ErrExists = errors.New("a server of that name already exists")

// CommentsError is the error of Add and Remove when mcpx's file has
// comments. mcpx rewrites the whole file and cannot keep them, so it
// leaves the file as it is rather than drop them: the person edits it by
// hand, or removes the comments.
type CommentsError struct {
	Path string
	// Line is the line of the first comment.
	Line int
}

func (e *CommentsError) Error() string {
	return fmt.Sprintf("%s has comments (line %d) that mcpx would lose by rewriting it; edit the file by hand, or remove its comments first", e.Path, e.Line)
}

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
// is an error wrapping ErrExists unless replace is set. The file is
// rewritten, keeping its other fields and the order of its entries, but
// not its layout; a file with comments is refused with a *CommentsError.
// It is written atomically with mode 0600, since it may hold secrets.
func Add(ctx context.Context, path, name string, s *Server, replace bool) error {
	if !ValidName(name) {
		return fmt.Errorf("%q: %w", name, ErrBadName)
	}
	def, err := definitionJSON(s)
	if err != nil {
		return err
	}
	return editOwn(ctx, path, func(servers *[]ownMember) error {
		// Backwards: of two entries of one name, the last one is read.
		for i := len(*servers) - 1; i >= 0; i-- {
			if (*servers)[i].name != name {
				continue
			}
			if !replace {
				return fmt.Errorf("%q in %s: %w", name, path, ErrExists)
			}
			(*servers)[i].value = def
			return nil
		}
		key, err := marshal(name)
		if err != nil {
			return err
		}
		*servers = append(*servers, ownMember{name: name, key: key, value: def})
		return nil
	})
}

// Remove deletes name from mcpx's own file at path, each entry of it if
// the file has several; a name the file does not have is an error
// wrapping ErrNotFound. As with Add, a file with comments is refused
// with a *CommentsError.
func Remove(ctx context.Context, path, name string) error {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		// Nothing to remove from: create neither the directory nor the
		// lock file.
		return fmt.Errorf("%q in %s: %w", name, path, ErrNotFound)
	}
	return editOwn(ctx, path, func(servers *[]ownMember) error {
		// Every entry of the name: of two, Load reads the last one.
		n := len(*servers)
		*servers = slices.DeleteFunc(*servers, func(m ownMember) bool { return m.name == name })
		if len(*servers) == n {
			return fmt.Errorf("%q in %s: %w", name, path, ErrNotFound)
		}
		return nil
	})
}

// ownMember is a member of an object of mcpx's file: its name, and its
// name and value as written (standard JSON).
type ownMember struct {
	name       string
	key, value []byte
}

// editOwn reads mcpx's file (an empty document when missing), lets change
// edit the members of its mcpServers object, and writes it back, holding
// the file's lock (lockFor) throughout.
func editOwn(ctx context.Context, path string, change func(*[]ownMember) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the directory of %s: %s", path, bareError(err))
	}
	// Two edits at once must not both read the old file: the second
	// write would drop the first one's entry.
	unlock, err := lockFor(ctx, path)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := readFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		data = []byte("{}")
	} else if err != nil {
		return fmt.Errorf("reading %s: %s", path, bareError(err))
	}
	std, root, err := parseJSONC(data)
	if err != nil {
		where := ""
		if se := (*jsonSyntaxError)(nil); errors.As(err, &se) && se.Line > 0 {
			where = fmt.Sprintf("line %d: ", se.Line)
		}
		return fmt.Errorf("%s is not valid JSON (%s%v); fix it by hand first", path, where, err)
	}
	if line := commentLine(data, std); line > 0 {
		return &CommentsError{Path: path, Line: line}
	}
	if !root.object {
		return fmt.Errorf("%s is not a JSON object; fix it by hand first", path)
	}
	top := ownMembers(std, root.members)
	at := -1
	for i, m := range root.members {
		if m.name == "mcpServers" {
			at = i // the last one counts, as when reading
		}
	}
	var servers []ownMember
	if at >= 0 {
		v := root.members[at].value
		if !v.object {
			return fmt.Errorf("mcpServers in %s is not an object; fix it by hand first", path)
		}
		servers = ownMembers(std, v.members)
	} else {
		top = append(top, ownMember{name: "mcpServers", key: []byte(`"mcpServers"`)})
		at = len(top) - 1
	}
	if err := change(&servers); err != nil {
		return err
	}
	top[at].value = objectJSON(servers)
	var out bytes.Buffer
	if err := json.Indent(&out, objectJSON(top), "", "  "); err != nil {
		return fmt.Errorf("editing %s made invalid JSON (%v); the file is left as it was", path, err)
	}
	out.WriteByte('\n')
	if err := outfile.WriteFile(ctx, path, out.Bytes(), outfile.Options{Perm: 0o600}); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// commentLine is the line of the first comment in data, whose standard
// JSON form is std; 0 when there is none. Comments are what ToJSON blanks
// out, besides trailing commas.
func commentLine(data, std []byte) int {
	start := 0
	if bytes.HasPrefix(data, []byte(utf8BOM)) {
		start = len(utf8BOM) // blanked out too, but not a comment
	}
	for i := start; i < len(data); i++ {
		if data[i] != std[i] && data[i] != ',' {
			return lineAt(data, i)
		}
	}
	return 0
}

func ownMembers(std []byte, ms []jsonMember) []ownMember {
	out := make([]ownMember, len(ms))
	for i, m := range ms {
		out[i] = ownMember{name: m.name, key: std[m.nameStart:m.nameEnd], value: std[m.value.start:m.value.end]}
	}
	return out
}

// objectJSON is the JSON object of ms, in order.
func objectJSON(ms []ownMember) []byte {
	b := []byte{'{'}
	for i, m := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m.key...)
		b = append(b, ':')
		b = append(b, m.value...)
	}
	return append(b, '}')
}

// marshal is v as JSON, leaving <, > and & as they are (a URL's query
// reads better so).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// definitionJSON is s as an entry of mcpx's file.
func definitionJSON(s *Server) ([]byte, error) {
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
			return nil, errors.New("a stdio server needs a command")
		}
		d = def{Type: string(TransportStdio), Command: s.Command, Args: s.Args, Env: s.Env, EnvFile: s.EnvFile, Cwd: s.Cwd}
	case TransportHTTP, TransportSSE, TransportAuto:
		// (unix:///PATH is a server on a socket, as VS Code writes one:
		// socketURL.)
		u, err := url.Parse(s.URL)
		if err != nil || !((u.Scheme == "http" || u.Scheme == "https") && u.Host != "" || socketURL(s.URL) && u.Path != "") {
			return nil, fmt.Errorf("%q is not an http://, https:// or unix:// URL", s.URL)
		}
		d = def{Command: "", URL: s.URL, Headers: s.Headers}
		if s.Transport != TransportAuto {
			d.Type = string(s.Transport)
		}
	default:
		return nil, fmt.Errorf("unknown transport %q", s.Transport)
	}
	return marshal(d)
}
