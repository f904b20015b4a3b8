package servers

import (
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// codexHome is Codex's user directory: $CODEX_HOME, else ~/.codex.
func (e *Env) codexHome() string {
	if d := e.getenv("CODEX_HOME"); d != "" {
		return d
	}
	return e.join(e.Home, ".codex")
}

// codexSystemFile is Codex's system configuration: /etc/codex/config.toml
// on Unix, %ProgramData%\OpenAI\Codex\config.toml on Windows (the
// ProgramData known folder, C:\ProgramData unless moved)
// (codex-rs/config/src/loader/mod.rs, system_config_toml_file and
// windows_system_config_toml_file).
func (e *Env) codexSystemFile() string {
	if e.windows() {
		return `C:\ProgramData\OpenAI\Codex\config.toml`
	}
	return "/etc/codex/config.toml"
}

// codexSettings are what Codex reads of its system and user files before
// it looks for the project's layers: where the project's root is, and
// which projects the person trusts.
type codexSettings struct {
	// markers are project_root_markers: the entries that make a
	// directory the root of the project whose .codex/config.toml layers
	// Codex reads.
	markers []string
	// trust is each project's trust_level ("trusted", "untrusted"), by
	// the path written in [projects."PATH"].
	trust map[string]string
	// userFile is the user's config.toml, where Codex records trust.
	userFile string
}

// codexConfig reads Codex's settings from its configuration before the
// project layers — the system file, then the user's, the later winning
// key by key, as Codex merges them before it finds the project
// (openai/codex codex-rs/config/src/loader/mod.rs, load_config_layers_state:
// merged_so_far, project_root_markers_from_config, project_trust_context).
// The markers default to [".git"]; an empty list makes the working
// directory the root (https://developers.openai.com/codex/config-basic,
// "Configuration precedence"). Codex refuses to start when the setting is
// not a list of strings; mcpx warns and keeps the default. Each file is
// read once more than Load reads it; both are small.
func (e *Env) codexConfig() (codexSettings, []Warning) {
	cs := codexSettings{markers: defaultRootMarkers, trust: map[string]string{}, userFile: e.join(e.codexHome(), "config.toml")}
	files := []string{cs.userFile}
	if sys := e.codexSystemFile(); sys != "" {
		files = append([]string{sys}, files...)
	}
	var warns []Warning
	for _, p := range files {
		data, err := e.fs().ReadFile(p)
		if err != nil {
			continue // Load says why, when it matters
		}
		var doc map[string]any
		if _, err := toml.Decode(string(data), &doc); err != nil {
			continue // as above
		}
		if projects, ok := doc["projects"].(map[string]any); ok {
			for path, v := range projects {
				if m, ok := v.(map[string]any); ok {
					if level, ok := m["trust_level"].(string); ok {
						cs.trust[path] = level
					}
				}
			}
		}
		raw, ok := doc["project_root_markers"]
		if !ok {
			continue
		}
		list, isList := raw.([]any)
		names, allStrings := stringList(list)
		if !isList || !allStrings {
			warns = append(warns, Warning{Path: p, Line: tomlKeyLine(data, "project_root_markers"),
				Message: "project_root_markers is not a list of strings (Codex does not start); mcpx finds Codex's project root with .git"})
			continue
		}
		cs.markers = names
		if cs.markers == nil {
			cs.markers = []string{}
		}
	}
	return cs, warns
}

// codexDir is a directory whose .codex/config.toml is one of Codex's
// project layers; distrust, when set, says why Codex does not read it.
type codexDir struct {
	dir, distrust string
}

// codexProjectDirs are the directories whose .codex/config.toml Codex
// reads, nearest to the working directory first: the working directory
// and its parents up to the project's root (codexRoot), but for the one
// whose .codex is Codex's home, which is the user layer
// (codex-rs/config/src/loader/mod.rs, load_project_layers). Codex loads a
// layer only when its directory, the project's root or the repository's
// main checkout is a trusted project (ProjectTrustContext,
// decision_for_dir): the others are listed with distrust set. The setting
// is Codex's, so the other applications' project files keep to
// ProjectRoot's project. None without a workspace.
func (e *Env) codexProjectDirs(cs codexSettings) []codexDir {
	if e.Workspace == "" {
		return nil
	}
	dir := e.Dir
	if dir == "" {
		dir = e.Workspace
	}
	root := e.codexRoot(dir, cs.markers)
	repo := e.codexRepoRoot(dir)
	var out []codexDir
	for _, d := range e.ancestors(dir) {
		if !e.samePath(e.join(d, ".codex"), e.codexHome()) {
			out = append(out, codexDir{dir: d, distrust: e.codexDistrust(cs, d, root, repo)})
		}
		if e.samePath(d, root) {
			break
		}
	}
	return out
}

// codexRoot is Codex's project root for dir: the nearest of dir and its
// parents, up to the file system's root, that holds one of markers; dir
// when none does or markers is empty (codex-rs/config/src/loader/mod.rs,
// find_project_root). Unlike ProjectRoot it does not stop at the home
// directory: Codex does not, and a layer is read only in a project the
// person trusts in Codex.
func (e *Env) codexRoot(dir string, markers []string) string {
	sfs, ok := e.fs().(statFS)
	if !ok || len(markers) == 0 {
		return dir
	}
	for _, d := range e.ancestors(dir) {
		for _, m := range markers {
			if _, err := sfs.Stat(e.join(d, m)); err == nil {
				return d
			}
		}
	}
	return dir
}

// codexRepoRoot is the repository Codex looks trust up for when neither
// the layer's directory nor the project's root has a trust level: the
// nearest directory that holds .git, or for a linked worktree (.git a
// file naming .git/worktrees/NAME of another checkout) that main
// checkout; "" when there is none (codex-rs/git-utils,
// resolve_root_git_project_for_trust).
func (e *Env) codexRepoRoot(dir string) string {
	sfs, ok := e.fs().(statFS)
	if !ok {
		return ""
	}
	for _, d := range e.ancestors(dir) {
		dotGit := e.join(d, ".git")
		if _, err := sfs.Stat(dotGit); err != nil {
			continue
		}
		data, err := e.fs().ReadFile(dotGit)
		if err != nil {
			return d // a directory
		}
		gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if gitdir = strings.TrimSpace(gitdir); !ok || gitdir == "" {
			return ""
		}
		if !e.isAbs(gitdir) {
			gitdir = e.join(d, gitdir)
		}
		worktrees := e.parent(gitdir)
		if worktrees == "" || e.base(worktrees) != "worktrees" {
			return ""
		}
		return e.parent(e.parent(worktrees))
	}
	return ""
}

// codexDistrust says why Codex does not load the layer of dir, "" when
// it does: the trust level of dir, else of the project's root, else of
// the repository's main checkout, must be "trusted"
// (codex-rs/config/src/loader/mod.rs, decision_for_dir and
// disabled_reason_for_decision).
func (e *Env) codexDistrust(cs codexSettings, dir, root, repo string) string {
	for _, p := range []string{dir, root, repo} {
		key, level, ok := e.codexTrustOf(cs, p)
		if !ok {
			continue
		}
		if level == "trusted" {
			return ""
		}
		return "not read: Codex reads a project's .codex/config.toml only in a trusted project, and " +
			key + " is " + level + " in " + cs.userFile
	}
	key := root
	if repo != "" {
		key = repo
	}
	// Codex records trust under the real path.
	if rfs, ok := e.fs().(realPathFS); ok {
		if real, err := rfs.RealPath(key); err == nil {
			key = real
		}
	}
	return "not read: Codex reads a project's .codex/config.toml only in a trusted project; Codex asks when it opens " +
		key + ", or add [projects." + tomlQuote(key) + "] trust_level = \"trusted\" to " + cs.userFile
}

// codexTrustOf is the trust level cs gives to the project at p: Codex
// looks p up with its symbolic links resolved first, then as written
// (codex-rs/config/src/loader/mod.rs, normalized_project_trust_keys, with
// dunce::canonicalize), so that a project opened through a link has the
// trust it was given at its real path.
func (e *Env) codexTrustOf(cs codexSettings, p string) (key, level string, ok bool) {
	if p == "" {
		return "", "", false
	}
	if rfs, ok := e.fs().(realPathFS); ok {
		if real, err := rfs.RealPath(p); err == nil && real != p {
			if key, level, ok := e.codexTrustAt(cs, real); ok {
				return key, level, true
			}
		}
	}
	return e.codexTrustAt(cs, p)
}

// codexTrustAt is the trust level cs gives to the path p: its key written
// as p, else the first (in sorted order) that names p with another case
// or separator on Windows, or a trailing separator.
func (e *Env) codexTrustAt(cs codexSettings, p string) (key, level string, ok bool) {
	if level, ok := cs.trust[p]; ok {
		return p, level, true
	}
	for _, k := range sortedKeys(cs.trust) {
		if e.samePath(k, p) {
			return k, cs.trust[k], true
		}
	}
	return "", "", false
}

// tomlQuote quotes s as a TOML basic string.
func tomlQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// ancestors are dir and the directories above it, nearest first, up to
// the file system's root (/, C:\) included.
func (e *Env) ancestors(dir string) []string {
	var out []string
	for d := dir; d != ""; d = e.parent(d) {
		out = append(out, d)
	}
	if r := e.fsRoot(dir); r != "" && (len(out) == 0 || !e.samePath(out[len(out)-1], r)) {
		out = append(out, r)
	}
	return out
}

// fsRoot is the root of the file system p is on: / on Unix, the drive's
// root on Windows; "" for a relative path or a network share.
func (e *Env) fsRoot(p string) string {
	switch {
	case !e.isAbs(p):
		return ""
	case !e.windows():
		return "/"
	case p[1] == ':':
		return p[:2] + `\`
	}
	return ""
}

// tomlKeyLine is the line of the first "key =" at the start of a line of
// data; 0 when not found.
func tomlKeyLine(data []byte, key string) int {
	re := regexp.MustCompile(`(?m)^[ \t]*` + regexp.QuoteMeta(key) + `[ \t]*=`)
	loc := re.FindIndex(data)
	if loc == nil {
		return 0
	}
	return lineAt(data, loc[0])
}
