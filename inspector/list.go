package inspector

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/mcp"
)

// The paginated list methods (spec: server/utilities/pagination,
// "Operations Supporting Pagination"), for List.
const (
	ListTools             = mcp.MethodToolsList
	ListResources         = mcp.MethodResourcesList
	ListResourceTemplates = mcp.MethodResourcesTemplatesList
	ListPrompts           = mcp.MethodPromptsList
	// ListTasks exists in the handshake era only (spec 2025-11-25:
	// basic/utilities/tasks); the tasks extension of 2026-07-28 has none.
	ListTasks = mcp.MethodTasksList
	// ListSkills is the Skills extension's list (io.modelcontextprotocol/
	// skills, "Listing Skills"); List refuses it, sending nothing, when
	// the server has not declared the extension.
	ListSkills = mcp.MethodSkillsList
)

// listKeys maps each paginated method to the result member holding its items.
var listKeys = map[string]string{
	ListTools:             "tools",
	ListResources:         "resources",
	ListResourceTemplates: "resourceTemplates",
	ListPrompts:           "prompts",
	ListTasks:             "tasks",
	ListSkills:            "skills",
	// resources/directory/read pages like a list but names a directory
	// too: Session.ReadDirectory calls it.
	mcp.MethodResourcesDirectoryRead: "resources",
}

// ListKey returns the result member that holds the items of a list method,
// or "" when the method is not a paginated list.
func ListKey(method string) string { return listKeys[method] }

// ListResult is what List read of a list: every page, or the pages
// before the one a walk stopped at (see IncompleteListError).
type ListResult struct {
	// Items are the raw list elements, in order: slices of the pages as
	// received, not copies.
	Items []json.RawMessage
	// NextCursor is, for a single page asked for (List with a cursor), the
	// page's nextCursor: nil when it has none. A walk leaves it nil.
	NextCursor *string
	// Pages is how many pages Items holds the items of.
	Pages int

	key string
	// first is the first page as received.
	first json.RawMessage
	// whole says that first alone is the result, as received: a single
	// page asked for, or a list of one page.
	whole bool
	// stop is, for a walk that stopped early, the cursor of the page it
	// did not read, as the server sent it (any JSON); JSON puts it in.
	stop json.RawMessage
}

// First returns the first page's result object as received; its members
// other than the list (ttlMs, cacheScope, _meta, …) are the list's.
func (r *ListResult) First() json.RawMessage { return r.first }

// JSON returns the list as one result object. A single page, or a list of
// one page, is returned exactly as received. Otherwise it is the first
// page as received with the items of every page in its list and without
// its nextCursor — unless the walk stopped early: then nextCursor is the
// cursor of the page it did not read, as the server sent it, so that the
// result says it is incomplete the way a page does (spec:
// server/utilities/pagination, "nextCursor field if more results exist")
// and a program that reads it is not handed part of a list as the whole.
// It is built at each call, from the pages: a caller that shows the items
// only (a table) never pays for a second copy of them.
func (r *ListResult) JSON() json.RawMessage {
	if r.whole {
		return r.first
	}
	return mergePages(r.first, r.key, r.Items, r.stop)
}

// Incomplete reports whether a walk stopped before the end of the list.
func (r *ListResult) Incomplete() bool { return r.stop != nil }

// IncompleteListError reports a list that List did not read to its end:
// a page's request failed (Err is its error: the server's JSON-RPC error, a
// timeout, the connection lost, an interrupt), a page could not be read,
// or the server's cursors could not be followed (a nextCursor that is not
// a string, a *PaginationError). The *ListResult that List returns with
// it holds the pages before: an inspector shows what it got, then why it
// stopped. Unwrap gives Err, whose kind is the failure's.
type IncompleteListError struct {
	Method string
	// Pages and Items are how many pages were read, and the items they
	// held.
	Pages, Items int
	// Cursor is the cursor of the page that was not read; nil when the
	// server's nextCursor was not a string.
	Cursor *string
	Err    error
}

