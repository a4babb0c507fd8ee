package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// deploymentsCmd is `occ deployments get`.
func deploymentsCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "deployments", Aliases: []string{"deployment"}, Short: "Deployments of Agents (one per revision)"}
	cmd.AddCommand(deploymentsGetCmd(api))
	return cmd
}

// progressLine is one line of `deploy --wait` progress: the status, the
// last attempt's code and message, the next attempt's time, the error and
// the warnings, as far as the status has them.
func progressLine(st *client.DeploymentStatus) string {
	s := client.Summarize(st)
	var b strings.Builder
	fmt.Fprintf(&b, "deployment %s: %s", st.DeploymentId, s.Status)
	if s.AttemptCode != "" {
		fmt.Fprintf(&b, "; last attempt %s: %s", s.AttemptCode, s.AttemptMessage)
	}
	if s.NextAttemptAt != "" {
		fmt.Fprintf(&b, "; next attempt at %s", s.NextAttemptAt)
	}
	if s.ErrorCode != "" {
		fmt.Fprintf(&b, "; error %s: %s", s.ErrorCode, s.ErrorMessage)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "; warning %s", w)
	}
	return b.String()
}

// printDeployment writes one deployment status.
func printDeployment(api *apiOptions, st *client.DeploymentStatus) error {
	return api.printObject(st, func() [][2]string {
		s := client.Summarize(st)
		fields := [][2]string{{"deployment", st.DeploymentId}, {"agent", st.AgentId}, {"status", s.Status}}
		if s.ErrorCode != "" {
			fields = append(fields, [2]string{"error", s.ErrorCode + ": " + s.ErrorMessage})
		}
		if s.AttemptCode != "" {
			fields = append(fields, [2]string{"last attempt", s.AttemptAt + " " + s.AttemptCode + ": " + s.AttemptMessage})
		}
		if s.NextAttemptAt != "" {
			fields = append(fields, [2]string{"next attempt", s.NextAttemptAt})
		}
		for _, w := range s.Warnings {
			fields = append(fields, [2]string{"warning", w})
		}
		return fields
	})
}

// deploymentsGetOptions are the inputs of `occ deployments get`.
type deploymentsGetOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
	// Deployment is the deployment (revision) ID.
	Deployment string
}

func deploymentsGetCmd(api *apiOptions) *cobra.Command {
	opts := &deploymentsGetOptions{API: api}
	return verbCmd(api, "get AGENT DEPLOYMENT", "Show a deployment's status (DEPLOYMENT is the revision ID deploy printed)",
		func(ctx context.Context) error { return runDeploymentsGet(ctx, opts) }, &opts.Agent, &opts.Deployment)
}

func runDeploymentsGet(ctx context.Context, opts *deploymentsGetOptions) error {
	return actOn(ctx, opts.API, opts.Agent, resolveAgent,
		func(c *client.Client, ctx context.Context, ns, id string) (*client.DeploymentStatus, error) {
			return c.GetDeployment(ctx, ns, id, opts.Deployment)
		}, printDeployment)
}
