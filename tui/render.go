package tui

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/tidwall/pretty"

	"github.com/mcpx-dev/mcpx/apps"
	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
)

// Printer renders MCP results for people. Everything a server supplied is
// escaped before it reaches the terminal.
type Printer struct {
	w     io.Writer
	color bool
	st    styles
	// width, when positive, is the terminal's width: tables are fitted to
	// it (see WithWidth).
	width int
	// hint says how to get binary data that is summarised (WithSaveHint).
	hint string
	// saved is 1 + the index of the tool result's content block that was
	// written to a file instead (WithSaved), 0 for none.
	saved int
	// savable is the index of the one content block (or contents item)
	// the hint applies to, -1 for none, when savableSet (WithSavable).
	savable    int
	savableSet bool
	// hostApp and hides are the application that hides some tools from
	// its model, and which (WithHiddenTools).
	hostApp string
	hides   func(name string) (hidden bool, why string)
}

// otherHint is how to get binary data that a command's -o does not write.
const otherHint = "use --json to get it"

// style returns a function that renders its arguments with attrs when
// enabled is true and plainly otherwise, whatever fatih/color's global
// detection says: mcpx decides colour per stream (--color, NO_COLOR, TTY).
func style(enabled bool, attrs ...color.Attribute) func(a ...any) string {
	c := color.New(attrs...)
	if enabled {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c.SprintFunc()
}

// styles are the colours of the console and the printer: the same ones
// for the same things everywhere.
type styles struct {
	head, name, dim, err, warn, key func(a ...any) string
	// sent marks what the client sent (a trace's arrows), removed what
	// was recorded but is gone (a verification's diff).
	sent, removed func(a ...any) string
}

func newStyles(enabled bool) styles {
	mk := func(attrs ...color.Attribute) func(a ...any) string { return style(enabled, attrs...) }
	return styles{
		head:    mk(color.Bold),
		name:    mk(color.FgCyan, color.Bold),
		dim:     mk(color.Faint),
		err:     mk(color.FgRed, color.Bold),
		warn:    mk(color.FgYellow),
		key:     mk(color.FgGreen),
		sent:    mk(color.FgCyan),
		removed: mk(color.FgRed),
	}
}

// NewPrinter returns a Printer writing to w, with colour when color is
// true (the caller decides per stream: --color, NO_COLOR, a terminal).
func NewPrinter(w io.Writer, color bool) *Printer {
	return &Printer{w: w, color: color, st: newStyles(color)}
}

// WithWidth returns a printer like p whose tables (lists of tools,
// resources, prompts; a tool's arguments) fit in columns: cells that do
// not fit are cut with "…". Zero or less means no limit, what a pipe or a
// file gets, and what a person asks for with --wide.
func (p *Printer) WithWidth(columns int) *Printer {
	q := *p
	q.width = max(columns, 0)
	return &q
}

// WithHiddenTools returns a printer like p whose Tools marks the tools
// that app, the application whose server entry was named, hides from its
// model, hides saying so and by what ("disabled_tools", "not in
// enabled_tools"; see servers.ToolFilter), and says under the table
// which they are. The tools are listed all the same: the server offers
// them.
func (p *Printer) WithHiddenTools(app string, hides func(name string) (hidden bool, why string)) *Printer {
	q := *p
	q.hostApp, q.hides = app, hides
	return &q
}

// WithSaveHint returns a printer like p that tells how to get the binary
// contents it summarises with hint (what the command offers: "use -o FILE
// to save it", the default).
func (p *Printer) WithSaveHint(hint string) *Printer {
	q := *p
	q.hint = hint
	return &q
}

// WithSaved returns a printer like p whose ToolResult leaves out the
// content block at index i, which tools call -o wrote to a file.
func (p *Printer) WithSaved(i int) *Printer {
	q := *p
	q.saved = i + 1
	return &q
}

// WithSavable returns a printer like p whose hint (WithSaveHint) is given
// for the binary data of the content block (tools call) or contents item
// (resources read) at index i only, -1 for none: the one -o writes. Other
// binary data gets "use --json to get it", the one way to get it.
func (p *Printer) WithSavable(i int) *Printer {
	q := *p
	q.savable, q.savableSet = i, true
	return &q
}

// item returns the printer for the content block or contents item at
// index i (-1: what is not one, such as structured content).
func (p *Printer) item(i int) *Printer {
	if !p.savableSet || (i >= 0 && i == p.savable) {
		return p
	}
	q := *p
	q.hint = otherHint
	return &q
}

func (p *Printer) saveHint() string {
	if p.hint == "" {
		return "use -o FILE to save it"
	}
	return p.hint
}

// JSON prints raw pretty-printed (and coloured when enabled), keeping the
// member order and values exactly as received. Large JSON without colour
// is written as it is laid out, never held twice in memory; so is JSON
// nested deeper than maxIndentLevels, whose deeper levels are compact.
func (p *Printer) JSON(raw json.RawMessage) {
	if (len(raw) >= streamJSONMin || rawjson.NestedBeyond(raw, maxIndentLevels)) && !p.color && json.Valid(raw) {
		writePrettyJSON(p.w, raw, "")
		return
	}
	fmt.Fprint(p.w, p.prettyJSON(raw, ""))
}

func (p *Printer) prettyJSON(raw json.RawMessage, indent string) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("null")
	}
	var out []byte
	if rawjson.NestedBeyond(raw, maxIndentLevels) && json.Valid(raw) {
		// Laid out as tidwall/pretty would, but not indented past
		// maxIndentLevels (and escaped as EscapeJSON escapes).
		var b bytes.Buffer
		writePrettyJSON(&b, raw, indent)
		out = b.Bytes()
	} else {
		out = pretty.PrettyOptions(raw, &pretty.Options{Width: 80, Prefix: indent, Indent: "  ", SortKeys: false})
		out = []byte(EscapeJSON(string(out)))
	}
	if p.color {
		out = pretty.Color(out, nil)
	}
	return string(out)
}

