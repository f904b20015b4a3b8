package inspector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/mcp"
)

// CheckArea is what Check found in one area of what the server declares:
// the session's opening, ping, one list.
type CheckArea struct {
	// Name is the area as a person names it: "initialize" (or
	// "server/discover" in the 2026-07-28 era), "ping", "tools",
	// "prompts", "resources", "resource templates".
	Name string `json:"area"`
	// Method is the request the area sent ("" for the opening, which the
	// session sent before Check).
	Method string `json:"method,omitempty"`
	// Count is how many items a list holds (nil for what is not a list,
	// and for a list that could not be read).
	Count *int `json:"count,omitempty"`
	// Skipped says why the area was not exercised ("not declared").
	Skipped string `json:"skipped,omitempty"`
	// Problems are the server's departures from the protocol the area
	// met, one line each: the warnings the other commands give.
	Problems []string `json:"problems"`
	// More counts, by sort, the area's departures of a sort the server
	// can repeat with every message past the first EachShown of their
	// sort in the Check: counted in the report, not listed one by one,
	// so that a server that sends 20,000 of them is reported in a few
	// lines, in bounded memory.
	More []Unsaid `json:"more,omitempty"`
	// Notes are findings that are not the server's departures, and do
	// not count as such: what the named server's configuration says of
	// the tools (CheckOptions.ToolNotes).
	Notes []string `json:"notes,omitempty"`
	// Err is why the area's request failed; nil when it did not.
	Err error `json:"-"`
	// Error is Err's text, for the report as JSON.
	Error string `json:"error,omitempty"`
}

// Departures counts the server's departures from the protocol the area
// holds: every problem, those counted in More, and the request the
// server's departure stopped.
func (a *CheckArea) Departures() int {
	n := len(a.Problems)
	for _, m := range a.More {
		n += m.N
	}
	if a.Violation() {
		n++
	}
	return n
}

// gather adds what the tap gathered since it was last taken to the
// area's problems.
func (a *CheckArea) gather(tap *checkTap) {
	kept, more := tap.take()
	a.Problems = append(a.Problems, kept...)
	a.addMore(more)
}

// addMore adds the counts of more to the area's, sort by sort.
func (a *CheckArea) addMore(more []Unsaid) {
	for _, m := range more {
		i := slices.IndexFunc(a.More, func(u Unsaid) bool { return u.Kind == m.Kind })
		if i < 0 {
			a.More = append(a.More, m)
			continue
		}
		a.More[i].N += m.N
	}
}

// Violation reports whether the area's request failed because the server
// broke the protocol (ErrProtocolViolation).
func (a *CheckArea) Violation() bool { return errors.Is(a.Err, ErrProtocolViolation) }

// CheckReport is what Check found.
type CheckReport struct {
	// Server is what the session learned about the server when it opened.
	Server *ServerInfo `json:"-"`
	Areas  []CheckArea `json:"areas"`
}

// Departures counts the server's departures from the protocol the report
// holds: every problem, those counted and not listed (CheckArea.More),
// and every request the server's departure stopped.
func (r *CheckReport) Departures() int {
	n := 0
	for i := range r.Areas {
		n += r.Areas[i].Departures()
	}
	return n
}

// Failure returns the first error of an area that is not the server's
// departure from the protocol (a JSON-RPC error, a timeout), nil when
// there is none.
func (r *CheckReport) Failure() error {
	for i := range r.Areas {
		if a := &r.Areas[i]; a.Err != nil && !a.Violation() {
			return fmt.Errorf("%s: %w", a.Name, a.Err)
		}
	}
	return nil
}

// checkLists are the lists Check reads, with the capability that
// declares each (spec 2025-11-25: server/tools, server/prompts,
// server/resources, "Capabilities").
var checkLists = []struct{ name, method, capability string }{
	{"tools", ListTools, "tools"},
	{"prompts", ListPrompts, "prompts"},
	{"resources", ListResources, "resources"},
	{"resource templates", ListResourceTemplates, "resources"},
}

