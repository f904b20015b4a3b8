package inspector

import "sync"

// workGroup runs the goroutines of one owner (a session, a catalog, a
// task store), which waits for them when it closes: once Wait has begun,
// Go refuses new work, so that Wait returns when the work under way ends.
type workGroup struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// Go runs fn in a goroutine of the group and reports true, or runs
// nothing and reports false once the group is closing.
func (g *workGroup) Go(fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.wg.Go(fn)
	return true
}

// Wait closes the group to new work and waits for the work under way.
func (g *workGroup) Wait() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.wg.Wait()
}
