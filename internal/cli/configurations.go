package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// configurationsCmd is `occ configurations create|list|get|update|edit|delete`.
func configurationsCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "configurations", Aliases: []string{"configuration"}, Short: "Configurations (native OpenClaw configuration documents)"}
	cmd.AddCommand(configurationsCreateCmd(api), configurationsListCmd(api), configurationsGetCmd(api),
		configurationsUpdateCmd(api), configurationsEditCmd(api), configurations.deleteCmd(api))
	return cmd
}

// resolveConfiguration returns the ID of a Configuration given by ID or name.
func resolveConfiguration(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return configurations.resolve(ctx, c, ns, ref)
}

// bindingNames returns a Configuration's bound environment variables, sorted.
func bindingNames(cfg *client.Configuration) string {
	if cfg.SecretBindings == nil {
		return ""
	}
	var names []string
	for k := range *cfg.SecretBindings {
		names = append(names, k)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// printConfiguration writes one Configuration; the table form ends with
// its document.
func printConfiguration(api *apiOptions, cfg *client.Configuration) error {
	err := api.printObject(cfg, func() [][2]string {
		fields := [][2]string{{"id", cfg.Id}, {"name", cfg.Name}, {"kind", string(cfg.Kind)},
			{"generation", strconv.FormatInt(cfg.Generation, 10)}, {"secret bindings", bindingNames(cfg)}, {"updated", cfg.UpdatedAt}}
		return append(fields, readErrorField(cfg.ConfigurationReadError)...)
	})
	if err != nil || api.structured() || cfg.Values == nil {
		return err
	}
	doc, err := json.MarshalIndent(cfg.Values, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(api.IO.Out, "values:\n%s\n", doc)
	return err
}

// configurationsCreateOptions are the inputs of `occ configurations create`.
type configurationsCreateOptions struct {
	API *apiOptions
	// File is the JSON file to read ("-": standard input).
	File string
	// Name names the Configuration (required when File is a bare document).
	Name string
	// SecretEnv are NAME=SECRET pairs: the Secret (ID or name) delivered
	// to the gateway as the environment variable NAME.
	SecretEnv []string
}

func configurationsCreateCmd(api *apiOptions) *cobra.Command {
	opts := &configurationsCreateOptions{API: api}
	cmd := verbCmd(api, "create --file FILE [--name NAME]", "Create a Configuration from a JSON file",
		func(ctx context.Context) error { return runConfigurationsCreate(ctx, opts) })
	cmd.Long = `Create a Configuration from a JSON file ("-" reads standard input).

The file is either the request body of the API, {"name", "kind", "values",
"secretBindings"} (kind defaults to agent; --name overrides the name), or a
bare native OpenClaw configuration document (an object without a "values"
key), which then needs --name.

--secret-env NAME=SECRET (repeatable) binds a Secret of the Namespace (ID or
name) to the environment variable NAME of the Agents' gateways; the document
refers to it as "${NAME}", for example a provider's "apiKey". The value never
appears in the Configuration.`
	cmd.Example = `  occ secrets create --name myllm-key --value-file myllm.key
  occ configurations create --name support --file examples/openai-compatible.json \
      --secret-env MYLLM_API_KEY=myllm-key`
	cmd.Flags().StringVarP(&opts.File, "file", "f", "", "JSON file: a create body or a bare document (- for standard input)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "the Configuration's name")
	cmd.Flags().StringArrayVar(&opts.SecretEnv, "secret-env", nil, "NAME=SECRET: deliver the Secret (ID or name) as ${NAME} (repeatable)")
	_ = cmd.MarkFlagRequired("file")
	return cmd
}

// readInput reads a named file, or in for "-".
func readInput(name string, in io.Reader) ([]byte, error) {
	if name == "-" {
		if in == nil {
			return nil, errors.New("no standard input")
		}
		return io.ReadAll(in)
	}
	return os.ReadFile(name)
}

// configurationBody turns a file's JSON into a create body.
func configurationBody(raw []byte, name string) (client.ConfigurationCreate, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return client.ConfigurationCreate{}, fmt.Errorf("the file must hold a JSON object: %w", err)
	}
	if top == nil {
		return client.ConfigurationCreate{}, errors.New("the file must hold a JSON object, not null")
	}
	var body client.ConfigurationCreate
	if _, ok := top["values"]; ok {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil {
			return body, fmt.Errorf("the file is not a Configuration create body: %w", err)
		}
	} else if err := json.Unmarshal(raw, &body.Values); err != nil {
		return body, err
	}
	if name != "" {
		body.Name = name
	}
	if body.Name == "" {
		return body, errors.New("--name is required (the file names no Configuration)")
	}
	return body, nil
}

func runConfigurationsCreate(ctx context.Context, opts *configurationsCreateOptions) error {
	raw, err := readInput(opts.File, opts.API.IO.In)
	if err != nil {
		return err
	}
	body, err := configurationBody(raw, opts.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", opts.File, err)
	}
	c, ns, err := opts.API.namespaced(ctx)
	if err != nil {
		return err
	}
	if err := bindSecretEnv(ctx, c, ns, &body, opts.SecretEnv); err != nil {
		return err
	}
	cfg, err := c.CreateConfiguration(ctx, ns, body)
	if err != nil {
		return err
	}
	return printConfiguration(opts.API, cfg)
}

// bindSecretEnv adds the --secret-env pairs to the body's secretBindings,
// resolving Secret names in the Namespace.
func bindSecretEnv(ctx context.Context, c *client.Client, ns string, body *client.ConfigurationCreate, pairs []string) error {
	for _, pair := range pairs {
		name, ref, ok := strings.Cut(pair, "=")
		if !ok || name == "" || ref == "" {
			return fmt.Errorf("--secret-env %q: want NAME=SECRET", pair)
		}
		id, err := resolveSecret(ctx, c, ns, ref)
		if err != nil {
			return err
		}
		if body.SecretBindings == nil {
			body.SecretBindings = &client.SecretBindings{}
		}
		(*body.SecretBindings)[name] = client.EnvBinding(ns, id)
	}
	return nil
}

// configurationsListOptions are the inputs of `occ configurations list`.
type configurationsListOptions struct {
	API *apiOptions
}

func configurationsListCmd(api *apiOptions) *cobra.Command {
	opts := &configurationsListOptions{API: api}
	return verbCmd(api, "list", "List the Namespace's Configurations", func(ctx context.Context) error { return runConfigurationsList(ctx, opts) })
}

func runConfigurationsList(ctx context.Context, opts *configurationsListOptions) error {
	return listIn(ctx, opts.API, (*client.Client).ListAllConfigurations,
		[]string{"ID", "NAME", "GENERATION", "SECRET BINDINGS", "UPDATED"}, func(x *client.Configuration) []string {
			return []string{x.Id, x.Name, strconv.FormatInt(x.Generation, 10), dash(bindingNames(x)), x.UpdatedAt}
		})
}

// configurationsGetOptions are the inputs of `occ configurations get`.
type configurationsGetOptions struct {
	API *apiOptions
	// Configuration is an ID or a name.
	Configuration string
}

func configurationsGetCmd(api *apiOptions) *cobra.Command {
	opts := &configurationsGetOptions{API: api}
	return verbCmd(api, "get CONFIGURATION", "Show a Configuration and its document (by ID or name)",
		func(ctx context.Context) error { return runConfigurationsGet(ctx, opts) }, &opts.Configuration)
}

func runConfigurationsGet(ctx context.Context, opts *configurationsGetOptions) error {
	return actOn(ctx, opts.API, opts.Configuration, resolveConfiguration, (*client.Client).GetConfiguration, printConfiguration)
}
