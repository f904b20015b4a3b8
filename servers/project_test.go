package servers

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestProjectRoot(t *testing.T) {
	tests := []struct {
		name  string
		goos  string
		files mapFS
		dir   string
		want  string
	}{{
		name:  "a subdirectory of a repository",
		files: mapFS{"/home/ada/repo/.git/HEAD": ""},
		dir:   "/home/ada/repo/src/pkg",
		want:  "/home/ada/repo",
	}, {
		name:  "the repository's root",
		files: mapFS{"/home/ada/repo/.git/HEAD": ""},
		dir:   "/home/ada/repo",
		want:  "/home/ada/repo",
	}, {
		name:  "a worktree, whose .git is a file",
		files: mapFS{"/home/ada/wt/.git": "gitdir: /home/ada/repo/.git/worktrees/wt"},
		dir:   "/home/ada/wt/a",
		want:  "/home/ada/wt",
	}, {
		name:  "a submodule is the nearest project",
		files: mapFS{"/home/ada/repo/.git/HEAD": "", "/home/ada/repo/lib/.git": "gitdir: ../.git/modules/lib"},
		dir:   "/home/ada/repo/lib/x",
		want:  "/home/ada/repo/lib",
	}, {
		name:  "no .git: the directory alone",
		files: mapFS{"/home/ada/plain/.mcp.json": "{}"},
		dir:   "/home/ada/plain/sub",
		want:  "/home/ada/plain/sub",
	}, {
		name:  "a home directory in git is not the project of the directories below it",
		files: mapFS{"/home/ada/.git/HEAD": ""},
		dir:   "/home/ada/notes/a",
		want:  "/home/ada/notes/a",
	}, {
		name:  "the home directory in git, as the working directory",
		files: mapFS{"/home/ada/.git/HEAD": ""},
		dir:   "/home/ada",
		want:  "/home/ada",
	}, {
		name:  "nothing above the home directory",
		files: mapFS{"/home/.git/HEAD": ""},
		dir:   "/home/ada",
		want:  "/home/ada",
	}, {
		name:  "outside the home directory",
		files: mapFS{"/srv/repo/.git/HEAD": ""},
		dir:   "/srv/repo/a/b",
		want:  "/srv/repo",
	}, {
		name:  "never the root",
		files: mapFS{"/.git/HEAD": ""},
		dir:   "/srv/x",
		want:  "/srv/x",
	}, {
		name:  "windows",
		goos:  "windows",
		files: mapFS{`C:\Users\ada\repo\.git\HEAD`: ""},
		dir:   `C:\Users\ada\repo\src`,
		want:  `C:\Users\ada\repo`,
	}, {
		name:  "windows, never a drive's root",
		goos:  "windows",
		files: mapFS{`C:\.git\HEAD`: ""},
		dir:   `C:\x`,
		want:  `C:\x`,
	}, {
		name:  "windows, never a share's root",
		goos:  "windows",
		files: mapFS{`\\srv\share\.git\HEAD`: ""},
		dir:   `\\srv\share\x`,
		want:  `\\srv\share\x`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Env{GOOS: "linux", Home: "/home/ada", FS: tt.files}
			if tt.goos == "windows" {
				e.GOOS, e.Home = "windows", `C:\Users\ada`
			}
			if got := ProjectRoot(e, tt.dir); got != tt.want {
				t.Errorf("ProjectRoot(%q) = %q, want %q", tt.dir, got, tt.want)
			}
		})
	}
}

// onlyRead is a FileSystem that cannot stat.
type onlyRead struct{ files mapFS }

func (o onlyRead) ReadFile(name string) ([]byte, error) { return o.files.ReadFile(name) }

func TestProjectRootWithoutStat(t *testing.T) {
	e := &Env{GOOS: "linux", Home: "/home/ada", FS: onlyRead{mapFS{"/home/ada/repo/.git/HEAD": ""}}}
	if got := ProjectRoot(e, "/home/ada/repo/src"); got != "/home/ada/repo/src" {
		t.Errorf("ProjectRoot = %q, want the directory itself", got)
	}
}

