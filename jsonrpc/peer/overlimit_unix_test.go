//go:build unix

package peer

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// A response over the maximum message size fails only the request it
// answers: the server's next answer is read, and the connection lives on.
// A notification over the limit before it is dropped with a note. Before,
// either line ended the connection, and every request with it.
func TestOverLimitAnswerFailsOnlyItsRequest(t *testing.T) {
	const script = `read a
printf '{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'; head -c 200000 /dev/zero | tr '\0' x; printf '"}}\n'
printf '{"jsonrpc":"2.0","id":1,"result":{"text":"'; head -c 200000 /dev/zero | tr '\0' y; printf '"}}\n'
read b
echo '{"jsonrpc":"2.0","id":2,"result":{"ok":true}}'
read c
`
	var mu sync.Mutex
	var notes []string
	conn, err := transport.StartStdio(transport.StdioOptions{
		Command:        "/bin/sh",
		Args:           []string{"-c", script},
		MaxMessageSize: 64 << 10,
		Observer: func(ev transport.Event) {
			if ev.Kind == transport.EventNote {
				mu.Lock()
				notes = append(notes, ev.Text)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := New(conn, Options{})
	p.Start()
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, err = p.Call(ctx, Request{Method: "tools/call"})
	if !errors.Is(err, transport.ErrFrameTooLarge) || !strings.Contains(err.Error(), "the server's answer exceeds the maximum message size (64 KiB)") {
		t.Fatalf("first call: %v", err)
	}
	res, err := p.Call(ctx, Request{Method: "tools/call"})
	if err != nil || string(res.Result) != `{"ok":true}` {
		t.Fatalf("second call: %v, %v", res, err)
	}
	select {
	case <-p.Done():
		t.Fatal("the connection ended")
	default:
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(notes, "\n")
	if !strings.Contains(all, `a message with method "notifications/message"`) || strings.Contains(all, "request 1") {
		t.Errorf("notes:\n%s", all)
	}
}
