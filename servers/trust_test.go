package servers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// osEnv is a home and a workspace in temporary directories, read through
// the operating system.
func osEnv(t *testing.T) (*Env, string) {
	t.Helper()
	dir := t.TempDir()
	home, ws := filepath.Join(dir, "home"), filepath.Join(dir, "home", "proj")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return &Env{GOOS: runtime.GOOS, Home: home, Workspace: ws, LookupEnv: func(k string) (string, bool) {
		if k == "APPDATA" || k == "XDG_CONFIG_HOME" {
			return filepath.Join(home, "config"), true
		}
		return "", false
	}}, dir
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func trusted(t *testing.T, store *TrustStore, s *Server) bool {
	t.Helper()
	ok, err := store.Trusted(s)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

func TestTrust(t *testing.T) {
	ctx := context.Background()
	env, dir := osEnv(t)
	project := filepath.Join(env.Workspace, ".cursor", "mcp.json")
	write(t, project, `{"mcpServers": {
  "build": {"command": "./tools/mcp-server", "args": ["--root", "."]},
  "remote": {"url": "https://example.com/mcp"},
  "sock": {"url": "unix:///var/run/docker.sock#/containers/create"},
  "pipe": {"url": "PIPE:///pipe/docker_engine#/mcp"}
}}`)
	store := NewTrustStore(filepath.Join(dir, "state", "mcpx", "trusted.json"))
	store.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	// A socket of this machine (VS Code's unix:// and pipe:// URLs) is
	// whatever local service listens there: asked about, as a command is.
	for _, name := range []string{"sock", "pipe"} {
		if r := one(t, env, name); !r.NeedsTrust() || trusted(t, store, r) {
			t.Errorf("a project's server on a socket (%s) is used without confirmation", r.URL)
		}
	}

	s := one(t, env, "build")
	if !s.NeedsTrust() || trusted(t, store, s) {
		t.Fatalf("a project's stdio command is trusted before any confirmation")
	}
	if r := one(t, env, "remote"); r.NeedsTrust() || !trusted(t, store, r) {
		t.Errorf("an HTTP server needs trust")
	}
	if err := store.Trust(ctx, s); err != nil {
		t.Fatal(err)
	}
	if !trusted(t, store, s) {
		t.Fatal("not trusted after Trust")
	}
	if runtime.GOOS != "windows" {
		for _, p := range []struct {
			path string
			mode os.FileMode
		}{{store.Path(), 0o600}, {filepath.Dir(store.Path()), 0o700}} {
			fi, err := os.Stat(p.path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != p.mode {
				t.Errorf("%s: mode %v, want %v", p.path, fi.Mode().Perm(), p.mode)
			}
		}
	}

	// Reformatting the file keeps the trust; a new command does not.
	write(t, project, "{\n  // reformatted\n  \"mcpServers\": {\"remote\": {\"url\": \"https://example.com/mcp\"},\n"+
		"  \"build\": {\"args\": [\"--root\", \".\"],   \"command\": \"./tools/mcp-server\",}}}")
	if s2 := one(t, env, "build"); !trusted(t, store, s2) || s2.Hash != s.Hash {
		t.Errorf("reformatting the file lost the trust")
	}
	for _, edit := range []string{
		`{"mcpServers": {"build": {"command": "./tools/mcp-server", "args": ["--root", "/"]}}}`,
		`{"mcpServers": {"build": {"command": "./tools/other", "args": ["--root", "."]}}}`,
		`{"mcpServers": {"build": {"command": "./tools/mcp-server", "args": ["--root", "."], "env": {"LD_PRELOAD": "x.so"}}}}`,
	} {
		write(t, project, edit)
		if edited := one(t, env, "build"); trusted(t, store, edited) {
			t.Errorf("edited entry still trusted: %s", edit)
		}
	}

	// The same entry in another file is another decision.
	write(t, project, `{"mcpServers": {"build": {"command": "./tools/mcp-server", "args": ["--root", "."]}}}`)
	user := filepath.Join(env.Home, ".cursor", "mcp.json")
	write(t, user, `{"mcpServers": {"build": {"command": "./tools/mcp-server", "args": ["--root", "."]}}}`)
	c := load(t, env)
	u, err := c.Lookup("cursor:build")
	if err != nil {
		t.Fatal(err)
	}
	if trusted(t, store, u) {
		t.Error("trust of a project entry applies to the user file's entry")
	}
	p, _ := c.Lookup("cursor-project:build")
	if !trusted(t, store, p) {
		t.Error("the original entry is no longer trusted")
	}

	// Trusting an edited entry replaces the old record.
	write(t, project, `{"mcpServers": {"build": {"command": "./tools/mcp-server", "args": ["-v"]}}}`)
	edited := one(t, env, "cursor-project:build")
	if err := store.Trust(ctx, edited); err != nil {
		t.Fatal(err)
	}
	var f trustFile
	data, _ := os.ReadFile(store.Path())
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	diff(t, []trustRecord{{Path: project, Name: "build", Source: "cursor-project", Hash: edited.Hash, Command: []string{"./tools/mcp-server", "-v"},
		At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}, f.Trusted)

	if err := store.Revoke(ctx, edited); err != nil {
		t.Fatal(err)
	}
	if trusted(t, store, edited) {
		t.Error("trusted after Revoke")
	}

	// mcpx's own file needs no trust.
	own, _ := OwnFile(env)
	write(t, own, `{"mcpServers": {"mine": {"command": "./x"}}}`)
	if m := one(t, env, "mine"); m.NeedsTrust() || !trusted(t, store, m) {
		t.Error("mcpx's own entry needs trust")
	}

	write(t, store.Path(), "{not json")
	if _, err := store.Trusted(s); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("damaged store: %v", err)
	}
}

// A project's server at a URL that sends a variable of this machine is
// trusted once confirmed, until its entry changes; the record names its
// URL.
func TestTrustURL(t *testing.T) {
	ctx := context.Background()
	env, dir := osEnv(t)
	project := filepath.Join(env.Workspace, ".mcp.json")
	write(t, project, `{"mcpServers": {"r": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`)
	store := NewTrustStore(filepath.Join(dir, "trusted.json"))
	store.Now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	s := one(t, env, "r")
	if !s.NeedsTrust() || trusted(t, store, s) {
		t.Fatal("a project's URL that sends $TOKEN is trusted before any confirmation")
	}
	if err := store.Trust(ctx, s); err != nil {
		t.Fatal(err)
	}
	if !trusted(t, store, s) {
		t.Fatal("not trusted after Trust")
	}
	var f trustFile
	data, _ := os.ReadFile(store.Path())
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	diff(t, []trustRecord{{Path: project, Name: "r", Source: "claude-code-project", Hash: s.Hash, URL: "https://example.com/mcp",
		At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}, f.Trusted)
	write(t, project, `{"mcpServers": {"r": {"type": "http", "url": "https://elsewhere.example/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}}}`)
	if trusted(t, store, one(t, env, "r")) {
		t.Error("trusted after the URL changed")
	}
}

// TestTrustClaudeScopes: ~/.claude.json holds a server of one name for the
// user and for each project (local scope). Confirming one used to forget
// the others (one record per file and name), so that mcpx asked again and
// again when used in turn. Each entry keeps its own record now.
func TestTrustClaudeScopes(t *testing.T) {
	ctx := context.Background()
	env, dir := osEnv(t)
	other := filepath.Join(env.Home, "other")
	write(t, filepath.Join(env.Home, ".claude.json"), `{"mcpServers": {"db": {"command": "db-user"}},
  "projects": {"`+filepath.ToSlash(env.Workspace)+`": {"mcpServers": {"db": {"command": "db-here"}}},
               "`+filepath.ToSlash(other)+`": {"mcpServers": {"db": {"command": "db-other"}}}}}`)
	if runtime.GOOS == "windows" {
		t.Skip("project keys are written with forward slashes here")
	}
	store := NewTrustStore(filepath.Join(dir, "trusted.json"))
	user := one(t, env, "claude-code:db")
	here := one(t, env, "claude-code-local:db")
	envOther := *env
	envOther.Workspace = other
	there := one(t, &envOther, "claude-code-local:db")
	for _, s := range []*Server{user, here, there} {
		if err := store.Trust(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []*Server{user, here, there} {
		if !trusted(t, store, s) {
			t.Errorf("%s (%s, workspace %q) no longer trusted after the others were confirmed", s.Ref(), s.Command, s.Source.Workspace)
		}
	}
	if err := store.Revoke(ctx, here); err != nil {
		t.Fatal(err)
	}
	if trusted(t, store, here) || !trusted(t, store, user) || !trusted(t, store, there) {
		t.Error("Revoke forgot another entry than its own")
	}
}

// TestTrustRecordHidesCredentials: a record showed the URL as written, so
// trusted.json held a copy of a password or token written into it.
func TestTrustRecordHidesCredentials(t *testing.T) {
	for raw, want := range map[string]string{
		"https://u:pw@h.example/mcp?token=t&x=1": "https://u@h.example/mcp",
		"https://h.example/mcp":                  "https://h.example/mcp",
		"http://[::1":                            "",
	} {
		if got := recordedURL(raw); got != want {
			t.Errorf("recordedURL(%q) = %q, want %q", raw, got, want)
		}
	}
}
