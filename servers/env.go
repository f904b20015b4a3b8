package servers

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// Env is what discovery and resolution know of the machine. Every field
// is injected, so that tests can describe a macOS or Windows home on any
// system.
type Env struct {
	// GOOS selects the paths and separators: "windows", "darwin", or any
	// other value for the XDG layout of Linux and other Unix systems.
	GOOS string
	// Home is the person's home directory.
	Home string
	// Workspace is the project directory, the root of the project Dir
	// is in (ProjectRoot): the top of the directories project files
	// (.vscode/mcp.json, .mcp.json…) are looked for in (Codex's have a
	// root of their own: codexProjectDirs), and what
	// ${workspaceFolder} means and where relative cwd and envFile paths
	// start for a server of a file that belongs to no project (a user
	// file). "" reads no project file.
	Workspace string
	// Dir is the working directory: Workspace or a directory below it.
	// Project files are looked for in every directory from Workspace
	// down to Dir, as the applications do when that project is open
	// (see locations). "" is Workspace.
	Dir string
	// LookupEnv reads an environment variable and says whether it is set,
	// as os.LookupEnv does (XDG_CONFIG_HOME, APPDATA, CODEX_HOME,
	// GEMINI_CLI_HOME, CLAUDE_CONFIG_DIR, MCPX_CONFIG_DIR, and the
	// variables definitions refer to). The applications tell a variable set to "" from an unset
	// one in definitions: ${VAR} set to "" is "", where an unset one is an
	// error, its default, or left as written. A directory variable set
	// to "" counts as unset. nil means none is set.
	LookupEnv func(string) (string, bool)
	// FS reads files; nil means the operating system's.
	FS FileSystem
	// OnWait, when set, is told that Resolve waits for the writer of a
	// named pipe (an envFile or ${file:PATH} that a secret manager fills
	// once the read is authorized), after a second of waiting: so that
	// the person knows what mcpx waits for, and that Ctrl-C ends it.
	OnWait func(path string)
}

// FileSystem reads whole files. A missing file is an error that
// errors.Is(err, fs.ErrNotExist) recognises.
type FileSystem interface {
	ReadFile(name string) ([]byte, error)
}

type osFS struct{}

// ReadFile reads a regular file of bounded size (see readFile).
func (osFS) ReadFile(name string) ([]byte, error) { return readFile(name) }

