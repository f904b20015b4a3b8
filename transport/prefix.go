package transport

import (
	"fmt"

	"github.com/mcpx-dev/mcpx/jsonrpc"
)

// prefixInfo is what a message that was too large to keep says about
// itself, in what was read of it (see memberScanner).
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
	// RequestID is the id of a request (its method seen whole, and no
	// "result" or "error" member), as sent, for the error that answers
	// it; zero for anything else, and for an id MCP does not allow
	// (neither a string nor an integer).
	RequestID jsonrpc.ID
}

// scanPrefix reads the top-level members of the JSON object that prefix,
// the first bytes of a message, begins, up to where it is cut (see
// memberScanner): the "id" member counts only when it is whole, a string
// or a number, and a "result" or "error" member (its name is enough: its
// value may be what made the message large) says the message is a
// response. prefix need not be valid JSON.
func scanPrefix(prefix []byte) prefixInfo {
	var s memberScanner
	s.write(prefix)
	return s.info()
}

// info is what e's message says of itself: what its reader found while
// reading it (all of it when Whole), else what its Prefix says.
func (e *SkippedMessageError) info() prefixInfo {
	if e.found != nil {
		return *e.found
	}
	return scanPrefix(e.Prefix)
}

// unattributed reports whether a message dropped for its size may be a
// response whose request cannot be told: not a message with a method
// (a notification or a request), not a response whose id was read, nor
// an SSE event without data.
func (info prefixInfo) unattributed(e *SkippedMessageError) bool {
	if e.Field != nil && e.Whole && e.Size == 0 {
		return false
	}
	return info.ID == "" && (info.Method == "" || info.Response)
}

// report tells of e, a message dropped for its size, for a stdio line
// and an SSE event alike: the request a response answers fails with it
// (lost), which says it all; a request of the server's whose id was read
// is answered with an error (refuse, when set: the server must not wait
// for an answer that never comes), noted for the record (EventNote);
// anything else is told to the person (note, EventDropped), its end
// noted for the record. attributed carries, from a message's start to
// its end (one reader's, read in order), whether its request was failed
// or answered: its end then needs no note.
func (e *SkippedMessageError) report(attributed *bool, note func(kind EventKind, text string), lost func(id string, err error), refuse func(id jsonrpc.ID, method string, err error)) {
	if e.End {
		was := *attributed
		*attributed = false
		if was {
			return
		}
		// The id may come after what made the message large: its
		// reader has read it all now.
		if info := e.info(); info.ID != "" || (!info.RequestID.IsZero() && refuse != nil) {
			e.attribute(info, note, lost, refuse)
			return
		}
		if note != nil {
			note(EventNote, e.describe(prefixInfo{}))
		}
		return
	}
	info := e.info()
	if info.ID != "" || (!info.RequestID.IsZero() && refuse != nil) {
		*attributed = !e.Whole
		e.attribute(info, note, lost, refuse)
		return
	}
	kind := EventDropped
	if e.Field != nil && e.Whole && e.Size == 0 {
		// An SSE event without data (a priming event): no message is
		// missing, only its id or retry.
		kind = EventNote
	}
	if note != nil {
		note(kind, e.describe(info))
	}
}

// attribute fails the request the response e drops answers (info.ID),
// which says it all, or answers the server's request e drops
// (info.RequestID), noting it for the record.
func (e *SkippedMessageError) attribute(info prefixInfo, note func(kind EventKind, text string), lost func(id string, err error), refuse func(id jsonrpc.ID, method string, err error)) {
	if info.ID != "" {
		lost(info.ID, e.requestError())
		return
	}
	if note != nil {
		note(EventNote, e.describe(info)+"; answered with an error")
	}
	refuse(info.RequestID, info.Method, e.refusal())
}

// requestError is the error of the request whose response e drops.
func (e *SkippedMessageError) requestError() error {
	if e.Field != nil {
		return fmt.Errorf("the server's answer was dropped: %w", e.Field)
	}
	return &FrameTooLargeError{What: e.sized("the server's answer"), Limit: e.Limit}
}

// sized is what, with e's size when the whole message was read past.
func (e *SkippedMessageError) sized(what string) string {
	if e.Whole {
		what += fmt.Sprintf(" (%s)", FormatSize(e.Size))
	}
	return what
}

// refusal is the error that answers the server's request e drops: what
// the server is told, and the person sees as the answer.
func (e *SkippedMessageError) refusal() error {
	if e.Field != nil {
		return fmt.Errorf("the request was dropped: %w", e.Field)
	}
	return &messageError{msg: fmt.Sprintf("%s exceeds the client's maximum message size (%s)", e.sized("the request"), FormatSize(e.Limit)), errs: []error{ErrFrameTooLarge}}
}

// describe says what is dropped and what follows from it, for a note.
func (e *SkippedMessageError) describe(info prefixInfo) string {
	if e.End {
		if e.Field != nil {
			return fmt.Sprintf("%s with an SSE %s field too long ended: %s of data dropped", e.What, e.Field.Field, FormatSize(e.Size))
		}
		return fmt.Sprintf("%s over the maximum message size ended: %s dropped", e.What, FormatSize(e.Size))
	}
	head := fmt.Sprintf("dropped %s of %s, longer than the maximum message size (%s)", e.What, FormatSize(e.Size), FormatSize(e.Limit))
	switch {
	case e.Field != nil && e.Whole:
		head = fmt.Sprintf("dropped %s (%s of data): %v", e.What, FormatSize(e.Size), e.Field)
	case e.Field != nil:
		head = fmt.Sprintf("dropping %s: %v", e.What, e.Field)
	case !e.Whole:
		head = fmt.Sprintf("dropping %s longer than the maximum message size (%s)", e.What, FormatSize(e.Limit))
	}
	switch {
	case len(e.Prefix) == 0:
		return head
	case info.Method != "":
		return fmt.Sprintf("%s: a message with method %q, begun %s", head, Excerpt(info.Method), e.begun())
	case info.Batch:
		return fmt.Sprintf("%s: a batch, whose ids are not read: begun %s", head, e.begun())
	case info.Response && !e.Whole:
		return fmt.Sprintf("%s: a response whose id was not found in its first %s (should the rest name it, its request fails then), begun %s", head, FormatSize(e.scanned()), e.begun())
	case info.Response:
		return fmt.Sprintf("%s: a response whose id was not found in it, begun %s", head, e.begun())
	}
	return fmt.Sprintf("%s: no response id was found in its first %s, begun %s", head, FormatSize(e.scanned()), e.begun())
}

// scanned is how many of the message's first bytes info read: what was
// read of it when its reader scanned it, else its Prefix.
func (e *SkippedMessageError) scanned() int64 {
	if e.found != nil {
		return e.Size
	}
	return int64(len(e.Prefix))
}

// begun is the start of the dropped message, escaped, for a note.
func (e *SkippedMessageError) begun() string {
	return escapeControls(cutAt(string(e.Prefix), maxExcerpt)) + "…"
}
