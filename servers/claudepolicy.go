package servers

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Claude Code's managed MCP policy
// (https://code.claude.com/docs/en/managed-mcp): an administrator either
// deploys managed-mcp.json, whose servers are then the only ones Claude
// Code uses ("Exclusive control with managed-mcp.json"), or filters the
// servers people configure with allowedMcpServers and deniedMcpServers
// ("Policy-based control with allowlists and denylists"), or both, and
// may provide remote servers beside the person's own (managedMcpServers,
// "Provide servers through managed settings"). mcpx
// lists the servers Claude Code would not use as disabled, saying why,
// rather than hiding them: they are still in their files, and mcpx, which
// is not bound by Claude Code's policy, uses one when it is named.

// policyEntry is one entry of allowedMcpServers or deniedMcpServers: an
// object with one of serverName, serverCommand or serverUrl.
type policyEntry struct {
	name    string
	command []string
	url     string
	// file is the settings file the entry is in.
	file string
}

// claudePolicy is Claude Code's MCP policy as the settings files set it.
type claudePolicy struct {
	// exclusive is the path of managed-mcp.json when it is deployed.
	exclusive string
	// allowSet: some file has an allowedMcpServers list (an empty one
	// allows nothing); allowed are their entries, allowFiles the files.
	allowSet   bool
	allowed    []policyEntry
	allowFiles []string
	denied     []policyEntry
	// fixed are the names of managed-mcp.json's servers; provided, of
	// the managed settings' managedMcpServers, with their file.
	fixed    map[string]bool
	provided map[string]string
}

// claudeCodePolicy reads Claude Code's policy: the lists of the managed
// settings (managed-settings.json, then managed-settings.d/*.json in
// alphabetical order, in claudeManagedDir: https://code.claude.com/docs/
// en/managed-settings, "Split a file-based policy across teams"), and
// of the user's, the project's and the project's local settings. Lists
// merge across every file; when the managed settings set
// allowManagedMcpServersOnly, only their allowlist counts
// (https://code.claude.com/docs/en/managed-mcp, "How a server is
// evaluated"). MDM profiles, the Windows registry and server-managed
// settings are not files mcpx reads.
func claudeCodePolicy(env *Env, claude claudeDirs, docs map[string]*jsonDoc) (claudePolicy, []Warning) {
	p := claudePolicy{exclusive: claude.managed}
	var warns []Warning
	managed := env.claudeManagedSettings()
	userDir := env.join(env.Home, ".claude")
	if d := env.getenv("CLAUDE_CONFIG_DIR"); d != "" {
		userDir = d
	}
	others := []string{env.join(userDir, "settings.json")}
	if env.Workspace != "" {
		others = append(others, env.join(claude.project, ".claude", "settings.json"),
			env.join(claude.project, ".claude", "settings.local.json"))
	}
	managedOnly := false
	type lists struct {
		file            string
		allowed, denied []policyEntry
		allowSet        bool
	}
	read := func(path string, isManaged bool) lists {
		l := lists{file: path}
		doc := docOf(env, docs, path)
		// A managed file that cannot be read or parsed is a location
		// too: Load says so.
		if doc.readErr != nil {
			return l
		}
		std, v, err := doc.parse()
		if err != nil || !v.object {
			return l
		}
		if isManaged {
			if n := findPath(env, "", v, []string{"allowManagedMcpServersOnly"}); n != nil {
				var b any
				if decode(std[n.start:n.end], &b) == nil {
					managedOnly, _ = b.(bool)
				}
			}
		}
		entries := func(key string) ([]policyEntry, bool) {
			n := findPath(env, "", v, []string{key})
			if n == nil {
				return nil, false
			}
			var raw []any
			if decode(std[n.start:n.end], &raw) != nil {
				warns = append(warns, Warning{Path: path, Line: lineAt(doc.data, n.start), Message: key + " is not a list; ignored"})
				return nil, false
			}
			var out []policyEntry
			for i, r := range raw {
				e, ok := policyEntryOf(r)
				if !ok {
					warns = append(warns, Warning{Path: path, Line: lineAt(doc.data, n.start),
						Message: fmt.Sprintf("%s[%d] is not an object with one of serverName, serverCommand (a list of strings) or serverUrl; ignored", key, i)})
					continue
				}
				e.file = path
				out = append(out, e)
			}
			return out, true
		}
		l.allowed, l.allowSet = entries("allowedMcpServers")
		l.denied, _ = entries("deniedMcpServers")
		return l
	}
	var managedLists, otherLists []lists
	for _, f := range managed {
		managedLists = append(managedLists, read(f, true))
	}
	for _, f := range others {
		otherLists = append(otherLists, read(f, false))
	}
	all := append(slices.Clone(managedLists), otherLists...)
	allowFrom := all
	if managedOnly {
		allowFrom = managedLists
	}
	for _, l := range allowFrom {
		if l.allowSet {
			p.allowSet = true
			p.allowed = append(p.allowed, l.allowed...)
			p.allowFiles = append(p.allowFiles, l.file)
		}
	}
	for _, l := range all {
		p.denied = append(p.denied, l.denied...)
	}
	return p, warns
}

