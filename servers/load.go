package servers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/BurntSushi/toml"
)

// File is one location Load looked at.
type File struct {
	Source Source
	// Found reports that the file exists and was read.
	Found bool
	// Servers is how many definitions were taken from it.
	Servers int
}

// Catalog is every server definition found, in listing order: by name,
// then by source (mcpx's own file first, user files before project
// files).
type Catalog struct {
	Servers []*Server
	// Warnings are the problems met, file by file (for -v).
	Warnings []Warning
	// Files are the locations looked at, found or not.
	Files []File
}

// Load reads every location of env. Nothing is started and nothing is
// asked: a missing file is skipped, an unreadable or malformed file or
// entry becomes a Warning, and the others still load. The error is ctx's,
// or a missing home directory.
func Load(ctx context.Context, env *Env) (*Catalog, error) {
	if env == nil || env.Home == "" {
		return nil, errors.New("servers: no home directory to look for server definitions in")
	}
	c := &Catalog{}
	// ~/.claude.json is two locations (user and local scope), and can be
	// tens of megabytes: it is read and parsed once.
	docs := map[string]*jsonDoc{}
	var rules []nameRules
	// taken are the IDs of the project files of which the nearest was
	// found; defined, the names each layer of a layered one defined.
	taken := map[string]bool{}
	defined := map[string]map[string]bool{}
	claude := claudeDirs{project: env.Workspace, local: env.Workspace}
	// codex are Codex's files, read, which are merged once all are.
	var codex []*codexLayer
	locs, lw := env.locate()
	c.Warnings = append(c.Warnings, lw...)
	for _, l := range locs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if l.nearest && taken[l.ID] {
			continue
		}
		doc := docOf(env, docs, l.Path)
		data, err := doc.data, doc.readErr
		missing := errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
		if l.nearest && !missing {
			// The application reads this one, even if it cannot.
			taken[l.ID] = true
			if l.ID == "claude-code-project" {
				claude.project = l.Workspace
			}
		}
		if l.ID == "claude-code-managed" && !missing {
			claude.managed = l.Path
		}
		if err == nil && slices.Contains(l.servers, workspaceKey) {
			l.Workspace = claudeLocal(env, doc, l.Workspace)
			claude.local = l.Workspace
		}
		f := File{Source: l.Source}
		if err != nil {
			if !missing {
				c.Warnings = append(c.Warnings, Warning{Path: l.Path, Message: "cannot be read: " + bareError(err), Unread: true})
			}
			c.Files = append(c.Files, f)
			continue
		}
		if l.distrust != "" {
			// The application does not read it: neither does mcpx, but
			// a server the user names may be there (Unread).
			c.Warnings = append(c.Warnings, Warning{Path: l.Path, Message: l.distrust, Unread: true})
			c.Files = append(c.Files, f)
			continue
		}
		f.Found = true
		if l.toml {
			layer, warns := readTOML(l, data)
			layer.file = len(c.Files)
			codex = append(codex, layer)
			c.Warnings = append(c.Warnings, warns...)
			c.Files = append(c.Files, f)
			continue
		}
		list, warns, r := readJSON(env, l, doc)
		if r != nil {
			rules = append(rules, *r)
		}
		if l.ID == "claude-code-managed-settings" {
			list, warns = providedServers(list, warns)
		}
		if l.layered {
			list = hideNearer(list, defined, l.ID)
		}
		f.Servers = len(list)
		c.Servers = append(c.Servers, list...)
		for _, w := range warns {
			// ~/.claude.json is read for two scopes: say a problem once.
			if !slices.Contains(c.Warnings, w) {
				c.Warnings = append(c.Warnings, w)
			}
		}
		c.Files = append(c.Files, f)
	}
	list, counts, w := mergeCodex(codex)
	c.Servers = append(c.Servers, list...)
	c.Warnings = append(c.Warnings, w...)
	for i, layer := range codex {
		c.Files[layer.file].Servers = counts[i]
	}
	r, w := geminiEnablement(env)
	rules = append(rules, r)
	c.Warnings = append(c.Warnings, w...)
	rules = append(rules, claudeCodeRules(env, claude, docs)...)
	applyNameRules(c.Servers, rules)
	policy, w := claudeCodePolicy(env, claude, docs)
	c.Warnings = append(c.Warnings, w...)
	policy.apply(env, c.Servers)
	sort.SliceStable(c.Servers, func(i, j int) bool {
		a, b := c.Servers[i], c.Servers[j]
		if la, lb := strings.ToLower(a.Name), strings.ToLower(b.Name); la != lb {
			return la < lb
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Source.rank() < b.Source.rank()
	})
	return c, nil
}

