package record

import (
	"testing"

	"github.com/mcpx-dev/mcpx/transport"
)

// A server's mark (new for every server mcpx starts) is normalized
// whatever the normalizers, a value only: the rest of the string stays.
func TestServerMarksNormalized(t *testing.T) {
	t.Parallel()
	mark := transport.ServerMarkPrefix + "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for in, want := range map[string]string{
		"MCPX_SERVER_MARK=" + mark:                    "MCPX_SERVER_MARK=<server-mark>",
		`{"MCPX_SERVER_MARK":"` + mark + `","A":"b"}`: `{"MCPX_SERVER_MARK":"<server-mark>","A":"b"}`,
		transport.ServerMarkPrefix + "short":          transport.ServerMarkPrefix + "short",
		"nothing here":                                "nothing here",
	} {
		var none *Normalizers
		if got := none.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
		ns, err := CompileNormalizers([]Normalizer{{Builtin: BuiltinUUID}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := ns.Value(map[string]any{"text": in, "list": []any{in}})
		m := v.(map[string]any)
		if m["text"] != want || m["list"].([]any)[0] != want {
			t.Errorf("Value(%q) = %v, want %q in both", in, v, want)
		}
	}
}
