package cmd

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/record"
)

// ---- mcpx trace diff ----

type traceDiffOptions struct{ e *env }

func newTraceDiffCmd(e *env) *cobra.Command {
	o := &traceDiffOptions{e: e}
	c := &cobra.Command{
		Use:   "diff OLD NEW [--ignore [METHOD:]JSONPATH]... [--normalize RE=PLACEHOLDER]...",
		Short: "Compare two traces (exit 7 when they differ)",
		Long: `diff compares two traces of a server, typically recorded before and after a
change ("what did this server change between releases"), the way verify
compares a trace with a live server: session by session, and within a session
exchange by exchange (the n-th request in OLD with the n-th in NEW): the
request, its response (or HTTP refusal), the notifications and requests the
server sent while handling it, then what it sent outside any request. Timing
is not compared.

Ids, session ids and timestamps are normalized; lists of tools, prompts,
resources and resource templates are compared by name (uri), so a renamed tool
is one change (at its name: "log" → "note"), and a tool added or removed is one
change too. --ignore and --normalize leave more out, in addition to those
stored in either trace.

Each difference is one line: session, exchange and method, the message when it
is not the response, the JSONPath, the old value → the new one. --json prints
the result as one JSON document. The exit code is 0 when the traces are equal
and 7 when they differ.

OLD and NEW are files (a trace is read more than once): to compare with a
version kept in git, write it to a file first, not through a pipe such as
<(git show ...):

  git show HEAD~1:traces/t.jsonl > old.jsonl && mcpx trace diff old.jsonl traces/t.jsonl`,
		Example: `  mcpx trace diff v1.jsonl v2.jsonl
  mcpx trace diff v1.jsonl v2.jsonl --ignore '$.result.serverInfo.version'
  mcpx trace diff v1.jsonl v2.jsonl --json | jq '.changes[].diffs[].path'`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 2, 2); err != nil {
				return err
			}
			if len(server) > 0 {
				return usageErrorf("trace diff reads two files; it takes no server")
			}
			return o.run(own[0], own[1])
		},
	}
	ownsRecording(c)
	return readsGlobals(c, "reads two trace files", "json", "max-message-size", "ignore", "normalize")
}

func (o *traceDiffOptions) run(oldFile, newFile string) error {
	e := o.e
	d, out := e.cfg.conn, e.cfg.out
	con := e.console()
	var files [2]*record.TraceFile
	for i, name := range []string{oldFile, newFile} {
		tf, err := openTraceToUse(con, name, record.ReadOptions{MaxMessageSize: d.session.maxMessageSize})
		if err != nil {
			return err
		}
		defer tf.Close()
		files[i] = tf
	}
	res, err := record.DiffTraces(files[0], files[1], record.DiffOptions{Ignore: d.rec.ignore, Normalize: d.rec.normalizers})
	if err != nil {
		return err
	}
	if out.json {
		b, err := json.Marshal(res)
		if err != nil {
			return err
		}
		e.printer().JSON(b)
	} else {
		e.printer().TraceDiffReport(res)
	}
	return res.Err()
}
