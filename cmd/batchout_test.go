package cmd

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcpx-dev/mcpx/repl"
)

// writeLog keeps each write as it came.
type writeLog struct {
	mu     sync.Mutex
	writes []string
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

func (w *writeLog) got() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.writes...)
}

func TestBatchOutWritesInBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var out writeLog
		b := newBatchOut(&out)
		defer b.Close()
		b.Write([]byte("mcpx> ping\n"))
		b.Write([]byte("{}\n"))
		if w := out.got(); len(w) != 0 {
			t.Fatalf("written before a flush: %q", w)
		}
		if err := b.Flush(); err != nil {
			t.Fatal(err)
		}
		if w := out.got(); len(w) != 1 || w[0] != "mcpx> ping\n{}\n" {
			t.Fatalf("writes %q, want the two lines in one", w)
		}

		// What is held is written batchDelay after its first byte at the
		// latest, without a flush.
		b.Write([]byte("mcpx> tools call slow\n"))
		time.Sleep(batchDelay - time.Millisecond)
		synctest.Wait()
		if w := out.got(); len(w) != 1 {
			t.Fatalf("written before batchDelay: %q", w[1:])
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if w := out.got(); len(w) != 2 || w[1] != "mcpx> tools call slow\n" {
			t.Fatalf("after batchDelay, writes %q", w)
		}

		// Standard error's writes come after what standard output held.
		var both writeLog
		b2 := newBatchOut(&both)
		errOut := flushingWriter{&both, b2}
		b2.Write([]byte("result\n"))
		errOut.Write([]byte("warning\n"))
		b2.Write([]byte("next\n"))
		b2.Close()
		if w := strings.Join(both.got(), "|"); w != "result\n|warning\n|next\n" {
			t.Fatalf("order %q", w)
		}

		// A write as large as a batch goes out after what was held, as is;
		// after Close writes go straight through.
		var big writeLog
		b3 := newBatchOut(&big)
		b3.Write([]byte("a"))
		b3.Write(bytes.Repeat([]byte("b"), batchSize))
		if w := big.got(); len(w) != 2 || w[0] != "a" || len(w[1]) != batchSize {
			t.Fatalf("large write: %d writes", len(w))
		}
		b3.Close()
		b3.Write([]byte("late"))
		if w := big.got(); len(w) != 3 || w[2] != "late" {
			t.Fatalf("after Close: %q", w[2:])
		}
	})
}

// Whoever feeds a script line by line sees each line's output before it
// sends the next: the feed flushes before a read that may wait, and not
// while whole lines are already read.
func TestScriptFeedFlushesBeforeWaiting(t *testing.T) {
	pr, pw := io.Pipe()
	feed := startScriptFeed(repl.NewScript(pr))
	defer feed.stop()
	defer pw.Close()
	waits := make(chan struct{}, 10)
	feed.beforeWait = func() { waits <- struct{}{} }
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go pw.Write([]byte("ping\nping\n"))
	for i := range 2 {
		if text, err := feed.read(ctx); err != nil || text != "ping" {
			t.Fatalf("line %d: %q, %v", i, text, err)
		}
	}
	if n := len(waits); n != 1 {
		t.Fatalf("flushed %d times for two lines read at once, want once (before the first read)", n)
	}
	go pw.Write([]byte("exit\n"))
	if text, err := feed.read(ctx); err != nil || text != "exit" {
		t.Fatalf("third line: %q, %v", text, err)
	}
	if n := len(waits); n != 2 {
		t.Fatalf("flushed %d times, want 2: the third line had to be waited for", n)
	}
}
