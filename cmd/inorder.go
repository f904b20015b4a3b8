package cmd

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// inOrder runs job for each of n items, up to parallel at once, and hands
// each outcome to take in the items' order (verify --parallel N over
// several traces). A job runs with an env of its own whose stdout and
// stderr are kept (see orderedOutput) until the items before it are
// taken, then written through: what is printed is what running the items
// one after the other prints, and the item whose turn it is prints as it
// goes. A job that says stop (a trace that cannot be verified at all)
// ends the run there, as it would one at a time: the items after it are
// cancelled, their output dropped, and take sees none of them. At most
// parallel items run or wait for their turn at once, so at most that many
// outcomes are held. inOrder returns once every job it started has
// ended (their servers with them).
func inOrder[T any](ctx context.Context, e *env, n, parallel int, job func(ctx context.Context, i int, je *env) (v T, stop bool), take func(i int, v T)) {
	type slot struct {
		out    *orderedOutput
		ctx    context.Context
		cancel context.CancelFunc
		done   chan struct{}
		v      T
		stop   bool
	}
	slots := make([]*slot, n)
	for i := range slots {
		sctx, cancel := context.WithCancel(ctx)
		slots[i] = &slot{out: newOrderedOutput(e.ios.Out, e.ios.ErrOut), ctx: sctx, cancel: cancel, done: make(chan struct{})}
	}
	var (
		mu sync.Mutex
		// stopAt is the first item that stopped the run (n: none yet).
		stopAt = n
		wg     sync.WaitGroup
	)
	stopped := func() int {
		mu.Lock()
		defer mu.Unlock()
		return stopAt
	}
	launch := func(i int) {
		s := slots[i]
		je := e.withOutput(s.out)
		wg.Go(func() {
			defer close(s.done)
			s.v, s.stop = job(s.ctx, i, je)
			if !s.stop {
				return
			}
			// What comes after a trace that stops the run is not run
			// (nor reported), as when the traces run one at a time.
			mu.Lock()
			if i < stopAt {
				stopAt = i
			}
			mu.Unlock()
			for _, later := range slots[i+1:] {
				later.cancel()
			}
		})
	}
	defer func() {
		for _, s := range slots {
			s.cancel()
		}
		wg.Wait()
		for _, s := range slots {
			s.out.drop()
		}
	}()
	launched := 0
	for i := range n {
		for launched < n && launched < i+parallel && launched <= stopped() {
			if launched == i {
				// Its turn from the start: it prints as it goes.
				slots[i].out.release()
			}
			launch(launched)
			launched++
		}
		s := slots[i]
		s.out.release()
		<-s.done
		take(i, s.v)
		if s.stop {
			return
		}
	}
}

// withOutput returns an env like e whose commands print to out: its
// stdout and stderr, and those of the sessions it opens (the server's
// stderr, the session's notes), share e's run, its tracking of clients
// and the eras the servers speak.
func (e *env) withOutput(out *orderedOutput) *env {
	ios := *e.ios
	ios.Out, ios.ErrOut = orderedStream{out, false}, orderedStream{out, true}
	je := *e
	je.ios = &ios
	je.conns = &connector{ios: &ios, track: e.conns.track, prompter: e.conns.prompter, sharedIn: e.conns.sharedIn, shared: e.conns.eras(), sharedGate: e.conns.authGate()}
	return &je
}

// orderedKeepInMemory bounds what an orderedOutput keeps in memory; what
// comes after is kept in a temporary file, so that a server that writes
// much to its stderr while others print does not fill memory.
const orderedKeepInMemory = 256 << 10

// orderedOutput is what a job of inOrder writes to stdout and stderr,
// kept in the order it was written (one buffer each would put the
// stderr of a trace after all its stdout when both are one terminal)
// until its turn, then written through. Writes come from the job and
// from its sessions' read loops (the server's stderr), hence the lock.
type orderedOutput struct {
	mu          sync.Mutex
	out, errOut io.Writer
	// through is set once it is the output's turn: writes go to out and
	// errOut as they come.
	through bool
	chunks  []lineChunk
	size    int
	// spill holds what did not fit in memory, as records of a stream
	// byte, a length and the bytes; spillErr is why some was lost.
	spill    *os.File
	spillW   *bufio.Writer
	spillErr error
	lost     int
}

func newOrderedOutput(out, errOut io.Writer) *orderedOutput {
	return &orderedOutput{out: out, errOut: errOut}
}

func (o *orderedOutput) stream(toErr bool) io.Writer {
	if toErr {
		return o.errOut
	}
	return o.out
}

func (o *orderedOutput) write(toErr bool, p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.through {
		return o.stream(toErr).Write(p)
	}
	if o.spill == nil && o.spillErr == nil && o.size+len(p) > orderedKeepInMemory {
		o.spill, o.spillErr = os.CreateTemp("", "mcpx-verify-*")
		if o.spillErr == nil {
			o.spillW = bufio.NewWriter(o.spill)
		}
	}
	switch {
	case o.spill != nil:
		var head [5]byte
		if toErr {
			head[0] = 1
		}
		binary.BigEndian.PutUint32(head[1:], uint32(len(p)))
		if _, err := o.spillW.Write(head[:]); err != nil {
			o.spillErr = err
		} else if _, err := o.spillW.Write(p); err != nil {
			o.spillErr = err
		}
		if o.spillErr != nil {
			o.lost += len(p)
		}
	case o.spillErr != nil:
		o.lost += len(p)
	default:
		n := len(o.chunks)
		if n > 0 && o.chunks[n-1].toErr == toErr {
			o.chunks[n-1].b = append(o.chunks[n-1].b, p...)
		} else {
			o.chunks = append(o.chunks, lineChunk{toErr, append([]byte(nil), p...)})
		}
		o.size += len(p)
	}
	return len(p), nil
}

// release writes what was kept, in order, and lets later writes through.
func (o *orderedOutput) release() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.through {
		return
	}
	o.through = true
	for _, c := range o.chunks {
		_, _ = o.stream(c.toErr).Write(c.b)
	}
	o.chunks, o.size = nil, 0
	if o.spill != nil {
		if err := o.replaySpill(); err != nil && o.spillErr == nil {
			o.spillErr = err
		}
		o.closeSpill()
	}
	if o.spillErr != nil {
		fmt.Fprintf(o.errOut, "mcpx: %d byte(s) of this output could not be kept until its turn: %v\n", o.lost, o.spillErr)
	}
}

// replaySpill writes the records of the spill file in order.
func (o *orderedOutput) replaySpill() error {
	if err := o.spillW.Flush(); err != nil {
		return err
	}
	if _, err := o.spill.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReader(o.spill)
	buf := make([]byte, 32<<10)
	for {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		w := o.stream(head[0] == 1)
		if _, err := io.CopyBuffer(w, io.LimitReader(r, int64(binary.BigEndian.Uint32(head[1:]))), buf); err != nil {
			return err
		}
	}
}

func (o *orderedOutput) closeSpill() {
	if o.spill != nil {
		o.spill.Close()
		os.Remove(o.spill.Name())
		o.spill, o.spillW = nil, nil
	}
}

// drop forgets what was kept and not released (a job after the one that
// stopped the run).
func (o *orderedOutput) drop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.chunks, o.size = nil, 0
	o.closeSpill()
}

// orderedStream is one of an orderedOutput's two streams.
type orderedStream struct {
	o     *orderedOutput
	toErr bool
}

func (w orderedStream) Write(p []byte) (int, error) { return w.o.write(w.toErr, p) }