// claudeManagedSettings are Claude Code's managed settings files, in the
// order it merges them: managed-settings.json, then the *.json files of
// managed-settings.d beside it in alphabetical order, leaving out hidden
// ones (https://code.claude.com/docs/en/managed-settings, "Split a
// file-based policy across teams"). The directory is listed only by a
// FileSystem that can (readDirFS).
func (e *Env) claudeManagedSettings() []string {
	dir := e.claudeManagedDir()
	out := []string{e.join(dir, "managed-settings.json")}
	rd, ok := e.fs().(readDirFS)
	if !ok {
		return out
	}
	d := e.join(dir, "managed-settings.d")
	entries, err := rd.ReadDir(d)
	if err != nil {
		return out
	}
	var names []string
	for _, de := range entries {
		if n := de.Name(); !strings.HasPrefix(n, ".") && strings.HasSuffix(n, ".json") && !de.IsDir() {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		out = append(out, e.join(d, n))
	}
	return out
}

// policyEntryOf reads one list entry: an object with exactly one of
// serverName (a string), serverCommand (a list of strings) or serverUrl
// (a string).
func policyEntryOf(r any) (policyEntry, bool) {
	m, ok := r.(map[string]any)
	if !ok || len(m) != 1 {
		return policyEntry{}, false
	}
	var e policyEntry
	switch {
	case m["serverName"] != nil:
		e.name, ok = m["serverName"].(string)
		ok = ok && e.name != ""
	case m["serverCommand"] != nil:
		raw, isList := m["serverCommand"].([]any)
		var cmd []string
		cmd, ok = stringList(raw)
		ok = ok && isList && len(cmd) > 0
		e.command = cmd
	case m["serverUrl"] != nil:
		e.url, ok = m["serverUrl"].(string)
		ok = ok && e.url != ""
	default:
		ok = false
	}
	return e, ok
}

// apply marks the Claude Code servers of list that Claude Code would not
// use. A server that something else turned off keeps its reason.
func (p claudePolicy) apply(env *Env, list []*Server) {
	p.fixed, p.provided = map[string]bool{}, map[string]string{}
	for _, s := range list {
		switch s.Source.ID {
		case "claude-code-managed":
			p.fixed[s.Name] = true
		case "claude-code-managed-settings":
			p.provided[s.Name] = s.Source.Path
		}
	}
	for _, s := range list {
		if s.Source.Kind != KindClaudeCode {
			continue
		}
		reason := p.reason(env, s)
		if reason == "" {
			continue
		}
		// The policy's reason wins over a person's own switch (/mcp,
		// disabledMcpjsonServers): it is the one they cannot undo.
		s.DisabledReason = reason
		s.Disabled = true
	}
}

// reason is why Claude Code would not use s, "" when it would. The
// checks are Claude Code's, in its order (https://code.claude.com/docs/
// en/managed-mcp, "How a server is evaluated" and "How provided servers
// load"): managed-mcp.json leaves out every server but its own and those
// of managedMcpServers, and wins over one of these of the same name; a
// provided server wins over the person's of its name; a server any deniedMcpServers entry
// matches, by name, command or URL, is blocked, whatever else says; when
// some file sets allowedMcpServers, a server must match it — a stdio
// server a serverCommand entry, or its name when there is none; a remote
// server a serverUrl entry, or its name when there is none — except the
// servers of managed-mcp.json that take nothing from the environment
// (${VAR} in their command, arguments, env, URL or headers) and every
// provided one, which are the organisation's own.
func (p claudePolicy) reason(env *Env, s *Server) string {
	managed := s.Source.ID == "claude-code-managed"
	provided := s.Source.ID == "claude-code-managed-settings"
	switch {
	case provided && p.fixed[s.Name]:
		return "Claude Code uses the server of this name of its managed " + p.exclusive
	case p.exclusive != "" && !managed && !provided:
		return "Claude Code uses only the servers of its managed " + p.exclusive
	case !managed && !provided && p.provided[s.Name] != "":
		return "Claude Code uses the server of this name of managedMcpServers in " + p.provided[s.Name]
	}
	for _, e := range p.denied {
		if e.matches(env, s) {
			return "Claude Code's deniedMcpServers in " + e.file + " blocks it"
		}
	}
	if !p.allowSet || provided || (managed && !usesEnvironment(s)) {
		return ""
	}
	remote := s.Transport.IsHTTP()
	strict := slices.ContainsFunc(p.allowed, func(e policyEntry) bool {
		return (remote && e.url != "") || (!remote && e.command != nil)
	})
	for _, e := range p.allowed {
		if (strict && (e.url != "" || e.command != nil) || !strict && e.name != "") && e.matches(env, s) {
			return ""
		}
	}
	what := "its name"
	switch {
	case strict && remote:
		what = "its URL"
	case strict:
		what = "its command"
	}
	return "Claude Code's allowedMcpServers in " + strings.Join(p.allowFiles, ", ") + " does not list " + what
}

// usesEnvironment reports whether s's command, arguments, env, URL or
// headers expand a variable.
func usesEnvironment(s *Server) bool {
	return slices.ContainsFunc(s.Expansions(), func(x Expansion) bool {
		f := x.Field
		return f == "command" || f == "url" || strings.HasPrefix(f, "args[") || strings.HasPrefix(f, "env.") || strings.HasPrefix(f, "headers.")
	})
}

// matches reports whether e names s: by its name exactly, by its command
// and arguments exactly (a stdio server), or by a URL pattern (a remote
// one). Commands and URLs are compared with ${VAR} and ${VAR:-default}
// expanded on both sides, from mcpx's environment (Claude Code expands a
// policy entry from the environment it started with).
func (e policyEntry) matches(env *Env, s *Server) bool {
	switch {
	case e.name != "":
		return e.name == s.Name
	case e.command != nil:
		if s.Transport != TransportStdio {
			return false
		}
		have := append([]string{s.Command}, s.Args...)
		return slices.Equal(expandAll(env, e.command), expandAll(env, have))
	case e.url != "":
		return s.Transport.IsHTTP() && urlMatches(expandPolicy(env, e.url), expandPolicy(env, s.URL))
	}
	return false
}

func expandAll(env *Env, list []string) []string {
	out := make([]string, len(list))
	for i, v := range list {
		out[i] = expandPolicy(env, v)
	}
	return out
}

var policyVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}`)
})

// expandPolicy expands ${VAR} and ${VAR:-default} in v; a variable that is
// unset and has no default stays as written.
func expandPolicy(env *Env, v string) string {
	if !strings.Contains(v, "${") {
		return v
	}
	return policyVar().ReplaceAllStringFunc(v, func(m string) string {
		sub := policyVar().FindStringSubmatch(m)
		val, ok := env.lookupEnv(sub[1])
		def := strings.Contains(m, ":-")
		switch {
		case ok && (val != "" || !def):
			return val
		case def:
			return sub[2]
		}
		return m
	})
}

// urlMatches matches url against Claude Code's URL pattern: * stands for
// any characters anywhere, the scheme included; the scheme and host are
// compared without case, and a trailing dot of the host is ignored; the
// path is compared with case; a pattern without a path matches every path
// (https://code.claude.com/docs/en/managed-mcp, "How a server is
// evaluated").
func urlMatches(pattern, url string) bool {
	ps, pa, pp, pok := splitURL(pattern)
	us, ua, up, uok := splitURL(url)
	if !pok || !uok {
		return wildcard(pattern, url)
	}
	if pp == "" {
		pp = "*"
	}
	if up == "" {
		up = "/"
	}
	return wildcard(strings.ToLower(ps), strings.ToLower(us)) && wildcard(hostPart(pa), hostPart(ua)) && wildcard(pp, up)
}

// splitURL splits a URL into its scheme, its authority and the rest (path,
// query); ok is false without "://".
func splitURL(u string) (scheme, authority, rest string, ok bool) {
	scheme, after, ok := strings.Cut(u, "://")
	if !ok {
		return "", "", "", false
	}
	if i := strings.IndexAny(after, "/?#"); i >= 0 {
		return scheme, after[:i], after[i:], true
	}
	return scheme, after, "", true
}

// hostPart is an authority in lower case, without a trailing dot on its
// host.
func hostPart(a string) string {
	a = strings.ToLower(a)
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		a = a[i+1:]
	}
	host, port, hasPort := strings.Cut(a, ":")
	if strings.HasPrefix(a, "[") { // an IPv6 literal
		if j := strings.Index(a, "]"); j >= 0 {
			host, port = a[:j+1], strings.TrimPrefix(a[j+1:], ":")
			hasPort = j+1 < len(a)
		}
	}
	host = strings.TrimSuffix(host, ".")
	if hasPort {
		return host + ":" + port
	}
	return host
}

// wildcard matches s against pattern, where * stands for any run of
// characters (none included) and everything else for itself.
func wildcard(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

// readDirFS is a FileSystem that can list a directory (Claude Code's
// managed-settings.d); one without it reads managed-settings.json alone.
type readDirFS interface {
	ReadDir(name string) ([]fs.DirEntry, error)
}

// providedServers keeps of the managed settings' managedMcpServers the
// entries Claude Code loads, and says why it drops the others: an HTTP or
// SSE server (type given) at an https:// URL, with no command, args or
// env, no ${VAR}, and a name of letters, digits, - and _
// (https://code.claude.com/docs/en/managed-mcp, "What an entry can
// contain").
func providedServers(list []*Server, warns []Warning) ([]*Server, []Warning) {
	return slices.DeleteFunc(list, func(s *Server) bool {
		why := ""
		switch {
		case s.Transport == TransportStdio || len(s.Args) > 0 || len(s.Env) > 0:
			why = "is a command; Claude Code loads only remote servers from managedMcpServers"
		case s.Transport != TransportHTTP && s.Transport != TransportSSE:
			why = `has no type "http" or "sse", which Claude Code requires of managedMcpServers`
		case !strings.HasPrefix(strings.ToLower(s.URL), "https://"):
			why = "is not at an https:// URL, which Claude Code requires of managedMcpServers"
		case len(s.Expansions()) > 0:
			why = "uses ${VAR}, which Claude Code does not expand in managedMcpServers"
		case !providedName().MatchString(s.Name):
			why = "has a name of other characters than letters, digits, - and _, which Claude Code refuses in managedMcpServers"
		}
		if why != "" {
			warns = append(warns, Warning{Path: s.Source.Path, Line: s.Line, Server: s.Name, Message: why + "; skipped"})
		}
		return why != ""
	}), warns
}

var providedName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })
