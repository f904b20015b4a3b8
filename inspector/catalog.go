package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// Catalog keeps what a server lists — tools, prompts, resources and
// resource templates — for a long-lived session (the REPL), fetching each
// list once and again after the server says it changed
// (notifications/*/list_changed, spec: server/tools "List Changed
// Notification" and its siblings). It answers completion questions from
// the cache and asks completion/complete for argument values. It is safe
// for concurrent use. The fetches it starts in the background (Prefetch,
// AutoRefresh) are its own: Close ends them and waits for them.
type Catalog struct {
	sess *Session

	mu    sync.Mutex
	lists map[string]*catalogList
	// refresh, when set, is the context of background refreshes: a list
	// that changed is fetched again at once rather than on next use.
	refresh context.Context
	// stop cancels the contexts of the background fetches, which run in
	// fetches.
	stop    []context.CancelFunc
	fetches workGroup
	// noComplete is set once the server answered completion/complete with
	// "method not found": asking again (each Tab) would fail the same way.
	noComplete atomic.Bool
}

type catalogList struct {
	items   []json.RawMessage
	err     error
	fetched bool
	gen     int           // bumped by each change notification
	loading chan struct{} // closed when the fetch in flight ends
}

// capabilityOf names the server capability that offers each list.
var capabilityOf = map[string]string{
	mcp.MethodToolsList:              "tools",
	mcp.MethodPromptsList:            "prompts",
	mcp.MethodResourcesList:          "resources",
	mcp.MethodResourcesTemplatesList: "resources",
}

// NewCatalog returns an empty catalog for s.
func NewCatalog(s *Session) *Catalog {
	return &Catalog{sess: s, lists: map[string]*catalogList{}}
}

// AutoRefresh makes the catalog fetch a changed list again in the
// background, with ctx (or until Close), as soon as it hears of the
// change.
func (c *Catalog) AutoRefresh(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.refresh = ctx
	c.stop = append(c.stop, cancel)
	c.mu.Unlock()
}

// Prefetch fetches, in the background, every list the server declares,
// with ctx (or until Close).
func (c *Catalog) Prefetch(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	c.mu.Lock()
	c.stop = append(c.stop, cancel)
	c.mu.Unlock()
	for _, m := range []string{mcp.MethodToolsList, mcp.MethodPromptsList, mcp.MethodResourcesList, mcp.MethodResourcesTemplatesList} {
		if c.declared(m) {
			c.background(ctx, m)
		}
	}
}

// background fetches method in a goroutine the catalog waits for in
// Close; after Close it fetches nothing.
func (c *Catalog) background(ctx context.Context, method string) {
	c.fetches.Go(func() { _, _ = c.items(ctx, method) })
}

// Close ends the background fetches and waits for them. The catalog still
// answers from what it holds (and fetches on demand) afterwards.
func (c *Catalog) Close() {
	c.mu.Lock()
	stop := c.stop
	c.stop, c.refresh = nil, nil
	c.mu.Unlock()
	for _, cancel := range stop {
		cancel()
	}
	c.fetches.Wait()
}

// Notify tells the catalog about a notification from the server; it
// reports whether the notification made a list stale.
func (c *Catalog) Notify(m *jsonrpc.Message) bool {
	methods := mcp.StaleLists[m.Method]
	if len(methods) == 0 {
		return false
	}
	if m.Method == mcp.NotificationResourcesListChanged {
		// Skills are resources, and the Skills extension has no
		// notification of its own: a change of the resources may be one
		// of the skills.
		methods = append(methods[:len(methods):len(methods)], ListSkills)
	}
	c.mu.Lock()
	for _, method := range methods {
		l := c.list(method)
		l.gen++
		l.fetched = false
	}
	refresh := c.refresh
	c.mu.Unlock()
	if refresh != nil && refresh.Err() == nil {
		for _, method := range methods {
			if c.declared(method) {
				c.background(refresh, method)
			}
		}
	}
	return true
}

func (c *Catalog) list(method string) *catalogList {
	l := c.lists[method]
	if l == nil {
		l = &catalogList{}
		c.lists[method] = l
	}
	return l
}

func (c *Catalog) declared(method string) bool {
	if method == ListSkills {
		skills, _ := c.sess.DeclaresSkills()
		return skills
	}
	return c.sess.Server().HasCapability(capabilityOf[method])
}

