package inspector

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/mcp"
)

// toolCache is the session's copy of tools/list (every page), which typing
// key=value arguments, a tool's schema and its task support read instead of
// listing the tools again for each call. It is filled by every full
// tools/list the session makes and dropped when the server says the list
// changed (spec: server/tools, "List Changed Notification"), when the
// session is re-opened, and when a 2026-07-28 server reports mismatched
// headers (the tools' annotations changed). In a 2026-07-28 session, a
// list whose pages carry ttlMs is fresh only that long (spec 2026-07-28:
// server/utilities/caching, "Time-to-Live (TTL) Field"): once stale it is
// listed again when next needed. A list without ttlMs, or of an earlier
// revision (which has none), lives until the server says it changed,
// which the spec leaves to the client's own heuristics. The session keeps
// prompts/list in one too (Session.prompts), for the check of a prompt's
// arguments: filled by every full prompts/list, dropped on
// notifications/prompts/list_changed and re-opening, stale by ttlMs alike;
// its maps of what is derived from schemas stay empty. And resources/list
// (Session.resources), for an MCP Apps view's listing-level _meta.ui:
// filled by every full resources/list, dropped on
// notifications/resources/list_changed and re-opening, stale by ttlMs.
type toolCache struct {
	mu     sync.Mutex
	items  []json.RawMessage
	byName map[string]json.RawMessage // built on first use
	valid  bool
	// expires, when set, is when the list goes stale: the earliest of its
	// pages' t_received + ttlMs.
	expires time.Time
	gen     int // bumped by each invalidation: a fetch that raced one is not kept
	// schemas holds each tool's inputSchema compiled for the argument
	// check, and props the top-level properties of it that key=value
	// typing reads (decoding them for every call cost a key=value call a
	// tenth more than the same call with --args); both are dropped with
	// the list. compiles and propsReads count how often (tests).
	schemas    map[string]derived[compiledSchema]
	props      map[string]derived[schemaProps]
	compiles   int
	propsReads int
	// outputs holds each tool's outputSchema compiled for the check of
	// its results' structuredContent, dropped with the list too.
	outputs        map[string]derived[compiledSchema]
	outputCompiles int
}

// derived is what was derived from a tool's inputSchema, with the bytes
// it was derived from.
type derived[T any] struct {
	raw json.RawMessage
	v   T
}

// compiledSchema is a tool's inputSchema as compiled (or the reason it does
// not compile).
type compiledSchema struct {
	schema *Schema
	err    error
}

// schemaProps is what schemaProperties returned.
type schemaProps struct {
	props map[string]json.RawMessage
	known bool
}

// derive returns what f gives for tool name's inputSchema raw, calling it
// (and counting the call in *count) only the first time the cached list
// gives these bytes for the tool; m is one of c's maps.
func derive[T any](c *toolCache, m *map[string]derived[T], count *int, name string, raw json.RawMessage, f func(json.RawMessage) T) T {
	c.mu.Lock()
	e, ok := (*m)[name]
	c.mu.Unlock()
	if ok && bytes.Equal(e.raw, raw) {
		return e.v
	}
	v := f(raw)
	c.mu.Lock()
	defer c.mu.Unlock()
	*count++
	if *m == nil {
		*m = map[string]derived[T]{}
	}
	(*m)[name] = derived[T]{raw: raw, v: v}
	return v
}

// inputSchema returns tool name's inputSchema raw compiled for the argument
// check (formats not asserted), compiled once per cached list.
func (c *toolCache) inputSchema(name string, raw json.RawMessage) (*Schema, error) {
	r := derive(c, &c.schemas, &c.compiles, name, raw, func(raw json.RawMessage) compiledSchema {
		s, err := compileSchema(raw, false)
		return compiledSchema{s, err}
	})
	return r.schema, r.err
}

// outputSchema returns tool name's outputSchema raw compiled for the check
// of its results (formats are annotations, as JSON Schema 2020-12 makes
// them), compiled once per cached list.
func (c *toolCache) outputSchema(name string, raw json.RawMessage) (*Schema, error) {
	r := derive(c, &c.outputs, &c.outputCompiles, name, raw, func(raw json.RawMessage) compiledSchema {
		s, err := compileSchema(raw, false)
		return compiledSchema{s, err}
	})
	return r.schema, r.err
}

// properties returns the top-level properties of tool name's inputSchema
// raw (see schemaProperties), read once per cached list. Callers only
// read the map.
func (c *toolCache) properties(name string, raw json.RawMessage) (map[string]json.RawMessage, bool) {
	r := derive(c, &c.props, &c.propsReads, name, raw, func(raw json.RawMessage) schemaProps {
		props, known := schemaProperties(raw)
		return schemaProps{props, known}
	})
	return r.props, r.known
}

// generation returns the cache's generation, to be given back to store.
func (c *toolCache) generation() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// store keeps items unless the list changed since generation gen; a
// non-zero expires is when it goes stale.
func (c *toolCache) store(gen int, items []json.RawMessage, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == gen {
		c.items, c.byName, c.valid, c.schemas, c.props, c.outputs = items, nil, true, nil, nil, nil
		c.expires = expires
	}
}

// freshLocked reports whether the cache holds a list that is not stale.
func (c *toolCache) freshLocked() bool {
	return c.valid && (c.expires.IsZero() || time.Now().Before(c.expires))
}