func (e *IncompleteListError) Error() string {
	return fmt.Sprintf("%v; the list stops after %s from %s", e.Err, plural(e.Items, "item"), plural(e.Pages, "page"))
}

func (e *IncompleteListError) Unwrap() error { return e.Err }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// PaginationError reports a list List stopped following: the server
// returned a cursor it had returned before (a loop), or more pages than
// List follows. Fetching the pages one at a time (List with a cursor)
// still works.
type PaginationError struct {
	Method string
	// Cursor is the cursor returned twice; "" when there were too many
	// pages (Repeated says which).
	Cursor   string
	Repeated bool
	// Pages is how many pages were fetched.
	Pages int
}

// Is makes a loop (Repeated) the server's departure from the protocol: a
// cursor leads to the page after it (spec: server/utilities/pagination).
// More pages than List follows is List's bound, not the server's fault.
func (e *PaginationError) Is(target error) bool {
	return e.Repeated && target == ErrProtocolViolation
}

func (e *PaginationError) Error() string {
	if e.Repeated {
		return fmt.Sprintf("%s: server returned cursor %s twice; stopping to avoid a loop", e.Method, quoteCursor(e.Cursor))
	}
	return fmt.Sprintf("%s: more than %d pages; stopping", e.Method, e.Pages)
}

// quoteCursor quotes a cursor, a server's string, for a message: JSON
// escapes, cut to a length a line can hold.
func quoteCursor(c string) string {
	b, _ := json.Marshal(c)
	return rawjson.Excerpt(b, 60)
}

// maxPages bounds pagination so a server that never stops cannot hang
// mcpx (Session.maxPages overrides it in tests).
const maxPages = 10000

// List calls a paginated list method (spec: server/utilities/pagination).
// With cursor == nil it follows nextCursor to the end; otherwise it
// fetches the single page at *cursor (an empty string asks for the first
// page only). A method the session's era lacks (tasks/list in 2026-07-28)
// is an *EraUnsupportedError, and no request is sent.
//
// A cursor is opaque: the walk ends where a page has no nextCursor, and
// an empty string is a cursor like any other, sent back as it came
// (spec 2026-07-28: "an empty string is a valid cursor and thus MUST NOT
// be treated as the end of results"), with a warning, since servers that
// send it mostly mean the end: one that answers it with the first page
// again did, and the walk ends there without that page. A nextCursor of
// null ends the list with a warning; a cursor that is not a string, or
// that comes back (a loop), stops the walk, and so do more than maxPages
// pages.
//
// A walk that fails after reading a page returns what it read with an
// *IncompleteListError (see ListResult.JSON); the result is nil only when
// no page was read.
func (s *Session) List(ctx context.Context, method string, cursor *string, opts ...CallOption) (*ListResult, error) {
	key := ListKey(method)
	if key == "" {
		return nil, fmt.Errorf("%s is not a paginated list method", method)
	}
	if method == ListTasks && s.modern() != nil {
		return nil, &EraUnsupportedError{Op: method, Why: "the tasks extension of the modern era (2026-07-28) has no tasks/list"}
	}
	if method == ListSkills {
		if err := s.requireSkills(method, ""); err != nil {
			return nil, err
		}
	}
	if method == mcp.MethodResourcesDirectoryRead {
		return nil, fmt.Errorf("%s names a directory: use ReadDirectory", method)
	}
	return s.list(ctx, method, key, nil, cursor, opts)
}

// pageParams returns the params of one page of a list: base (the members
// every page carries, such as the directory of resources/directory/read)
// and the cursor, when there is one; nil when there is neither.
func pageParams(base map[string]string, cursor *string) any {
	if len(base) == 0 && cursor == nil {
		return nil
	}
	p := make(map[string]string, len(base)+1)
	for k, v := range base {
		p[k] = v
	}
	if cursor != nil {
		p["cursor"] = *cursor
	}
	return p
}

