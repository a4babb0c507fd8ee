package cli

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
)

// agentsCmd is `occ agents create|list|get|patch|grant-secrets|deploy|stop|delete`.
func agentsCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "agents", Aliases: []string{"agent"}, Short: "Agents: create, change, deploy, stop and delete"}
	cmd.AddCommand(agentsCreateCmd(api), agentsListCmd(api), agentsGetCmd(api), agentsPatchCmd(api), agentsGrantSecretsCmd(api),
		agentsDeployCmd(api), agentsStopCmd(api), agentsDeleteCmd(api), agentsOpenCmd(api), agentsLogsCmd(api))
	return cmd
}

// resolveAgent returns the ID of an Agent given by ID or name.
func resolveAgent(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return resolveByName(ctx, ref, "agt_", "Agent",
		func(ctx context.Context) ([]client.Agent, error) { return c.ListAllAgents(ctx, ns) },
		func(x client.Agent) (string, string) { return x.Name, x.Id })
}

// harnessText describes an Agent's harness binding ("api_key secret sec_…").
func harnessText(a *client.Agent) string {
	h, err := a.HarnessAuth.Get()
	if err != nil {
		return ""
	}
	s := string(h.Method)
	switch {
	case h.Source != nil:
		s += " " + string(h.Source.Kind) + " " + h.Source.Id
	case h.ServiceAccountId != nil:
		s += " " + *h.ServiceAccountId
	case h.SourceId != nil:
		s += " " + *h.SourceId
	}
	return s
}

// printAgent writes one Agent.
func printAgent(api *apiOptions, a *client.Agent) error {
	return api.printObject(a, func() [][2]string {
		mode := ""
		if a.ExecutionMode != nil {
			mode = string(*a.ExecutionMode)
		}
		fields := [][2]string{{"id", a.Id}, {"name", a.Name}, {"namespace", a.NamespaceId}, {"configuration", a.ConfigurationId},
			{"execution mode", mode}, {"harness auth", harnessText(a)}, {"backend", a.BackendId.GetOrEmpty()},
			{"status", string(a.Status)}, {"desired state", string(a.DesiredRuntimeState)},
			{"active revision", a.ActiveRevisionId.GetOrEmpty()}, {"service principal", a.ServicePrincipalId},
			{"created", a.CreatedAt}, {"updated", a.UpdatedAt}}
		return append(fields, readErrorField(a.ConfigurationReadError)...)
	})
}

// agentsCreateOptions are the inputs of `occ agents create`.
type agentsCreateOptions struct {
	API  *apiOptions
	Name string
	// Configuration is a Configuration ID or name.
	Configuration string
	// ExecutionMode is embedded, dedicated or "" (the server's default).
	ExecutionMode string
	// SecretAPIKey, when set, is the Secret (ID or name) whose value is the
	// model API key (harness auth method api_key).
	SecretAPIKey string
}

func agentsCreateCmd(api *apiOptions) *cobra.Command {
	opts := &agentsCreateOptions{API: api}
	cmd := verbCmd(api, "create --name NAME --configuration CONFIGURATION", "Create an Agent (stopped, no revision) from a Configuration",
		func(ctx context.Context) error { return runAgentsCreate(ctx, opts) })
	cmd.Flags().StringVar(&opts.Name, "name", "", "the Agent's name")
	cmd.Flags().StringVar(&opts.Configuration, "configuration", "", "the Configuration (ID or name)")
	cmd.Flags().StringVar(&opts.ExecutionMode, "execution-mode", "", "embedded or dedicated (default: the server's)")
	cmd.Flags().StringVar(&opts.SecretAPIKey, "secret-api-key", "", "a Secret (ID or name) holding the model API key (harness auth api_key)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("configuration")
	return cmd
}

func runAgentsCreate(ctx context.Context, opts *agentsCreateOptions) error {
	body := client.AgentCreate{Name: opts.Name}
	if opts.ExecutionMode != "" {
		mode := gen.ExecutionMode(opts.ExecutionMode)
		if !mode.Valid() {
			return fmt.Errorf("--execution-mode must be embedded or dedicated, not %q", opts.ExecutionMode)
		}
		body.ExecutionMode = &mode
	}
	c, ns, err := opts.API.namespaced(ctx)
	if err != nil {
		return err
	}
	if body.ConfigurationId, err = resolveConfiguration(ctx, c, ns, opts.Configuration); err != nil {
		return err
	}
	if opts.SecretAPIKey != "" {
		secret, err := resolveSecret(ctx, c, ns, opts.SecretAPIKey)
		if err != nil {
			return err
		}
		body.HarnessAuth.Set(client.APIKeyAuth(secret))
	}
	a, err := c.CreateAgent(ctx, ns, body)
	if err != nil {
		return err
	}
	return printAgent(opts.API, a)
}

// agentsListOptions are the inputs of `occ agents list`.
type agentsListOptions struct {
	API *apiOptions
}

func agentsListCmd(api *apiOptions) *cobra.Command {
	opts := &agentsListOptions{API: api}
	return verbCmd(api, "list", "List the Namespace's Agents", func(ctx context.Context) error { return runAgentsList(ctx, opts) })
}

func runAgentsList(ctx context.Context, opts *agentsListOptions) error {
	return listIn(ctx, opts.API, (*client.Client).ListAllAgents,
		[]string{"ID", "NAME", "STATUS", "DESIRED", "ACTIVE REVISION", "UPDATED"}, func(a *client.Agent) []string {
			return []string{a.Id, a.Name, string(a.Status), string(a.DesiredRuntimeState), dash(a.ActiveRevisionId.GetOrEmpty()), a.UpdatedAt}
		})
}

// agentsGetOptions are the inputs of `occ agents get`.
type agentsGetOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
}

