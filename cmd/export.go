package cmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/mcpx-dev/mcpx/internal/outfile"
	"github.com/mcpx-dev/mcpx/record"
	"github.com/mcpx-dev/mcpx/record/export"
)

// ---- mcpx trace export ----

type traceExportOptions struct {
	e    *env
	har  string
	html string
}

func newTraceExportCmd(e *env) *cobra.Command {
	o := &traceExportOptions{e: e}
	c := &cobra.Command{
		Use:   "export FILE --har OUT | --html OUT",
		Short: "Export a trace as an HTTP Archive (HAR) or an HTML timeline",
		Long: `export writes a trace in formats other tools read (either or both; - is
standard output):

  --har OUT    an HTTP Archive (HAR 1.2): every HTTP exchange with its status,
               the headers the trace keeps, request body and response (SSE
               streams as their events, also in the custom _sse array);
               sessions without HTTP (stdio) as synthetic entries at
               stdio://session-N/<method>, one per request and response
  --html OUT   one self-contained HTML page (it fetches nothing; open it from
               disk) showing each session as a timeline: requests paired with
               responses, latencies as bars, errors highlighted, every message
               expandable, filters by session, direction and method, search

The files hold what the trace holds (secrets stay redacted as recorded) and,
like traces, are readable by their owner only.`,
		Example: `  mcpx trace export t.jsonl --html t.html
  mcpx trace export t.jsonl --har t.har --html t.html
  mcpx trace export t.jsonl --har - | jq '.log.entries | length'`,
		RunE: func(c *cobra.Command, args []string) error {
			own, server := splitServer(c, args)
			if err := wantArgs(c, own, 1, 1); err != nil {
				return err
			}
			if len(server) > 0 {
				return usageErrorf("trace export reads a file; it takes no server")
			}
			return o.run(c.Context(), own[0])
		},
	}
	c.Flags().StringVar(&o.har, "har", "", "write an HTTP Archive (HAR 1.2) to `OUT` (- for stdout)")
	c.Flags().StringVar(&o.html, "html", "", "write an HTML timeline to `OUT` (- for stdout)")
	return readsGlobals(c, "reads a trace file", "max-message-size")
}

func (o *traceExportOptions) run(ctx context.Context, file string) error {
	e := o.e
	switch {
	case o.har == "" && o.html == "":
		return usageErrorf("trace export needs --har OUT or --html OUT (or both)")
	case o.har == "-" && o.html == "-":
		return usageErrorf("--har - and --html - both write to stdout; choose one")
	}
	if err := checkExportOutputs(file, []exportOutput{{"--har", o.har}, {"--html", o.html}}); err != nil {
		return err
	}
	con := e.console()
	tf, err := record.ReadOptions{MaxMessageSize: e.cfg.conn.session.maxMessageSize}.Open(file)
	if err != nil {
		return &usageError{err: err}
	}
	defer tf.Close()
	for _, w := range tf.Warnings {
		con.Warn(file + ": " + w)
	}
	opts := export.Options{Name: "mcpx", Version: Version(), Title: filepath.Base(file)}
	outputs := []struct {
		flag, name string
		write      func(io.Writer, record.SessionSource, export.Options) error
	}{{"--har", o.har, export.HAR}, {"--html", o.html, export.HTML}}
	for _, out := range outputs {
		if out.name == "" {
			continue
		}
		if out.name == "-" {
			if err := out.write(e.ios.Out, tf, opts); err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			continue
		}
		// Written as it is produced (a trace with large frames is not
		// held twice) into a temporary file that replaces OUT only once
		// complete. Like the trace, the export may hold what the session
		// exchanged: its owner's only.
		var werr error
		var ew *errWriter
		_, err := outfile.WriteFrom(ctx, out.name, writerToFunc(func(w io.Writer) (int64, error) {
			ew = &errWriter{w: w}
			werr = out.write(ew, tf, opts)
			return 0, werr
		}), outfile.Options{Perm: 0o600})
		switch {
		case ew != nil && ew.err != nil:
			// The output failed (a full disk): say which.
			return fmt.Errorf("%s %s: writing: %w", out.flag, out.name, ew.err)
		case werr != nil:
			return fmt.Errorf("%s: %w", file, werr) // the trace could not be read
		case err != nil:
			return fmt.Errorf("%s %s: %w", out.flag, out.name, err)
		}
	}
	return nil
}

// writerToFunc makes a function that writes its output an io.WriterTo.
type writerToFunc func(io.Writer) (int64, error)

func (f writerToFunc) WriteTo(w io.Writer) (int64, error) { return f(w) }

// errWriter remembers the first error of the writer it wraps, so that a
// failed output is told apart from a trace that could not be read.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

type exportOutput struct{ flag, name string }

// checkExportOutputs refuses outputs that would destroy what the user
// keeps: an OUT that is the trace being exported (the export would
// replace it), or --har and --html naming the same file (the second
// would replace the first). A name that does not exist yet cannot be
// either, except when both flags give it.
func checkExportOutputs(trace string, outs []exportOutput) error {
	var prev []exportOutput
	for _, out := range outs {
		if out.name == "" || out.name == "-" {
			continue
		}
		if sameFile(out.name, trace) {
			return usageErrorf("%s %s is the trace being exported: writing it would replace the trace; give another file", out.flag, out.name)
		}
		for _, p := range prev {
			if sameFile(p.name, out.name) {
				return usageErrorf("%s and %s both write to %s; give each its own file", p.flag, out.flag, out.name)
			}
		}
		prev = append(prev, out)
	}
	return nil
}