// list is List for a method whose pages all carry base in their params.
func (s *Session) list(ctx context.Context, method, key string, base map[string]string, cursor *string, opts []CallOption) (*ListResult, error) {
	if cursor != nil {
		return s.listPage(ctx, method, key, base, *cursor, opts)
	}
	out := &ListResult{key: key}
	cache := s.listCache(method)
	var cacheGen int
	if cache != nil {
		cacheGen = cache.generation()
	}
	limit := cmp.Or(s.maxPages, maxPages)
	// seen holds a digest of each cursor followed, not the cursor: a
	// cursor is as long as the server makes it, and a server that sends
	// a new 50 MB cursor with each empty page would otherwise have mcpx
	// keep every one of them until the page cap.
	seen := map[[sha256.Size]byte]bool{}
	// next is the cursor to send (nil for the first page), nextRaw the
	// same as the server sent it.
	var next *string
	var nextRaw json.RawMessage
	// The first page's item count and cursor, for a server that answers
	// "" with the first page again.
	var firstItems int
	var firstNext *string
	// expires is when the list goes stale (zero: no page said). ttlMs is
	// 2026-07-28's: earlier revisions define no such member, and an SDK
	// that writes "ttlMs":0 into every result of theirs (the Go SDK
	// does) says nothing about freshness there.
	var expires time.Time
	modern := s.modern() != nil
	for {
		label := method
		params := pageParams(base, next)
		callOpts := opts
		if next != nil {
			label = fmt.Sprintf("%s page %d (cursor %s)", method, out.Pages+1, quoteCursor(*next))
			callOpts = append(opts[:len(opts):len(opts)], withLabel(label))
		}
		raw, err := s.Call(ctx, method, params, callOpts...)
		if err != nil {
			return out.incomplete(method, next, nextRaw, err)
		}
		items, rawNext, ttl, err := readPage(raw, key)
		if err != nil {
			return out.incomplete(method, next, nextRaw, fmt.Errorf("%s: %w", label, err))
		}
		s.warnNoList(ctx, method, label, key, items)
		if at, ok := staleAt(ttl); ok && modern && (expires.IsZero() || at.Before(expires)) {
			expires = at
		}
		c, cerr := s.nextCursor(ctx, method, label, rawNext)
		if next != nil && *next == "" && cerr == nil && s.restarted(out, firstItems, firstNext, items, c) {
			s.departOnce(ctx, "restart "+method, `%s: the server answered cursor "" with the first page again: it sent "" to mean the end of the list, and mcpx takes it so (a list that ends has no nextCursor: spec server/utilities/pagination)`, method)
			break
		}
		if out.Pages == 0 {
			out.first, firstItems, firstNext = raw, len(items), c
		}
		out.Items = append(out.Items, items...)
		out.Pages++
		var key [sha256.Size]byte
		if c != nil {
			key = sha256.Sum256([]byte(*c))
		}
		switch {
		case cerr != nil:
			return out.incomplete(method, nil, rawNext, fmt.Errorf("%s: %w", label, cerr))
		case c == nil:
			if cache != nil {
				cache.store(cacheGen, out.Items, expires)
			}
			out.whole = out.Pages == 1
			return out, nil
		case seen[key]:
			return out.incomplete(method, c, rawNext, &PaginationError{Method: method, Cursor: *c, Repeated: true, Pages: out.Pages})
		case out.Pages >= limit:
			return out.incomplete(method, c, rawNext, &PaginationError{Method: method, Pages: out.Pages})
		case *c == "":
			s.warnOnce("empty cursor "+method, `%s: the server sent an empty nextCursor (""); mcpx asks for the page at it, as an empty string is a valid cursor (spec 2026-07-28: server/utilities/pagination); a server that means the end of the list leaves nextCursor out`, label)
		}
		seen[key] = true
		next, nextRaw = c, rawNext
	}
	// The walk ended at a restart: the pages before are the list.
	if cache != nil {
		cache.store(cacheGen, out.Items, expires)
	}
	return out, nil
}

