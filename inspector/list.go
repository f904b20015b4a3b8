package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
)

// listKeys maps each paginated method to the result member holding its items.
var listKeys = map[string]string{
	ListTools:             "tools",
	ListResources:         "resources",
	ListResourceTemplates: "resourceTemplates",
	ListPrompts:           "prompts",
	ListTasks:             "tasks",
}

// ListKey returns the result member that holds the items of a list method,
// or "" when the method is not a paginated list.
func ListKey(method string) string { return listKeys[method] }

// ListResult is a list method's result with every page merged.
type ListResult struct {
	// Raw is the first page's result object as received, with the items of
	// every page merged into its list and nextCursor removed — or, for a
	// single requested page, exactly as received.
	Raw json.RawMessage
	// Items are the raw list elements, in order.
	Items []json.RawMessage
	// NextCursor is set when a single page was asked for and more exist.
	NextCursor string
	// Pages is how many requests it took.
	Pages int
}

// PaginationError reports a list List stopped following: the server
// returned a cursor it had returned before (a loop), or more pages than
// List follows. Fetching the pages one at a time (List with a cursor)
// still works.
type PaginationError struct {
	Method string
	// Cursor is the cursor returned twice; "" when there were too many
	// pages.
	Cursor string
	// Pages is how many pages were fetched.
	Pages int
}

func (e *PaginationError) Error() string {
	if e.Cursor != "" {
		return fmt.Sprintf("%s: server returned cursor %q twice; stopping to avoid a loop", e.Method, e.Cursor)
	}
	return fmt.Sprintf("%s: more than %d pages; stopping", e.Method, maxPages)
}

// maxPages bounds pagination so a server that never stops cannot hang mcpx.
const maxPages = 10000

// List calls a paginated list method. With cursor == nil it follows
// nextCursor to the end; otherwise it fetches the single page at *cursor
// (an empty string asks for the first page only). A method the session's
// era lacks (tasks/list in 2026-07-28) is an *EraUnsupportedError, and no
// request is sent.
func (s *Session) List(ctx context.Context, method string, cursor *string, opts ...CallOption) (*ListResult, error) {
	key := ListKey(method)
	if key == "" {
		return nil, fmt.Errorf("%s is not a paginated list method", method)
	}
	if method == ListTasks && s.modern() != nil {
		return nil, &EraUnsupportedError{Op: method, Why: "the tasks extension of the modern era (2026-07-28) has no tasks/list"}
	}
	var firstRaw json.RawMessage
	out := &ListResult{}
	cacheGen := s.tools.generation()
	seen := map[string]bool{}
	next := ""
	if cursor != nil {
		next = *cursor
	}
	for {
		var params any
		if next != "" {
			params = map[string]string{"cursor": next}
		}
		raw, err := s.Call(ctx, method, params, opts...)
		if err != nil {
			return nil, err
		}
		out.Pages++
		items, nextCursor, err := readPage(raw, key)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", method, err)
		}
		out.Items = append(out.Items, items...)
		next = nextCursor
		if cursor != nil {
			out.Raw, out.NextCursor = raw, next
			return out, nil
		}
		if firstRaw == nil {
			firstRaw = raw
		}
		if next == "" {
			break
		}
		if seen[next] {
			return nil, &PaginationError{Method: method, Cursor: next, Pages: out.Pages}
		}
		seen[next] = true
		if out.Pages >= maxPages {
			return nil, &PaginationError{Method: method, Pages: out.Pages}
		}
	}
	if method == ListTools {
		s.tools.store(cacheGen, out.Items)
	}
	if out.Pages == 1 {
		out.Raw = firstRaw
		return out, nil
	}
	out.Raw = mergePages(firstRaw, key, out.Items)
	return out, nil
}

// mergePages returns first, the first page of a list as received, with
// the items of every page (items) in its list member key and without its
// nextCursor: every other member, names and values, byte for byte as the
// server sent it, and each item too (--json prints it; what json.Marshal
// would write otherwise, such as "<" as "\u003c", is not rewritten). Of
// a member given twice, the last is the one readPage read, and so the one
// that holds the items. first is a valid JSON object (readPage read it).
func mergePages(first []byte, key string, items []json.RawMessage) json.RawMessage {
	last, i := -1, 0
	rawjson.Members(first, func(n, _ []byte) bool {
		if rawjson.NameIs(n, key) {
			last = i
		}
		i++
		return true
	})
	size := len(first) + len(items) + len(key) + 8
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
	return append(b, '}')
}

// readPage reads one page of a list result in place: its items (slices of
// raw, not copies) and its nextCursor. raw is a result as the session
// returns it (valid JSON); a member given twice counts with its last value,
// as ParseObject has it.
func readPage(raw json.RawMessage, key string) (items []json.RawMessage, next string, err error) {
	var list, cursor []byte
	if !rawjson.Members(raw, func(name, v []byte) bool {
		switch {
		case rawjson.NameIs(name, key):
			list = v
		case rawjson.NameIs(name, "nextCursor"):
			cursor = v
		}
		return true
	}) {
		_, err := ParseObject(raw)
		if err == nil {
			err = errors.New("expected a JSON object")
		}
		return nil, "", fmt.Errorf("result is not an object: %w", err)
	}
	if len(list) > 0 && !rawjson.IsNull(list) {
		if list[0] != '[' {
			return nil, "", fmt.Errorf("result member %q is %s, not an array", key, rawjson.Excerpt(list, 40))
		}
		rawjson.Elements(list, func(e []byte) bool {
			items = append(items, e)
			return true
		})
	}
	if len(cursor) > 0 && !rawjson.IsNull(cursor) {
		if err := json.Unmarshal(cursor, &next); err != nil {
			return nil, "", fmt.Errorf("nextCursor is not a string: %s", cursor)
		}
	}
	return items, next, nil
}
