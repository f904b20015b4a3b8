package transport

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The watch keeps the size and the first bytes of what came after the
// last newline, whatever the reads' sizes.
func TestUnendedWatch(t *testing.T) {
	const what = "the server wrote %d bytes on stdout"
	tests := []struct {
		name, in, want string
	}{
		{"nothing", "", ""},
		{"whole lines", "{}\n{}\n", ""},
		{"an unended line", "{}\n{\"a\":1}", `the server wrote 7 bytes on stdout after its last newline, and a message ends only with one (spec basic/transports, "stdio"): "{\"a\":1}"`},
		{"a long one", "x\n" + strings.Repeat("y", 1000), `the server wrote 1000 bytes on stdout after its last newline, and a message ends only with one (spec basic/transports, "stdio"): "` + strings.Repeat("y", unendedHead) + `"…`},
		{"control characters", "\x1b]0;t\x07\r", `the server wrote 7 bytes on stdout after its last newline, and a message ends only with one (spec basic/transports, "stdio"): "\x1b]0;t\a\r"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, r := range []io.Reader{strings.NewReader(tt.in), iotest.OneByteReader(strings.NewReader(tt.in))} {
				w := &unendedWatch{r: r}
				if _, err := io.ReadAll(w); err != nil {
					t.Fatal(err)
				}
				if got := w.describe(what); got != tt.want {
					t.Errorf("describe() = %s, want %s", got, tt.want)
				}
				if len(w.head) > unendedHead {
					t.Errorf("the watch holds %d bytes", len(w.head))
				}
			}
		})
	}
}
