package cli

// `occ deployments list|watch AGENT`: an Agent's deployments are its
// revisions (a revision's ID is its deployment's).

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// deploymentRow is one line of `deployments list`: a revision, with its
// deployment's status under "deployment".
type deploymentRow struct {
	client.AgentRevision
	Deployment *client.DeploymentStatus `json:"deployment"`
}

// completeAgents completes the first argument with the Agents' names.
func completeAgents(api *apiOptions) cobra.CompletionFunc {
	return completeNames(api, (*client.Client).ListAllAgents, func(a *client.Agent) (string, string) { return a.Name, a.Id })
}

func deploymentsListCmd(api *apiOptions) *cobra.Command {
	var agent string
	cmd := verbCmd(api, "list AGENT", "List an Agent's deployments (its revisions, oldest first) with their status",
		func(ctx context.Context) error {
			c, ns, id, err := api.target(ctx, agent, resolveAgent)
			if err != nil {
				return err
			}
			revs, err := c.ListAllAgentRevisions(ctx, ns, id)
			if err != nil {
				return err
			}
			rows := make([]deploymentRow, 0, len(revs))
			for _, r := range revs {
				st, err := c.GetDeployment(ctx, ns, id, r.Id)
				if err != nil && !client.IsNotFound(err) {
					return err
				}
				rows = append(rows, deploymentRow{AgentRevision: r, Deployment: st})
			}
			return printList(api, rows, []string{"ID", "REVISION", "STATUS", "ERROR", "CREATED"}, func(d *deploymentRow) []string {
				status, code := "-", ""
				if d.Deployment != nil {
					s := client.Summarize(d.Deployment)
					status, code = s.Status, s.ErrorCode
				}
				return []string{d.Id, strconv.FormatInt(d.Number, 10), status, dash(code), d.CreatedAt}
			})
		}, &agent)
	cmd.Example = "  occ deployments list bot\n  occ deployments list bot -o jsonpath='{range [*]}{.id} {.deployment.status}{\"\\n\"}{end}'"
	cmd.ValidArgsFunction = completeAgents(api)
	return cmd
}

func deploymentsWatchCmd(api *apiOptions) *cobra.Command {
	var agent string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "watch AGENT [DEPLOYMENT]",
		Short: "Follow a deployment (default: the Agent's latest) until it succeeds or fails",
		Long: `Follow a deployment: progress lines on standard error until it is terminal,
then its status. A failed deployment exits 4; DEPLOYMENT defaults to the
Agent's newest revision (an ID, or a revision number).`,
		Example: "  occ deployments watch bot\n  occ deployments watch bot rev_… --timeout 5m",
		Args:    cobra.RangeArgs(1, 2),
		RunE: run(api, func(ctx context.Context, args []string) error {
			agent = args[0]
			c, ns, id, err := api.target(ctx, agent, resolveAgent)
			if err != nil {
				return err
			}
			ref := ""
			if len(args) == 2 {
				ref = args[1]
			}
			rev, err := revisionOrNewest(ctx, c, ns, id, agent, ref)
			if err != nil {
				return err
			}
			return followDeployment(ctx, api, c, ns, id, rev, timeout)
		}),
		ValidArgsFunction: completeAgents(api),
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 20*time.Minute, "how long to follow (0: no limit)")
	return cmd
}

// revisionOrNewest resolves ref (resolveRevision), or without one the
// Agent's newest revision (revisions list oldest first).
func revisionOrNewest(ctx context.Context, c *client.Client, ns, id, agent, ref string) (string, error) {
	if ref != "" {
		return resolveRevision(ctx, c, ns, id, ref)
	}
	revs, err := c.ListAllAgentRevisions(ctx, ns, id)
	if err != nil {
		return "", err
	}
	if len(revs) == 0 {
		return "", notFound("The Agent has no deployment yet; run occ agents deploy " + agent + ".")
	}
	return revs[len(revs)-1].Id, nil
}

// resolveRevision returns the deployment (revision) ID ref names: an ID
// as is, or a revision number of the Agent.
func resolveRevision(ctx context.Context, c *client.Client, ns, agent, ref string) (string, error) {
	n, err := strconv.ParseInt(ref, 10, 64)
	if err != nil {
		return ref, nil
	}
	revs, err := c.ListAllAgentRevisions(ctx, ns, agent)
	if err != nil {
		return "", err
	}
	for _, r := range revs {
		if r.Number == n {
			return r.Id, nil
		}
	}
	return "", &client.APIError{Status: 404, Code: client.CodeNotFound, Message: fmt.Sprintf("The Agent has no revision %d.", n)}
}
