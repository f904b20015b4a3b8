package servers

import (
	"regexp"
	"slices"

	"github.com/BurntSushi/toml"
)

// codexHome is Codex's user directory: $CODEX_HOME, else ~/.codex.
func (e *Env) codexHome() string {
	if d := e.getenv("CODEX_HOME"); d != "" {
		return d
	}
	return e.join(e.Home, ".codex")
}

// codexMarkers are Codex's project_root_markers: the entries that make a
// directory the root of the project whose .codex/config.toml layers Codex
// reads. Codex takes the setting from its configuration before the
// project layers — the system file, then the user's, the later winning —
// and defaults to [".git"]; an empty list makes the working directory the
// root (https://developers.openai.com/codex/config-basic, "Configuration
// precedence"; openai/codex codex-rs/core/src/config_loader/mod.rs,
// project_root_markers_from_config and find_project_root, from
// openai/codex#8359). Codex refuses to start when the setting is not a list of
// strings; mcpx warns and keeps the default. Each file is read once more
// than Load reads it; both are small.
func (e *Env) codexMarkers() ([]string, []Warning) {
	files := []string{e.join(e.codexHome(), "config.toml")}
	if !e.windows() {
		files = append([]string{"/etc/codex/config.toml"}, files...)
	}
	markers := defaultRootMarkers
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
		markers = names
		if markers == nil {
			markers = []string{}
		}
	}
	return markers, warns
}

// codexProjectDirs are the directories whose .codex/config.toml Codex
// reads, nearest to the working directory first: with the default
// markers, projectDirs; with others, the working directory and its
// parents up to the nearest that holds one of them (projectRoot, with its
// limits: not above the home directory, nor the file system's root). The
// setting is Codex's, so the other applications' project files keep to
// ProjectRoot's project.
func (e *Env) codexProjectDirs(markers []string) []string {
	if e.Workspace == "" || slices.Equal(markers, defaultRootMarkers) {
		return e.projectDirs()
	}
	dir := e.Dir
	if dir == "" {
		dir = e.Workspace
	}
	root := projectRoot(e, dir, markers)
	var out []string
	for d := dir; d != ""; d = e.parent(d) {
		out = append(out, d)
		if e.samePath(d, root) {
			return out
		}
	}
	return []string{dir}
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