// Info describes the server a session is connected to.
func (p *Printer) Info(info *inspector.ServerInfo, transport string) {
	impl := info.Implementation
	name := EscapeLine(impl.Name)
	if impl.Version != "" {
		name += " " + EscapeLine(impl.Version)
	}
	if impl.Title != "" {
		name += " (" + EscapeLine(impl.Title) + ")"
	}
	if strings.TrimSpace(name) == "" {
		// No serverInfo (a handshake-era server that left it out, which
		// mcpx warned about; a 2026-07-28 server, for which it is a SHOULD).
		name = "(not named by the server)"
	}
	tw := NewColumns(p.w)
	fmt.Fprintf(tw, "%s\t%s\n", p.st.head("Server:"), p.st.name(name))
	fmt.Fprintf(tw, "%s\t%s\n", p.st.head("Protocol:"), EscapeLine(info.ProtocolVersion))
	if era := describeEra(info); era != "" {
		fmt.Fprintf(tw, "%s\t%s\n", p.st.head("Era:"), era)
	}
	if len(info.SupportedVersions) > 0 {
		fmt.Fprintf(tw, "%s\t%s\n", p.st.head("Supported:"), EscapeLine(strings.Join(info.SupportedVersions, ", ")))
	}
	if transport != "" {
		fmt.Fprintf(tw, "%s\t%s\n", p.st.head("Transport:"), EscapeLine(transport))
	}
	if hint := cacheHint(info.TTLMs, info.CacheScope); hint != "" {
		fmt.Fprintf(tw, "%s\t%s\n", p.st.head("Cache:"), hint)
	}
	tw.Flush()
	// The rest of the serverInfo (the spec's websiteUrl, description and
	// icons, and whatever else the server put there), as it came.
	if rest := unshown(serverInfoOf(info.Raw), "name", "version", "title"); len(rest) > 0 {
		fmt.Fprintln(p.w, p.st.head("Server info:"))
		p.more(rest, "  ")
	}
	fmt.Fprintln(p.w, p.st.head("Capabilities:"))
	caps, err := inspector.ParseObject(info.Capabilities)
	if err != nil || len(caps.Keys()) == 0 {
		fmt.Fprintln(p.w, "  (none)")
	} else {
		var b strings.Builder
		tw = NewColumns(&b)
		for _, k := range caps.Keys() {
			fmt.Fprintf(tw, "  %s\t%s\n", p.st.key(EscapeLine(k)), EscapeLine(strings.Join(inspector.CapabilityNames(caps.Get(k)), ", ")))
		}
		tw.Flush()
		// A capability without features (logging: {}) has an empty last
		// cell: its line would end in the padding.
		for _, l := range strings.SplitAfter(b.String(), "\n") {
			if l != "" {
				fmt.Fprintln(p.w, strings.TrimRight(strings.TrimSuffix(l, "\n"), " "))
			}
		}
	}
	if info.Instructions != "" {
		fmt.Fprintln(p.w, p.st.head("Instructions:"))
		p.indented(info.Instructions, "  ")
	}
	// An initialize result (or, in the modern era, a server/discover one)
	// may carry more than the above.
	p.resultMore(resultRest(info.Raw, "protocolVersion", "capabilities", "serverInfo", "instructions", "supportedVersions", "ttlMs", "cacheScope"))
}

// serverInfoOf returns the Implementation object of the result raw that
// described a server: the serverInfo of an initialize result, or of a
// server/discover result's _meta (where 2026-07-28 puts it; a top-level
// one as a fallback, as the session reads it); nil for none.
func serverInfoOf(raw json.RawMessage) []byte {
	if impl := rawjson.Member(rawjson.Member(raw, "_meta"), mcp.MetaServerInfo); impl != nil {
		return impl
	}
	return rawjson.Member(raw, "serverInfo")
}

