package peer

import (
	"context"
	"sync"
)

// holdState is the Peer's count of holds on its requests' idle timeouts
// (see Hold): edge is closed, and replaced, whenever the count goes from
// zero to one or back, which wakes every Call to stop or restart its idle
// timer.
type holdState struct {
	mu    sync.Mutex
	count int
	edge  chan struct{}
}

// state returns whether the timeouts are held now and the channel that is
// closed at the next change.
func (h *holdState) state() (bool, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.edge == nil {
		h.edge = make(chan struct{})
	}
	return h.count > 0, h.edge
}

func (h *holdState) add(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	was := h.count > 0
	h.count += n
	if now := h.count > 0; now != was && h.edge != nil {
		close(h.edge)
		h.edge = make(chan struct{})
	}
}

// Hold stops the idle timeouts (Request.Timeout) of the peer's pending
// requests until release is called, for the time a person is asked to
// answer one of the peer's requests: the peer often cannot answer ours
// before it has that answer (an MCP tool call waiting on an elicitation),
// and a person taking a minute over a form is no unresponsive peer. Once
// the last hold is released every idle timeout starts again from its
// full length, as on progress (Extend). The hard caps (MaxTimeout) run
// on: they bound a request's time whatever happens. release may be called
// more than once.
func (p *Peer) Hold() (release func()) {
	p.holds.add(1)
	var once sync.Once
	return func() { once.Do(func() { p.holds.add(-1) }) }
}

type holderKey struct{}

// HoldTimeouts holds the idle timeouts of the Peer whose request handler
// ctx is (see Hold) until release is called, and does nothing for a
// context that is no handler's. A handler calls it around the time it
// waits for a person.
func HoldTimeouts(ctx context.Context) (release func()) {
	if p, ok := ctx.Value(holderKey{}).(*Peer); ok {
		return p.Hold()
	}
	return func() {}
}