// hideNearer drops from list, a layer of a layered project file read
// nearest first, the servers a nearer layer of id defined, and notes the
// names the others define.
func hideNearer(list []*Server, defined map[string]map[string]bool, id string) []*Server {
	seen := defined[id]
	if seen == nil {
		seen = map[string]bool{}
		defined[id] = seen
	}
	list = slices.DeleteFunc(list, func(s *Server) bool { return seen[s.Name] })
	for _, s := range list {
		seen[s.Name] = true
	}
	return list
}

// claudeDirs are the directories of Claude Code's project: the one whose
// .mcp.json is read (where its .claude/settings.json is), and the one
// whose entry of ~/.claude.json is its local scope; and managed is the
// path of its managed-mcp.json when there is one.
type claudeDirs struct{ project, local, managed string }

// claudeLocal is the project directory whose entry of ~/.claude.json's
// projects is the local scope: the nearest to the working directory of
// env.projectDirs that has one, else def.
func claudeLocal(env *Env, doc *jsonDoc, def string) string {
	_, v, err := doc.parse()
	if err != nil {
		return def
	}
	for _, d := range env.projectDirs() {
		if findPath(env, d, v, []string{"projects", workspaceKey}) != nil {
			return d
		}
	}
	return def
}

// bareError drops the path an *fs.PathError repeats.
func bareError(err error) string { return bareErr(err).Error() }

