// Package sessiond keeps an MCP session open between mcpx commands.
//
// A session process (Daemon) holds one inspector.Session — a stdio server
// it started, or an HTTP connection with its OAuth tokens — and listens on
// a unix socket private to the user. Each mcpx command that names the
// session (@NAME) attaches to it (Dial) and gets a transport.Conn: the
// command runs its own MCP session over that connection as it would over
// a server's stdio, and the daemon multiplexes the commands into the one
// held session:
//
//   - initialize is answered with the held session's initialize result
//     (the server is not initialized again) and notifications/initialized
//     is dropped;
//   - every other request is sent through the held session (its own id),
//     and its response goes back to the command with the command's id; a
//     progress token is carried over, so progress reaches the command
//     that asked;
//   - notifications/cancelled from a command cancels only that command's
//     request (the server is told with the held session's id); a command
//     that goes away cancels its requests the same way. The session lives on;
//   - server-to-client requests (sampling, elicitation) go to the command
//     that most recently started a request still in flight, or, when no
//     command waits, are answered by the session's own policy (decline,
//     by default) and noted;
//   - notifications go to every attached command; while none is attached
//     they are kept in a bounded ring, which Kept hands to the first
//     command that asks (mcpx @NAME watch).
//
// The line protocol on the socket is JSON Lines: the client's first line is
// a hello naming an operation (attach, status, kept, stop), the daemon's
// first line a reply; after an attach both sides send envelopes carrying
// one JSON-RPC frame each. Only the user who started the session can use
// it: the socket lives in a 0700 directory of theirs (XDG_RUNTIME_DIR, or a
// per-user directory in the temp dir), is 0600, and a client refuses a
// socket or a directory owned by someone else; on Linux the daemon also
// checks each peer's credentials.
//
// StartBackground and Ready start the daemon as a detached process of its
// own (mcpx connect): the parent sees its start-up output and exit status
// until it reports ready, and then returns.
package sessiond
