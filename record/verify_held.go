package record

import (
	"slices"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// A live server may send without end: answer a request 10^6 times, log
// without pause outside any request, fill a window with progress. Verify
// waits, bounded by the timeout, for what the recording shows, so what the
// live server sends meanwhile must not all stay in memory: each list of
// its messages (a request's window, its repeated responses, what came
// outside any request or on a POST stream before its response) keeps its
// first maxHeld messages (up to maxHeldBytes) and, past those, only their
// number by method. What verify reports needs no more: the numbers are
// compared, and a list that differs in number is shown by its first
// messages (Difference.shorten cuts it to maxShown); lists of the same
// number are compared message by message as far as both were kept. The
// recorded side is kept whole: it is the user's trace, read a session at a
// time.
const (
	maxHeld      = 10000
	maxHeldBytes = 32 << 20
	// maxFirsts is how many more than maxHeld a list keeps, of a method
	// none was kept of yet: the first of each shows what it is.
	maxFirsts = 100
	// maxCountedNames bounds the bytes of the methods counted that no
	// kept message has (a server may make up a method for each message);
	// past it they are counted together (heldList.other).
	maxCountedNames = 64 << 10
)

// heldList is the messages a server sent in one place, in the order they
// came: all of them (the recording, DiffTraces), or (the live server, see
// maxHeld) the first ones, the rest counted by method. Those kept of a
// method are its first ones.
type heldList struct {
	msgs []*jsonrpc.Message // kept, in the order they came
	// n counts the messages by method, kept or not (nil while none).
	n map[string]int
	// bytes is the size of the kept messages, dropped the number of the
	// others, names the bytes of the methods only those have, and other
	// the number of those counted under no method (past maxCountedNames).
	bytes, dropped, names, other int
	// counted holds the methods some messages of which were not kept.
	counted map[string]bool
}

// add files m; limited says the list keeps no more than maxHeld messages
// (and maxHeldBytes), and the first of maxFirsts methods more. It reports
// whether m was kept. Once one of a method is not, no later one is.
func (l *heldList) add(m *jsonrpc.Message, limited bool) bool {
	if !limited || !l.counted[m.Method] && l.bytes < maxHeldBytes &&
		(len(l.msgs) < maxHeld || l.n[m.Method] == 0 && len(l.msgs) < maxHeld+maxFirsts) {
		l.msgs = append(l.msgs, m)
		l.bytes += len(m.Raw)
		l.count(m.Method, 1, true)
		return true
	}
	l.count(m.Method, 1, false)
	return false
}

// count adds k messages of method, kept or not.
func (l *heldList) count(method string, k int, kept bool) {
	if l.n == nil {
		l.n = map[string]int{}
	}
	if kept {
		l.n[method] += k
		return
	}
	l.dropped += k
	if l.counted == nil {
		l.counted = map[string]bool{}
	}
	if _, ok := l.n[method]; !ok {
		if l.names+len(method) > maxCountedNames {
			l.other += k
			return
		}
		l.names += len(method)
	}
	l.n[method] += k
	l.counted[method] = true
}

// len counts the messages, kept or not.
func (l *heldList) len() int { return len(l.msgs) + l.dropped }

// partial reports whether some messages were counted, not kept.
func (l *heldList) partial() bool { return l.dropped > 0 }

// kept counts the kept messages of each method.
func (l *heldList) kept() map[string]int {
	n := map[string]int{}
	for _, m := range l.msgs {
		n[m.Method]++
	}
	return n
}

// merge files the messages of o after l's, as add would.
func (l *heldList) merge(o *heldList, limited bool) {
	for _, m := range o.msgs {
		l.add(m, limited)
	}
	l.mergeCounted(o)
}

// mergeCounted counts the messages o counted and did not keep.
func (l *heldList) mergeCounted(o *heldList) {
	if o.dropped == 0 {
		return
	}
	kept := o.kept()
	for method, k := range o.n {
		if k -= kept[method]; k > 0 {
			l.count(method, k, false)
		}
	}
	l.dropped += o.other
	l.other += o.other
}

// prefixByMethod returns the messages of live, in order, but of each
// method no more than rec holds.
func prefixByMethod(rec, live *heldList) *heldList {
	out := &heldList{n: map[string]int{}}
	for method, k := range live.n {
		if r := rec.n[method]; r > 0 {
			out.n[method] = min(k, r)
		}
	}
	left := map[string]int{}
	for method, k := range out.n {
		left[method] = k
	}
	for _, m := range live.msgs {
		if left[m.Method] > 0 {
			left[m.Method]--
			out.msgs = append(out.msgs, m)
		}
	}
	for _, k := range left {
		out.dropped += k
	}
	return out
}

// methods lists the methods of the lists: in the order their first kept
// messages came, then those only counted, sorted.
func methods(lists ...*heldList) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, m := range l.msgs {
			if !seen[m.Method] {
				seen[m.Method] = true
				out = append(out, m.Method)
			}
		}
	}
	var counted []string
	for _, l := range lists {
		for method := range l.n {
			if !seen[method] {
				seen[method] = true
				counted = append(counted, method)
			}
		}
	}
	slices.Sort(counted)
	return append(out, counted...)
}