// listCache returns the session's copy of method's list (tools/list,
// prompts/list, resources/list), which every full listing fills, or nil for a list the
// session keeps no copy of.
func (s *Session) listCache(method string) *toolCache {
	switch method {
	case ListTools:
		return &s.tools
	case ListPrompts:
		return &s.prompts
	case ListResources:
		return &s.resources
	}
	return nil
}

// staleAt returns when a page received now goes stale by its ttlMs v as
// sent (spec 2026-07-28: server/utilities/caching, "Freshness
// Calculation": fresh while now < t_received + ttlMs; a negative ttlMs
// counts as 0), and false when v is no integer (nil: the page has none).
func staleAt(v json.RawMessage) (time.Time, bool) {
	if v == nil {
		return time.Time{}, false
	}
	var ms int64
	if json.Unmarshal(v, &ms) != nil {
		return time.Time{}, false
	}
	now := time.Now()
	if ms <= 0 {
		return now, true
	}
	return now.Add(time.Duration(min(ms, int64(math.MaxInt64/time.Millisecond))) * time.Millisecond), true
}

// listPage fetches the single page at cursor ("" for the first).
func (s *Session) listPage(ctx context.Context, method, key string, base map[string]string, cursor string, opts []CallOption) (*ListResult, error) {
	var c *string
	if cursor != "" {
		c = &cursor
	}
	params := pageParams(base, c)
	raw, err := s.Call(ctx, method, params, opts...)
	if err != nil {
		return nil, err
	}
	items, rawNext, _, err := readPage(raw, key)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	s.warnNoList(ctx, method, method, key, items)
	out := &ListResult{Items: items, Pages: 1, key: key, first: raw, whole: true}
	next, err := s.nextCursor(ctx, method, method, rawNext)
	if err != nil {
		// The page is shown; the way to the next one is not.
		return out, fmt.Errorf("%s: %w", method, err)
	}
	out.NextCursor = next
	return out, nil
}

// restarted reports whether a page is the first page again (the same
// items, byte for byte, and the same nextCursor): the answer of a server
// that takes the cursor "" for no cursor at all. Following it would only
// go round the list again.
func (s *Session) restarted(out *ListResult, firstItems int, firstNext *string, items []json.RawMessage, next *string) bool {
	if out.Pages == 0 || len(items) != firstItems || (next == nil) != (firstNext == nil) || (next != nil && *next != *firstNext) {
		return false
	}
	for i, it := range items {
		if !bytes.Equal(it, out.Items[i]) {
			return false
		}
	}
	return true
}

// nextCursor reads a page's nextCursor (raw, nil when the member is
// absent): the cursor of the next page, or nil at the end of the list.
// The schema has it a string (spec: ListToolsResult and its siblings); a
// null ends the list, with a warning; anything else is an error.
func (s *Session) nextCursor(ctx context.Context, method, label string, raw []byte) (*string, error) {
	switch {
	case raw == nil:
		return nil, nil
	case rawjson.IsNull(raw):
		s.departOnce(ctx, "null cursor "+method, "%s: nextCursor is null, which the schema does not allow (a string, left out at the end of the list); taken as the end of the list", label)
		return nil, nil
	}
	var c string
	if raw[0] != '"' || json.Unmarshal(raw, &c) != nil {
		return nil, violationf("nextCursor is %s, not a string: the pages after it cannot be asked for", rawjson.Excerpt(raw, 40))
	}
	return &c, nil
}

