package record

import (
	"bytes"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/jsonrpc"
	"github.com/mcpx-dev/mcpx/mcp"
	"github.com/mcpx-dev/mcpx/transport"
)

// HeldFrame is a frame kept in memory, with the way it went.
type HeldFrame struct {
	Dir   transport.Direction
	Frame transport.Frame
}

// Handshake remembers the frames that opened the current session on a
// connection, so that a recording started later in the session (the
// REPL's :record) can begin with them (Recorder.Prelude) and be replayed
// and verified: without its handshake a trace holds requests no server
// answers. Tap a connection with its Frame (a transport.FrameFunc). It
// keeps, in the handshake era, the initialize request and everything up to
// and including the client's notifications/initialized (spec 2025-11-25:
// basic/lifecycle, "Initialization"); in the stateless 2026-07-28 era, the
// server/discover request and its response. A new initialize (the client
// reconnected) starts over. It holds at most a few frames. It is safe for
// concurrent use.
type Handshake struct {
	mu     sync.Mutex
	frames []HeldFrame
	state  int    // hsNone, hsInit, hsDiscover, hsDone
	id     string // the key of the request being answered
}

const (
	hsNone = iota
	hsInit
	hsDiscover
	hsDone
)

// maxHandshakeFrames bounds what a Handshake keeps.
const maxHandshakeFrames = 32

// Frame observes one frame of the connection.
func (h *Handshake) Frame(_ time.Time, dir transport.Direction, f transport.Frame) {
	if !bytes.Contains(f.Data, []byte(`"`+mcp.MethodInitialize+`"`)) && !bytes.Contains(f.Data, []byte(`"`+mcp.MethodDiscover+`"`)) {
		h.mu.Lock()
		busy := h.state == hsInit || h.state == hsDiscover
		h.mu.Unlock()
		if !busy {
			return // the common case, decided without decoding the frame
		}
	}
	msgs, _ := parseFrame(f.Data)
	h.mu.Lock()
	defer h.mu.Unlock()
	keep := HeldFrame{Dir: dir, Frame: transport.Frame{Data: bytes.Clone(f.Data), Meta: f.Meta, Route: f.Route}}
	for _, m := range msgs {
		if dir == transport.Outgoing && m.Kind() == jsonrpc.KindRequest {
			switch {
			case m.Method == mcp.MethodInitialize:
				h.frames, h.state, h.id = []HeldFrame{keep}, hsInit, m.ID.Key()
				return
			case m.Method == mcp.MethodDiscover && h.state != hsInit:
				h.frames, h.state, h.id = []HeldFrame{keep}, hsDiscover, m.ID.Key()
				return
			}
		}
	}
	if h.state != hsInit && h.state != hsDiscover {
		return
	}
	if len(h.frames) >= maxHandshakeFrames {
		h.state = hsDone
		return
	}
	h.frames = append(h.frames, keep)
	for _, m := range msgs {
		switch {
		case h.state == hsInit && dir == transport.Outgoing && m.Kind() == jsonrpc.KindNotification && m.Method == mcp.NotificationInitialized:
			h.state = hsDone
		case h.state == hsDiscover && dir == transport.Incoming && m.Kind() == jsonrpc.KindResponse && m.ID.Key() == h.id:
			h.state = hsDone
		}
	}
}

// Frames returns the frames of the current session's handshake, in the
// order they went; nil when none was seen.
func (h *Handshake) Frames() []HeldFrame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]HeldFrame(nil), h.frames...)
}
