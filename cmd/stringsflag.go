package cmd

import (
	"encoding/csv"
	"strings"

	"github.com/spf13/pflag"
)

// stringsValue is a repeatable string flag that behaves as pflag's
// StringArray — each use adds one value, commas and all; the first use
// replaces the default; Type "stringArray", and pflag.SliceValue for
// forgetRun and the session's command line — but whose String costs
// nothing when there are no values. pflag calls String for every flag it
// defines, to keep its default, and StringArray's writes CSV through a
// fresh 4 KiB buffer: a sixth of building mcpx's command tree, paid by
// every run, --help included.
type stringsValue struct {
	p       *[]string
	changed bool
}

// stringsVar defines the flag name (shorthand short, "" for none) in fs,
// held in *p, which starts empty.
func stringsVar(fs *pflag.FlagSet, p *[]string, name, short, usage string) {
	*p = nil
	fs.VarP(&stringsValue{p: p}, name, short, usage)
}

func (s *stringsValue) Set(v string) error {
	if !s.changed {
		*s.p = []string{v}
		s.changed = true
	} else {
		*s.p = append(*s.p, v)
	}
	return nil
}

func (s *stringsValue) Type() string { return "stringArray" }

// String is StringArray's (the values as one CSV record, in brackets),
// except that no values are "" rather than "[]": pflag knows only its own
// types' zero values, and help would show "(default [])".
func (s *stringsValue) String() string {
	if len(*s.p) == 0 {
		return ""
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(*s.p)
	w.Flush()
	return "[" + strings.TrimSuffix(b.String(), "\n") + "]"
}

func (s *stringsValue) Append(v string) error {
	*s.p = append(*s.p, v)
	return nil
}

func (s *stringsValue) Replace(vs []string) error {
	*s.p = append([]string{}, vs...)
	return nil
}

func (s *stringsValue) GetSlice() []string { return append([]string{}, *s.p...) }