// CheckOptions say what Check does beyond the lists.
type CheckOptions struct {
	// Opening are the departures the session met while it opened (which
	// went to Options.OnDeparture before Check could gather them),
	// reported under the first area.
	Opening []string
	// OpeningMore counts, by sort, the departures the session met while
	// it opened past the first EachShown of their sort, which were
	// counted, not said (Session.UnsaidDepartures of a session opened
	// for the Check): the first area counts them (CheckArea.More).
	OpeningMore []Unsaid
	// Read reads every resource resources/list listed (resources/read),
	// each result checked as ReadResource checks it: the area "resource
	// reads". Reading is what a host does, and what a server may do
	// work for; without Read nothing is read.
	Read bool
	// Alone says that Check has the session to itself (a one-shot mcpx
	// check): the departures tied to no request (a frame that is not
	// JSON-RPC, a bad notification) that come while it runs are its too,
	// the area's during which they came. Otherwise (a REPL, where other
	// commands run beside it) they go to Options.OnDeparture, and Check
	// gathers only those of its own requests.
	Alone bool
	// ToolNotes, when set, is given the names of the tools of the whole
	// tools/list, and returns the tools area's Notes: the entries of a
	// named server's tool filter that name no tool, say.
	ToolNotes func(names []string) []string
}

// checkTapKey is the context key of the checkTap of a Check's requests
// (see Session.departed).
type checkTapKey struct{}

// checkTap gathers the departures of a Check while it runs. One that
// comes after, tied to a request of the Check's (a second answer), goes
// where the session's departures go. Of a sort the server can repeat
// with every message, the first EachShown of the Check are kept, the
// rest counted: memory bounded whatever the server sends.
type checkTap struct {
	mu       sync.Mutex
	gathered []string
	each     map[string]int // by sort: how many the Check met
	more     map[string]int // by sort: counted, not kept, since the last take
	closed   bool
}

// add gathers msg, of the sort kind ("": a departure said each time),
// and reports false once the Check is over; past reports that msg was
// past the first EachShown of its sort, counted and not kept.
func (t *checkTap) add(kind, msg string) (ok, past bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false, false
	}
	if kind != "" {
		if t.each == nil {
			t.each, t.more = map[string]int{}, map[string]int{}
		}
		t.each[kind]++
		if t.each[kind] > EachShown {
			t.more[kind]++
			return true, true
		}
	}
	t.gathered = append(t.gathered, msg)
	return true, false
}

// take returns what was gathered since the last take: the departures
// kept, and how many of each sort were counted, not kept, by Kind.
func (t *checkTap) take() (kept []string, more []Unsaid) {
	t.mu.Lock()
	defer t.mu.Unlock()
	kept = t.gathered
	t.gathered = nil
	for kind, n := range t.more {
		more = append(more, Unsaid{Kind: kind, N: n})
	}
	clear(t.more)
	slices.SortFunc(more, func(a, b Unsaid) int { return strings.Compare(a.Kind, b.Kind) })
	return kept, more
}

func (t *checkTap) close() {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
}