func (c *toolCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.items, c.byName, c.valid, c.schemas, c.props, c.outputs = nil, nil, false, nil, nil, nil
	c.gen++
}

func (c *toolCache) get() ([]json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.items, c.freshLocked()
}

// lookup returns the tool named name (nil when the list has none) and
// whether the cache holds a fresh list at all. The first lookup indexes
// the list by name (the first of duplicate names wins, as findByName
// would).
func (c *toolCache) lookup(name string) (json.RawMessage, bool) {
	return c.find(name, false)
}

// lookupStale is lookup taking a stale list too: what a check of a result
// against the tool's definition reads, which lists nothing (the spec lets a
// client serve a stale response, server/utilities/caching).
func (c *toolCache) lookupStale(name string) (json.RawMessage, bool) {
	return c.find(name, true)
}

func (c *toolCache) find(name string, stale bool) (json.RawMessage, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.valid || (!stale && !c.freshLocked()) {
		return nil, false
	}
	if c.byName == nil {
		c.byName = make(map[string]json.RawMessage, len(c.items))
		for _, it := range c.items {
			if n, ok := itemName(it); ok {
				if _, dup := c.byName[n]; !dup {
					c.byName[n] = it
				}
			}
		}
	}
	return c.byName[name], true
}

// listedTool returns tool name from the session's tools/list (nil when the
// server does not list it), listing the tools only when the cache is empty
// or stale.
func (s *Session) listedTool(ctx context.Context, name string) (json.RawMessage, error) {
	return s.listedItem(ctx, &s.tools, mcp.MethodToolsList, "tool", name)
}

// listedPrompt returns prompt name from the session's prompts/list (nil
// when the server does not list it), listing the prompts only when the
// cache is empty or stale.
func (s *Session) listedPrompt(ctx context.Context, name string) (json.RawMessage, error) {
	return s.listedItem(ctx, &s.prompts, mcp.MethodPromptsList, "prompt", name)
}

// listedItem returns the item called name (a kind) of the list method
// keeps in cache. A listing that stopped early still gives the items of
// the pages it read, as the server defined them (with a warning): the
// error is for an item not among them.
func (s *Session) listedItem(ctx context.Context, cache *toolCache, method, kind, name string) (json.RawMessage, error) {
	if it, ok := cache.lookup(name); ok {
		return it, nil
	}
	list, err := s.List(ctx, method, nil)
	if err != nil {
		if it := findByName(listItems(list), name); it != nil && ctx.Err() == nil {
			s.warnOnce("partial "+method, "%s %q is taken from the pages %s read before it stopped: %v", kind, name, method, err)
			return it, nil
		}
		return nil, err
	}
	if it, ok := cache.lookup(name); ok {
		return it, nil
	}
	// Changed again while listing: this listing is still the freshest.
	return findByName(list.Items, name), nil
}

// listItems returns the items of list, which may be nil.
func listItems(list *ListResult) []json.RawMessage {
	if list == nil {
		return nil
	}
	return list.Items
}

// listedTools returns the server's tools from the session's cache, listing
// them (every page) only when the cache is empty or stale.
func (s *Session) listedTools(ctx context.Context) ([]json.RawMessage, error) {
	if items, ok := s.tools.get(); ok {
		return items, nil
	}
	list, err := s.List(ctx, mcp.MethodToolsList, nil)
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

// ListedTools returns the server's tools (every page) from the session's
// copy of tools/list, listing them only when it is empty or stale: an MCP
// Apps host checks a tool's visibility for every tools/call a view sends
// (spec io.modelcontextprotocol/ui, "Visibility"), which must not list
// the tools each time.
func (s *Session) ListedTools(ctx context.Context) ([]json.RawMessage, error) {
	return s.listedTools(ctx)
}

// ListedTool returns the definition of tool name from the session's copy
// of tools/list (nil when the server does not list it).
func (s *Session) ListedTool(ctx context.Context, name string) (json.RawMessage, error) {
	return s.listedTool(ctx, name)
}

// ListedResource returns resource uri's entry (the first with that uri) in
// the session's copy of resources/list, nil when the server does not list
// it, listing the resources (every page) only when the copy is empty or
// stale. An MCP Apps host reads a view's _meta.ui there when the
// resources/read content item has none (the ext-apps SDK's listing-level
// fallback), once per view opened. A listing that stopped early still
// gives the entry when its pages had it (with a warning).
func (s *Session) ListedResource(ctx context.Context, uri string) (json.RawMessage, error) {
	items, ok := s.resources.get()
	if !ok {
		list, err := s.List(ctx, mcp.MethodResourcesList, nil)
		if err != nil {
			if it := findByURI(listItems(list), uri); it != nil && ctx.Err() == nil {
				s.warnOnce("partial "+mcp.MethodResourcesList, "resource %q is taken from the pages %s read before it stopped: %v", uri, mcp.MethodResourcesList, err)
				return it, nil
			}
			return nil, err
		}
		items = list.Items
	}
	return findByURI(items, uri), nil
}

// findByURI returns the first of items whose uri is uri.
func findByURI(items []json.RawMessage, uri string) json.RawMessage {
	for _, it := range items {
		var r struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(it, &r) == nil && r.URI == uri {
			return it
		}
	}
	return nil
}
