package cmd

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestStringsValueIsStringArray holds stringsValue to pflag's StringArray:
// the same values, String (but for no values), Type, usage text and slice
// operations after the same command lines.
func TestStringsValueIsStringArray(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"--x", "a"},
		{"--x", "a,b", "--x", `say "hi"`, "-y", "line\nbreak", "--x="},
		{"-y", " lead", "--x", "ü,é"},
	} {
		var ours, theirs []string
		a := pflag.NewFlagSet("a", pflag.ContinueOnError)
		stringsVar(a, &ours, "x", "y", "usage")
		b := pflag.NewFlagSet("b", pflag.ContinueOnError)
		b.StringArrayVarP(&theirs, "x", "y", nil, "usage")
		if err := a.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := b.Parse(args); err != nil {
			t.Fatal(err)
		}
		fa, fb := a.Lookup("x"), b.Lookup("x")
		if diff := cmp.Diff(theirs, ours); diff != "" {
			t.Errorf("%q: values (-StringArray +ours):\n%s", args, diff)
		}
		theirString := fb.Value.String()
		if theirString == "[]" {
			theirString = "" // (see stringsValue.String)
		}
		for _, c := range [][2]string{
			{theirString, fa.Value.String()},
			{fb.Value.Type(), fa.Value.Type()},
			{b.FlagUsages(), a.FlagUsages()},
		} {
			if c[0] != c[1] {
				t.Errorf("%q: StringArray %q, ours %q", args, c[0], c[1])
			}
		}
		sa, sb := fa.Value.(pflag.SliceValue), fb.Value.(pflag.SliceValue)
		if diff := cmp.Diff(sb.GetSlice(), sa.GetSlice()); diff != "" {
			t.Errorf("%q: GetSlice (-StringArray +ours):\n%s", args, diff)
		}
		for _, v := range []*pflag.Flag{fa, fb} {
			_ = v.Value.(pflag.SliceValue).Append("more")
			_ = v.Value.(pflag.SliceValue).Replace(nil)
			_ = v.Value.Set("after")
		}
		if diff := cmp.Diff(theirs, ours); diff != "" {
			t.Errorf("%q: after Append, Replace(nil), Set (-StringArray +ours):\n%s", args, diff)
		}
	}
}
