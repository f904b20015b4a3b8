package transport

import "context"

// Negotiator is implemented by connections that need to know the protocol
// version the session agreed on. The session calls it once the server's
// initialize result is accepted and before it sends anything else, so that
// every later HTTP request carries MCP-Protocol-Version and the GET stream
// for server-initiated messages is open before the next request goes out
// (spec: basic/transports, "Protocol Version Header" and "Listening for
// Messages from the Server"). It is called again after a re-initialize.
type Negotiator interface {
	Negotiated(ctx context.Context, protocolVersion string) error
}

// Find returns the first connection in c's decorator chain — c itself, then
// whatever each decorator's Unwrap returns — that implements T. Decorators
// such as Tap hide the optional interfaces of what they wrap; Find sees
// through them.
func Find[T any](c Conn) (T, bool) {
	for c != nil {
		if t, ok := c.(T); ok {
			return t, true
		}
		u, ok := c.(interface{ Unwrap() Conn })
		if !ok {
			break
		}
		c = u.Unwrap()
	}
	var zero T
	return zero, false
}
