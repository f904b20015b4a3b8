package inspector

import (
	"context"
	"sync"
)

// afterAnswerKey is the context key of the hooks that run once the answer
// to a server request is shown, before it is sent.
type afterAnswerKey struct{}

// afterAnswer collects the functions AfterAnswer defers.
type afterAnswer struct {
	mu   sync.Mutex
	fns  []func()
	done bool
}

// withAfterAnswer returns ctx carrying a fresh set of hooks, which the
// caller runs (run) once the answer to its server request is shown.
func withAfterAnswer(ctx context.Context) (context.Context, *afterAnswer) {
	a := &afterAnswer{}
	return context.WithValue(ctx, afterAnswerKey{}, a), a
}

// AfterAnswer arranges for fn to run once the answer to the server request
// handled under ctx (a handler's context, or one derived from it) has been
// decided and shown, just before it is sent (in the 2026-07-28 era: before
// the retry that carries it); outside a handler, or once that point has
// passed, fn runs at once. The REPL uses it for Ctrl-C at a question: the
// question is answered (an elicitation is cancelled) and only then is the
// command in flight cancelled -- before the server can react to the answer
// -- so the person always sees the answer, then the interruption, never
// one or the other depending on which message wins a race (the server
// withdrawing its question, or answering the call).
func AfterAnswer(ctx context.Context, fn func()) {
	a, _ := ctx.Value(afterAnswerKey{}).(*afterAnswer)
	if a != nil {
		a.mu.Lock()
		if !a.done {
			a.fns = append(a.fns, fn)
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
	}
	fn()
}

// run runs the hooks added so far, once; later ones run at once.
func (a *afterAnswer) run() {
	a.mu.Lock()
	fns := a.fns
	a.fns, a.done = nil, true
	a.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}
