package cli

// `occ service-accounts …` and `occ credential-sources …`: where Agents'
// model credentials come from, besides Secrets.

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// serviceAccounts describes service accounts.
var serviceAccounts = &nounSpec[client.ServiceAccount]{
	noun: "service-accounts", kind: "Service Account", prefix: "sa_",
	list: (*client.Client).ListAllServiceAccounts, get: (*client.Client).GetServiceAccount,
	del: func(c *client.Client, ctx context.Context, ns, id string) error {
		return c.DeleteServiceAccount(ctx, ns, id, "")
	},
	nameID: func(a *client.ServiceAccount) (string, string) { return a.Name, a.Id },
	header: []string{"ID", "NAME", "BACKEND", "CREDENTIAL", "UPDATED"},
	row: func(a *client.ServiceAccount) []string {
		return []string{a.Id, a.Name, a.BackendId, dash(credentialText(a)), a.UpdatedAt}
	},
	fields: func(a *client.ServiceAccount) [][2]string {
		return [][2]string{{"id", a.Id}, {"name", a.Name}, {"backend", a.BackendId}, {"credential", credentialText(a)},
			{"created", a.CreatedAt}, {"updated", a.UpdatedAt}}
	},
}

// credentialText is a service account's credential: its kind and issue
// time, or "".
func credentialText(a *client.ServiceAccount) string {
	cr, err := a.Credential.Get()
	if err != nil {
		return ""
	}
	return string(cr.Kind) + " issued " + cr.IssuedAt
}

// serviceAccountsCmd is `occ service-accounts list|get|create|issue-credential|delete`.
func serviceAccountsCmd(api *apiOptions) *cobra.Command {
	var name, backend, ref string
	create := verbCmd(api, "create --name NAME --backend BACKEND", "Create a service account at a configured Backend (no credential yet)",
		func(ctx context.Context) error {
			c, ns, err := api.namespaced(ctx)
			if err != nil {
				return err
			}
			a, err := c.CreateServiceAccount(ctx, ns, name, backend)
			if err != nil {
				return err
			}
			return serviceAccounts.print(api, a)
		})
	create.Example = "  occ service-accounts create --name codex-bot --backend chatgpt-main"
	create.Flags().StringVar(&name, "name", "", "the account's name")
	create.Flags().StringVar(&backend, "backend", "", "a Backend of the installation configuration")
	_ = create.MarkFlagRequired("name")
	_ = create.MarkFlagRequired("backend")
	issue := verbCmd(api, "issue-credential NAME", "Have the account's Backend issue its credential (kept encrypted by occ, never shown)",
		func(ctx context.Context) error {
			return actOn(ctx, api, ref, serviceAccounts.resolve, (*client.Client).IssueServiceAccountCredential, serviceAccounts.print)
		}, &ref)
	issue.Example = "  occ service-accounts issue-credential codex-bot"
	issue.ValidArgsFunction = completeNames(api, serviceAccounts.list, serviceAccounts.nameID)
	cmd := groupCmd("service-accounts", "Service accounts: a Namespace's accounts at a Backend (harness auth chatgpt_service_account)",
		serviceAccounts.listCmd(api), serviceAccounts.getCmd(api), create, issue, serviceAccounts.deleteCmd(api))
	cmd.Aliases = []string{"service-account", "sa"}
	return cmd
}

// credentialSources describes credential sources.
var credentialSources = &nounSpec[client.CredentialSource]{
	noun: "credential-sources", kind: "Credential Source", prefix: "cs_",
	list: (*client.Client).ListAllCredentialSources, get: (*client.Client).GetCredentialSource,
	del: func(c *client.Client, ctx context.Context, ns, id string) error {
		return c.DeleteCredentialSource(ctx, ns, id, "")
	},
	nameID: func(s *client.CredentialSource) (string, string) { return s.Name, s.Id },
	header: []string{"ID", "NAME", "TYPE", "STATE", "SECRETS", "UPDATED"},
	row: func(s *client.CredentialSource) []string {
		return []string{s.Id, s.Name, s.Type, string(s.State), dash(sourceSecrets(s)), s.UpdatedAt}
	},
	fields: func(s *client.CredentialSource) [][2]string {
		return [][2]string{{"id", s.Id}, {"name", s.Name}, {"type", s.Type}, {"state", string(s.State)},
			{"secrets", sourceSecrets(s)}, {"created", s.CreatedAt}, {"updated", s.UpdatedAt}}
	},
}

// sourceSecrets lists a credential source's FIELD=SECRET pairs, sorted.
func sourceSecrets(s *client.CredentialSource) string {
	var pairs []string
	for field, ref := range s.Secrets {
		pairs = append(pairs, field+"="+ref.Id)
	}
	slices.Sort(pairs)
	return strings.Join(pairs, ",")
}

// credentialSourcesCmd is `occ credential-sources list|get|create|update|delete`.
func credentialSourcesCmd(api *apiOptions) *cobra.Command {
	create := credentialSources.createCmd(api, "Create a credential source from a JSON or YAML body (name, type, config, secrets) and register it",
		`  echo '{"name": "openai-team", "type": "openai", "config": {"organization": "acme"}}' | occ credential-sources create -f -`,
		func(c *client.Client, ctx context.Context, ns string, body json.RawMessage) (*client.CredentialSource, error) {
			return c.CreateCredentialSource(ctx, ns, body)
		})
	update := credentialSources.updateCmd(api, "Replace a ready credential source's Secrets from a JSON or YAML body ({\"secrets\": {}} clears them)",
		`  echo '{"secrets": {}}' | occ credential-sources update openai-team -f -`,
		func(c *client.Client, ctx context.Context, ns, id string, patch json.RawMessage) (*client.CredentialSource, error) {
			return c.UpdateCredentialSource(ctx, ns, id, patch, "")
		})
	cmd := groupCmd("credential-sources", "Credential sources: model credentials through a Credential Gateway (harness auth credential_source)",
		credentialSources.listCmd(api), credentialSources.getCmd(api), create, update, credentialSources.deleteCmd(api))
	cmd.Aliases = []string{"credential-source"}
	return cmd
}
