package tui

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
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
}

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

func (p *Printer) saveHint() string {
	if p.hint == "" {
		return "use -o FILE to save it"
	}
	return p.hint
}

// JSON prints raw pretty-printed (and coloured when enabled), keeping the
// member order and values exactly as received. Large JSON without colour
// is written as it is laid out, never held twice in memory.
func (p *Printer) JSON(raw json.RawMessage) {
	if len(raw) >= streamJSONMin && !p.color && json.Valid(raw) {
		writePrettyJSON(p.w, raw)
		return
	}
	fmt.Fprint(p.w, p.prettyJSON(raw, ""))
}

func (p *Printer) prettyJSON(raw json.RawMessage, indent string) string {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("null")
	}
	out := pretty.PrettyOptions(raw, &pretty.Options{Width: 80, Prefix: indent, Indent: "  ", SortKeys: false})
	out = []byte(EscapeJSON(string(out)))
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
	tw := tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
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
	fmt.Fprintln(p.w, p.st.head("Capabilities:"))
	caps, err := inspector.ParseObject(info.Capabilities)
	if err != nil || len(caps.Keys()) == 0 {
		fmt.Fprintln(p.w, "  (none)")
	} else {
		tw = tabwriter.NewWriter(p.w, 0, 4, 2, ' ', 0)
		for _, k := range caps.Keys() {
			fmt.Fprintf(tw, "  %s\t%s\n", p.st.key(EscapeLine(k)), EscapeLine(strings.Join(inspector.CapabilityNames(caps.Get(k)), ", ")))
		}
		tw.Flush()
	}
	if info.Instructions != "" {
		fmt.Fprintln(p.w, p.st.head("Instructions:"))
		p.indented(info.Instructions, "  ")
	}
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
	var r struct {
		TTLMs      *int64 `json:"ttlMs"`
		CacheScope string `json:"cacheScope"`
	}
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
	if json.Unmarshal(append(append([]byte{'{'}, small...), '}'), &r) != nil {
		return ""
	}
	useful := r.TTLMs != nil && *r.TTLMs != 0 ||
		r.CacheScope != "" && r.CacheScope != "public" && r.CacheScope != "private"
	if !all && !useful {
		return ""
	}
	if h := cacheHint(r.TTLMs, r.CacheScope); h != "" {
		return "cache hint: " + h
	}
	return ""
}

func (p *Printer) indented(text, indent string) {
	for _, line := range strings.Split(strings.TrimRight(Escape(text), "\n"), "\n") {
		fmt.Fprintln(p.w, indent+line)
	}
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
		r := row(it)
		t.add(r[:]...)
	}
	// The table goes out in large writes, not a few per cell: a list of
	// thousands of tools is thousands of rows.
	bw := bufio.NewWriterSize(p.w, 64<<10)
	t.write(bw)
	bw.Flush()
}

// Tools lists tools with their arguments (required ones marked with *).
// items are valid JSON, as inspector.Session.List returns them.
func (p *Printer) Tools(items []json.RawMessage) {
	var invalid []string
	p.table(items, "(no tools)", func(it json.RawMessage) [3]cell {
		t := readToolEntry(it)
		name := styled(EscapeLine(t.Name), p.st.name)
		if _, err := mcp.ToolHeaderParams(t.InputSchema); err != nil {
			// An inspector shows what a client must exclude, and why.
			name = append(name, span{text: " "}, span{text: "[invalid x-mcp-header]", style: p.st.warn})
			invalid = append(invalid, fmt.Sprintf("%s: %s", EscapeLine(t.Name), EscapeLine(err.Error())))
		}
		name = append(name, p.appMarks(it)...)
		return [3]cell{name, styled(SchemaSignature(t.InputSchema), p.st.dim), plain(firstLine(orString(t.Description, t.Title)))}
	})
	for _, w := range invalid {
		fmt.Fprintln(p.w, p.st.warn("invalid x-mcp-header: "+w+" (not called over HTTP: spec 2026-07-28, server/tools)"))
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
		part := EscapeLine(a.Name)
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
			Size                                    *int64
		}
		_ = json.Unmarshal(it, &r)
		extra := EscapeLine(r.MimeType)
		if r.Size != nil {
			extra = strings.TrimSpace(extra + " " + HumanSize(*r.Size))
		}
		return [3]cell{styled(EscapeLine(orString(r.Name, r.Title)), p.st.name), plain(EscapeLine(r.URI)), styled(extra, p.st.dim)}
	})
}

// Templates lists resource templates.
func (p *Printer) Templates(items []json.RawMessage) {
	p.table(items, "(no resource templates)", func(it json.RawMessage) [3]cell {
		var r struct {
			Name, Title, URITemplate, MimeType, Description string
		}
		_ = json.Unmarshal(it, &r)
		return [3]cell{styled(EscapeLine(orString(r.Name, r.Title)), p.st.name), plain(EscapeLine(r.URITemplate)), plain(firstLine(r.Description))}
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
			s := EscapeLine(a.Name)
			if a.Required {
				s += "*"
			}
			args = append(args, s)
		}
		return [3]cell{styled(EscapeLine(r.Name), p.st.name), styled(strings.Join(args, " "), p.st.dim), plain(firstLine(orString(r.Description, r.Title)))}
	})
}

