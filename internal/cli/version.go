package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// versionCmd is `occ version`: this binary's version, then the server's.
func versionCmd(api *apiOptions, version string) *cobra.Command {
	var clientOnly bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print occ's version and the server's",
		Long: `Print this binary's version (the module version and the commit it was built
from), then the version of the server at --url and the OpenClaw version it pins.
An unreachable server is an error (exit 1) unless --client is given.`,
		Example: "  occ version\n  occ version --client",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := api.bind(cmd); err != nil {
				return err
			}
			fmt.Fprintln(api.IO.Out, "client: occ", version)
			if clientOnly {
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			var opts []client.Option
			if api.HTTPClient != nil {
				opts = append(opts, client.WithHTTPClient(api.HTTPClient))
			}
			v, openclaw, err := client.New(api.URL, opts...).ServerVersion(ctx)
			if err != nil {
				return fmt.Errorf("server at %s: %w", api.URL, err)
			}
			fmt.Fprintf(api.IO.Out, "server: occ %s (OpenClaw %s) at %s\n", v, openclaw, api.URL)
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "print only this binary's version")
	cmd.Flags().StringVar(&api.URL, "url", api.URL, "occ server URL (OCC_URL, else the context's)")
	cmd.Flags().StringVar(&api.Context, "context", "", "the client config's context to use (OCC_CONTEXT)")
	return cmd
}