// subdirEnv is Ada's Linux machine, working in ~/repo/src/pkg of a
// repository.
func subdirEnv(files mapFS) *Env {
	files["/home/ada/repo/.git/HEAD"] = "ref: refs/heads/main"
	e := &Env{GOOS: "linux", Home: "/home/ada", Dir: "/home/ada/repo/src/pkg",
		LookupEnv: func(string) (string, bool) { return "", false }, FS: files}
	e.Workspace = ProjectRoot(e, e.Dir)
	return e
}

func TestProjectFilesFromASubdirectory(t *testing.T) {
	env := subdirEnv(mapFS{
		"/home/ada/repo/.mcp.json": `{"mcpServers": {"github": {"command": "gh-mcp"}}}`,
		"/home/ada/repo/.vscode/mcp.json": `{"servers": {"tool": {"command": "node",
			"args": ["${workspaceFolder}/tool.js", "${workspaceFolderBasename}"], "cwd": "tools"}}}`,
		// The nearest .cursor/mcp.json is the one read.
		"/home/ada/repo/.cursor/mcp.json":     `{"mcpServers": {"far": {"command": "far"}}}`,
		"/home/ada/repo/src/.cursor/mcp.json": `{"mcpServers": {"near": {"command": "near", "args": ["${workspaceFolder}"], "envFile": "near.env"}}}`,
		"/home/ada/repo/src/near.env":         "NEAR=1\n",
	})
	if env.Workspace != "/home/ada/repo" {
		t.Fatalf("Workspace = %q", env.Workspace)
	}
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var refs []string
	for _, s := range c.Servers {
		refs = append(refs, s.Name+" "+s.Source.Path)
	}
	diff(t, []string{
		"github /home/ada/repo/.mcp.json",
		"near /home/ada/repo/src/.cursor/mcp.json",
		"tool /home/ada/repo/.vscode/mcp.json",
	}, refs)

	resolve := func(name string) *Launch {
		t.Helper()
		s, err := c.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Resolve(context.Background(), env, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	tool := resolve("tool")
	diff(t, []string{"/home/ada/repo/tool.js", "repo"}, tool.Args)
	if tool.Cwd != "/home/ada/repo/tools" {
		t.Errorf("tool's cwd = %q, want it from the repository's root", tool.Cwd)
	}
	near := resolve("near")
	diff(t, []string{"/home/ada/repo/src"}, near.Args)
	diff(t, map[string]string{"NEAR": "1"}, near.Env)

	// The nearer missing one is listed as looked for; the farther
	// .cursor/mcp.json is neither read nor listed.
	var cursor []File
	for _, f := range c.Files {
		if f.Source.ID == "cursor-project" {
			cursor = append(cursor, f)
		}
	}
	diff(t, []File{{Source: Source{ID: "cursor-project", Kind: KindCursor, Scope: ScopeProject,
		Path: "/home/ada/repo/src/pkg/.cursor/mcp.json", Workspace: "/home/ada/repo/src/pkg"}}, {Source: Source{ID: "cursor-project", Kind: KindCursor, Scope: ScopeProject,
		Path: "/home/ada/repo/src/.cursor/mcp.json", Workspace: "/home/ada/repo/src"}, Found: true, Servers: 1}}, cursor)
	// The missing ones nearer than the repository's are looked for.
	var looked []string
	for _, f := range c.Files {
		if f.Source.ID == "gemini-project" {
			looked = append(looked, f.Source.Path)
		}
	}
	diff(t, []string{"/home/ada/repo/src/pkg/.gemini/settings.json", "/home/ada/repo/src/.gemini/settings.json",
		"/home/ada/repo/.gemini/settings.json"}, looked)
}

func TestProjectFilesWithoutARepository(t *testing.T) {
	env := &Env{GOOS: "linux", Home: "/home/ada", Dir: "/home/ada/plain/sub", FS: mapFS{
		"/home/ada/plain/.mcp.json":     `{"mcpServers": {"parent": {"command": "p"}}}`,
		"/home/ada/plain/sub/.mcp.json": `{"mcpServers": {"here": {"command": "h"}}}`,
	}}
	env.Workspace = ProjectRoot(env, env.Dir)
	c := load(t, env)
	var names []string
	for _, s := range c.Servers {
		names = append(names, s.Name)
	}
	diff(t, []string{"here"}, names)
}

func TestCodexProjectLayers(t *testing.T) {
	env := subdirEnv(mapFS{
		"/home/ada/.codex/config.toml": "[projects.\"/home/ada/repo\"]\ntrust_level = \"trusted\"\n" +
			"[mcp_servers.a]\ncommand = \"user-a\"\nargs = [\"1\", \"2\"]\nenv = { U = \"u\", X = \"user\" }\n" +
			"[mcp_servers.u]\ncommand = \"user-u\"\n",
		"/home/ada/repo/.codex/config.toml": "[mcp_servers.a]\nargs = [\"3\"]\nenv = { X = \"root\" }\n[mcp_servers.b]\ncommand = \"root-b\"\n" +
			"[mcp_servers.u]\nenabled = false\n",
		"/home/ada/repo/src/.codex/config.toml": "[mcp_servers.a]\ncommand = \"src-a\"\n" +
			"[mcp_servers.c]\ncommand = \"src-c\"\n[mcp_servers.c.env]\nS = \"s\"\n",
		"/home/ada/repo/src/pkg/.codex/config.toml": "[mcp_servers.c]\ncommand = \"pkg-c\"\nenv.P = \"p\"\n",
	})
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var list []string
	for _, s := range c.Servers {
		line := fmt.Sprintf("%s %s %v %v disabled=%v %s", s.Ref(), s.Command, s.Args, s.Env, s.Disabled, s.Source.Path)
		for _, l := range s.Layers {
			line += " < " + l.Path
		}
		list = append(list, line)
	}
	// Tables merge key by key, anything else is replaced whole; the
	// file of highest precedence that sets a key is the server's.
	diff(t, []string{
		"codex-project:a src-a [3] map[U:u X:root] disabled=false /home/ada/repo/src/.codex/config.toml" +
			" < /home/ada/.codex/config.toml < /home/ada/repo/.codex/config.toml < /home/ada/repo/src/.codex/config.toml",
		"codex-project:b root-b [] map[] disabled=false /home/ada/repo/.codex/config.toml",
		"codex-project:c pkg-c [] map[P:p S:s] disabled=false /home/ada/repo/src/pkg/.codex/config.toml" +
			" < /home/ada/repo/src/.codex/config.toml < /home/ada/repo/src/pkg/.codex/config.toml",
		"codex-project:u user-u [] map[] disabled=true /home/ada/repo/.codex/config.toml" +
			" < /home/ada/.codex/config.toml < /home/ada/repo/.codex/config.toml",
	}, list)
	counts := map[string]int{}
	for _, f := range c.Files {
		if f.Source.Kind == KindCodex && f.Found {
			counts[f.Source.Path] = f.Servers
		}
	}
	diff(t, map[string]int{
		"/home/ada/.codex/config.toml":              2,
		"/home/ada/repo/.codex/config.toml":         3,
		"/home/ada/repo/src/.codex/config.toml":     2,
		"/home/ada/repo/src/pkg/.codex/config.toml": 1,
	}, counts)
	// One entry of each name, found by its name alone, and by the
	// application's.
	for _, ref := range []string{"a", "codex:a", "codex-project:a"} {
		if s, err := c.Lookup(ref); err != nil || s.Command != "src-a" {
			t.Errorf("Lookup(%q) = %v, %v", ref, s, err)
		}
	}
	// A field's problem is told at the file that wrote it; what the
	// merged entry lacks, at the server's.
	env = subdirEnv(mapFS{
		"/home/ada/.codex/config.toml":      "[projects.\"/home/ada/repo\"]\ntrust_level = \"trusted\"\n\n[mcp_servers.a]\ncommand = \"x\"\nbogus = 1\n",
		"/home/ada/repo/.codex/config.toml": "[mcp_servers.a]\nargs = [\"y\"]\n[mcp_servers.n]\nenabled = false\n",
	})
	c = load(t, env)
	checkWarnings(t, c.Warnings, `/home/ada/.codex/config.toml:4: server "a": unknown field "bogus", ignored`,
		`/home/ada/repo/.codex/config.toml:3: server "n": has neither a command nor a URL; skipped`)
	// The hash is the merged entry's: an edit of any layer asks again.
	s, err := c.Lookup("a")
	if err != nil {
		t.Fatal(err)
	}
	env.FS.(mapFS)["/home/ada/.codex/config.toml"] += "env = { K = \"v\" }\n"
	if s2, err := load(t, env).Lookup("a"); err != nil || s2.Hash == s.Hash {
		t.Errorf("after an edit of the user's layer: %v, %v", s2, err)
	}
}

// A Codex server's relative cwd is taken from the directory Codex runs
// in, the working directory, whichever layer set it: Codex hands it to
// the process as written (codex-rs/rmcp-client/src/
// stdio_server_launcher.rs). Not from the server's file (the layer of
// highest precedence, which may not have set cwd), nor from the layer
// that set it; another application's relative cwd still starts at its
// file's project.
func TestCodexRelativeCwd(t *testing.T) {
	env := subdirEnv(mapFS{
		"/home/ada/.codex/config.toml": "[projects.\"/home/ada/repo\"]\ntrust_level = \"trusted\"\n" +
			"[mcp_servers.user]\ncommand = \"u\"\ncwd = \"tools\"\n" +
			"[mcp_servers.merged]\ncommand = \"m\"\ncwd = \"../from-user\"\n" +
			"[mcp_servers.abs]\ncommand = \"a\"\ncwd = \"/opt/srv\"\n",
		"/home/ada/repo/.codex/config.toml":     "[mcp_servers.root]\ncommand = \"r\"\ncwd = \"./rooted\"\n",
		"/home/ada/repo/src/.codex/config.toml": "[mcp_servers.merged]\nargs = [\"x\"]\n",
		"/home/ada/repo/.vscode/mcp.json":       `{"servers": {"vs": {"command": "v", "cwd": "tools"}}}`,
	})
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	cwd := func(ref string) string {
		t.Helper()
		s, err := c.Lookup(ref)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Resolve(context.Background(), env, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return l.Cwd
	}
	merged, err := c.Lookup("codex:merged")
	if err != nil {
		t.Fatal(err)
	}
	if merged.Source.Path != "/home/ada/repo/src/.codex/config.toml" || len(merged.Layers) != 2 {
		t.Fatalf("merged: from %s, %d layers; want src's file over the user's", merged.Source.Path, len(merged.Layers))
	}
	diff(t, map[string]string{
		"codex:user":   "/home/ada/repo/src/pkg/tools",
		"codex:merged": "/home/ada/repo/src/from-user",
		"codex:root":   "/home/ada/repo/src/pkg/rooted",
		"codex:abs":    "/opt/srv",
		"vs":           "/home/ada/repo/tools",
	}, map[string]string{
		"codex:user":   cwd("codex:user"),
		"codex:merged": cwd("codex:merged"),
		"codex:root":   cwd("codex:root"),
		"codex:abs":    cwd("codex:abs"),
		"vs":           cwd("vs"),
	})
	// Without a working directory of its own, the environment's is
	// its workspace.
	env.Dir = ""
	if got := cwd("codex:user"); got != "/home/ada/repo/tools" {
		t.Errorf("with no Dir: cwd %q, want it from the workspace", got)
	}
}

func TestCodexTrust(t *testing.T) {
	files := mapFS{
		"/home/ada/mono/.hg/store":                     "",
		"/home/ada/mono/.codex/config.toml":            "[mcp_servers.mono]\ncommand = \"mono\"\n",
		"/home/ada/mono/repo/.codex/config.toml":       "[mcp_servers.root]\ncommand = \"root\"\n",
		"/home/ada/mono/repo/src/.codex/config.toml":   "[mcp_servers.src]\ncommand = \"src\"\n",
		"/home/ada/mono/wt/.git":                       "gitdir: /home/ada/mono/repo/.git/worktrees/wt\n",
		"/home/ada/mono/wt/.codex/config.toml":         "[mcp_servers.wt]\ncommand = \"wt\"\n",
		"/home/ada/mono/repo/.git/worktrees/wt/gitdir": "/home/ada/mono/wt/.git\n",
	}
	tests := []struct {
		name, dir, user string
		want            []string
		warn            []string
	}{{
		name: "no trust: no layer",
		dir:  "/home/ada/mono/repo/src",
		warn: []string{
			`/home/ada/mono/repo/src/.codex/config.toml: not read: Codex reads a project's .codex/config.toml only in a trusted project; Codex asks when it opens /home/ada/mono/repo, or add [projects."/home/ada/mono/repo"] trust_level = "trusted" to /home/ada/.codex/config.toml`,
			`/home/ada/mono/repo/.codex/config.toml: not read:`,
		},
	}, {
		name: "the repository trusted",
		dir:  "/home/ada/mono/repo/src",
		user: `[projects."/home/ada/mono/repo"]` + "\ntrust_level = \"trusted\"",
		want: []string{"root", "src"},
	}, {
		name: "a directory's own level wins over the repository's",
		dir:  "/home/ada/mono/repo/src",
		user: `[projects."/home/ada/mono/repo"]` + "\ntrust_level = \"trusted\"\n" + `[projects."/home/ada/mono/repo/src"]` + "\ntrust_level = \"untrusted\"",
		want: []string{"root"},
		warn: []string{`/home/ada/mono/repo/src/.codex/config.toml: not read: Codex reads a project's .codex/config.toml only in a trusted project, and /home/ada/mono/repo/src is untrusted in /home/ada/.codex/config.toml`},
	}, {
		name: "the root above the repository trusted, with a trailing separator",
		dir:  "/home/ada/mono/repo/src",
		user: "project_root_markers = [\".hg\"]\n" + `[projects."/home/ada/mono/"]` + "\ntrust_level = \"trusted\"",
		want: []string{"mono", "root", "src"},
	}, {
		name: "a linked worktree: the main checkout's trust",
		dir:  "/home/ada/mono/wt",
		user: `[projects."/home/ada/mono/repo"]` + "\ntrust_level = \"trusted\"",
		want: []string{"wt"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := mapFS{"/home/ada/.codex/config.toml": tt.user, "/home/ada/mono/repo/.git/HEAD": ""}
			for k, v := range files {
				fs[k] = v
			}
			env := &Env{GOOS: "linux", Home: "/home/ada", Dir: tt.dir, FS: fs}
			env.Workspace = ProjectRoot(env, env.Dir)
			c := load(t, env)
			checkWarnings(t, c.Warnings, tt.warn...)
			var names []string
			for _, s := range c.Servers {
				names = append(names, s.Name)
			}
			diff(t, tt.want, names)
			// A server of a layer not read is not found, and the
			// error says why it may be.
			if len(tt.warn) > 0 {
				_, err := c.Lookup("src")
				var nf *NotFoundError
				if !errors.As(err, &nf) || len(nf.Problems) == 0 {
					t.Errorf("Lookup(src) = %v", err)
				}
			}
		})
	}
}

func TestCodexRootAboveTheHome(t *testing.T) {
	// Codex looks for its markers up to the file system's root, past the
	// home directory: a marker there makes every directory between a
	// layer, but for Codex's own home, which is the user's layer.
	files := mapFS{
		"/.codexroot":                         "",
		"/home/ada/.codex/config.toml":        "project_root_markers = [\".codexroot\"]\n[projects.\"/\"]\ntrust_level = \"trusted\"\n[mcp_servers.user]\ncommand = \"u\"\n",
		"/home/.codex/config.toml":            "[mcp_servers.homes]\ncommand = \"h\"\n",
		"/home/ada/work/.codex/config.toml":   "[mcp_servers.work]\ncommand = \"w\"\n",
		"/home/ada/work/x/.codex/config.toml": "[mcp_servers.x]\ncommand = \"x\"\n",
	}
	env := &Env{GOOS: "linux", Home: "/home/ada", Dir: "/home/ada/work/x", FS: files}
	env.Workspace = ProjectRoot(env, env.Dir)
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var refs []string
	for _, s := range c.Servers {
		refs = append(refs, s.Ref())
	}
	diff(t, []string{"codex-project:homes", "codex:user", "codex-project:work", "codex-project:x"}, refs)
	var looked []string
	for _, f := range c.Files {
		if f.Source.ID == "codex-project" {
			looked = append(looked, f.Source.Path)
		}
	}
	diff(t, []string{"/home/ada/work/x/.codex/config.toml", "/home/ada/work/.codex/config.toml",
		"/home/.codex/config.toml", "/.codex/config.toml"}, looked)
}

func TestClaudeCodeLocalScopeOfAnAncestor(t *testing.T) {
	env := subdirEnv(mapFS{
		"/home/ada/.claude.json": `{"projects": {
			"/home/ada/repo": {"mcpServers": {"root": {"command": "r"}, "off": {"command": "o"}}, "disabledMcpServers": ["off"]},
			"/home/ada/other": {"mcpServers": {"other": {"command": "x"}}}
		}}`,
	})
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var list []string
	for _, s := range c.Servers {
		if s.Disabled {
			list = append(list, s.Name+" (disabled) "+s.Source.Workspace)
		} else {
			list = append(list, s.Name+" "+s.Source.Workspace)
		}
	}
	diff(t, []string{"off (disabled) /home/ada/repo", "root /home/ada/repo"}, list)

	// A nearer entry is the one.
	env = subdirEnv(mapFS{
		"/home/ada/.claude.json": `{"projects": {
			"/home/ada/repo": {"mcpServers": {"root": {"command": "r"}}},
			"/home/ada/repo/src/": {"mcpServers": {"src": {"command": "s"}}}
		}}`,
	})
	c = load(t, env)
	list = nil
	for _, s := range c.Servers {
		list = append(list, s.Name+" "+s.Source.Workspace)
	}
	diff(t, []string{"src /home/ada/repo/src"}, list)
}

func TestCodexProjectRootMarkers(t *testing.T) {
	layers := mapFS{
		"/home/ada/.codex/config.toml":                   "",
		"/home/ada/mono/.hg/store":                       "",
		"/home/ada/mono/.codex/config.toml":              "[mcp_servers.mono]\ncommand = \"mono\"\n",
		"/home/ada/mono/repo/.git/HEAD":                  "",
		"/home/ada/mono/repo/.codex/config.toml":         "[mcp_servers.root]\ncommand = \"root\"\n",
		"/home/ada/mono/repo/.mcp.json":                  `{"mcpServers": {"claude": {"command": "claude"}}}`,
		"/home/ada/mono/repo/src/.codex/config.toml":     "[mcp_servers.src]\ncommand = \"src\"\n",
		"/home/ada/mono/repo/src/.project":               "",
		"/home/ada/mono/repo/src/pkg/.codex/config.toml": "[mcp_servers.pkg]\ncommand = \"pkg\"\n",
	}
	tests := []struct {
		name   string
		user   string
		system string
		want   []string
		warn   []string
	}{{
		name: "the default: .git",
		want: []string{"codex-project:pkg", "codex-project:root", "codex-project:src"},
	}, {
		name: "a marker below the repository's root",
		user: `project_root_markers = [".project"]`,
		want: []string{"codex-project:pkg", "codex-project:src"},
	}, {
		name: "a marker above it",
		user: `project_root_markers = [".hg", "nothing"]`,
		want: []string{"codex-project:mono", "codex-project:pkg", "codex-project:root", "codex-project:src"},
	}, {
		name: "an empty list: the working directory alone",
		user: `project_root_markers = []`,
		want: []string{"codex-project:pkg"},
	}, {
		name:   "the system file's, which the user's overrides",
		system: `project_root_markers = []`,
		user:   `project_root_markers = [".project"]`,
		want:   []string{"codex-project:pkg", "codex-project:src"},
	}, {
		name:   "the system file's alone",
		system: `project_root_markers = [".project"]`,
		want:   []string{"codex-project:pkg", "codex-project:src"},
	}, {
		name: "not a list of strings: the default, and a warning",
		user: "model = \"x\"\nproject_root_markers = \".hg\"",
		want: []string{"codex-project:pkg", "codex-project:root", "codex-project:src"},
		warn: []string{"/home/ada/.codex/config.toml:2: project_root_markers is not a list of strings"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := mapFS{}
			for k, v := range layers {
				files[k] = v
			}
			// The repository is trusted, which trusts each of its
			// layers (and the one above it: see TestCodexTrust).
			files["/home/ada/.codex/config.toml"] = tt.user + "\n[projects.\"/home/ada/mono/repo\"]\ntrust_level = \"trusted\"\n"
			if tt.system != "" {
				files["/etc/codex/config.toml"] = tt.system
			}
			env := &Env{GOOS: "linux", Home: "/home/ada", Dir: "/home/ada/mono/repo/src/pkg", FS: files}
			env.Workspace = ProjectRoot(env, env.Dir)
			c := load(t, env)
			checkWarnings(t, c.Warnings, tt.warn...)
			var refs []string
			for _, s := range c.Servers {
				if s.Source.Kind == KindCodex {
					refs = append(refs, s.Ref())
				}
			}
			diff(t, tt.want, refs)
			// The other applications' project is the repository's.
			if s, err := c.Lookup("claude"); err != nil || s.Source.Workspace != "/home/ada/mono/repo" {
				t.Errorf("claude: %v, %v", s, err)
			}
		})
	}
}

func TestCodexOnWindows(t *testing.T) {
	// The system file is ProgramData's; a trusted project's path is
	// compared without case, as Codex compares it on Windows.
	env := &Env{GOOS: "windows", Home: `C:\Users\ada`, Dir: `C:\src\proj\sub`, FS: mapFS{
		`C:\src\proj\.git\HEAD`:                   "",
		`C:\src\proj\.codex\config.toml`:          "[mcp_servers.p]\ncommand = \"proj\"\n",
		`C:\Users\ada\.codex\config.toml`:         "[projects.'c:\\SRC\\proj']\ntrust_level = \"trusted\"\n[mcp_servers.p]\nenv = { U = \"1\" }\n",
		`C:\ProgramData\OpenAI\Codex\config.toml`: "[mcp_servers.p]\ncommand = \"sys\"\nargs = [\"a\"]\n",
	}}
	env.Workspace = ProjectRoot(env, env.Dir)
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	s, err := c.Lookup("p")
	if err != nil {
		t.Fatal(err)
	}
	var layers []string
	for _, l := range s.Layers {
		layers = append(layers, l.ID)
	}
	diff(t, "proj [a] map[U:1] codex-project [codex-system codex codex-project]",
		fmt.Sprintf("%s %v %v %s %v", s.Command, s.Args, s.Env, s.Source.ID, layers))
}

func TestCodexManagedConfigIsOverAll(t *testing.T) {
	env := subdirEnv(mapFS{
		"/home/ada/.codex/config.toml":          "[projects.\"/home/ada/repo\"]\ntrust_level = \"trusted\"\n",
		"/home/ada/repo/src/.codex/config.toml": "[mcp_servers.m]\ncommand = \"project\"\nargs = [\"p\"]\n",
		"/etc/codex/managed_config.toml":        "[mcp_servers.m]\ncommand = \"managed\"\n[mcp_servers.only]\nurl = \"https://example.com/mcp\"\n",
	})
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var list []string
	for _, s := range c.Servers {
		list = append(list, fmt.Sprintf("%s %s%s %v %d", s.Ref(), s.Command, s.URL, s.Args, len(s.Layers)))
	}
	diff(t, []string{"codex-managed:m managed [p] 2", "codex-managed:only https://example.com/mcp [] 0"}, list)
}

func TestCodexTrustThroughASymlink(t *testing.T) {
	// Codex keys trust by a project's real path: a project opened through
	// a symbolic link has the trust given at its real path, and the
	// advice for an untrusted one names the real path.
	home := t.TempDir()
	real := filepath.Join(home, "src", "repo")
	for _, d := range []string{filepath.Join(real, ".git"), filepath.Join(real, ".codex"), filepath.Join(home, ".codex")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(home, "repo")
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	write := func(p, data string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(real, ".codex", "config.toml"), "[mcp_servers.proj]\ncommand = \"p\"\n")
	user := filepath.Join(home, ".codex", "config.toml")
	realKey, err := filepath.EvalSymlinks(real) // t.TempDir may itself be under a link
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{GOOS: runtime.GOOS, Home: home, Dir: link}
	env.Workspace = ProjectRoot(env, env.Dir)

	write(user, "")
	c := load(t, env)
	checkWarnings(t, c.Warnings, filepath.Join(link, ".codex", "config.toml")+`: not read: Codex reads a project's .codex/config.toml only in a trusted project; Codex asks when it opens `+realKey+`, or add [projects."`+realKey+`"] trust_level = "trusted" to `+user)

	write(user, "[projects.\""+realKey+"\"]\ntrust_level = \"trusted\"\n")
	c = load(t, env)
	checkWarnings(t, c.Warnings)
	if len(c.Servers) != 1 || c.Servers[0].Name != "proj" {
		t.Fatalf("servers through the link, real path trusted: %v, want proj", c.Servers)
	}
}
