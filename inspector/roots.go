package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
)

// Root is one filesystem root offered to the server
// (spec 2025-11-25: client/roots, "Root").
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// RootFromPath makes a Root from a local path or a file:// URI. Paths are
// made absolute and must exist (spec: clients SHOULD validate root
// accessibility before exposing it); the name is the last path element.
func RootFromPath(p string) (Root, error) {
	if strings.TrimSpace(p) == "" {
		// (filepath.Abs would make it the working directory, which
		// nobody named.)
		return Root{}, errors.New("a root needs a path: the one given is empty")
	}
	if strings.HasPrefix(p, "file://") {
		u, err := url.Parse(p)
		if err != nil || u.Path == "" {
			return Root{}, fmt.Errorf("root %q is not a valid file:// URI", p)
		}
		return Root{URI: u.String(), Name: filepath.Base(u.Path)}, nil
	}
	if strings.Contains(p, "://") {
		return Root{}, fmt.Errorf("root %q: roots must be local paths or file:// URIs", p)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return Root{}, fmt.Errorf("root %q: %w", p, err)
	}
	if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
		return Root{}, fmt.Errorf("root %q: %s does not exist", p, abs)
	} else if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // (the path is said already)
		}
		return Root{}, fmt.Errorf("root %q: %s: %w", p, abs, err)
	}
	slash := filepath.ToSlash(abs)
	if !strings.HasPrefix(slash, "/") {
		slash = "/" + slash // a Windows drive path: file:///C:/x
	}
	u := url.URL{Scheme: "file", Path: slash}
	return Root{URI: u.String(), Name: filepath.Base(abs)}, nil
}

// Roots answers roots/list with the roots it holds. Set changes them and
// tells the server (notifications/roots/list_changed), which the declared
// listChanged capability promises.
type Roots struct {
	mu    sync.Mutex
	roots []Root
	// Notify sends a notification to the server; set once the session
	// exists (Session.AttachRoots). Nil means changes are not announced.
	Notify func(ctx context.Context, method string) error
	// unannounced is set when the session's era has no notification for a
	// change (2026-07-28).
	unannounced bool
}

// AttachRoots makes r tell the server about changes the way the session's
// era does: notifications/roots/list_changed in the handshake era (spec
// 2025-11-25: client/roots, "Root List Changes"); 2026-07-28 has no such
// notification (the server sees the roots when it next asks for them).
func (s *Session) AttachRoots(r *Roots) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.modern() != nil {
		r.Notify, r.unannounced = nil, true
		return
	}
	r.Notify = func(ctx context.Context, method string) error { return s.Notify(ctx, method, nil) }
	r.unannounced = false
}

// ChangeNote says, for people, how a change made with Set reached the
// server.
func (r *Roots) ChangeNote() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.Notify != nil:
		return "roots changed; sent notifications/roots/list_changed"
	case r.unannounced:
		return "roots changed; the modern era has no roots/list_changed notification: the server sees them when it next asks"
	}
	return "roots changed; the server sees them when it next asks"
}

// NewRoots returns a handler for the given roots.
func NewRoots(roots []Root) *Roots { return &Roots{roots: append([]Root(nil), roots...)} }

// List returns the current roots.
func (r *Roots) List() []Root {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Root(nil), r.roots...)
}

// Set replaces the roots and announces the change.
func (r *Roots) Set(ctx context.Context, roots []Root) error {
	r.mu.Lock()
	r.roots = append([]Root(nil), roots...)
	notify := r.Notify
	r.mu.Unlock()
	if notify == nil {
		return nil
	}
	return notify(ctx, mcp.NotificationRootsListChanged)
}

// Handle answers roots/list (spec 2025-11-25: client/roots, "Listing Roots").
func (r *Roots) Handle(_ context.Context, method string, _ json.RawMessage) (json.RawMessage, error) {
	if method != mcp.MethodRootsList {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "mcpx does not handle " + jsonrpc.Clip(method)}
	}
	roots := r.List()
	if roots == nil {
		roots = []Root{}
	}
	return marshalRaw(map[string]any{"roots": roots}), nil
}