// items returns a list's items, fetching it when it is not cached; one
// fetch at a time per list, the others wait for it (or for ctx).
func (c *Catalog) items(ctx context.Context, method string) ([]json.RawMessage, error) {
	if !c.declared(method) {
		return nil, nil
	}
	for {
		c.mu.Lock()
		l := c.list(method)
		if l.fetched {
			items, err := l.items, l.err
			c.mu.Unlock()
			return items, err
		}
		if l.loading != nil {
			wait := l.loading
			c.mu.Unlock()
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		done := make(chan struct{})
		l.loading = done
		gen := l.gen
		c.mu.Unlock()

		res, err := c.sess.List(ctx, method, nil)

		c.mu.Lock()
		l.loading = nil
		close(done)
		var items []json.RawMessage
		if res != nil {
			items = res.Items
		}
		if ctx.Err() == nil {
			// A failure is remembered too (until the next change), so
			// that completion does not ask again at every key press; a
			// change during the fetch leaves the list stale.
			l.items, l.err, l.fetched = items, err, l.gen == gen
		}
		c.mu.Unlock()
		return items, err
	}
}

// ToolInfo is one tool as tools/list describes it.
type ToolInfo struct {
	Name, Title, Description string
	InputSchema              json.RawMessage
	// Raw is the tool object as received.
	Raw json.RawMessage
}

// Args describes the tool's arguments from its input schema.
func (t ToolInfo) Args() []ArgInfo { return SchemaArgs(t.InputSchema) }

// Tools returns the server's tools.
func (c *Catalog) Tools(ctx context.Context) ([]ToolInfo, error) {
	items, err := c.items(ctx, mcp.MethodToolsList)
	var out []ToolInfo
	for _, it := range items {
		var t struct {
			Name        string          `json:"name"`
			Title       string          `json:"title"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(it, &t) == nil && t.Name != "" {
			out = append(out, ToolInfo{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Raw: it})
		}
	}
	return out, err
}

// Tool returns one tool, or a *NotFoundError naming close ones. A list
// that failed after some pages gives the tools of those pages; its error
// is for a tool not among them.
func (c *Catalog) Tool(ctx context.Context, name string) (*ToolInfo, error) {
	tools, err := c.Tools(ctx)
	var names []string
	for _, t := range tools {
		if t.Name == name {
			return &t, nil
		}
		names = append(names, t.Name)
	}
	if err != nil {
		return nil, err
	}
	return nil, &NotFoundError{Kind: "tool", Name: name, Suggestions: Suggest(name, names, 3),
		Err: &notListedError{list: "tools/list", kind: "tool", name: name}}
}

func quoteName(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// PromptInfo is one prompt as prompts/list describes it.
type PromptInfo struct {
	Name, Title, Description string
	Args                     []PromptArg
}

// PromptArg is one argument of a prompt.
type PromptArg struct {
	Name, Description string
	Required          bool
}

// Prompts returns the server's prompts.
func (c *Catalog) Prompts(ctx context.Context) ([]PromptInfo, error) {
	items, err := c.items(ctx, mcp.MethodPromptsList)
	var out []PromptInfo
	for _, it := range items {
		var p struct {
			Name        string `json:"name"`
			Title       string `json:"title"`
			Description string `json:"description"`
			Arguments   []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Required    bool   `json:"required"`
			} `json:"arguments"`
		}
		if json.Unmarshal(it, &p) != nil || p.Name == "" {
			continue
		}
		info := PromptInfo{Name: p.Name, Title: p.Title, Description: p.Description}
		for _, a := range p.Arguments {
			info.Args = append(info.Args, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
		}
		out = append(out, info)
	}
	return out, err
}

// ResourceInfo is one resource or resource template: URI is the resource's
// URI, or the template's URI template.
type ResourceInfo struct {
	URI, Name string
}

// Resources returns the server's resources.
func (c *Catalog) Resources(ctx context.Context) ([]ResourceInfo, error) {
	return c.resources(ctx, mcp.MethodResourcesList, "uri")
}

// Skills returns the skills the server lists (skills/list), each as
// the URI of its SKILL.md and its name; none when the server does not
// declare the Skills extension.
func (c *Catalog) Skills(ctx context.Context) ([]ResourceInfo, error) {
	items, err := c.items(ctx, ListSkills)
	var out []ResourceInfo
	for _, it := range items {
		if sk, _ := ParseSkill(it); sk != nil {
			out = append(out, ResourceInfo{URI: sk.URI, Name: sk.Name})
		}
	}
	return out, err
}

// Templates returns the server's resource templates.
func (c *Catalog) Templates(ctx context.Context) ([]ResourceInfo, error) {
	return c.resources(ctx, mcp.MethodResourcesTemplatesList, "uriTemplate")
}

func (c *Catalog) resources(ctx context.Context, method, key string) ([]ResourceInfo, error) {
	items, err := c.items(ctx, method)
	var out []ResourceInfo
	for _, it := range items {
		var m map[string]json.RawMessage
		if json.Unmarshal(it, &m) != nil {
			continue
		}
		var uri, name string
		_ = json.Unmarshal(m[key], &uri)
		_ = json.Unmarshal(m["name"], &name)
		if uri != "" {
			out = append(out, ResourceInfo{URI: uri, Name: name})
		}
	}
	return out, err
}

// CanComplete reports whether completion/complete is worth asking: the
// server declares completions, or the session's revision predates that
// capability (2024-11-05 has the method without it, see capabilitySince),
// and the server has not answered it with "method not found".
func (c *Catalog) CanComplete() bool {
	if c.noComplete.Load() {
		return false
	}
	if c.sess.Server().HasCapability("completions") {
		return true
	}
	if c.sess.modern() != nil {
		return false
	}
	v := c.sess.revision()
	return v != "" && v < capabilitySince["completions"]
}

// CompleteValues asks completion/complete for the values of one prompt
// argument or template variable starting with partial (spec:
// server/utilities/completion). It asks nothing when CanComplete is false.
func (c *Catalog) CompleteValues(ctx context.Context, ref CompletionRef, arg, partial string, context map[string]string) ([]string, error) {
	if !c.CanComplete() {
		return nil, nil
	}
	if c.sess.completionContextIgnored() {
		context = nil // a server of that revision does not read it
	}
	raw, err := c.sess.complete(ctx, ref, arg, partial, context)
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeMethodNotFound {
		c.noComplete.Store(true)
	}
	if err != nil {
		return nil, err
	}
	var r struct {
		Completion struct {
			Values []string `json:"values"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	return r.Completion.Values, nil
}

// ArgInfo describes one argument of a tool, from its input schema.
type ArgInfo struct {
	Name        string
	Type        string // "string", "integer|null", ... ("" when the schema does not say)
	Required    bool
	Default     json.RawMessage // nil when there is none
	Enum        []string        // allowed values, as typed on a command line
	Description string
}

// SchemaArgs lists the properties of an object schema in the order the
// server wrote them, with their types, defaults and allowed values
// (enum, const, or oneOf/anyOf of consts). A property given as a local
// $ref ("#/$defs/Color", as pydantic writes a nested model or an enum) is
// described by the schema it points to, as key=value typing and the
// validation read it; its own description and default come first.
func SchemaArgs(schema json.RawMessage) []ArgInfo {
	if args, ok := schemaArgsFast(schema); ok {
		return args
	}
	return schemaArgsSlow(schema)
}

// schemaArgsSlow is SchemaArgs by encoding/json, for any schema.
// The properties of the root come first, then those of the schema its
// $ref names and of the schemas of its allOf (each through its $ref), as
// an inputSchema of {"$ref":"#/$defs/Args"} or an allOf of object schemas
// describes its arguments: key=value typing and the check read them there.
func schemaArgsSlow(schema json.RawMessage) []ArgInfo {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := propertyOrder(schema)
	if len(names) != len(s.Properties) {
		names = names[:0]
		for n := range s.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	var more struct {
		Ref   json.RawMessage   `json:"$ref"`
		AllOf []json.RawMessage `json:"allOf"`
	}
	_ = json.Unmarshal(schema, &more)
	var sources []json.RawMessage
	if len(more.Ref) > 0 {
		sources = append(sources, deref(schema, bytes.TrimSpace(schema)))
	}
	sources = append(sources, more.AllOf...)
	for _, src := range sources {
		if src = deref(schema, src); src == nil {
			continue
		}
		var b struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if json.Unmarshal(src, &b) != nil {
			continue
		}
		if s.Properties == nil {
			s.Properties = map[string]json.RawMessage{}
		}
		order := propertyOrder(src)
		if len(order) != len(b.Properties) {
			order = slices.Sorted(maps.Keys(b.Properties))
		}
		for _, n := range order {
			if _, ok := s.Properties[n]; !ok {
				s.Properties[n] = b.Properties[n]
				names = append(names, n)
			}
		}
		s.Required = append(s.Required, b.Required...)
	}
	if len(s.Properties) == 0 {
		return nil
	}
	var out []ArgInfo
	for _, n := range names {
		prop := s.Properties[n]
		var p propNotes
		_ = json.Unmarshal(prop, &p)
		// What the property leaves unsaid, the chain of its $refs says.
		for cur, i := prop, 0; (p.Default == nil || p.Description == "") && i < maxRefChain; i++ {
			ref, ok := rawjson.String(rawjson.Member(cur, "$ref"))
			if !ok {
				break
			}
			if cur = resolveRef(schema, ref); cur == nil {
				break
			}
			var t propNotes
			_ = json.Unmarshal(cur, &t)
			if p.Default == nil {
				p.Default = t.Default
			}
			if p.Description == "" {
				p.Description = t.Description
			}
		}
		var seen []string
		a := ArgInfo{
			Name:        n,
			Type:        strings.Join(schemaTypesIn(schema, prop), "|"),
			Default:     p.Default,
			Enum:        appendChoices(nil, schema, prop, &seen),
			Description: p.Description,
		}
		for _, r := range s.Required {
			if r == n {
				a.Required = true
			}
		}
		out = append(out, a)
	}
	return out
}

// propertyOrder returns the names of an object schema's properties in the
// order the schema lists them.
func propertyOrder(schema json.RawMessage) []string {
	obj, err := ParseObject(schema)
	if err != nil {
		return nil
	}
	props, err := ParseObject(obj.Get("properties"))
	if err != nil {
		return nil
	}
	return props.Keys()
}

// propNotes are the annotations of a property schema SchemaArgs shows.
type propNotes struct {
	Default     json.RawMessage `json:"default"`
	Description string          `json:"description"`
}

// schemaChoices returns the values a property schema allows when it lists
// them: enum, const, or a oneOf/anyOf of consts (titled enums). It
// follows no $ref: see appendChoices.
func schemaChoices(prop json.RawMessage) []string {
	var seen []string
	return appendChoices(nil, nil, prop, &seen)
}

// appendChoices appends the values prop allows (see schemaChoices) to
// out, following the local $ref of a schema (or of a branch) that lists
// none of its own into root, as appendTypes does, then its allOf; seen
// holds the $refs followed, each once, so that a circle of them ends.
func appendChoices(out []string, root, prop json.RawMessage, seen *[]string) []string {
	var s struct {
		Enum  []json.RawMessage `json:"enum"`
		Const json.RawMessage   `json:"const"`
		OneOf []json.RawMessage `json:"oneOf"`
		AnyOf []json.RawMessage `json:"anyOf"`
		AllOf []json.RawMessage `json:"allOf"`
		Ref   json.RawMessage   `json:"$ref"`
	}
	if json.Unmarshal(prop, &s) != nil {
		return out
	}
	own := len(out)
	add := func(v json.RawMessage) {
		var str string
		if json.Unmarshal(v, &str) == nil {
			out = append(out, str)
			return
		}
		if t := jsonType(v); t == "number" || t == "boolean" || t == "null" {
			out = append(out, string(v))
		}
	}
	for _, v := range s.Enum {
		add(v)
	}
	if len(s.Const) > 0 {
		add(s.Const)
	}
	for _, sub := range append(s.OneOf, s.AnyOf...) {
		out = appendChoices(out, root, sub, seen)
	}
	if ref, ok := rawjson.String(s.Ref); ok && len(out) == own && root != nil && !slices.Contains(*seen, ref) {
		*seen = append(*seen, ref)
		out = appendChoices(out, root, resolveRef(root, ref), seen)
	}
	for _, sub := range s.AllOf {
		// (The first of allOf that lists values: {"allOf":
		// [{"$ref":"#/definitions/Color"}]}.)
		if len(out) > own {
			break
		}
		out = appendChoices(out, root, sub, seen)
	}
	return out
}
