package transport

import (
	"fmt"

	"github.com/mcpx-dev/mcpx/internal/rawjson"
	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// prefixInfo is what the first bytes of a message that was too large to
// keep say about it (see scanPrefix).
type prefixInfo struct {
	// ID is the message's id, normalized as for LossReporter; set only
	// for a response (Response), whose request it fails.
	ID string
	// Response is set when a "result" or "error" member was seen.
	Response bool
	// Method is the "method" member's value, when it was seen whole.
	Method string
	// Batch is set for a JSON array (a batch: its ids are not attributed).
	Batch bool
}

// scanPrefix reads the top-level members of the JSON object that prefix,
// the first bytes of a message, begins, up to where it is cut: the "id"
// member counts only when it is whole, a string or a number, and a
// "result" or "error" member (its name is enough: its value is what made
// the message large) says the message is a response. Scanning stops at
// the first member it cannot read whole. prefix need not be valid JSON.
func scanPrefix(prefix []byte) prefixInfo {
	var info prefixInfo
	var id []byte
	p := prefix
	i := rawjson.SkipSpace(p, 0)
	if i >= len(p) {
		return info
	}
	if p[i] == '[' {
		info.Batch = true
		return info
	}
	if p[i] != '{' {
		return info
	}
	i++
	for {
		i = rawjson.SkipSpace(p, i)
		if i >= len(p) || p[i] != '"' {
			break
		}
		j := rawjson.SkipString(p, i)
		if j >= len(p) {
			break
		}
		name := p[i:j]
		i = rawjson.SkipSpace(p, j)
		if i >= len(p) || p[i] != ':' {
			break
		}
		i = rawjson.SkipSpace(p, i+1)
		if i >= len(p) {
			break
		}
		if rawjson.NameIs(name, "result") || rawjson.NameIs(name, "error") {
			info.Response = true
			break
		}
		k := rawjson.SkipValue(p, i)
		if k >= len(p) || k <= i {
			break // the value may be cut
		}
		v := p[i:k]
		switch {
		case rawjson.NameIs(name, "id"):
			if rawjson.IsString(v) || v[0] == '-' || (v[0] >= '0' && v[0] <= '9') {
				id = v
			}
		case rawjson.NameIs(name, "method"):
			if s, ok := rawjson.String(v); ok {
				info.Method = s
			}
		}
		i = rawjson.SkipSpace(p, k)
		if i >= len(p) || p[i] != ',' {
			break
		}
		i++
	}
	if info.Response && info.Method == "" && id != nil {
		info.ID = jsonrpc.RawID(id).LooseKey()
	}
	return info
}

// requestError is the error of the request whose response e drops.
func (e *SkippedMessageError) requestError() error {
	what := "the server's answer"
	if e.Whole {
		what += fmt.Sprintf(" (%s)", FormatSize(e.Size))
	}
	return &FrameTooLargeError{What: what, Limit: e.Limit}
}

// describe says what is dropped and what follows from it, for a note.
func (e *SkippedMessageError) describe(info prefixInfo) string {
	if e.End {
		return fmt.Sprintf("%s over the maximum message size ended: %s dropped", e.What, FormatSize(e.Size))
	}
	head := fmt.Sprintf("dropped %s of %s, longer than the maximum message size (%s)", e.What, FormatSize(e.Size), FormatSize(e.Limit))
	if !e.Whole {
		head = fmt.Sprintf("dropping %s longer than the maximum message size (%s)", e.What, FormatSize(e.Limit))
	}
	switch {
	case info.ID != "":
		return fmt.Sprintf("%s: the response to request %s, which fails", head, Excerpt(info.ID))
	case info.Method != "":
		return fmt.Sprintf("%s: a message with method %q, begun %s", head, Excerpt(info.Method), e.begun())
	case info.Batch:
		return fmt.Sprintf("%s: a batch, whose ids are not read: begun %s", head, e.begun())
	case info.Response:
		return fmt.Sprintf("%s: a response whose id was not found in its first %s, begun %s", head, FormatSize(int64(len(e.Prefix))), e.begun())
	}
	return fmt.Sprintf("%s: no response id was found in its first %s, begun %s", head, FormatSize(int64(len(e.Prefix))), e.begun())
}

// begun is the start of the dropped message, escaped, for a note.
func (e *SkippedMessageError) begun() string {
	return escapeControls(cutAt(string(e.Prefix), maxExcerpt)) + "…"
}