func agentsGetCmd(api *apiOptions) *cobra.Command {
	opts := &agentsGetOptions{API: api}
	return verbCmd(api, "get AGENT", "Show an Agent (by ID or name)", func(ctx context.Context) error { return runAgentsGet(ctx, opts) }, &opts.Agent)
}

func runAgentsGet(ctx context.Context, opts *agentsGetOptions) error {
	return actOn(ctx, opts.API, opts.Agent, resolveAgent, (*client.Client).GetAgent, printAgent)
}

// agentsDeployOptions are the inputs of `occ agents deploy`.
type agentsDeployOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
	// Wait follows the deployment until it is terminal.
	Wait    bool
	Timeout time.Duration
}

func agentsDeployCmd(api *apiOptions) *cobra.Command {
	opts := &agentsDeployOptions{API: api}
	cmd := verbCmd(api, "deploy AGENT", "Deploy an Agent's saved draft as a new revision (--wait follows it to succeeded or failed)",
		func(ctx context.Context) error { return runAgentsDeploy(ctx, opts) }, &opts.Agent)
	cmd.Long = `Deploy an Agent's saved draft: the server admits an immutable revision, whose ID
is the deployment ID, and its worker converges the Agent's gateway.

With --wait, progress lines (status, the last attempt's code and message) go
to standard error until the deployment is terminal; the final status is
printed, and a failed deployment exits non-zero with its error code.`
	addWaitFlags(cmd, &opts.Wait, &opts.Timeout, "follow the deployment until it succeeds or fails", 20*time.Minute)
	return cmd
}

func runAgentsDeploy(ctx context.Context, opts *agentsDeployOptions) error {
	c, ns, id, err := opts.API.target(ctx, opts.Agent, resolveAgent)
	if err != nil {
		return err
	}
	rev, err := c.DeployAgent(ctx, ns, id)
	if err != nil {
		return err
	}
	if !opts.Wait {
		return opts.API.printObject(rev, func() [][2]string {
			return [][2]string{{"deployment", rev.Id}, {"agent", rev.AgentId},
				{"revision", strconv.FormatInt(rev.Number, 10)}, {"created", rev.CreatedAt}}
		})
	}
	fmt.Fprintf(opts.API.IO.ErrOut, "deployment %s admitted (revision %d of agent %s)\n", rev.Id, rev.Number, rev.AgentId)
	return followDeployment(ctx, opts.API, c, ns, id, rev.Id, opts.Timeout)
}

// followDeployment writes a deployment's progress lines on standard error
// until it is terminal (bounded by timeout), then prints its status; a
// failed deployment is a *client.DeploymentError.
func followDeployment(ctx context.Context, api *apiOptions, c *client.Client, ns, agent, rev string, timeout time.Duration) error {
	wctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	shown := ""
	st, err := c.WatchDeployment(wctx, ns, agent, rev, func(st *client.DeploymentStatus) {
		// One line per change a person cares about: the worker's passes
		// flip queued/running every second or so while the last attempt
		// stays the same.
		if k := progressKey(st); k != shown {
			shown = k
			fmt.Fprintln(api.IO.ErrOut, progressLine(st))
		}
	})
	if st != nil && client.Terminal(st) {
		if perr := printDeployment(api, st); perr != nil && err == nil {
			err = perr
		}
	}
	return err
}

// agentsStopOptions are the inputs of `occ agents stop`.
type agentsStopOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent string
}

func agentsStopCmd(api *apiOptions) *cobra.Command {
	opts := &agentsStopOptions{API: api}
	return verbCmd(api, "stop AGENT", "Stop an Agent (desired state stopped; the worker removes its gateway)",
		func(ctx context.Context) error { return runAgentsStop(ctx, opts) }, &opts.Agent)
}

func runAgentsStop(ctx context.Context, opts *agentsStopOptions) error {
	return actOn(ctx, opts.API, opts.Agent, resolveAgent, (*client.Client).StopAgent, printAgent)
}

// agentsDeleteOptions are the inputs of `occ agents delete`.
type agentsDeleteOptions struct {
	API *apiOptions
	// Agent is an Agent ID or name.
	Agent   string
	Wait    bool
	Timeout time.Duration
}

func agentsDeleteCmd(api *apiOptions) *cobra.Command {
	opts := &agentsDeleteOptions{API: api}
	cmd := verbCmd(api, "delete AGENT", "Delete an Agent (its gateway, revisions and service principal; --wait waits until it is gone)",
		func(ctx context.Context) error { return runAgentsDelete(ctx, opts) }, &opts.Agent)
	addWaitFlags(cmd, &opts.Wait, &opts.Timeout, "wait until the Agent is gone", 10*time.Minute)
	return cmd
}

func runAgentsDelete(ctx context.Context, opts *agentsDeleteOptions) error {
	c, ns, id, err := opts.API.target(ctx, opts.Agent, resolveAgent)
	if err != nil {
		return err
	}
	a, err := c.DeleteAgent(ctx, ns, id)
	if err != nil {
		return err
	}
	if !opts.Wait {
		return printAgent(opts.API, a)
	}
	if err := waitFor(ctx, opts.API, "agent", a.Id, string(a.Status), opts.Timeout, func(ctx context.Context) error {
		return c.WaitAgentGone(ctx, ns, id)
	}); err != nil {
		return err
	}
	return printGone(opts.API, "agent", id)
}