// bareErr is err without the path of its *fs.PathError (the message names
// the file already).
func bareErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func lineAt(data []byte, off int) int {
	if off < 0 || off > len(data) {
		return 0
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// jsonDoc is a file as read, and parsed once (parse).
type jsonDoc struct {
	data    []byte
	readErr error

	parsed   bool
	std      []byte
	root     jsonNode
	parseErr error
}

// parse parses the document the first time it is called.
func (d *jsonDoc) parse() ([]byte, *jsonNode, error) {
	if !d.parsed {
		d.parsed = true
		d.std, d.root, d.parseErr = parseJSONC(d.data)
	}
	return d.std, &d.root, d.parseErr
}

// nameRules are the server names one file of an application turns off or
// allows, for every file of that application (Gemini CLI's mcp.excluded
// and mcp.allowed).
type nameRules struct {
	kind Kind
	// scope, when set, limits the rules to the servers of that scope.
	scope    Scope
	excluded []string
	// allowed is nil when the file has no list.
	allowed []string
	// off are names turned off, compared without case and surrounding
	// spaces.
	off []string
	// why says, for a server each list turns off, what did (the
	// server's DisabledReason): by excluded, by off, and for not being
	// in allowed.
	excludedWhy, offWhy, allowedWhy string
}

// claudeCodeRules are the servers Claude Code does not start in the
// workspace: the .mcp.json servers that disabledMcpjsonServers rejects,
// in the user's, the project's and the project's local settings
// (https://code.claude.com/docs/en/settings, "Available settings" and
// "Settings files"), or in the workspace's entry of ~/.claude.json, where
// Claude Code has kept the answers to its approval question; and any of
// its servers the person turned off with /mcp in the workspace, which
// Claude Code keeps as that entry's disabledMcpServers (not documented;
// seen in its files). The lists are merged, as Claude Code merges array
// settings.
func claudeCodeRules(env *Env, claude claudeDirs, docs map[string]*jsonDoc) []nameRules {
	if env.Workspace == "" {
		return nil
	}
	dir, claudeJSON := env.join(env.Home, ".claude"), env.join(env.Home, ".claude.json")
	if d := env.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		dir, claudeJSON = d, env.join(d, ".claude.json")
	}
	rejected := nameRules{kind: KindClaudeCode, scope: ScopeProject, excludedWhy: "rejected by Claude Code's disabledMcpjsonServers"}
	for _, p := range []string{env.join(dir, "settings.json"), env.join(claude.project, ".claude", "settings.json"),
		env.join(claude.project, ".claude", "settings.local.json")} {
		rejected.excluded = append(rejected.excluded, docList(env, "", docs, p, []string{"disabledMcpjsonServers"})...)
	}
	rejected.excluded = append(rejected.excluded, docList(env, claude.local, docs, claudeJSON, []string{"projects", workspaceKey, "disabledMcpjsonServers"})...)
	off := nameRules{kind: KindClaudeCode, excludedWhy: "turned off in Claude Code (/mcp) for this project", excluded: docList(env, claude.local, docs, claudeJSON, []string{"projects", workspaceKey, "disabledMcpServers"})}
	return []nameRules{rejected, off}
}

// docList is the list of strings at keys in the JSON file at path, read
// and parsed through docs once (workspaceKey stands for ws's entry); nil
// when the file, the keys or the list are not there.
func docList(env *Env, ws string, docs map[string]*jsonDoc, path string, keys []string) []string {
	doc := docOf(env, docs, path)
	if doc.readErr != nil {
		return nil
	}
	std, v, err := doc.parse()
	if err != nil {
		return nil
	}
	return stringsAt(env, ws, std, v, keys)
}

// docOf returns the file at path, read once through docs.
func docOf(env *Env, docs map[string]*jsonDoc, path string) *jsonDoc {
	doc := docs[path]
	if doc == nil {
		data, err := env.fs().ReadFile(path)
		doc = &jsonDoc{data: data, readErr: err}
		docs[path] = doc
	}
	return doc
}

// stringsAt is the list of strings at keys in the parsed file v (std its
// standard JSON), the strings of a list that holds others too; nil when
// keys is nil, or the keys or the list are not there.
func stringsAt(env *Env, ws string, std []byte, v *jsonNode, keys []string) []string {
	if keys == nil {
		return nil
	}
	n := findPath(env, ws, v, keys)
	if n == nil {
		return nil
	}
	var raw []any
	if decode(std[n.start:n.end], &raw) != nil {
		return nil
	}
	names, _ := stringList(raw)
	return names
}

// geminiEnablement reads the servers that gemini mcp disable NAME turned
// off: mcp-server-enablement.json in Gemini CLI's user directory, an
// object of lower-cased names to {"enabled": false}
// (https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/
// mcp-server.md, "Enabling/disabling a server"; packages/cli/src/config/
// mcp/mcpServerEnablement.ts). A missing file turns nothing off.
func geminiEnablement(env *Env) (nameRules, []Warning) {
	r := nameRules{kind: KindGemini, offWhy: "turned off with gemini mcp disable"}
	p := env.join(env.geminiDir(), "mcp-server-enablement.json")
	data, err := env.fs().ReadFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return r, nil
		}
		return r, []Warning{{Path: p, Message: "cannot be read: " + bareError(err) + "; the servers gemini mcp disable turned off are not known"}}
	}
	std, _, err := parseJSONC(data)
	var states map[string]any
	if err == nil {
		err = decode(std, &states)
	}
	if err != nil {
		return r, []Warning{{Path: p, Message: "is not a JSON object; the servers gemini mcp disable turned off are not known"}}
	}
	for name, st := range states {
		if m, ok := st.(map[string]any); ok && m["enabled"] == false {
			r.off = append(r.off, name)
		}
	}
	return r, nil
}

// applyNameRules marks the servers that their application's name lists
// turn off. Gemini CLI consolidates the lists of all its settings files
// (packages/cli/src/config/settings.ts, getConsolidatedExcludedMcpServers:
// every excluded name; getConsolidatedAllowedMcpServers: the names in
// every allowed list, compared without case), and does not connect to a
// server whose name is excluded, or missing from a consolidated allowed
// list that is not empty (packages/core/src/tools/mcp-client-manager.ts,
// isBlockedBySettings; https://github.com/google-gemini/gemini-cli/blob/
// main/docs/reference/configuration.md, mcp.allowed and mcp.excluded),
// nor to one gemini mcp disable turned off (geminiEnablement).
func applyNameRules(list []*Server, rules []nameRules) {
	allowed, allowedWhy := map[Kind][]string{}, map[Kind]string{}
	for _, r := range rules {
		for _, s := range list {
			if s.Source.Kind != r.kind || (r.scope != "" && s.Source.Scope != r.scope) {
				continue
			}
			switch {
			case slices.Contains(r.excluded, s.Name):
				disable(s, r.excludedWhy)
			case slices.ContainsFunc(r.off, func(n string) bool { return strings.EqualFold(strings.TrimSpace(n), strings.TrimSpace(s.Name)) }):
				disable(s, r.offWhy)
			}
		}
		if r.allowed != nil && r.allowedWhy != "" {
			allowedWhy[r.kind] = r.allowedWhy
		}
		if r.allowed == nil {
			continue
		}
		if prev, ok := allowed[r.kind]; ok {
			r.allowed = slices.DeleteFunc(slices.Clone(prev), func(n string) bool {
				return !slices.ContainsFunc(r.allowed, func(a string) bool { return strings.EqualFold(a, n) })
			})
		}
		allowed[r.kind] = r.allowed
	}
	for _, s := range list {
		if a := allowed[s.Source.Kind]; len(a) > 0 && !slices.Contains(a, s.Name) {
			disable(s, allowedWhy[s.Source.Kind])
		}
	}
}

