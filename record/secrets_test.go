package record

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// knownTrace is a session whose server echoes the client's credentials:
// recorded (the recorder was told them), each echo is "[redacted]".
var knownTrace = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1.0"}}}`,
	`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"you are [redacted] ([redacted])"}]}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"config"}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"token [redacted]"}]}}`,
}

// knownLive is the live server of knownTrace: it says the credentials
// the caller sends (a bearer token, an access token OAuth presented, a
// value of the server's command line), and its config tool changed.
func knownLive() []string {
	live := append([]string(nil), knownTrace...)
	live[4] = `< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"you are tk-BEARER-0001 (oauth-TOKEN-00002)"}]}}`
	live[6] = `< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"token! cfg-VALUE-0003"}]}}`
	return live
}

func knownSecrets() *Secrets {
	s := NewSecrets([]string{"tk-BEARER-0001"}, []string{"cfg-VALUE-0003"})
	s.Add("oauth-TOKEN-00002")
	return s
}

// A live server that echoes the secrets the caller knows matches the
// recorded "[redacted]" (they are redacted as the recorder redacted
// them), and what differs is reported without them.
func TestVerifyRedactsKnownSecrets(t *testing.T) {
	t.Parallel()
	res := runVerify(t, mkTrace(knownTrace...), liveReplay(t, mkTrace(knownLive()...)), VerifyOptions{Secrets: knownSecrets()})
	if len(res.Mismatches) != 1 || res.Mismatches[0].Exchange != 3 {
		t.Fatalf("mismatches %+v, want exchange 3's only", res.Mismatches)
	}
	var b bytes.Buffer
	j, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	b.Write(j)
	if err := res.WriteJUnit(&b, JUnitOptions{Name: "t"}); err != nil {
		t.Fatal(err)
	}
	b.WriteString(res.Err().Error())
	for _, m := range res.Mismatches {
		b.WriteString(m.Problem)
		b.Write(m.Live)
		for _, d := range m.Diffs {
			b.WriteString(d.Live)
		}
	}
	for _, s := range []string{"tk-BEARER", "oauth-TOKEN", "cfg-VALUE"} {
		if strings.Contains(b.String(), s) {
			t.Errorf("the result shows %s:\n%s", s, b.String())
		}
	}
	if !strings.Contains(b.String(), `token! [redacted]`) {
		t.Errorf("the difference is not shown redacted:\n%s", b.String())
	}
	// A trace recorded without redaction is compared as it is.
	plain := mkTrace(knownLive()...)
	plain.Header.Redacted = false
	if res := runVerify(t, plain, liveReplay(t, mkTrace(knownLive()...)), VerifyOptions{Secrets: knownSecrets()}); !res.OK() {
		t.Errorf("a --no-redact trace: mismatches %+v", res.Mismatches)
	}
}

// verify --update records the live server without the secrets the
// caller knows: those it was given and those told as it goes.
func TestUpdateTraceRedactsKnownSecrets(t *testing.T) {
	t.Parallel()
	name := filepath.Join(t.TempDir(), "t.jsonl")
	var b bytes.Buffer
	if _, err := mkTrace(knownTrace...).WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	live := mkTrace(knownLive()...)
	secrets := knownSecrets()
	res, err := UpdateTrace(context.Background(), name, UpdateOptions{
		Verify: VerifyOptions{Secrets: secrets},
		Dial: func(ctx context.Context, _ int, _ SessionInfo, _ transport.Observer) (transport.Conn, error) {
			rp, err := NewReplayer(live, ReplayOptions{})
			if err != nil {
				return nil, err
			}
			conn, _ := rp.ServePipe(ctx)
			return conn, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if changed, _ := res.Changed(); changed != 1 {
		t.Errorf("%d exchanges changed, want 1: %+v", changed, res.Mismatches)
	}
	after, _ := os.ReadFile(name)
	for _, s := range []string{"tk-BEARER", "oauth-TOKEN", "cfg-VALUE"} {
		if bytes.Contains(after, []byte(s)) {
			t.Errorf("the new trace holds %s:\n%s", s, after)
		}
	}
	if !bytes.Contains(after, []byte(`"you are [redacted] ([redacted])"`)) {
		t.Errorf("the echo is not in the new trace, redacted:\n%s", after)
	}
	var h struct{ Redacted bool }
	if err := json.Unmarshal(after[:bytes.IndexByte(after, '\n')], &h); err != nil || !h.Redacted {
		t.Errorf("header: %v %+v", err, h)
	}
}
