package cmd

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExample walks mcpx's command tree: every command,
// cobra's help and completion included, shows at least one example.
func TestEveryCommandHasExample(t *testing.T) {
	ios, _, _ := NewTestIOStreams(nil)
	root, _ := newRootCmd(&env{ios: ios, run: &runState{}})
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		n++
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 40 {
		t.Fatalf("walked only %d commands", n)
	}
}
