package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/occ"
)

// agentsLogsOptions are the inputs of `occ agents logs`.
type agentsLogsOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
	// Revision is the revision (ID or number) whose gateway output to read;
	// "" is the Agent's newest revision.
	Revision string
	// Tail is how many of the last lines to read.
	Tail int
}

func agentsLogsCmd(api *apiOptions) *cobra.Command {
	opts := &agentsLogsOptions{API: api}
	cmd := verbCmd(api, "logs AGENT", "Print the recent output of the Agent's gateway (bounded, secrets redacted)",
		func(ctx context.Context) error { return runAgentsLogs(ctx, opts) }, &opts.Agent)
	cmd.Long = fmt.Sprintf(`Print the recent output of the Agent's gateway, read through the compute driver:
the last --tail lines (default %d, at most %d) of the newest revision's gateway, or
of --revision. The values of the revision's bound Secrets and the gateway's own
token are shown as %s. Every read is audited.

It needs agent:read and agent:read_logs (or agent:administer) on the Agent. When
no output of the revision is kept (it never ran, or another revision's gateway
replaced it) the command says so on stderr and prints nothing. A compute driver
that cannot read gateway output answers NOT_IMPLEMENTED.`, occ.DefaultRuntimeLogLines, occ.MaxRuntimeLogLines, occ.Redacted)
	cmd.Example = "  occ agents logs bot\n  occ agents logs bot --tail 50\n  occ agents logs bot --revision 3 -o json"
	cmd.Flags().StringVar(&opts.Revision, "revision", "", "the revision (ID or number) whose gateway output to read (default: the newest)")
	cmd.Flags().IntVar(&opts.Tail, "tail", occ.DefaultRuntimeLogLines, fmt.Sprintf("how many of the last lines to print, 1 to %d", occ.MaxRuntimeLogLines))
	return cmd
}

func runAgentsLogs(ctx context.Context, opts *agentsLogsOptions) error {
	if opts.Tail < 1 || opts.Tail > occ.MaxRuntimeLogLines {
		return fmt.Errorf("--tail must be 1 to %d", occ.MaxRuntimeLogLines)
	}
	c, ns, id, err := opts.API.target(ctx, opts.Agent, resolveAgent)
	if err != nil {
		return err
	}
	rev, err := revisionOrNewest(ctx, c, ns, id, opts.Agent, opts.Revision)
	if err != nil {
		return err
	}
	l, err := c.GetRuntimeLogs(ctx, ns, id, rev, opts.Tail)
	if err != nil {
		return err
	}
	if opts.API.structured() {
		return opts.API.printData(l)
	}
	if !l.Found {
		fmt.Fprintf(opts.API.IO.ErrOut, "no gateway output of revision %s is kept (it never ran, or another revision's gateway replaced it)\n", rev)
		return nil
	}
	for _, line := range l.Lines {
		if _, err := fmt.Fprintln(opts.API.IO.Out, line); err != nil {
			return err
		}
	}
	return nil
}
