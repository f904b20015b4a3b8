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

// report tells of e, a message dropped for its size, for a stdio line
// and an SSE event alike: the request a response answers fails with it
// (lost), which says it all, and anything else is noted. attributed
// carries, from a message's start to its end (one reader's, read in
// order), whether its request was failed: its end then needs no note.
func (e *SkippedMessageError) report(attributed *bool, note func(string), lost func(id string, err error)) {
	if e.End {
		if !*attributed && note != nil {
			note(e.describe(prefixInfo{}))
		}
		*attributed = false
		return
	}
	info := scanPrefix(e.Prefix)
	if info.ID != "" {
		*attributed = !e.Whole
		lost(info.ID, e.requestError())
		return
	}
	if note != nil {
		note(e.describe(info))
	}
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