// Check exercises, read-only, what the server declares, and gathers the
// server's departures from the protocol by area: ping (in the 2026-07-28
// era, which has no ping, server/discover again), then every page of each
// list the server declares a capability for (tools, prompts, resources,
// resource templates), each list's items checked as ListProblems checks
// them. It calls no tool, gets no prompt, reads no resource and sets
// nothing on the server (no logging/setLevel, no subscription): what it
// sends changes nothing a server keeps. With opts.Read it also reads
// every listed resource.
//
// The departures of Check's requests are gathered in the report and do
// not reach Options.OnDeparture, nor, with opts.Alone, those tied to no
// request that come while it runs; warnings that are not departures
// still go to OnWarning.
//
// A request that fails is reported in its area and Check goes on; the
// error it returns is for a session that can no longer be used (the
// connection ended, ctx done), with the report as far as it came.
func (s *Session) Check(ctx context.Context, opts CheckOptions) (*CheckReport, error) {
	info := s.Server()
	r := &CheckReport{Server: info}
	open := CheckArea{Name: mcp.MethodInitialize, Problems: append([]string{}, opts.Opening...)}
	open.addMore(opts.OpeningMore)
	if info != nil && info.Era == "modern" {
		open.Name = mcp.MethodDiscover
	}
	r.Areas = append(r.Areas, open)

	tap := &checkTap{}
	defer tap.close()
	ctx = context.WithValue(ctx, checkTapKey{}, tap)
	if opts.Alone {
		s.departTap.Store(tap)
		defer s.departTap.Store(nil)
	}

	ping := CheckArea{Name: "ping", Method: mcp.MethodPing}
	if s.modern() != nil {
		ping.Method = mcp.MethodDiscover
	}
	_, err := s.Ping(ctx, nil)
	ping.Problems = []string{}
	ping.gather(tap)
	ping.setErr(err)
	r.Areas = append(r.Areas, ping)
	if ended := s.ended(ctx, err); ended != nil {
		return r, ended
	}

	for _, l := range checkLists {
		a := CheckArea{Name: l.name, Method: l.method, Problems: []string{}}
		if !info.HasCapability(l.capability) {
			a.Skipped = "not declared"
			r.Areas = append(r.Areas, a)
			continue
		}
		list, err := s.List(ctx, l.method, nil)
		if list != nil && err == nil {
			n := len(list.Items)
			a.Count = &n
		}
		a.gather(tap)
		if list != nil {
			// Every problem: the report counts them.
			problems, _ := s.listProblems(l.method, list.Items, 0)
			for _, p := range problems {
				a.Problems = append(a.Problems, l.method+": "+p)
			}
		}
		if l.method == ListTools && opts.ToolNotes != nil && list != nil && err == nil {
			var names []string
			for _, it := range list.Items {
				var t struct{ Name string }
				if json.Unmarshal(it, &t) == nil && t.Name != "" {
					names = append(names, t.Name)
				}
			}
			a.Notes = opts.ToolNotes(names)
		}
		a.setErr(err)
		r.Areas = append(r.Areas, a)
		if ended := s.ended(ctx, err); ended != nil {
			return r, ended
		}
		if l.method == ListResources && opts.Read {
			reads, err := s.checkReads(ctx, list, tap)
			r.Areas = append(r.Areas, reads)
			if err != nil {
				return r, err
			}
		}
	}
	// What came after the last request's answer (a late frame) is the
	// last area's.
	r.Areas[len(r.Areas)-1].gather(tap)
	return r, nil
}

// checkReads reads every resource of list (nil: resources/list failed
// before its first page) for Check: the area "resource reads", whose
// Count is how many were read. A read the server refused is a problem of
// the area only when it broke the protocol; the first other failure is
// the area's Err. The error is for a session that can no longer be used.
func (s *Session) checkReads(ctx context.Context, list *ListResult, tap *checkTap) (CheckArea, error) {
	a := CheckArea{Name: "resource reads", Method: mcp.MethodResourcesRead, Problems: []string{}}
	if list == nil {
		a.Skipped = "resources/list failed"
		return a, nil
	}
	n := 0
	for _, item := range list.Items {
		var res struct {
			URI *string `json:"uri"`
		}
		if json.Unmarshal(item, &res) != nil || res.URI == nil {
			continue // (ListProblems said so)
		}
		_, err := s.ReadResource(ctx, *res.URI)
		a.gather(tap)
		switch {
		case err == nil:
			n++
		case errors.Is(err, ErrProtocolViolation):
			a.Problems = append(a.Problems, err.Error())
		case a.Err == nil:
			a.setErr(err)
		}
		if ended := s.ended(ctx, err); ended != nil {
			a.Count = &n
			return a, ended
		}
	}
	a.Count = &n
	return a, nil
}

func (a *CheckArea) setErr(err error) {
	if err != nil {
		a.Err, a.Error = err, err.Error()
	}
}

// ended returns the error that ends a Check: err when the session can
// no longer be used (its connection ended, ctx done), nil otherwise.
func (s *Session) ended(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return err
	}
	select {
	case <-s.Done():
		return err
	default:
		return nil
	}
}
