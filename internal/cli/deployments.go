package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/occ"
)

// deploymentsCmd is `occ deployments list|get|watch|diagnose`.
func deploymentsCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "deployments", Aliases: []string{"deployment"}, Short: "Deployments of Agents (one per revision)"}
	cmd.AddCommand(deploymentsListCmd(api), deploymentsGetCmd(api), deploymentsWatchCmd(api), deploymentsDiagnoseCmd(api))
	return cmd
}

// progressKey is what a new progress line must differ in: terminal or
// not (queued and running alike), the last attempt's code, the install's
// phase and bytes, the error.
func progressKey(st *client.DeploymentStatus) string {
	s := client.Summarize(st)
	phase := "pending"
	if client.Terminal(st) {
		phase = s.Status
	}
	return fmt.Sprintf("%s|%s|%s|%d|%s", phase, s.AttemptCode, s.InstallPhase, s.InstallBytes, s.ErrorCode)
}

// progressLine is one line of `deploy --wait` progress: the status, then
// what the deploy is doing (a phase: the code, the install's phase and
// bytes, the message) or, after an attempt that did not succeed, that it
// will retry and why (progress, not an error); the error and the warnings
// of a settled deploy.
func progressLine(st *client.DeploymentStatus) string {
	s := client.Summarize(st)
	var b strings.Builder
	fmt.Fprintf(&b, "deployment %s: %s", st.DeploymentId, s.Status)
	if s.AttemptCode != "" && !client.Terminal(st) {
		b.WriteString("; ")
		b.WriteString(attemptText(s))
	}
	if s.ErrorCode != "" {
		fmt.Fprintf(&b, "; error %s: %s", s.ErrorCode, s.ErrorMessage)
	}
	for _, w := range s.Warnings {
		fmt.Fprintf(&b, "; warning %s", w)
	}
	return b.String()
}

// attemptText says what a pending deploy's last attempt means: a phase
// ("RUNTIME_INSTALLING (fetching_openclaw, 93.4 MB): …") or a retry
// ("will retry at T after DEPENDENCY_UNAVAILABLE: …").
func attemptText(s client.DeploymentSummary) string {
	code := s.AttemptCode
	if s.InstallPhase != "" {
		code += fmt.Sprintf(" (%s, %s)", s.InstallPhase, formatBytes(s.InstallBytes))
	}
	if !occ.AttemptRetry(s.AttemptCode) {
		return code + ": " + s.AttemptMessage
	}
	when := ""
	if s.NextAttemptAt != "" {
		when = " at " + s.NextAttemptAt
	}
	return "will retry" + when + " after " + code + ": " + s.AttemptMessage
}

// formatBytes is n in B, KB or MB (decimal units).
func formatBytes(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
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
			fields = append(fields, [2]string{"last attempt", s.AttemptAt + " " + attemptText(s)})
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
	return verbCmd(api, "get AGENT DEPLOYMENT", "Show a deployment's status (DEPLOYMENT: the revision ID deploy printed, or its number)",
		func(ctx context.Context) error { return runDeploymentsGet(ctx, opts) }, &opts.Agent, &opts.Deployment)
}

func runDeploymentsGet(ctx context.Context, opts *deploymentsGetOptions) error {
	return actOn(ctx, opts.API, opts.Agent, resolveAgent,
		func(c *client.Client, ctx context.Context, ns, id string) (*client.DeploymentStatus, error) {
			rev, err := resolveRevision(ctx, c, ns, id, opts.Deployment)
			if err != nil {
				return nil, err
			}
			return c.GetDeployment(ctx, ns, id, rev)
		}, printDeployment)
}

// deploymentsDiagnoseOptions are the inputs of `occ deployments diagnose`.
type deploymentsDiagnoseOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
	// Deployment is the deployment (revision) ID.
	Deployment string
}

func deploymentsDiagnoseCmd(api *apiOptions) *cobra.Command {
	opts := &deploymentsDiagnoseOptions{API: api}
	return verbCmd(api, "diagnose AGENT DEPLOYMENT",
		"Run fresh checks of a deployment's runtime (gateway process and probes, Slack without sending); changes nothing",
		func(ctx context.Context) error { return runDeploymentsDiagnose(ctx, opts) }, &opts.Agent, &opts.Deployment)
}

func runDeploymentsDiagnose(ctx context.Context, opts *deploymentsDiagnoseOptions) error {
	return actOn(ctx, opts.API, opts.Agent, resolveAgent,
		func(c *client.Client, ctx context.Context, ns, id string) (*client.DeploymentDiagnostics, error) {
			rev, err := resolveRevision(ctx, c, ns, id, opts.Deployment)
			if err != nil {
				return nil, err
			}
			return c.DiagnoseDeployment(ctx, ns, id, rev)
		}, printDiagnostics)
}

// printDiagnostics writes the checks: as JSON, or a line naming the
// revision and observation time above a table of the checks.
func printDiagnostics(api *apiOptions, d *client.DeploymentDiagnostics) error {
	if api.structured() {
		return api.printData(d)
	}
	fmt.Fprintf(api.IO.Out, "revision %s observed at %s\n", d.RevisionId, d.ObservedAt)
	rows := make([][]string, 0, len(d.Checks))
	for _, c := range d.Checks {
		rows = append(rows, []string{c.Component, c.Check, string(c.Status), c.Code, c.Message})
	}
	return api.printTable([]string{"COMPONENT", "CHECK", "STATUS", "CODE", "MESSAGE"}, rows)
}