// disable turns s off for the reason why (its DisabledReason), unless its
// own entry turned it off already: that needs no other reason. The first
// reason found is kept.
func disable(s *Server, why string) {
	if s.Disabled && s.DisabledReason == "" {
		return
	}
	s.Disabled = true
	if s.DisabledReason == "" {
		s.DisabledReason = why
	}
}

// readJSON reads a JSON (with comments) file of location l, and the name
// lists it holds for its application's other files too.
func readJSON(env *Env, l location, doc *jsonDoc) ([]*Server, []Warning, *nameRules) {
	fileWarn := func(line int, format string, args ...any) []Warning {
		return []Warning{{Path: l.Path, Line: line, Message: fmt.Sprintf(format, args...), Unread: true}}
	}
	data := doc.data
	// std is data with comments and trailing commas blanked out:
	// offsets and lines stay.
	std, v, err := doc.parse()
	if err != nil {
		line := 0
		if se := (*jsonSyntaxError)(nil); errors.As(err, &se) {
			line = se.Line
		}
		return nil, fileWarn(line, "not valid JSON: %s; no server read from it", err), nil
	}
	if !v.object {
		return nil, fileWarn(1, "is not a JSON object; no server read from it"), nil
	}
	var rules *nameRules
	if l.excluded != nil || l.allowed != nil {
		rules = &nameRules{kind: l.Kind, excludedWhy: "excluded by Gemini CLI's mcp.excluded (" + l.Path + ")", allowedWhy: "not in Gemini CLI's mcp.allowed"}
		rules.excluded, rules.allowed = stringsAt(env, l.Workspace, std, v, l.excluded), stringsAt(env, l.Workspace, std, v, l.allowed)
	}
	var warns []Warning
	if l.topLevel != nil {
		for _, m := range v.members {
			if !slices.Contains(l.topLevel, m.name) {
				warns = append(warns, Warning{Path: l.Path, Line: lineAt(data, m.nameStart),
					Message: fmt.Sprintf("unknown top-level field %q, ignored", m.name)})
			}
		}
	}
	obj := findPath(env, l.Workspace, v, l.servers)
	if obj == nil {
		return nil, warns, rules
	}
	if !obj.object {
		return nil, append(warns, fileWarn(lineAt(data, obj.start), "%s is not an object; no server read from it", strings.Join(l.servers, "."))...), rules
	}
	var inputs map[string]Input
	if l.inputs != nil {
		var w []Warning
		inputs, w = readInputs(l, data, std, findPath(env, l.Workspace, v, l.inputs))
		warns = append(warns, w...)
	}

	var out []*Server
	index := map[string]int{}
	for _, m := range obj.members {
		name := m.name
		e := &entry{name: name, line: lineAt(data, m.nameStart), fields: map[string]any{}, lines: map[string]int{}}
		if !m.value.object {
			warns = append(warns, Warning{Path: l.Path, Line: e.line, Server: name, Message: "is not an object; skipped"})
			continue
		}
		for _, f := range m.value.members {
			key := f.name
			var val any
			if err := decode(std[f.value.start:f.value.end], &val); err != nil {
				continue // cannot happen: parseJSONC checked it
			}
			if _, dup := e.fields[key]; dup {
				warns = append(warns, Warning{Path: l.Path, Line: lineAt(data, f.nameStart), Server: name,
					Message: fmt.Sprintf("field %q is given twice; the last one is used", key)})
				e.keys = slices.DeleteFunc(e.keys, func(k string) bool { return k == key })
			}
			e.keys = append(e.keys, key)
			e.fields[key] = val
			e.lines[key] = lineAt(data, f.nameStart)
		}
		s, w := l.dialect.build(l.Source, e)
		warns = append(warns, w...)
		if i, dup := index[name]; dup {
			warns = append(warns, Warning{Path: l.Path, Line: e.line, Server: name, Message: "is defined twice in the file; the last one is used"})
			out[i] = nil
		}
		if s == nil {
			continue
		}
		s.inputs = inputs
		index[name] = len(out)
		out = append(out, s)
	}
	return slices.DeleteFunc(out, func(s *Server) bool { return s == nil }), warns, rules
}