// ToolResult renders a CallToolResult: its content blocks, then its
// structured content. It reports whether the result has isError set.
// Content is read in place and texts are written as they are decoded, so
// a large result is never copied.
func (p *Printer) ToolResult(raw json.RawMessage) (isError bool) {
	var f rawjson.Fields
	var content [][]byte
	var structured []byte
	if !json.Valid(raw) || !f.Object(raw, []string{"content", "structuredContent", "isError"}, func(name string, v []byte) {
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
		p.Content(c)
	}
	if hasStructured {
		fmt.Fprintln(p.w, p.st.head("Structured content:"))
		p.humanJSON(structured)
	}
	if len(content) == 0 && len(structured) == 0 && p.saved == 0 {
		fmt.Fprintln(p.w, p.st.dim("(empty result)"))
	}
	return isError
}

// duplicatesStructured reports whether the content block c is a text
// block holding the same JSON as structured.
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
	}) || typ != "text" || text == nil || len(text) > maxCompared {
		return false
	}
	s, ok := rawjson.String(text)
	return ok && sameJSON(s, structured)
}

// Content renders one content block (spec: server/tools, "Tool Result").
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
	case "image", "audio":
		n := 0
		if data != nil {
			n = stringLen(data)
		}
		fmt.Fprintf(p.w, "%s\n", p.st.dim(fmt.Sprintf("[%s: %s, %s; %s]", typ, orString(EscapeLine(mimeType), "unknown type"), HumanSize(int64(base64.StdEncoding.DecodedLen(n))), p.saveHint())))
	case "resource_link":
		line := fmt.Sprintf("[resource link] %s %s", EscapeLine(orString(name, title)), EscapeLine(uri))
		if mimeType != "" {
			line += " (" + EscapeLine(mimeType) + ")"
		}
		fmt.Fprintln(p.w, p.st.dim(line))
		if description != "" {
			fmt.Fprintln(p.w, "  "+firstLine(description))
		}
	case "resource":
		p.ResourceContents(resource, true)
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
	if !json.Valid(raw) || !f.Object(raw, []string{"uri", "mimeType", "text", "blob"}, func(n string, v []byte) {
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
		h := "[resource] " + EscapeLine(uri)
		if mimeType != "" {
			h += " (" + EscapeLine(mimeType) + ")"
		}
		fmt.Fprintln(p.w, p.st.dim(h))
	}
	switch {
	case text != nil:
		p.rawText(text)
	case blob != nil:
		s := rawjson.StringBytes(blob)
		n, err := base64Len(s)
		if err != nil {
			n = base64.StdEncoding.DecodedLen(len(s))
		}
		fmt.Fprintln(p.w, p.st.dim(fmt.Sprintf("[binary: %s, %s; %s]", orString(EscapeLine(mimeType), "unknown type"), HumanSize(int64(n)), p.saveHint())))
	default:
		fmt.Fprintln(p.w, p.st.dim("(no text or blob)"))
	}
}

// ReadResult renders a ReadResourceResult.
func (p *Printer) ReadResult(raw json.RawMessage) {
	var f rawjson.Fields
	var contents [][]byte
	if !json.Valid(raw) || !f.Object(raw, []string{"contents"}, func(_ string, v []byte) { contents = f.Array(v) }) {
		p.humanJSON(raw)
		return
	}
	if len(contents) == 0 {
		fmt.Fprintln(p.w, p.st.dim("(no contents)"))
	}
	for _, c := range contents {
		p.ResourceContents(c, len(contents) > 1)
	}
}

// PromptResult renders a GetPromptResult: description, then each message.
func (p *Printer) PromptResult(raw json.RawMessage) {
	var r struct {
		Description string `json:"description"`
		Messages    []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		p.humanJSON(raw)
		return
	}
	if r.Description != "" {
		fmt.Fprintln(p.w, p.st.dim(EscapeLine(r.Description)))
	}
	for _, m := range r.Messages {
		fmt.Fprintln(p.w, p.st.head("["+EscapeLine(m.Role)+"]"))
		if len(m.Content) > 0 && m.Content[0] == '[' {
			var blocks []json.RawMessage
			_ = json.Unmarshal(m.Content, &blocks)
			for _, b := range blocks {
				p.Content(b)
			}
		} else {
			p.Content(m.Content)
		}
	}
}

// Completion renders a CompleteResult's values.
func (p *Printer) Completion(raw json.RawMessage) {
	var r struct {
		Completion struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore bool     `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		p.JSON(raw)
		return
	}
	for _, v := range r.Completion.Values {
		fmt.Fprintln(p.w, EscapeLine(v))
	}
	if len(r.Completion.Values) == 0 {
		fmt.Fprintln(p.w, p.st.dim("(no completions)"))
	}
	var notes []string
	if r.Completion.Total != nil {
		notes = append(notes, fmt.Sprintf("%d in total", *r.Completion.Total))
	}
	if r.Completion.HasMore {
		notes = append(notes, "more available")
	}
	if len(notes) > 0 {
		fmt.Fprintln(p.w, p.st.dim("("+strings.Join(notes, ", ")+")"))
	}
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
