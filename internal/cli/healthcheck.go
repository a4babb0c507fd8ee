package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/spf13/cobra"
)

// healthcheckCmd is `occ healthcheck URL`: a container probe for an image
// that has nothing but occ (the worker's /healthz and /readyz are on its
// loopback metrics listener, which a kubelet HTTP probe cannot reach).
func healthcheckCmd(stdout io.Writer) *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "healthcheck URL",
		Short: "Exit 0 when an http(s) URL answers 2xx, 1 otherwise (a container probe of occ's /healthz and /readyz)",
		Example: "  occ healthcheck http://127.0.0.1:9090/readyz\n" +
			"  occ healthcheck --timeout 2s http://127.0.0.1:8080/healthz",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := url.Parse(args[0])
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return usageError{fmt.Errorf("%q is not an http:// or https:// URL", args[0])}
			}
			if timeout <= 0 {
				return usageError{errors.New("--timeout must be positive")}
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("GET %s: %w", u.Redacted(), err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			if resp.StatusCode < 200 || resp.StatusCode > 299 {
				return fmt.Errorf("GET %s: %s: %s", u.Redacted(), resp.Status, body)
			}
			fmt.Fprintf(stdout, "%s: %s\n", u.Redacted(), resp.Status)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for the answer")
	return cmd
}
