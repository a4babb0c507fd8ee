package cli

import (
	"context"
	"encoding/json"

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
	create := presets.createCmd(api, "Create a Preset from a JSON or YAML body (name, configurationId, executionMode, harnessAuth, plugins, backendId)",
		"  cat > preset.yaml <<'YAML'\n  name: standard\n  executionMode: embedded\n  YAML\n  occ presets create -f preset.yaml",
		func(c *client.Client, ctx context.Context, ns string, body json.RawMessage) (*client.Preset, error) {
			return c.CreatePreset(ctx, ns, body)
		})
	update := presets.updateCmd(api, "Change a Preset with a JSON Merge Patch from a file (absent keeps, null clears)",
		`  echo '{"executionMode": "dedicated"}' | occ presets update standard -f -`,
		func(c *client.Client, ctx context.Context, ns, id string, patch json.RawMessage) (*client.Preset, error) {
			return c.UpdatePreset(ctx, ns, id, patch, "")
		})
	cmd := groupCmd("presets", "Presets: reusable launch settings for Agents",
		presets.listCmd(api), presets.getCmd(api), create, update, presets.deleteCmd(api))
	cmd.Aliases = []string{"preset"}
	return cmd
}
