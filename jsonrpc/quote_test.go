package jsonrpc

import (
	"strings"
	"testing"
)

func TestClip(t *testing.T) {
	if got := Clip("tools/list"); got != "tools/list" {
		t.Errorf("Clip of a short text = %q", got)
	}
	if got := QuoteClipped("a\"b"); got != `"a\"b"` {
		t.Errorf("QuoteClipped of a short text = %s", got)
	}
	long := strings.Repeat("é", 50_000) // 100,000 bytes
	if got, want := Clip(long), strings.Repeat("é", 100)+"… (100000 bytes)"; got != want {
		t.Errorf("Clip of 100 KB = %q…, %d bytes", got[:20], len(got))
	}
	if got, want := QuoteClipped(long), `"`+strings.Repeat("é", 100)+`…" (100000 bytes)`; got != want {
		t.Errorf("QuoteClipped of 100 KB = %q…, %d bytes", got[:20], len(got))
	}
	// Cut at a character boundary.
	if got := Clip("a" + long); !strings.HasPrefix(got, "a"+strings.Repeat("é", 99)+"…") {
		t.Errorf("Clip cut inside a character: %q", got[190:210])
	}
}

func TestClipMessage(t *testing.T) {
	short := &Error{Code: CodeInvalidParams, Message: "no"}
	if ClipMessage(short) != short {
		t.Error("a short message is copied")
	}
	if ClipMessage(nil) != nil {
		t.Error("nil is not nil")
	}
	long := &Error{Code: CodeInvalidParams, Message: strings.Repeat("x", 100_000), Data: []byte(`{"k":1}`)}
	c := ClipMessage(long)
	if c.Code != CodeInvalidParams || string(c.Data) != `{"k":1}` || len(c.Message) > 4<<10+50 ||
		!strings.HasSuffix(c.Message, "… (100000 bytes in all)") {
		t.Errorf("ClipMessage = code %d data %s message of %d bytes ending %q", c.Code, c.Data, len(c.Message), c.Message[len(c.Message)-30:])
	}
	if len(long.Message) != 100_000 {
		t.Error("ClipMessage changed the handler's error")
	}
}
