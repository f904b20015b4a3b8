package cmd

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// executeLine runs a line as cobra's Execute does: the same command, the
// same hooks in the same order, the same errors, the same help, for
// lines it runs itself and for those it leaves to cobra.
func TestExecuteLineMatchesCobra(t *testing.T) {
	type ctxKey struct{}
	build := func() (*cobra.Command, *bytes.Buffer) {
		var log bytes.Buffer
		note := func(what string) func(*cobra.Command, []string) {
			return func(c *cobra.Command, args []string) {
				v, _ := c.Context().Value(ctxKey{}).(string)
				fmt.Fprintf(&log, "%s %s %q ctx=%s\n", what, c.Name(), args, v)
			}
		}
		root := &cobra.Command{Use: "r", SilenceErrors: true, SilenceUsage: true,
			PersistentPreRunE: func(c *cobra.Command, args []string) error {
				note("persistent-pre")(c, args)
				if c.Flag("fail").Value.String() == "pre" {
					return fmt.Errorf("pre failed")
				}
				return nil
			},
			PersistentPostRun: note("persistent-post"),
		}
		var n int
		root.PersistentFlags().StringP("fail", "f", "", "")
		root.PersistentFlags().Bool("json", false, "")
		group := groupCmd("tools",
			&cobra.Command{Use: "call NAME", Args: cobra.MinimumNArgs(1), PreRun: note("pre"), PostRun: note("post"),
				RunE: func(c *cobra.Command, args []string) error {
					note("run")(c, args)
					fmt.Fprintf(&log, "n=%d json=%s dash=%d\n", n, c.Flag("json").Value, c.ArgsLenAtDash())
					if c.Flag("fail").Value.String() == "run" {
						return fmt.Errorf("run failed")
					}
					return nil
				}},
			&cobra.Command{Use: "list", Args: cobra.NoArgs, Run: note("run")},
			&cobra.Command{Use: "get", Args: cobra.NoArgs, Run: note("run")},
		)
		group.Commands()[0].Flags().IntVarP(&n, "number", "n", 0, "")
		group.Commands()[0].Flags().Bool("all", false, "")
		group.Commands()[0].MarkFlagsMutuallyExclusive("number", "all")
		// Annotations for completion only, beside the group's.
		call, _, _ := group.Find([]string{"call"})
		call.Flags().String("out", "", "")
		_ = call.MarkFlagFilename("out", "json")
		get, _, _ := group.Find([]string{"get"})
		get.Flags().String("id", "", "")
		_ = get.MarkFlagRequired("id")
		get.Flags().String("page", "", "")
		_ = get.MarkFlagFilename("page")
		root.AddCommand(group)
		root.SetOut(&log)
		root.SetErr(&log)
		return root, &log
	}
	for _, line := range []string{
		"tools call echo a=1", "tools call echo -n 3 --json", "tools call", "tools call echo --nope",
		"tools call echo -f run", "tools call echo -f pre", "tools call echo -- node s.js",
		"tools call echo -n 1 --json=true", "tools call echo -n 1 --all", "tools call --help", "tools call echo -h", "tools list",
		"tools list extra", "tools", "tools bogus", "bogus", "help tools call", "", "tools call echo -n x",
		"tools call echo --out o.json -n 1 --all", "tools get", "tools get --id 7", "tools get --page p",
	} {
		args := strings.Fields(line)
		want, wantLog := build()
		ctx := context.WithValue(context.Background(), ctxKey{}, line)
		want.SetArgs(args)
		wantRan, wantErr := want.ExecuteContextC(ctx)
		got, gotLog := build()
		got.SetArgs(args)
		gotRan, gotErr := executeLine(ctx, got, args, nil)
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) || gotRan.CommandPath() != wantRan.CommandPath() || gotLog.String() != wantLog.String() {
			t.Errorf("%q:\nexecuteLine: %s, %v\n%s\ncobra: %s, %v\n%s", line, gotRan.CommandPath(), gotErr, gotLog, wantRan.CommandPath(), wantErr, wantLog)
		}
	}
}