// incomplete ends a walk that failed with err before the page at cursor
// (raw: as the server sent it): what was read, and an
// *IncompleteListError; nothing but err when no page was read.
func (r *ListResult) incomplete(method string, cursor *string, raw json.RawMessage, err error) (*ListResult, error) {
	if r.Pages == 0 {
		return nil, err
	}
	r.stop = raw
	return r, &IncompleteListError{Method: method, Pages: r.Pages, Items: len(r.Items), Cursor: cursor, Err: err}
}

// mergePages returns first, the first page of a list as received, with
// the items of every page (items) in its list member key and without its
// nextCursor: every other member, names and values, byte for byte as the
// server sent it, and each item too (--json prints it; what json.Marshal
// would write otherwise, such as "<" as "\u003c", is not rewritten). Of
// a member given twice, the last is the one readPage read, and so the one
// that holds the items. first is a valid JSON object (readPage read it).
// next, when not nil, is the nextCursor to end it with (JSON, as the
// server sent it).
func mergePages(first []byte, key string, items []json.RawMessage, next json.RawMessage) json.RawMessage {
	last, i := -1, 0
	rawjson.Members(first, func(n, _ []byte) bool {
		if rawjson.NameIs(n, key) {
			last = i
		}
		i++
		return true
	})
	size := len(first) + len(items) + len(key) + len(next) + 24
	for _, it := range items {
		size += len(it)
	}
	b := make([]byte, 0, size)
	list := func() {
		b = append(b, '[')
		for j, it := range items {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, it...)
		}
		b = append(b, ']')
	}
	b = append(b, '{')
	i = 0
	rawjson.Members(first, func(n, v []byte) bool {
		this := i
		i++
		if rawjson.NameIs(n, "nextCursor") {
			return true
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(b, n...), ':')
		if this == last {
			list()
		} else {
			b = append(b, v...)
		}
		return true
	})
	if last < 0 {
		// A first page without the list member gets one.
		if len(b) > 1 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(key)
		b = append(append(b, k...), ':')
		list()
	}
	if next != nil {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = append(append(b, `"nextCursor":`...), next...)
	}
	return append(b, '}')
}

// warnNoList warns, once per method, about a page whose result has no
// array of items (readPage's nil items: the member is absent or null). The
// spec requires it on every page (ListToolsResult's "tools", …), and an
// empty list is an empty array; mcpx reads the page as holding no items.
func (s *Session) warnNoList(ctx context.Context, method, label, key string, items []json.RawMessage) {
	if items == nil {
		s.departOnce(ctx, "no list "+method, "%s: the result has no %q array, which the spec requires (an empty list is []); read as no items", label, key)
	}
}

// readPage reads one page of a list result in place, in one pass: its
// items (slices of raw, not copies; nil when the result has no array of
// them, an empty slice for []), its nextCursor as sent (nil when absent),
// and its ttlMs as sent (2026-07-28; see staleAt). raw is a result as the
// session returns it (valid JSON); a member given twice counts with its
// last value, as ParseObject has it.
func readPage(raw json.RawMessage, key string) (items []json.RawMessage, next, ttl json.RawMessage, err error) {
	var list, cursor []byte
	if !rawjson.Members(raw, func(name, v []byte) bool {
		switch {
		case rawjson.NameIs(name, key):
			list = v
		case rawjson.NameIs(name, "nextCursor"):
			cursor = v
		case rawjson.NameIs(name, "ttlMs"):
			ttl = v
		}
		return true
	}) {
		_, err := ParseObject(raw)
		if err == nil {
			err = errors.New("expected a JSON object")
		}
		return nil, nil, nil, violationf("result is not an object: %w", err)
	}
	if len(list) > 0 && !rawjson.IsNull(list) {
		if list[0] != '[' {
			return nil, nil, nil, violationf("result member %q is %s, not an array", key, rawjson.Excerpt(list, 40))
		}
		items = []json.RawMessage{}
		rawjson.Elements(list, func(e []byte) bool {
			items = append(items, e)
			return true
		})
	}
	return items, cursor, ttl, nil
}
