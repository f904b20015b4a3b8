package servers

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is matched (errors.Is) by a NotFoundError.
var ErrNotFound = errors.New("no such server")

// NotFoundError is Lookup's error for a name that no file defines.
type NotFoundError struct {
	Ref string
	// Problems are what loading met that may be why: a file no server
	// was read from (Warning.Unread), or an entry of the name that was
	// skipped. Without them a malformed file was silent, the server the
	// user sees in it simply "not found".
	Problems []Warning
	// Names are the names the files define, each once, in listing
	// order: what a mistyped name may have meant.
	Names []string
}

func (e *NotFoundError) Error() string {
	msg := fmt.Sprintf("no server named %q in any configuration file", e.Ref)
	switch len(e.Problems) {
	case 0:
		return msg
	case 1:
		return msg + " (a problem met may be why: " + e.Problems[0].String() + ")"
	}
	return fmt.Sprintf("%s (%d problems met may be why; the first: %s)", msg, len(e.Problems), e.Problems[0])
}

// Is makes errors.Is(err, ErrNotFound) true.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// AmbiguousError is Lookup's error for a name that several files define
// differently. Each candidate's Ref (SOURCE:NAME) names it alone.
type AmbiguousError struct {
	Ref        string
	Candidates []*Server
}

func (e *AmbiguousError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "server %q is defined differently in %d files; name one as SOURCE:NAME:", e.Ref, len(e.Candidates))
	for _, s := range e.Candidates {
		fmt.Fprintf(&b, "\n  %s  (%s)", s.Ref(), s.Source.Path)
	}
	return b.String()
}

// Lookup finds the server ref names: NAME, or SOURCE:NAME where SOURCE is
// a source ID ("cursor-project"), an application ("cursor", when that
// leaves one) or the file's path.
//
// When several files define NAME, the one in mcpx's own file is chosen;
// when they all define it the same way (same transport, command,
// arguments, environment, URL and headers), the first in listing order
// (user files before project files); otherwise the error is an
// *AmbiguousError listing the candidates.
func (c *Catalog) Lookup(ref string) (*Server, error) {
	var plain, qualified, byKind []*Server
	for _, s := range c.Servers {
		if s.Name == ref {
			plain = append(plain, s)
		}
		q, ok := strings.CutSuffix(ref, ":"+s.Name)
		switch {
		case !ok:
		case q == s.Source.ID || q == s.Source.Path:
			qualified = append(qualified, s)
		case q == string(s.Source.Kind):
			byKind = append(byKind, s)
		}
	}
	// A source ID is exact; the application's name only stands for its
	// source when no ID is given ("cursor" is the ID of ~/.cursor/mcp.json
	// and the application of .cursor/mcp.json too: the Ref an
	// AmbiguousError suggests must name one).
	if len(qualified) == 0 {
		qualified = byKind
	}
	cands := qualified
	if len(qualified) == 0 {
		cands = plain
	} else if len(plain) > 0 {
		// A name with a colon in it that also reads as SOURCE:NAME.
		cands = append(plain, qualified...)
	}
	switch len(cands) {
	case 0:
		return nil, &NotFoundError{Ref: ref, Problems: c.problemsFor(ref), Names: c.names()}
	case 1:
		return cands[0], nil
	}
	var own []*Server
	for _, s := range cands {
		if s.Source.Kind == KindMcpx {
			own = append(own, s)
		}
	}
	if len(own) == 1 {
		return own[0], nil
	}
	same := true
	for _, s := range cands[1:] {
		if !sameDefinition(cands[0], s) {
			same = false
			break
		}
	}
	if same {
		return cands[0], nil
	}
	return nil, &AmbiguousError{Ref: ref, Candidates: cands}
}

// names are the names of c's servers, each once, in listing order.
func (c *Catalog) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range c.Servers {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s.Name)
		}
	}
	return out
}

// problemsFor are the warnings that may explain why ref was not found:
// the files read not at all, and those about entries of its name (an
// entry of it that loaded would have been found: these were skipped).
func (c *Catalog) problemsFor(ref string) []Warning {
	var out []Warning
	for _, w := range c.Warnings {
		named := w.Server != "" && (w.Server == ref || strings.HasSuffix(ref, ":"+w.Server))
		if w.Unread || named {
			out = append(out, w)
		}
	}
	return out
}

// Names lists each server name once, in listing order, followed by the
// qualified SOURCE:NAME of every name defined more than once (for shell
// completion).
func (c *Catalog) Names() []string {
	count := map[string]int{}
	var names []string
	for _, s := range c.Servers {
		if count[s.Name] == 0 {
			names = append(names, s.Name)
		}
		count[s.Name]++
	}
	for _, s := range c.Servers {
		if count[s.Name] > 1 {
			names = append(names, s.Ref())
		}
	}
	return names
}
