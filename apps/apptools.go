package apps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// App-provided tools (draft spec "App-Provided Tools"): a view that
// declares appCapabilities.tools in ui/initialize offers tools of its
// own, which the host lists (tools/list, host → view) and may call
// (tools/call, host → view); notifications/tools/list_changed from the
// view says its list changed. mcpx has no model to offer them to: the
// program is told the list (Handlers.ViewTools), and a person may call
// one (View.CallTool).

// The draft's "Resource Limits" for app-provided tools: "Limit maximum
// number of tools per app (recommended: 50)", "Enforce execution timeouts
// for tool callbacks (recommended: 30 seconds)". A tool result is bounded
// as any view message (MaxMessageSize).
const (
	maxAppTools     = 50
	maxAppToolPages = 10
	appToolTimeout  = 30 * time.Second
)

// methodToolsList is the host's request for a view's tools.
const methodToolsList = "tools/list"

// AppTool is a tool a view offers (draft spec "App-Provided Tools": the
// core MCP Tool), as the view listed it.
type AppTool struct {
	Name        string
	Title       string
	Description string
	// Raw is the Tool object as the view sent it.
	Raw json.RawMessage
}

// ErrNoSuchTool: View.CallTool of a tool the view does not offer (or no
// longer: the view was closed, reloaded, or changed its list).
var ErrNoSuchTool = errors.New("the view offers no such tool")

// Tools returns the tools the view offers, as last listed; nil when it
// declares none or is not initialized.
func (v *View) Tools() []AppTool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.appTools)
}

// CallTool calls one of the view's own tools (draft spec "Requests (Host
// → App)": tools/call) with args, a JSON object (nil for none), and
// returns the view's CallToolResult. A tool the view does not offer is
// ErrNoSuchTool; the view's error answer is an *Error; the call is
// bounded by ctx and 30 seconds (the draft's recommended timeout).
func (v *View) CallTool(ctx context.Context, name string, args json.RawMessage) (json.RawMessage, error) {
	v.mu.Lock()
	offered := slices.ContainsFunc(v.appTools, func(t AppTool) bool { return t.Name == name })
	v.mu.Unlock()
	if !offered {
		return nil, fmt.Errorf("%w: %q", ErrNoSuchTool, name)
	}
	params := map[string]any{"name": name}
	if len(args) > 0 {
		if !json.Valid(args) || strings.TrimSpace(string(args))[0] != '{' {
			return nil, errors.New("the tool's arguments must be a JSON object")
		}
		params["arguments"] = args
	}
	ctx, cancel := context.WithTimeout(ctx, appToolTimeout)
	defer cancel()
	m, err := v.ask(ctx, methodToolsCall, params)
	if err != nil {
		return nil, err
	}
	if m.err != nil {
		return nil, m.err
	}
	return m.result, nil
}

// ask sends the view a request and waits for its answer, bounded by ctx
// and the view's life: a view closed or reloaded meanwhile is ErrClosed.
func (v *View) ask(ctx context.Context, method string, params any) (message, error) {
	v.mu.Lock()
	if v.closing || v.conn == nil || !v.initialized {
		v.mu.Unlock()
		return message{}, fmt.Errorf("%w: the view is not shown", ErrClosed)
	}
	v.nextID++
	b, err := encodeRequest(v.nextID, method, params)
	if err != nil {
		v.mu.Unlock()
		return message{}, err
	}
	key := idKey([]byte(fmt.Sprint(v.nextID)))
	answer := make(chan message, 1)
	v.pending[key] = answer
	v.sendLocked(b)
	v.mu.Unlock()
	select {
	case m, ok := <-answer:
		if !ok {
			return message{}, fmt.Errorf("%w: the view went away before it answered %s", ErrClosed, method)
		}
		return m, nil
	case <-ctx.Done():
	case <-v.ctx.Done():
	}
	v.mu.Lock()
	delete(v.pending, key)
	v.mu.Unlock()
	if v.ctx.Err() != nil {
		return message{}, fmt.Errorf("%w: the view closed before it answered %s", ErrClosed, method)
	}
	return message{}, fmt.Errorf("the view did not answer %s: %w", method, ctx.Err())
}

// dropPendingLocked forgets the host's requests to the view's document,
// which went away: their waiters are told (ask, Close).
func (v *View) dropPendingLocked() {
	for _, ch := range v.pending {
		close(ch)
	}
	clear(v.pending)
}

// listAppTools lists the view's tools, when it declared the capability,
// and tells the program when the list changed; a listing asked for while
// one runs (list_changed again) is done once that one ends. It runs in a
// goroutine of the view's.
func (v *View) listAppTools() {
	v.mu.Lock()
	if !v.appToolsCap || !v.initialized || v.closing {
		v.mu.Unlock()
		return
	}
	if v.listingTools {
		v.relistTools = true
		v.mu.Unlock()
		return
	}
	v.listingTools = true
	// Started under the lock that saw closing unset: Close sets it before
	// it waits for the view's goroutines, so this one is waited for.
	defer v.mu.Unlock()
	v.wg.Go(func() {
		for {
			tools, err := v.fetchAppTools()
			v.mu.Lock()
			again := v.relistTools
			v.relistTools = false
			changed := false
			if err == nil && v.initialized {
				changed = !slices.EqualFunc(v.appTools, tools, func(a, b AppTool) bool { return string(a.Raw) == string(b.Raw) })
				v.appTools = tools
			}
			// Decided under the lock: Close sets closing meanwhile.
			done := !again || v.closing
			if done {
				v.listingTools = false
			}
			v.mu.Unlock()
			if err != nil && !errors.Is(err, ErrClosed) {
				v.problem(fmt.Errorf("%w: listing the view's own tools: %w", ErrMalformed, err))
			}
			if changed && v.h.opts.Handlers.ViewTools != nil {
				v.h.opts.Handlers.ViewTools(v.info, tools)
			}
			if done {
				return
			}
		}
	})
}

// fetchAppTools sends tools/list (following nextCursor) and checks the
// tools: each needs a name, unique; more than maxAppTools are left out.
func (v *View) fetchAppTools() ([]AppTool, error) {
	var tools []AppTool
	var cursor *string
	for page := 0; page < maxAppToolPages; page++ {
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		ctx, cancel := context.WithTimeout(v.ctx, appToolTimeout)
		m, err := v.ask(ctx, methodToolsList, params)
		cancel()
		if err != nil {
			return nil, err
		}
		if m.err != nil {
			return nil, fmt.Errorf("it answered tools/list with %v", m.err)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if json.Unmarshal(m.result, &res) != nil || res.Tools == nil {
			return nil, errors.New("its tools/list result has no tools array")
		}
		for i, raw := range res.Tools {
			var t struct {
				Name        string `json:"name"`
				Title       string `json:"title"`
				Description string `json:"description"`
			}
			if json.Unmarshal(raw, &t) != nil || t.Name == "" {
				return nil, fmt.Errorf("tool %d of its tools/list has no name", len(tools)+i)
			}
			if slices.ContainsFunc(tools, func(o AppTool) bool { return o.Name == t.Name }) {
				return nil, fmt.Errorf("its tools/list names %q twice", clipString(t.Name, 100))
			}
			if len(tools) == maxAppTools {
				v.problem(fmt.Errorf("%w: the view offers more than %d tools of its own; the others are left out", ErrRefused, maxAppTools))
				return tools, nil
			}
			tools = append(tools, AppTool{Name: t.Name, Title: t.Title, Description: t.Description, Raw: raw})
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			return tools, nil
		}
		cursor = res.NextCursor
	}
	return tools, nil
}
