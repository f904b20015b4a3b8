package transport

import (
	"context"
	"fmt"
)

// Dialer opens a connection to one MCP peer. The context bounds the
// opening only, as with net.Dialer: once Dial has returned a connection,
// the context ending does not affect it (Close ends it).
//
// StdioOptions (a server to launch) and HTTPOptions (a server's URL) are
// Dialers; a program that can reach its server either way holds a Dialer
// and needs to know no more.
type Dialer interface {
	Dial(ctx context.Context) (Conn, error)
}

var (
	_ Dialer = StdioOptions{}
	_ Dialer = HTTPOptions{}
)

// Dial starts the server; see DialStdio.
func (o StdioOptions) Dial(ctx context.Context) (Conn, error) { return DialStdio(ctx, o) }

// Dial prepares the connection to the server at o.URL; see DialHTTP.
func (o HTTPOptions) Dial(ctx context.Context) (Conn, error) { return DialHTTP(ctx, o) }

// DialStdio launches the server described by opts, as StartStdio does,
// unless ctx has ended: then it starts nothing and returns ctx's error. A
// ctx that ends while the process starts ends the process too, and DialStdio
// returns ctx's error; once DialStdio has returned the connection, ctx no
// longer matters.
func DialStdio(ctx context.Context, opts StdioOptions) (*StdioConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("starting server %q: %w", opts.Command, err)
	}
	c, err := StartStdio(opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		c.Close()
		return nil, fmt.Errorf("starting server %q: %w", opts.Command, err)
	}
	return c, nil
}

// DialHTTP returns the connection to the server at opts.URL, as NewHTTP
// does, unless ctx has ended. Nothing goes over the network here: the
// first contact is the first Write (in auto mode, where the transport is
// chosen), and that Write's context bounds it.
func DialHTTP(ctx context.Context, opts HTTPOptions) (*HTTPConn, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", RedactURL(opts.URL), err)
	}
	return NewHTTP(opts)
}
