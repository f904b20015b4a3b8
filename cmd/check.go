package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/inspector"
)

type checkOptions struct {
	e    *env
	read bool
}

func newCheckCmd(e *env) *cobra.Command {
	o := &checkOptions{e: e}
	c := &cobra.Command{
		Use: "check [flags] -- <server command>",
		Long: `Open one session and exercise, read-only, what the server declares: ping, and
every page of each list it declares (tools, prompts, resources, resource
templates). No tool is called, no prompt got, no resource read (--read reads
every listed resource). The report has a line per area, with the server's
departures from the protocol under it, and a summary; exit 5
(protocol_violation) when the server departed from the protocol, as --strict
makes any command. With --json, the report as one JSON document.`,
		Example: `  mcpx check -- node server.js
  mcpx check --json --url http://127.0.0.1:3001/mcp
  mcpx check --read -- node server.js`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 0, 0); err != nil {
				return err
			}
			return o.run(c.Context(), server)
		},
	}
	c.Flags().BoolVar(&o.read, "read", false, "also read every resource resources/list lists (resources/read), checking each result")
	return c
}

func (o *checkOptions) run(ctx context.Context, server []string) error {
	// The departures of the session's opening are the report's first
	// area's, not warnings printed before it.
	var mu sync.Mutex
	var opening []string
	a := attachments{departures: func(s string) {
		mu.Lock()
		opening = append(opening, s)
		mu.Unlock()
	}}
	return o.e.withClientListening(ctx, server, a, func(c *client) error {
		mu.Lock()
		open := opening
		mu.Unlock()
		// A one-shot check has the session to itself; in the REPL, lines
		// may run beside it, and what is tied to no request of its is the
		// session's (see lineDepartures).
		alone := o.e.repl == nil
		opts := inspector.CheckOptions{Opening: open, Read: o.read, Alone: alone}
		if alone {
			// Those of the opening past the first few of their sort,
			// counted and not said: the report counts them, and the
			// command's closing lines do not again.
			opts.OpeningMore = c.sess.UnsaidDepartures()
			c.unsaidSaid(opts.OpeningMore)
		}
		if f := c.host.tools; f != nil {
			opts.ToolNotes = func(names []string) []string {
				if unknown := f.Unknown(names); len(unknown) > 0 {
					return []string{unknownEntriesNote(c.host.server, f, unknown)}
				}
				return nil
			}
		}
		rep, err := c.sess.Check(ctx, opts)
		if rep == nil {
			return err
		}
		if alone {
			// The report answers for the session's departures so far.
			c.strictSeen.Store(c.departures.Load())
		}
		if o.e.cfg.out.json {
			c.out.JSON(checkJSON(rep))
		} else {
			c.out.WithWidth(o.e.ios.outWidth()).CheckReport(rep)
		}
		if err != nil {
			return err
		}
		if n := rep.Departures(); n > 0 {
			return &checkError{n: n}
		}
		if f := rep.Failure(); f != nil {
			return &checkFailure{err: f}
		}
		return nil
	})
}

// checkFailure is a request of mcpx check that failed other than by the
// server's departure (a JSON-RPC error, a timeout): classified as its
// error is, without the advice for the command that sent it alone (check
// has no --cursor).
type checkFailure struct{ err error }

func (e *checkFailure) Error() string { return e.err.Error() }
func (e *checkFailure) Unwrap() error { return e.err }

// checkJSON is the report as one JSON document.
func checkJSON(r *inspector.CheckReport) json.RawMessage {
	doc := map[string]any{"areas": r.Areas, "departures": r.Departures(), "ok": r.Departures() == 0 && r.Failure() == nil}
	if s := r.Server; s != nil {
		doc["server"] = map[string]any{"name": s.Implementation.Name, "version": s.Implementation.Version,
			"protocolVersion": s.ProtocolVersion, "era": s.Era}
	}
	b, _ := json.Marshal(doc) // (strings and numbers only)
	return b
}

// checkError is mcpx check's failure: the server departed from the
// protocol n times, each listed in the report. It is marked
// inspector.ErrProtocolViolation: exit 5, protocol_violation.
type checkError struct{ n int }

func (e *checkError) Error() string {
	return fmt.Sprintf("the server departed from the protocol %d time(s) (see the report)", e.n)
}

// Is makes a checkError an inspector.ErrProtocolViolation.
func (e *checkError) Is(target error) bool { return target == inspector.ErrProtocolViolation }
