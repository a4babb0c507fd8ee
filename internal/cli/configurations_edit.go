package cli

// `occ configurations update|edit|delete`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// configurations describes Configurations for the shared verbs.
var configurations = &nounSpec[client.Configuration]{
	noun: "configurations", kind: "Configuration", prefix: "cfg_",
	list: (*client.Client).ListAllConfigurations, get: (*client.Client).GetConfiguration,
	del: func(c *client.Client, ctx context.Context, ns, id string) error {
		return c.DeleteConfiguration(ctx, ns, id, "")
	},
	nameID: func(x *client.Configuration) (string, string) { return x.Name, x.Id },
	show:   printConfiguration,
}

func configurationsUpdateCmd(api *apiOptions) *cobra.Command {
	cmd := configurations.updateCmd(api, "Merge-patch a Configuration (RFC 7386) from a JSON or YAML body: values, name, secretBindings",
		`  echo '{"values": {"agents": {"defaults": {"model": "anthropic/claude-sonnet-4"}}}}' | occ configurations update support -f -`,
		func(c *client.Client, ctx context.Context, ns, id string, patch json.RawMessage) (*client.Configuration, error) {
			return c.UpdateConfiguration(ctx, ns, id, patch, "")
		})
	cmd.Long = `Merge-patch a Configuration: the file is a JSON Merge Patch (RFC 7386) of
{"values", "name", "secretBindings"}; a key set to null is removed from the
document; secretBindings, when given, replaces the bindings. The generation
increases; Agents see it at their next deploy.`
	return cmd
}

// editableConfiguration is what `configurations edit` puts in the editor.
type editableConfiguration struct {
	Name           string                 `json:"name"`
	Values         map[string]any         `json:"values"`
	SecretBindings *client.SecretBindings `json:"secretBindings,omitempty"`
}

func configurationsEditCmd(api *apiOptions) *cobra.Command {
	var ref string
	cmd := verbCmd(api, "edit NAME", "Edit a Configuration in $EDITOR; the change applies only if nobody changed it meanwhile",
		func(ctx context.Context) error { return runConfigurationsEdit(ctx, api, ref) }, &ref)
	cmd.Long = `Open a Configuration (name, values, secretBindings) as JSON in $EDITOR (vi
when unset). What you save is sent as a merge patch with the ETag you opened
as If-Match: when someone else changed the Configuration meanwhile, nothing
is applied (412 PRECONDITION_FAILED) and your edit is kept in a file. An
unchanged file sends nothing.`
	cmd.Example = `  occ configurations edit support
  EDITOR="code --wait" occ configurations edit support`
	cmd.ValidArgsFunction = completeNames(api, configurations.list, configurations.nameID)
	return cmd
}

func runConfigurationsEdit(ctx context.Context, api *apiOptions, ref string) error {
	c, ns, id, err := api.target(ctx, ref, resolveConfiguration)
	if err != nil {
		return err
	}
	cfg, err := c.GetConfiguration(ctx, ns, id)
	if err != nil {
		return err
	}
	if cfg.ConfigurationReadError != nil {
		return fmt.Errorf("the Configuration's saved settings cannot be read (%s %s); fix them with occ configurations update", cfg.ConfigurationReadError.Code, cfg.ConfigurationReadError.Field)
	}
	before := editableConfiguration{Name: cfg.Name, Values: map[string]any{}, SecretBindings: cfg.SecretBindings}
	if cfg.Values != nil {
		before.Values = map[string]any(*cfg.Values)
	}
	content, err := json.MarshalIndent(before, "", "  ")
	if err != nil {
		return err
	}
	edited, s, err := api.edit("occ-configuration-*.json", append(content, '\n'))
	if err != nil {
		return api.finishEdit(s, err)
	}
	var after editableConfiguration
	if err := json.Unmarshal(edited, &after); err != nil {
		return api.finishEdit(s, fmt.Errorf("the edited file is not a Configuration: %w", err))
	}
	patch := map[string]any{}
	if after.Name != before.Name {
		patch["name"] = after.Name
	}
	if d := mergeDiff(before.Values, after.Values); len(d) > 0 {
		patch["values"] = d
	}
	if !reflect.DeepEqual(bindingsOrEmpty(before.SecretBindings), bindingsOrEmpty(after.SecretBindings)) {
		patch["secretBindings"] = bindingsOrEmpty(after.SecretBindings)
	}
	if len(patch) == 0 {
		return api.finishEdit(s, errNoChange)
	}
	updated, err := c.UpdateConfiguration(ctx, ns, id, patch, cfg.Etag)
	if client.IsCode(err, client.CodePreconditionFailed) {
		err = errors.New("PRECONDITION_FAILED: someone else changed the Configuration since you opened it; nothing was applied (run occ configurations edit again)")
	}
	if err := api.finishEdit(s, plainError(err)); err != nil {
		return err
	}
	return printConfiguration(api, updated)
}

// bindingsOrEmpty returns the bindings, or an empty set for none.
func bindingsOrEmpty(b *client.SecretBindings) client.SecretBindings {
	if b == nil {
		return client.SecretBindings{}
	}
	return *b
}

// mergeDiff returns the JSON Merge Patch (RFC 7386) that turns before into
// after: changed keys with their new values, removed keys as null, nested
// objects as their own patches.
func mergeDiff(before, after map[string]any) map[string]any {
	patch := map[string]any{}
	for k := range before {
		if _, ok := after[k]; !ok {
			patch[k] = nil
		}
	}
	for k, v := range after {
		old, had := before[k]
		om, oldIsMap := old.(map[string]any)
		nm, newIsMap := v.(map[string]any)
		switch {
		case had && oldIsMap && newIsMap:
			if d := mergeDiff(om, nm); len(d) > 0 {
				patch[k] = d
			}
		case !had || !reflect.DeepEqual(old, v):
			patch[k] = v
		}
	}
	return patch
}
