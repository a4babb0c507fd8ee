package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasHelp walks the command tree: every command has a
// short description, and every runnable one an example.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	root := newRoot(ioStreams{Out: &out, ErrOut: &out}, Server{}, func(string) string { return "" })
	asUsage(root)
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Hidden {
			return
		}
		n++
		if strings.TrimSpace(c.Short) == "" {
			t.Errorf("%q has no short description", c.CommandPath())
		}
		if c.Annotations[groupAnnotation] == "" && c.Runnable() && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%q has no example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if n < 80 {
		t.Fatalf("only %d commands walked", n)
	}
}
