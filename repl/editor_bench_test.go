package repl

import (
	"fmt"
	"io"
	"strings"
	"testing"
)

// BenchmarkEditorPaste measures pasting one long line (a JSON value for
// --args, say) into the line editor: the keys arrive in one burst, as a
// terminal delivers a paste (bracketed, as terminals mark a paste for an
// editor that asks, or not), and the line ends with Enter. ns/op is the
// time from the first key to the command returned. Readline draws the
// whole line again for each key it handles, so a paste handed over key by
// key took time in the square of its length (10 KB: 7 s, 40 KB: 89 s);
// handed over in pieces, a bracketed paste is one piece, and an unmarked
// one a piece per read of the terminal's (4 KB).
//
//	go test ./repl -run '^$' -bench EditorPaste
func BenchmarkEditorPaste(b *testing.B) {
	for _, bracketed := range []bool{true, false} {
		for _, size := range []int{50 << 10, 100 << 10, 200 << 10} {
			b.Run(fmt.Sprintf("bracketed=%v/%dKB", bracketed, size>>10), func(b *testing.B) {
				line := `tools call echo --args '{"message":"` + strings.Repeat("x", size) + `"}'`
				keys := line
				if bracketed {
					keys = string(pasteStart) + line + string(pasteEnd)
				}
				for b.Loop() {
					r, w := io.Pipe()
					ed, err := NewEditor(Terminal{In: r, Out: io.Discard}, EditorOptions{Prompt: "mcpx> ", ContinuePrompt: "...> "})
					if err != nil {
						b.Fatal(err)
					}
					go w.Write([]byte(keys + "\r"))
					got, err := ed.ReadCommand()
					if err != nil || got != line {
						b.Fatalf("read %d bytes, %v; want the %d pasted", len(got), err, len(line))
					}
					ed.Close()
					w.Close()
				}
				b.SetBytes(int64(len(line)))
			})
		}
	}
}