// decode decodes standard JSON keeping numbers as written.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// findPath follows keys from v; workspaceKey matches the project entry of
// ws. nil when a key is missing or a value on the way is not an object.
func findPath(env *Env, ws string, v *jsonNode, keys []string) *jsonNode {
	for _, k := range keys {
		if !v.object {
			return nil
		}
		var next *jsonNode
		for i := range v.members {
			name := v.members[i].name
			if name == k || (k == workspaceKey && env.samePath(name, ws)) {
				next = &v.members[i].value // the last one wins, as in JSON decoders
			}
		}
		if next == nil {
			return nil
		}
		v = next
	}
	return v
}

// samePath compares two absolute paths as e's system does: ignoring a
// trailing separator, and on Windows the separator kind and case.
func (e *Env) samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	norm := func(p string) string {
		if e.windows() {
			p = strings.ToLower(strings.ReplaceAll(p, `\`, "/"))
		}
		if len(p) > 1 {
			p = strings.TrimSuffix(p, "/")
		}
		return p
	}
	return norm(a) == norm(b)
}

// readInputs reads VS Code's input definitions
// (https://code.visualstudio.com/docs/reference/variables-reference#_input-variables):
// promptString (description, default, password), pickString (options,
// default) and command (which runs a VS Code command, so that mcpx cannot
// resolve it).
func readInputs(l location, data, std []byte, v *jsonNode) (map[string]Input, []Warning) {
	if v == nil {
		return nil, nil
	}
	var list []map[string]any
	if err := decode(std[v.start:v.end], &list); err != nil {
		return nil, []Warning{{Path: l.Path, Line: lineAt(data, v.start), Message: "inputs is not a list of objects, ignored"}}
	}
	out := map[string]Input{}
	var warns []Warning
	for _, m := range list {
		id, _ := m["id"].(string)
		if id == "" {
			warns = append(warns, Warning{Path: l.Path, Line: lineAt(data, v.start), Message: "an input has no id, ignored"})
			continue
		}
		in := Input{ID: id}
		in.Description, _ = m["description"].(string)
		in.Password, _ = m["password"].(bool)
		in.Default, _ = m["default"].(string)
		typ, _ := m["type"].(string)
		switch typ {
		case "promptString", "":
		case "pickString":
			opts, _ := m["options"].([]any)
			for _, o := range opts {
				switch o := o.(type) {
				case string:
					in.Options = append(in.Options, o)
				case map[string]any:
					if val, ok := o["value"].(string); ok {
						in.Options = append(in.Options, val)
					}
				}
			}
		case "command":
			in.command = true
		default:
			warns = append(warns, Warning{Path: l.Path, Line: lineAt(data, v.start),
				Message: fmt.Sprintf("input %q has unknown type %q; it is asked for as a string", id, typ)})
		}
		out[id] = in
	}
	return out, warns
}

// codexLayer is one of Codex's config.toml files, read.
type codexLayer struct {
	loc  location
	data []byte
	// tables are its [mcp_servers.NAME] tables.
	tables map[string]map[string]any
	// file is its index in Catalog.Files.
	file int
}

// readTOML reads Codex's config.toml.
func readTOML(l location, data []byte) (*codexLayer, []Warning) {
	layer := &codexLayer{loc: l, data: data, tables: map[string]map[string]any{}}
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		line, msg := 0, err.Error()
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line, msg = pe.Position.Line, pe.Message
		}
		// The decoder quotes what it could not read: a value written
		// without quotes (TOKEN = sk-live-…) would be shown.
		msg = tomlQuoted().ReplaceAllString(msg, `"…"`)
		return layer, []Warning{{Path: l.Path, Line: line, Message: "not valid TOML: " + msg + "; no server read from it", Unread: true}}
	}
	raw, ok := doc["mcp_servers"]
	if !ok {
		return layer, nil
	}
	tables, ok := raw.(map[string]any)
	if !ok {
		return layer, []Warning{{Path: l.Path, Message: "mcp_servers is not a table; no server read from it", Unread: true}}
	}
	var warns []Warning
	for _, name := range sortedKeys(tables) {
		fields, ok := tables[name].(map[string]any)
		if !ok {
			warns = append(warns, Warning{Path: l.Path, Line: tomlLine(data, name), Server: name, Message: "is not a table; skipped"})
			continue
		}
		layer.tables[name] = fields
	}
	return layer, warns
}

// mergeCodex makes the servers of Codex's layers: of a name several
// define, one entry whose keys are merged as Codex merges its layers —
// a table (env, http_headers, env_http_headers, tools) key by key, any
// other value (args, enabled_tools, a string, a number) replaced whole
// by the layer of higher precedence (codex-rs/config/src/merge.rs,
// merge_toml_values; ConfigLayerStack::effective_config in state.rs, of
// which mcp_servers is read). The server's Source is the layer of
// highest precedence that sets any of its keys, and its Layers all of
// them when there are several; its Hash is the merged entry's, so that
// an edit of any layer asks for trust again. counts are, for each layer,
// the entries of it that a server was made of.
func mergeCodex(layers []*codexLayer) (list []*Server, counts []int, warns []Warning) {
	counts = make([]int, len(layers))
	order := make([]int, len(layers))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return layers[order[a]].loc.codexLayer < layers[order[b]].loc.codexLayer })
	names := map[string]bool{}
	for _, l := range layers {
		for n := range l.tables {
			names[n] = true
		}
	}
	for _, name := range sortedKeys(names) {
		e := &entry{name: name, fields: map[string]any{}, lines: map[string]int{}, paths: map[string]string{}}
		var from []int
		for _, i := range order {
			t, ok := layers[i].tables[name]
			if !ok {
				continue
			}
			mergeTOML(e.fields, t)
			line := tomlLine(layers[i].data, name)
			for k := range t {
				e.lines[k], e.paths[k] = line, layers[i].loc.Path
			}
			e.line = line
			from = append(from, i)
		}
		e.keys = sortedKeys(e.fields)
		top := layers[from[len(from)-1]].loc
		s, w := top.dialect.build(top.Source, e)
		warns = append(warns, w...)
		if s == nil {
			continue
		}
		for _, i := range from {
			counts[i]++
			if len(from) > 1 {
				s.Layers = append(s.Layers, layers[i].loc.Source)
			}
		}
		list = append(list, s)
	}
	return list, counts, warns
}

// mergeTOML merges overlay into base as Codex's merge_toml_values does:
// a table into a table key by key, anything else replacing what was
// there. base takes copies, so that overlay is never changed.
func mergeTOML(base, overlay map[string]any) {
	for k, v := range overlay {
		if vt, ok := v.(map[string]any); ok {
			bt, ok := base[k].(map[string]any)
			if !ok {
				bt = map[string]any{}
			}
			mergeTOML(bt, vt)
			base[k] = bt
			continue
		}
		base[k] = v
	}
}

// tomlQuoted matches a quoted excerpt of the file, longer than one
// character, in a TOML decoder's message.
var tomlQuoted = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"(?:[^"\\]|\\.){2,}"`) })

// tomlLine finds the line where [mcp_servers.NAME] (or a dotted key of
// it) first appears; 0 when not found. The TOML decoder keeps no
// positions.
func tomlLine(data []byte, name string) int {
	q := regexp.QuoteMeta(name)
	re, err := regexp.Compile(`mcp_servers\s*\.\s*(?:"` + q + `"|'` + q + `'|` + q + `)\s*(?:[.\]=]|$)`)
	if err != nil {
		return 0
	}
	loc := re.FindIndex(data)
	if loc == nil {
		return 0
	}
	return lineAt(data, loc[0])
}
