package cmd

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/mcpx-dev/mcpx/inspector"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// noteQueue keeps the notifications no :wait has taken yet (the newest
// thousand).
type noteQueue struct {
	mu    sync.Mutex
	items []*jsonrpc.Message
	more  chan struct{} // closed when a notification arrives
}

func newNoteQueue() *noteQueue { return &noteQueue{more: make(chan struct{})} }

func (q *noteQueue) add(m *jsonrpc.Message) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) >= 1000 {
		q.items = q.items[1:]
	}
	q.items = append(q.items, m)
	close(q.more)
	q.more = make(chan struct{})
}

func (q *noteQueue) clear() {
	q.mu.Lock()
	q.items = nil
	q.mu.Unlock()
}

// take removes and returns the first notification whose method matches
// pattern, waiting for one until ctx ends or gone closes.
func (q *noteQueue) take(ctx context.Context, pattern string, gone <-chan struct{}) (*jsonrpc.Message, error) {
	for {
		q.mu.Lock()
		for i, m := range q.items {
			if ok, _ := filepath.Match(pattern, m.Method); ok || m.Method == pattern {
				q.items = append(q.items[:i:i], q.items[i+1:]...)
				q.mu.Unlock()
				return m, nil
			}
		}
		more := q.more
		q.mu.Unlock()
		select {
		case <-more:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-gone:
			return nil, inspector.ErrServerGone
		}
	}
}