// ReadDir lists a directory (readDirFS).
func (osFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// Stat tells whether name exists (statFS).
func (osFS) Stat(name string) (fs.FileInfo, error) { return os.Stat(name) }

// RealPath is name with its symbolic links resolved (realPathFS).
func (osFS) RealPath(name string) (string, error) { return filepath.EvalSymlinks(name) }

// realPathFS is a FileSystem that can resolve symbolic links: Codex keys
// a project's trust by its real path. Without it paths are taken as
// written.
type realPathFS interface {
	RealPath(name string) (string, error)
}

// statFS is a FileSystem that can tell that a path exists without reading
// it: ProjectRoot looks for .git, a directory or a file. A FileSystem
// without Stat finds no project root.
type statFS interface {
	Stat(name string) (fs.FileInfo, error)
}

// OSEnv is the environment of this process: its GOOS, home directory,
// working directory (Dir), the project it is in (Workspace, see
// ProjectRoot) and environment variables.
func OSEnv() (*Env, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	e := &Env{GOOS: runtime.GOOS, Home: home, Dir: wd, LookupEnv: os.LookupEnv, FS: osFS{}}
	e.Workspace = ProjectRoot(e, wd)
	return e, nil
}

// ProjectRoot is the root of the project that dir is in, as the
// applications find it when they open a project: the nearest of dir and
// its parents that holds a .git entry — a directory, or the file that
// stands for it in a worktree or a submodule (Codex's default
// project_root_markers, https://developers.openai.com/codex/config-basic,
// "Configuration precedence"; VS Code, Cursor and Zed open the
// repository's folder). The search costs one stat a directory, and stops
// below the home directory and below the file system's root: a home
// directory kept in git (dotfiles) would otherwise make every directory
// under it one project. Without a .git, dir is its own project. (Codex
// finds the root of its own project files its way: see codexProjectDirs.)
func ProjectRoot(e *Env, dir string) string {
	return projectRoot(e, dir, defaultRootMarkers)
}

// defaultRootMarkers are the entries that make a directory a project's
// root: .git, as for Codex's default project_root_markers.
var defaultRootMarkers = []string{".git"}

// projectRoot is ProjectRoot with other markers: the nearest directory
// that holds one of them, one stat a marker a directory. No marker makes
// dir its own project, as Codex's empty project_root_markers does.
func projectRoot(e *Env, dir string, markers []string) string {
	if dir == "" {
		return ""
	}
	sfs, ok := e.fs().(statFS)
	if !ok || len(markers) == 0 {
		return dir
	}
	for d := dir; ; {
		for _, m := range markers {
			if _, err := sfs.Stat(e.join(d, m)); err == nil {
				return d
			}
		}
		p := e.parent(d)
		if e.samePath(d, e.Home) || p == "" || e.samePath(p, e.Home) {
			return dir
		}
		d = p
	}
}

// parent is the directory that holds p, "" when p is a root or its
// parent is one (/, C:\, \\server\share), or p is not absolute.
func (e *Env) parent(p string) string {
	if !e.isAbs(p) {
		return ""
	}
	s := p
	if e.windows() {
		s = strings.ReplaceAll(s, `\`, "/")
	}
	s = strings.TrimRight(s, "/")
	i := strings.LastIndex(s, "/")
	if i <= 0 {
		return ""
	}
	up := s[:i]
	if e.windows() && (len(up) <= 2 || strings.HasPrefix(s, "//") && strings.Count(up, "/") < 4) {
		return ""
	}
	return e.join(up)
}

// projectDirs are the directories project files are looked for in,
// nearest to Dir first: Dir and its parents up to Workspace. It is
// Workspace alone when Dir is "" or not below it, and nothing without a
// workspace.
func (e *Env) projectDirs() []string {
	if e.Workspace == "" {
		return nil
	}
	var out []string
	for d := e.Dir; d != ""; d = e.parent(d) {
		out = append(out, d)
		if e.samePath(d, e.Workspace) {
			return out
		}
	}
	return []string{e.Workspace}
}

// getenv is the value of a variable, "" when it is unset.
func (e *Env) getenv(name string) string {
	v, _ := e.lookupEnv(name)
	return v
}

// lookupEnv is the value of a variable and whether it is set.
func (e *Env) lookupEnv(name string) (string, bool) {
	if e.LookupEnv == nil {
		return "", false
	}
	return e.LookupEnv(name)
}

func (e *Env) fs() FileSystem {
	if e.FS == nil {
		return osFS{}
	}
	return e.FS
}

func (e *Env) windows() bool { return e.GOOS == "windows" }

// separator is the path separator of e's system.
func (e *Env) separator() string {
	if e.windows() {
		return `\`
	}
	return "/"
}

// join joins path elements with e's separator and cleans the result.
func (e *Env) join(elem ...string) string {
	var parts []string
	for _, el := range elem {
		if el == "" {
			continue
		}
		if e.windows() {
			el = strings.ReplaceAll(el, `\`, "/")
		}
		parts = append(parts, el)
	}
	if len(parts) == 0 {
		return ""
	}
	j := strings.Join(parts, "/")
	unc := e.windows() && strings.HasPrefix(j, "//")
	j = path.Clean(j)
	if unc {
		j = "/" + j
	}
	if e.windows() {
		j = strings.ReplaceAll(j, "/", `\`)
	}
	return j
}

// isAbs reports whether p is absolute on e's system.
func (e *Env) isAbs(p string) bool {
	if !e.windows() {
		return strings.HasPrefix(p, "/")
	}
	if strings.HasPrefix(p, `\\`) || strings.HasPrefix(p, "//") {
		return true
	}
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') &&
		(('a' <= p[0] && p[0] <= 'z') || ('A' <= p[0] && p[0] <= 'Z'))
}

// base is the last element of p.
func (e *Env) base(p string) string {
	if e.windows() {
		p = strings.ReplaceAll(p, `\`, "/")
	}
	return path.Base(p)
}

// absEnv returns the variable's value when it is an absolute path; XDG
// says relative values are to be ignored.
func (e *Env) absEnv(name string) string {
	if v := e.getenv(name); v != "" && e.isAbs(v) {
		return v
	}
	return ""
}

// userConfigDir is where applications keep per-user configuration, as
// os.UserConfigDir defines it: %APPDATA% on Windows, ~/Library/Application
// Support on macOS, $XDG_CONFIG_HOME or ~/.config elsewhere.
func (e *Env) userConfigDir() string {
	switch e.GOOS {
	case "windows":
		if d := e.absEnv("APPDATA"); d != "" {
			return d
		}
		return e.join(e.Home, "AppData", "Roaming")
	case "darwin":
		return e.join(e.Home, "Library", "Application Support")
	}
	if d := e.absEnv("XDG_CONFIG_HOME"); d != "" {
		return d
	}
	return e.join(e.Home, ".config")
}

// ConfigDir is mcpx's configuration directory: $MCPX_CONFIG_DIR when set,
// else mcpx in the user configuration directory — where the OAuth token
// store also lives.
func ConfigDir(e *Env) (string, error) {
	if d := e.getenv("MCPX_CONFIG_DIR"); d != "" {
		return d, nil
	}
	if e.Home == "" && e.getenv("XDG_CONFIG_HOME") == "" && e.getenv("APPDATA") == "" {
		return "", errors.New("no home directory, and no configuration directory in the environment")
	}
	return e.join(e.userConfigDir(), "mcpx"), nil
}

// OwnFile is the path of mcpx's own server file, servers.json in
// ConfigDir.
func OwnFile(e *Env) (string, error) {
	d, err := ConfigDir(e)
	if err != nil {
		return "", err
	}
	return e.join(d, "servers.json"), nil
}

// DefaultTrustFile is where the trust store is kept: trusted.json in
// ConfigDir.
func DefaultTrustFile(e *Env) (string, error) {
	d, err := ConfigDir(e)
	if err != nil {
		return "", err
	}
	return e.join(d, "trusted.json"), nil
}
