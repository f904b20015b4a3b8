package servers

import (
	"context"
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
		"/home/ada/repo/.codex/config.toml": "[mcp_servers.a]\ncommand = \"root-a\"\n[mcp_servers.b]\ncommand = \"root-b\"\n",
		"/home/ada/repo/src/.codex/config.toml": "[mcp_servers.a]\ncommand = \"src-a\"\n" +
			"[mcp_servers.c]\ncommand = \"src-c\"\n",
		"/home/ada/repo/src/pkg/.codex/config.toml": "[mcp_servers.c]\ncommand = \"pkg-c\"\n",
	})
	c := load(t, env)
	checkWarnings(t, c.Warnings)
	var list []string
	for _, s := range c.Servers {
		list = append(list, s.Name+" "+s.Command+" "+s.Source.Path)
	}
	diff(t, []string{
		"a src-a /home/ada/repo/src/.codex/config.toml",
		"b root-b /home/ada/repo/.codex/config.toml",
		"c pkg-c /home/ada/repo/src/pkg/.codex/config.toml",
	}, list)
	counts := map[string]int{}
	for _, f := range c.Files {
		if f.Source.ID == "codex-project" && f.Found {
			counts[f.Source.Path] = f.Servers
		}
	}
	diff(t, map[string]int{
		"/home/ada/repo/.codex/config.toml":         1,
		"/home/ada/repo/src/.codex/config.toml":     1,
		"/home/ada/repo/src/pkg/.codex/config.toml": 1,
	}, counts)
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
			files["/home/ada/.codex/config.toml"] = tt.user
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
