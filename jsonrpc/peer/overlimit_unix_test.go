//go:build unix

package peer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/jsonrpc"
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
			if ev.Kind == transport.EventDropped || ev.Kind == transport.EventNote {
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

// A request of the server's over the maximum message size is answered
// with an error saying so, as sent through the connection (the server
// would otherwise wait for an answer forever), and the owner is told
// (OnRefused): one whose id its first bytes give at once, one whose id
// comes after its params (as the TypeScript SDK writes it) once it has
// been read past, its size known; the person is told of that one's
// start. Before, neither was answered, then only the first: this server
// waits for both answers before it answers our call.
func TestOverLimitServerRequestIsAnswered(t *testing.T) {
	const script = `read a
printf '{"jsonrpc":"2.0","method":"sampling/createMessage","params":{"text":"'; head -c 200000 /dev/zero | tr '\0' x; printf '"},"id":"late"}\n'
printf '{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"text":"'; head -c 200000 /dev/zero | tr '\0' y; printf '"}}\n'
read b
read b2
printf '{"jsonrpc":"2.0","id":1,"result":{"answers":[%s,%s]}}\n' "$b" "$b2"
read c
`
	var mu sync.Mutex
	var told []string
	conn, err := transport.StartStdio(transport.StdioOptions{
		Command:        "/bin/sh",
		Args:           []string{"-c", script},
		MaxMessageSize: 64 << 10,
		Observer: func(ev transport.Event) {
			if ev.Kind == transport.EventDropped {
				mu.Lock()
				told = append(told, ev.Text)
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	refused := make(chan string, 4)
	p := New(conn, Options{OnRefused: func(m *jsonrpc.Message, e *jsonrpc.Error) {
		refused <- fmt.Sprintf("%s %s: %d %s", m.ID, m.Method, e.Code, e.Message)
	}})
	p.Start()
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	res, err := p.Call(ctx, Request{Method: "tools/call"})
	// The two answers, in either order: each is written as soon as its
	// request is known to be too large, and the two are found on
	// different paths (see the function's comment).
	late := `{"jsonrpc":"2.0","id":"late","error":{"code":-32603,"message":"the request (200084 bytes) exceeds the client's maximum message size (64 KiB)"}}`
	s1 := `{"jsonrpc":"2.0","id":"s1","error":{"code":-32603,"message":"the request exceeds the client's maximum message size (64 KiB)"}}`
	if err != nil {
		t.Fatalf("the call: %v; the server did not get the answers %s and %s", err, late, s1)
	}
	if got := string(res.Result); got != `{"answers":[`+late+`,`+s1+`]}` && got != `{"answers":[`+s1+`,`+late+`]}` {
		t.Fatalf("the server got %s, want the answers %s and %s", got, late, s1)
	}
	for _, want := range []string{
		`"late" sampling/createMessage: -32603 the request (200084 bytes) exceeds the client's maximum message size (64 KiB)`,
		`"s1" sampling/createMessage: -32603 the request exceeds the client's maximum message size (64 KiB)`,
	} {
		select {
		case r := <-refused:
			if r != want {
				t.Errorf("OnRefused: %s, want %s", r, want)
			}
		default:
			t.Errorf("OnRefused was not told: %s", want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || !strings.Contains(told[0], `a message with method "sampling/createMessage"`) || !strings.Contains(told[0], "xxx") {
		t.Errorf("told the person:\n%s", strings.Join(told, "\n"))
	}
}
