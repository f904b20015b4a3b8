package tui

import (
	"strings"
	"testing"
)

// textWidth is on the hot paths of wrapping and tables: ASCII text, the
// common case, must stay a byte loop.
func BenchmarkTextWidth(b *testing.B) {
	for _, bc := range []struct{ name, s string }{
		{"ascii", strings.Repeat("get-weather-forecast: returns the forecast ", 8)},
		{"colour", strings.Repeat("\x1b[1mget-weather\x1b[0m forecast ", 8)},
		{"wide", strings.Repeat("名前は広い文字です 😀 e\u0301 ", 8)},
		{"emoji", strings.Repeat("👩\u200d💻 ❤\ufe0f 🇫🇷 👍🏽 ", 8)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				textWidth(bc.s)
			}
		})
	}
}