// describeEra says which protocol era a session speaks and why.
func describeEra(info *inspector.ServerInfo) string {
	var s string
	switch info.Era {
	case "modern":
		s = "modern (stateless, per-request _meta)"
	case "legacy":
		s = "legacy (initialize handshake)"
	default:
		return ""
	}
	if info.EraReason != "" {
		s += "; " + EscapeLine(info.EraReason)
	}
	return s
}

// cacheHint renders a result's caching hints (spec 2026-07-28:
// server/utilities/caching), "" when it has none.
func cacheHint(ttlMs *int64, scope string) string {
	var parts []string
	if ttlMs != nil {
		switch ms := *ttlMs; {
		case ms < 0:
			parts = append(parts, fmt.Sprintf("ttl %dms (negative, which the spec forbids: taken as 0)", ms))
		case ms == 0:
			parts = append(parts, "ttl 0 (stale at once)")
		default:
			parts = append(parts, fmt.Sprintf("ttl %s", (time.Duration(ms)*time.Millisecond).String()))
		}
	}
	switch scope {
	case "":
	case "public", "private":
		parts = append(parts, "scope "+scope)
	default:
		parts = append(parts, "scope "+EscapeLine(scope)+" (neither public nor private)")
	}
	return strings.Join(parts, ", ")
}

// CacheHint describes a result's caching hints (ttlMs, cacheScope; spec
// 2026-07-28: server/utilities/caching) on one line, "" when it has none.
// Unless all is set, only a hint that says something is described: a
// positive ttlMs (the result stays fresh for a while), or a hint that
// breaks the spec (a negative ttlMs, an unknown scope). A ttlMs of 0 is
// what every result without hints means (stale at once), and a scope on
// its own changes nothing for a command that does not cache.
func CacheHint(raw json.RawMessage, all bool) string {
	// Only the two members are decoded, as json.Unmarshal would match
	// them (exactly, else without regard to case; the last one counts):
	// a list result of thousands of items is not decoded whole.
	var small []byte
	if !rawjson.Members(raw, func(name, v []byte) bool {
		if rawjson.MatchName(name, "ttlMs", "cacheScope") != "" {
			if len(small) > 0 {
				small = append(small, ',')
			}
			small = append(append(append(small, name...), ':'), v...)
		}
		return true
	}) {
		return ""
	}
	var ttlMs *int64
	var scope string
	// Without either (most results) there is nothing to decode: a
	// one-shot list built json's decoder for them, on first use, for
	// nothing (issue 13).
	if len(small) > 0 {
		var r struct {
			TTLMs      *int64 `json:"ttlMs"`
			CacheScope string `json:"cacheScope"`
		}
		if json.Unmarshal(append(append([]byte{'{'}, small...), '}'), &r) != nil {
			return ""
		}
		ttlMs, scope = r.TTLMs, r.CacheScope
	}
	useful := ttlMs != nil && *ttlMs != 0 ||
		scope != "" && scope != "public" && scope != "private"
	if !all && !useful {
		return ""
	}
	if h := cacheHint(ttlMs, scope); h != "" {
		return "cache hint: " + h
	}
	return ""
}

// indented prints a server's text (a description, instructions) escaped,
// each line indented, and with a width (WithWidth) wrapped at words: it
// is prose, which the terminal broke mid-word.
func (p *Printer) indented(text, indent string) {
	for _, line := range strings.Split(strings.TrimRight(Escape(text), "\n"), "\n") {
		if line == "" {
			fmt.Fprintln(p.w) // not the indent alone: no line ends in spaces
			continue
		}
		fmt.Fprintln(p.w, WrapText(indent+line, p.width))
	}
}

// say prints a line of mcpx's own (advice, what a list says under its
// table; styled), broken at words to the printer's width (WithWidth),
// as the console's lines are: printed whole, it was cut mid-word at a
// narrow terminal's edge. Without a width (not a terminal, --wide) it is
// printed whole, as a script reads it.
func (p *Printer) say(line string) {
	fmt.Fprintln(p.w, WrapText(line, p.width))
}

// firstLine returns the first line of s, escaped for a table cell.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i]) + " …"
	}
	return EscapeLine(s)
}

type toolEntry struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// toolEntryNames are toolEntry's members.
var toolEntryNames = []string{"name", "title", "description", "inputSchema"}

