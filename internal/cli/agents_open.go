package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client/gen"
)

// agentsOpenOptions are the inputs of `occ agents open`.
type agentsOpenOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
}

func agentsOpenCmd(api *apiOptions) *cobra.Command {
	opts := &agentsOpenOptions{API: api}
	cmd := verbCmd(api, "open AGENT", "Print the URL of the Agent's native OpenClaw admin UI (its Control UI, proxied by occ)",
		func(ctx context.Context) error { return runAgentsOpen(ctx, opts) }, &opts.Agent)
	cmd.Long = `Print the URL of the Agent's native OpenClaw admin UI: the Control UI of its
running gateway, proxied by occ on the Agent's own host below nativeAdminUI.domain.
Open it in a browser signed in to occ (the console's session); occ checks
agent:administer on the Agent on every request.

When the UI is not available the command says why and exits 1: disabled (the
installation does not enable it: nativeAdminUI.enabled), stopped (the Agent is not
desired running), unavailable (no active revision serves yet), unsupported (the
compute driver exposes no gateway to occ, or the gateway predates the setting:
redeploy).`
	cmd.Example = "  occ agents open bot\n  xdg-open \"$(occ agents open bot)\""
	return cmd
}

func runAgentsOpen(ctx context.Context, opts *agentsOpenOptions) error {
	c, ns, id, err := opts.API.target(ctx, opts.Agent, resolveAgent)
	if err != nil {
		return err
	}
	ui, err := c.GetNativeAdminUI(ctx, ns, id)
	if err != nil {
		return err
	}
	if ui.Status != gen.NativeAdminUIStatusAvailable || ui.Url == nil {
		return fmt.Errorf("the native admin UI of %s is %s", opts.Agent, ui.Status)
	}
	_, err = fmt.Fprintln(opts.API.IO.Out, *ui.Url)
	return err
}
