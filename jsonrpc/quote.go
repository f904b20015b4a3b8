package jsonrpc

import (
	"fmt"
	"strconv"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
)

// MaxQuoted is the most of the peer's own text (a method name, a URL, a
// cursor) that an error message sent back to it quotes, in bytes: the
// peer knows what it sent, and a request whose method is 100 KB long is
// not answered with 100 KB. It matches what mcpx's warnings show of a
// method (200 bytes).
const MaxQuoted = 200

// Clip returns s, text the peer sent, for an error message sent back to
// it: whole up to MaxQuoted bytes, else cut there (at a character
// boundary) with an ellipsis and its length.
func Clip(s string) string {
	if len(s) <= MaxQuoted {
		return s
	}
	return rawjson.Shorten(s, MaxQuoted) + fmt.Sprintf(" (%d bytes)", len(s))
}

// QuoteClipped is Clip for text quoted as a Go string (%q): the quoted
// part is cut, and the length follows the closing quote.
func QuoteClipped(s string) string {
	if len(s) <= MaxQuoted {
		return strconv.Quote(s)
	}
	return strconv.Quote(rawjson.Shorten(s, MaxQuoted)) + fmt.Sprintf(" (%d bytes)", len(s))
}

// maxErrorMessageSent is the longest error message the engine sends the
// peer whole, in bytes (see ClipMessage).
const maxErrorMessageSent = 4 << 10

// ClipMessage returns e, or a copy of it whose message is cut to 4 KB
// with its length, for an answer to the peer: what a handler's error
// quotes (a schema's property names, a value the peer sent) may be any
// length, and the peer is not sent back a megabyte of its own text. The
// code and data are kept.
func ClipMessage(e *Error) *Error {
	if e == nil || len(e.Message) <= maxErrorMessageSent {
		return e
	}
	c := *e
	c.Message = rawjson.Shorten(e.Message, maxErrorMessageSent) + fmt.Sprintf(" (%d bytes in all)", len(e.Message))
	return &c
}