// readToolEntry reads a tool as json.Unmarshal into a toolEntry would (a
// member of the wrong type leaves what was read), in place: a list of
// thousands of tools reads each once. it must be valid JSON, as the items
// of a list the session read are.
func readToolEntry(it json.RawMessage) toolEntry {
	var t toolEntry
	var f rawjson.Fields
	if f.Object(it, toolEntryNames, func(name string, v []byte) {
		switch name {
		case "name":
			t.Name = f.Str(v)
		case "title":
			t.Title = f.Str(v)
		case "description":
			t.Description = f.Str(v)
		case "inputSchema":
			t.InputSchema = json.RawMessage(v)
		}
	}) {
		return t
	}
	t = toolEntry{}
	_ = json.Unmarshal(it, &t)
	return t
}

// table prints one row of three columns per item, aligned (and fitted
// to the printer's width), or the placeholder when there are none.
func (p *Printer) table(items []json.RawMessage, none string, row func(json.RawMessage) [3]cell) {
	if len(items) == 0 {
		fmt.Fprintln(p.w, p.st.dim(none))
		return
	}
	t := &table{width: p.width}
	for _, it := range items {
		if len(it) == 0 || it[0] != '{' {
			// Not an item at all (a warning says so): shown as it came,
			// not as an empty row.
			t.add(styled(EscapeLine(rawjson.Excerpt(it, 60)), p.st.warn), plain(""), styled("(not an object)", p.st.dim))
			continue
		}
		r := row(it)
		t.add(r[:]...)
	}
	// The table goes out in large writes, not a few per cell: a list of
	// thousands of tools is thousands of rows.
	bw := bufio.NewWriterSize(p.w, 64<<10)
	t.write(bw)
	bw.Flush()
}

// nameCell is the name column of a list: the item's name, or, for an
// item without one (a warning says so), a mark instead of a blank.
func (p *Printer) nameCell(name string) cell {
	if name == "" {
		return styled("(no name)", p.st.warn)
	}
	return styled(EscapeName(name), p.st.name)
}

// Tools lists tools with their arguments (required ones marked with *).
// items are valid JSON, as inspector.Session.List returns them.
func (p *Printer) Tools(items []json.RawMessage) {
	var invalid []string
	// hidden are the names the host hides (WithHiddenTools), by reason,
	// the reasons in the order they first come.
	hidden := map[string][]string{}
	var reasons []string
	p.table(items, "(no tools)", func(it json.RawMessage) [3]cell {
		t := readToolEntry(it)
		name := p.nameCell(t.Name)
		if p.hides != nil && t.Name != "" {
			if h, why := p.hides(t.Name); h {
				name = append(name, span{text: " "}, span{text: "[hidden from " + EscapeLine(p.hostApp) + "]", style: p.st.dim})
				if len(hidden[why]) == 0 {
					reasons = append(reasons, why)
				}
				hidden[why] = append(hidden[why], EscapeName(t.Name))
			}
		}
		if _, err := mcp.ToolHeaderParams(t.InputSchema); err != nil {
			// An inspector shows what a client must exclude, and why.
			name = append(name, span{text: " "}, span{text: "[invalid x-mcp-header]", style: p.st.warn})
			invalid = append(invalid, fmt.Sprintf("%s: %s", EscapeName(t.Name), EscapeLine(err.Error())))
		}
		name = append(name, p.appMarks(it)...)
		return [3]cell{name, styled(SchemaSignature(t.InputSchema), p.st.dim), plain(firstLine(orString(t.Description, t.Title)))}
	})
	for _, w := range invalid {
		p.say(p.st.warn("invalid x-mcp-header: " + w + " (not called over HTTP: spec 2026-07-28, server/tools)"))
	}
	for _, why := range reasons {
		by := "by " + why
		if strings.HasPrefix(why, "not in ") {
			by = "(" + why + ")"
		}
		names := hidden[why]
		p.say(p.st.dim(fmt.Sprintf("%d tool(s) hidden from %s %s: %s", len(names), EscapeLine(p.hostApp), EscapeLine(by), strings.Join(names, ", "))))
	}
}

// appMarks marks a tool that has an MCP Apps view ([view]: its
// _meta.ui.resourceUri) and one visible to views only ([app only]: its
// visibility lacks "model", so a host keeps it from the model) or to
// nobody ([hidden]: an empty visibility), spec
// "Resource Discovery" and "Visibility" of io.modelcontextprotocol/ui.
func (p *Printer) appMarks(tool json.RawMessage) cell {
	if !bytes.Contains(tool, []byte(`"_meta"`)) {
		return nil
	}
	ui, err := apps.ParseToolUI(tool)
	if err != nil {
		return cell{{text: " "}, {text: "[invalid _meta.ui]", style: p.st.warn}}
	}
	var c cell
	if ui.HasView() {
		c = append(c, span{text: " "}, span{text: "[view]", style: p.st.key})
	}
	switch {
	case ui.AppOnly() && !ui.VisibleTo(apps.VisibleToApp):
		// "visibility": []: neither the model nor a view may call it.
		c = append(c, span{text: " "}, span{text: "[hidden]", style: p.st.dim})
	case ui.AppOnly():
		c = append(c, span{text: " "}, span{text: "[app only]", style: p.st.dim})
	}
	return c
}

