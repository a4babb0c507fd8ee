package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// presets describes Presets.
var presets = &nounSpec[client.Preset]{
	noun: "presets", kind: "Preset", prefix: "pre_",
	list: (*client.Client).ListAllPresets, get: (*client.Client).GetPreset,
	del: func(c *client.Client, ctx context.Context, ns, id string) error {
		return c.DeletePreset(ctx, ns, id, "")
	},
	nameID: func(p *client.Preset) (string, string) { return p.Name, p.Id },
	header: []string{"ID", "NAME", "SOURCE", "CONFIGURATION", "EXECUTION MODE", "UPDATED"},
	row: func(p *client.Preset) []string {
		return []string{p.Id, p.Name, string(p.Source), dash(p.ConfigurationId.GetOrEmpty()), dash(string(p.ExecutionMode.GetOrEmpty())), p.UpdatedAt}
	},
	fields: func(p *client.Preset) [][2]string {
		f := [][2]string{{"id", p.Id}, {"name", p.Name}, {"source", string(p.Source)}, {"configuration", p.ConfigurationId.GetOrEmpty()},
			{"execution mode", string(p.ExecutionMode.GetOrEmpty())}, {"backend", p.BackendId.GetOrEmpty()},
			{"created", p.CreatedAt}, {"updated", p.UpdatedAt}}
		return append(f, readErrorField(p.ConfigurationReadError)...)
	},
}

// presetsCmd is `occ presets list|get|create|update|delete`.
func presetsCmd(api *apiOptions) *cobra.Command {
	var createFile, updateFile, ref string
	create := verbCmd(api, "create -f FILE", "Create a Preset from a JSON or YAML body (name, configurationId, executionMode, harnessAuth, plugins, backendId)",
		func(ctx context.Context) error {
			body, err := readBody(api, createFile)
			if err != nil {
				return err
			}
			c, ns, err := api.namespaced(ctx)
			if err != nil {
				return err
			}
			p, err := c.CreatePreset(ctx, ns, body)
			if err != nil {
				return err
			}
			return presets.print(api, p)
		})
	create.Example = `  cat > preset.yaml <<'YAML'
  name: standard
  executionMode: embedded
  YAML
  occ presets create -f preset.yaml`
	addFileFlag(create, &createFile, "the Preset")
	update := verbCmd(api, "update NAME -f FILE", "Change a Preset with a JSON Merge Patch from a file (absent keeps, null clears)",
		func(ctx context.Context) error {
			body, err := readBody(api, updateFile)
			if err != nil {
				return err
			}
			return actOn(ctx, api, ref, presets.resolve, func(c *client.Client, ctx context.Context, ns, id string) (*client.Preset, error) {
				return c.UpdatePreset(ctx, ns, id, body, "")
			}, presets.print)
		}, &ref)
	update.Example = `  echo '{"executionMode": "dedicated"}' | occ presets update standard -f -`
	addFileFlag(update, &updateFile, "the merge patch")
	update.ValidArgsFunction = completeNames(api, presets.list, presets.nameID)
	return groupCmd("presets", "Presets: reusable launch settings for Agents",
		presets.listCmd(api), presets.getCmd(api), create, update, presets.deleteCmd(api))
}
