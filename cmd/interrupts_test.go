package cmd

import (
	"strings"
	"testing"
)

func TestOnlyPrints(t *testing.T) {
	for _, c := range []struct {
		args string
		want bool
	}{
		{"--help", true},
		{"-h", true},
		{"--version", true},
		{"tools call --help", true},
		{"tools call echo --protocol-version --help", true}, // a guess: watch corrects it
		{"tools list", false},
		{"", false},
		{"-- node server.js --help", false},
		{"tools list -- server --version", false},
		{"help", false}, // the help command runs like any other
	} {
		if got := onlyPrints(strings.Fields(c.args)); got != c.want {
			t.Errorf("onlyPrints(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