func orString(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// SchemaSignature summarises an object schema's properties as
// "a:number* b:string", required ones starred, in the schema's order.
func SchemaSignature(schema json.RawMessage) string {
	var parts []string
	for _, a := range inspector.SchemaArgs(schema) {
		part := EscapeName(a.Name)
		if a.Type != "" {
			part += ":" + a.Type
		}
		if a.Required {
			part += "*"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, " ")
}

// Resources lists resources: name, URI, MIME type.
func (p *Printer) Resources(items []json.RawMessage) {
	p.table(items, "(no resources)", func(it json.RawMessage) [3]cell {
		var r struct {
			Name, Title, URI, MimeType, Description string
			Size                                    json.RawMessage
		}
		_ = json.Unmarshal(it, &r)
		extra := EscapeLine(r.MimeType)
		if len(r.Size) > 0 && !rawjson.IsNull(r.Size) {
			// A size that is not a count of bytes (negative, beyond
			// int64, not a number) is shown as it came, marked.
			var n int64
			size := EscapeLine(rawjson.Excerpt(r.Size, 40)) + " (not a size)"
			if json.Unmarshal(r.Size, &n) == nil && n >= 0 {
				size = HumanSize(n)
			}
			extra = strings.TrimSpace(extra + " " + size)
		}
		return [3]cell{p.nameCell(orString(r.Name, r.Title)), plain(EscapeName(r.URI)), styled(extra, p.st.dim)}
	})
}

// Templates lists resource templates.
func (p *Printer) Templates(items []json.RawMessage) {
	p.table(items, "(no resource templates)", func(it json.RawMessage) [3]cell {
		var r struct {
			Name, Title, URITemplate, MimeType, Description string
		}
		_ = json.Unmarshal(it, &r)
		return [3]cell{p.nameCell(orString(r.Name, r.Title)), plain(EscapeName(r.URITemplate)), plain(firstLine(r.Description))}
	})
}

// Prompts lists prompts with their arguments (required ones starred).
func (p *Printer) Prompts(items []json.RawMessage) {
	p.table(items, "(no prompts)", func(it json.RawMessage) [3]cell {
		var r struct {
			Name, Title, Description string
			Arguments                []struct {
				Name     string
				Required bool
			}
		}
		_ = json.Unmarshal(it, &r)
		var args []string
		for _, a := range r.Arguments {
			s := EscapeName(a.Name)
			if a.Required {
				s += "*"
			}
			args = append(args, s)
		}
		return [3]cell{p.nameCell(r.Name), styled(strings.Join(args, " "), p.st.dim), plain(firstLine(orString(r.Description, r.Title)))}
	})
}

// ToolResult renders a CallToolResult: its content blocks, then its
// structured content, then whatever else the result holds. It reports
// whether the result has isError set. Content is read in place and texts
// are written as they are decoded, so a large result is never copied.
func (p *Printer) ToolResult(raw json.RawMessage) (isError bool) {
	var f rawjson.Fields
	var content [][]byte
	var structured []byte
	if !json.Valid(raw) || rawjson.IsNull(bytes.TrimSpace(raw)) || !f.Object(raw, []string{"content", "structuredContent", "isError"}, func(name string, v []byte) {
		switch name {
		case "content":
			content = f.Array(v)
		case "structuredContent":
			structured = v
		case "isError":
			isError = f.Bool(v)
		}
	}) {
		p.humanJSON(raw)
		return false
	}
	if isError {
		fmt.Fprintln(p.w, p.st.err("Tool error:"))
	}
	hasStructured := len(structured) > 0 && string(structured) != "null"
	for i, c := range content {
		if i+1 == p.saved {
			continue
		}
		if hasStructured && p.duplicatesStructured(c, structured) {
			// Shown once, below, as structured content.
			continue
		}
		p.item(i).Content(c)
	}
	if hasStructured {
		fmt.Fprintln(p.w, p.st.head("Structured content:"))
		p.item(-1).humanJSON(structured)
	}
	rest := resultRest(raw, "content", "structuredContent", "isError")
	if len(content) == 0 && len(structured) == 0 && p.saved == 0 && len(rest) == 0 {
		fmt.Fprintln(p.w, p.st.dim("(empty result)"))
	}
	p.item(-1).resultMore(rest)
	return isError
}

// duplicatesStructured reports whether the content block c is a text
// block holding the same JSON as structured, and nothing else (a block
// with annotations is shown, for them).
func (p *Printer) duplicatesStructured(c, structured []byte) bool {
	var f rawjson.Fields
	var typ string
	var text []byte
	if !json.Valid(c) || !f.Object(c, []string{"type", "text"}, func(n string, v []byte) {
		if n == "type" {
			typ = f.Str(v)
		} else {
			text = f.OptStr(v)
		}
	}) || typ != "text" || text == nil || len(text) > maxCompared || len(unshown(c, "type", "text")) > 0 {
		return false
	}
	s, ok := rawjson.String(text)
	return ok && sameJSON(s, structured)
}

// member is one member of an object as received: its name (quoted, as
// written) and its value.
type member struct {
	name, value []byte
	// overridden marks a member the renderer reads that comes again
	// later in the object: the later one is what was shown (as a JSON
	// decoder reads it).
	overridden bool
}

// unshown returns the members of the object raw that a renderer showing
// the members shown (matched as rawjson.Fields matches them, the last of
// duplicates counting) leaves out: the others, in order, then the
// earlier of a shown member given twice.
func unshown(raw []byte, shown ...string) []member {
	var out []member
	// The shown members, by the name they matched: one pass over the
	// object (a text member may be most of a large result).
	var seen []struct {
		name string
		m    member
	}
	rawjson.Members(raw, func(n, v []byte) bool {
		if name := rawjson.MatchName(n, shown...); name == "" {
			out = append(out, member{name: n, value: v})
		} else {
			seen = append(seen, struct {
				name string
				m    member
			}{name, member{name: n, value: v, overridden: true}})
		}
		return true
	})
	for i, s := range seen {
		for _, later := range seen[i+1:] {
			if later.name == s.name {
				out = append(out, s.m)
				break
			}
		}
	}
	return out
}

// specMembers are the members the spec defines on content blocks,
// resource contents and results that the renderers show only as they
// came (schema.json: annotations, _meta, a resource link's icons, a
// 2026-07-28 result's resultType, an Implementation's websiteUrl and
// description): more names them as they are, and marks any other member
// as not in the spec.
var specMembers = []string{"annotations", "_meta", "icons", "resultType", "websiteUrl", "description"}

// more prints, one line each under what was rendered, the members ms
// that the rendering left out: the spec's by name (specMembers), any
// other marked as not in the spec, each value as compact JSON with binary
// data elided and control characters escaped. Human output drops nothing
// a server sent without saying so; --json has it all as it came.
func (p *Printer) more(ms []member, indent string) {
	for _, m := range ms {
		name := rawjson.Name(m.name)
		label := EscapeLine(name)
		switch {
		case m.overridden:
			label += " (given again later; the later one is shown)"
		case !slices.Contains(specMembers, name):
			label += " (not in the spec)"
		}
		v := elideBinary(rawjson.AppendCompactPrefix(nil, m.value, len(m.value), false), p.saveHint())
		fmt.Fprintf(p.w, "%s%s %s\n", indent, p.st.dim(label+":"), EscapeJSON(string(v)))
	}
}

// resultRest returns the members of the result raw that its renderer,
// showing the members shown, leaves out, less what the protocol itself
// puts on every result and mcpx has taken in: resultType "complete"
// (spec 2026-07-28: every result carries one) and the _meta keys the
// protocol reserves (io.modelcontextprotocol/*, such as the serverInfo a
// 2026-07-28 server adds to each response).
func resultRest(raw []byte, shown ...string) []member {
	ms := unshown(raw, shown...)
	out := ms[:0]
	for _, m := range ms {
		switch {
		case rawjson.NameIs(m.name, "resultType") && string(m.value) == `"complete"`:
			continue
		case rawjson.NameIs(m.name, "_meta") && bytes.Contains(m.value, []byte(mcp.MetaReservedPrefix)):
			var kept []byte
			if !rawjson.Members(m.value, func(n, v []byte) bool {
				if !strings.HasPrefix(rawjson.Name(n), mcp.MetaReservedPrefix) {
					if len(kept) > 0 {
						kept = append(kept, ',')
					}
					kept = append(append(append(kept, n...), ':'), v...)
				}
				return true
			}) {
				break
			}
			if len(kept) == 0 {
				continue
			}
			m.value = append(append([]byte{'{'}, kept...), '}')
		}
		out = append(out, m)
	}
	return out
}

// resultMore prints a result's members its renderer did not show (see
// resultRest) under a heading, after the rest of the result.
func (p *Printer) resultMore(rest []member) {
	if len(rest) == 0 {
		return
	}
	fmt.Fprintln(p.w, p.st.head("Also in the result:"))
	p.more(rest, "  ")
}

// binary summarises base64 data (the JSON string data, nil when there is
// none) as what: its MIME type and decoded size, or that it is not base64.
func (p *Printer) binary(what, mimeType string, data []byte) {
	mt := orString(EscapeLine(mimeType), "unknown type")
	var line string
	if data == nil {
		line = fmt.Sprintf("[%s: %s, no data]", what, mt)
	} else if n, err := inspector.Base64Len(data); err != nil {
		line = fmt.Sprintf("[%s: %s, %d characters that are not valid base64 (%v); --json shows them]", what, mt, stringLen(data), err)
	} else {
		line = fmt.Sprintf("[%s: %s, %s; %s]", what, mt, HumanSize(n), p.saveHint())
	}
	fmt.Fprintln(p.w, p.st.dim(line))
}

// Content renders one content block (spec: server/tools, "Tool Result"),
// then what it holds besides (annotations, _meta, members the spec does
// not define).
func (p *Printer) Content(raw json.RawMessage) {
	var f rawjson.Fields
	var typ, mimeType, uri, name, title, description string
	var text, data, resource []byte
	var size []byte
	if !json.Valid(raw) || !f.Object(raw, []string{"type", "text", "data", "mimeType", "uri", "name", "title", "description", "size", "resource"},
		func(n string, v []byte) {
			switch n {
			case "type":
				typ = f.Str(v)
			case "text":
				text = f.OptStr(v)
			case "data":
				data = f.OptStr(v)
			case "mimeType":
				mimeType = f.Str(v)
			case "uri":
				uri = f.Str(v)
			case "name":
				name = f.Str(v)
			case "title":
				title = f.Str(v)
			case "description":
				description = f.Str(v)
			case "size":
				size = v
			case "resource":
				resource = v
			}
		}) || size != nil && json.Unmarshal(size, new(*int64)) != nil {
		p.humanJSON(raw)
		return
	}
	switch typ {
	case "text":
		if text == nil {
			p.text("")
		} else {
			p.rawText(text)
		}
		p.more(unshown(raw, "type", "text"), "  ")
	case "image", "audio":
		p.binary(typ, mimeType, data)
		p.more(unshown(raw, "type", "data", "mimeType"), "  ")
	case "resource_link":
		label := EscapeName(orString(name, title))
		if title != "" && name != "" && title != name {
			label += " (" + EscapeLine(title) + ")"
		}
		line := fmt.Sprintf("[resource link] %s %s", label, EscapeName(uri))
		var details []string
		if mimeType != "" {
			details = append(details, EscapeLine(mimeType))
		}
		var n *int64
		if size != nil && json.Unmarshal(size, &n) == nil && n != nil {
			details = append(details, HumanSize(*n))
		}
		if len(details) > 0 {
			line += " (" + strings.Join(details, ", ") + ")"
		}
		fmt.Fprintln(p.w, p.st.dim(line))
		if description != "" {
			p.indented(description, "  ")
		}
		p.more(unshown(raw, "type", "uri", "name", "title", "mimeType", "size", "description"), "  ")
	case "resource":
		p.ResourceContents(resource, true)
		p.more(unshown(raw, "type", "resource"), "  ")
	case "":
		fmt.Fprintln(p.w, p.st.dim("[content without a type]"))
		p.humanJSON(raw)
	default:
		fmt.Fprintln(p.w, p.st.dim(fmt.Sprintf("[%s content]", EscapeLine(typ))))
		p.humanJSON(raw)
	}
}

// ResourceContents renders one TextResourceContents or BlobResourceContents.
// Binary data is summarised, never dumped on the terminal.
func (p *Printer) ResourceContents(raw json.RawMessage, header bool) {
	var f rawjson.Fields
	var uri, mimeType string
	var text, blob []byte
	if !json.Valid(raw) || rawjson.IsNull(bytes.TrimSpace(raw)) || !f.Object(raw, []string{"uri", "mimeType", "text", "blob"}, func(n string, v []byte) {
		switch n {
		case "uri":
			uri = f.Str(v)
		case "mimeType":
			mimeType = f.Str(v)
		case "text":
			text = f.OptStr(v)
		case "blob":
			blob = f.OptStr(v)
		}
	}) {
		p.humanJSON(raw)
		return
	}
	if header {
		h := "[resource] " + EscapeName(uri)
		if mimeType != "" {
			h += " (" + EscapeLine(mimeType) + ")"
		}
		fmt.Fprintln(p.w, p.st.dim(h))
	}
	if text != nil {
		p.rawText(text)
	}
	if blob != nil {
		// Both a text and a blob is against the spec (a warning says so):
		// both are shown.
		p.binary("binary", mimeType, blob)
	}
	if text == nil && blob == nil {
		fmt.Fprintln(p.w, p.st.dim("(no text or blob)"))
	}
	p.more(unshown(raw, "uri", "mimeType", "text", "blob"), "  ")
}

// ReadResult renders a ReadResourceResult. Its caching hints are the
// command's to describe (CacheHint).
func (p *Printer) ReadResult(raw json.RawMessage) {
	var f rawjson.Fields
	var contents [][]byte
	if !json.Valid(raw) || rawjson.IsNull(bytes.TrimSpace(raw)) || !f.Object(raw, []string{"contents"}, func(_ string, v []byte) { contents = f.Array(v) }) {
		p.humanJSON(raw)
		return
	}
	if len(contents) == 0 {
		fmt.Fprintln(p.w, p.st.dim("(no contents)"))
	}
	for i, c := range contents {
		p.item(i).ResourceContents(c, len(contents) > 1)
	}
	p.item(-1).resultMore(resultRest(raw, "contents", "ttlMs", "cacheScope"))
}

// PromptResult renders a GetPromptResult: description, then each message.
func (p *Printer) PromptResult(raw json.RawMessage) {
	var f rawjson.Fields
	var description string
	var messages [][]byte
	if !json.Valid(raw) || rawjson.IsNull(bytes.TrimSpace(raw)) || !f.Object(raw, []string{"description", "messages"}, func(n string, v []byte) {
		if n == "description" {
			description = f.Str(v)
		} else {
			messages = f.Array(v)
		}
	}) {
		p.humanJSON(raw)
		return
	}
	if description != "" {
		fmt.Fprintln(p.w, p.st.dim(EscapeLine(description)))
	}
	if len(messages) == 0 {
		fmt.Fprintln(p.w, p.st.dim("(no messages)"))
	}
	for _, m := range messages {
		var mf rawjson.Fields
		var role string
		var content []byte
		if rawjson.IsNull(m) || !mf.Object(m, []string{"role", "content"}, func(n string, v []byte) {
			if n == "role" {
				role = mf.Str(v)
			} else {
				content = v
			}
		}) {
			p.humanJSON(m)
			continue
		}
		fmt.Fprintln(p.w, p.st.head("["+EscapeLine(role)+"]"))
		switch {
		case content == nil:
			fmt.Fprintln(p.w, p.st.dim("(no content)"))
		case content[0] == '[':
			// A list of blocks is not a PromptMessage's content (one
			// block; a warning says so), but each is shown.
			rawjson.Elements(content, func(b []byte) bool {
				p.Content(b)
				return true
			})
		default:
			p.Content(content)
		}
		p.more(unshown(m, "role", "content"), "  ")
	}
	p.resultMore(resultRest(raw, "description", "messages"))
}

// Completion renders a CompleteResult's values, and its total and
// hasMore. A value that is not a string, or a total or hasMore of
// another type, is shown as it came, marked.
func (p *Printer) Completion(raw json.RawMessage) {
	var completion, values, total, hasMore []byte
	if json.Valid(raw) {
		completion = rawjson.Member(raw, "completion")
	}
	if !rawjson.Members(completion, func(n, v []byte) bool {
		switch rawjson.MatchName(n, "values", "total", "hasMore") {
		case "values":
			values = v
		case "total":
			total = v
		case "hasMore":
			hasMore = v
		}
		return true
	}) || values != nil && !rawjson.IsNull(values) && values[0] != '[' {
		p.humanJSON(raw)
		return
	}
	n := 0
	rawjson.Elements(values, func(v []byte) bool {
		n++
		if s, ok := rawjson.String(v); ok {
			fmt.Fprintln(p.w, EscapeLine(s))
		} else {
			fmt.Fprintln(p.w, EscapeJSON(string(rawjson.AppendCompactPrefix(nil, v, len(v), false)))+" "+p.st.warn("(not a string)"))
		}
		return true
	})
	if n == 0 {
		fmt.Fprintln(p.w, p.st.dim("(no completions)"))
	}
	var notes []string
	switch {
	case total == nil || rawjson.IsNull(total):
	case total[0] == '-' || total[0] >= '0' && total[0] <= '9':
		// As it came, however many digits (a warning says if it is not
		// an integer).
		notes = append(notes, string(total)+" in total")
	default:
		notes = append(notes, "total "+EscapeJSON(rawjson.Excerpt(total, 60))+", not a number")
	}
	switch string(hasMore) {
	case "", "null", "false":
	case "true":
		notes = append(notes, "more available")
	default:
		notes = append(notes, "hasMore "+EscapeJSON(rawjson.Excerpt(hasMore, 60))+", not a boolean")
	}
	if len(notes) > 0 {
		fmt.Fprintln(p.w, p.st.dim("("+strings.Join(notes, "; ")+")"))
	}
	p.more(unshown(completion, "values", "total", "hasMore"), "  ")
	p.resultMore(resultRest(raw, "completion"))
}

// HumanSize formats a byte count ("512 B", "1.5 KiB").
func HumanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// Writer returns the writer the printer prints to.
func (p *Printer) Writer() io.Writer { return p.w }
