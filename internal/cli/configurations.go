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

// configurationsCmd is `occ configurations create|list|get`.
func configurationsCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "configurations", Aliases: []string{"configuration"}, Short: "Configurations (native OpenClaw configuration documents)"}
	cmd.AddCommand(configurationsCreateCmd(api), configurationsListCmd(api), configurationsGetCmd(api))
	return cmd
}

// resolveConfiguration returns the ID of a Configuration given by ID or name.
func resolveConfiguration(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return resolveByName(ctx, ref, "cfg_", "Configuration",
		func(ctx context.Context) ([]client.Configuration, error) { return c.ListAllConfigurations(ctx, ns) },
		func(x client.Configuration) (string, string) { return x.Name, x.Id })
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
	if api.json() {
		return api.printJSON(cfg)
	}
	fields := [][2]string{{"id", cfg.Id}, {"name", cfg.Name}, {"kind", string(cfg.Kind)},
		{"generation", strconv.FormatInt(cfg.Generation, 10)}, {"secret bindings", bindingNames(cfg)}, {"updated", cfg.UpdatedAt}}
	if cfg.ConfigurationReadError != nil {
		fields = append(fields, [2]string{"read error", string(cfg.ConfigurationReadError.Code) + " " + cfg.ConfigurationReadError.Field})
	}
	if err := api.printFields(fields); err != nil {
		return err
	}
	if cfg.Values == nil {
		return nil
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
}

func configurationsCreateCmd(api *apiOptions) *cobra.Command {
	opts := &configurationsCreateOptions{API: api}
	cmd := &cobra.Command{
		Use:   "create --file FILE [--name NAME]",
		Short: "Create a Configuration from a JSON file",
		Long: `Create a Configuration from a JSON file ("-" reads standard input).

The file is either the request body of the API, {"name", "kind", "values",
"secretBindings"} (kind defaults to agent; --name overrides the name), or a
bare native OpenClaw configuration document (an object without a "values"
key), which then needs --name.`,
		Args: cobra.NoArgs,
		RunE: run(api, func(ctx context.Context, _ []string) error { return runConfigurationsCreate(ctx, opts) }),
	}
	cmd.Flags().StringVarP(&opts.File, "file", "f", "", "JSON file: a create body or a bare document (- for standard input)")
	cmd.Flags().StringVar(&opts.Name, "name", "", "the Configuration's name")
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
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	ns, err := opts.API.namespaceID(ctx, c)
	if err != nil {
		return err
	}
	cfg, err := c.CreateConfiguration(ctx, ns, body)
	if err != nil {
		return err
	}
	return printConfiguration(opts.API, cfg)
}

// configurationsListOptions are the inputs of `occ configurations list`.
type configurationsListOptions struct {
	API *apiOptions
}

func configurationsListCmd(api *apiOptions) *cobra.Command {
	opts := &configurationsListOptions{API: api}
	return &cobra.Command{
		Use:   "list",
		Short: "List the Namespace's Configurations",
		Args:  cobra.NoArgs,
		RunE:  run(api, func(ctx context.Context, _ []string) error { return runConfigurationsList(ctx, opts) }),
	}
}

func runConfigurationsList(ctx context.Context, opts *configurationsListOptions) error {
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	ns, err := opts.API.namespaceID(ctx, c)
	if err != nil {
		return err
	}
	items, err := c.ListAllConfigurations(ctx, ns)
	if err != nil {
		return err
	}
	if opts.API.json() {
		return opts.API.printJSON(nonNil(items))
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		x := &items[i]
		rows = append(rows, []string{x.Id, x.Name, strconv.FormatInt(x.Generation, 10), dash(bindingNames(x)), x.UpdatedAt})
	}
	return opts.API.printTable([]string{"ID", "NAME", "GENERATION", "SECRET BINDINGS", "UPDATED"}, rows)
}

// configurationsGetOptions are the inputs of `occ configurations get`.
type configurationsGetOptions struct {
	API *apiOptions
	// Configuration is an ID or a name.
	Configuration string
}

func configurationsGetCmd(api *apiOptions) *cobra.Command {
	opts := &configurationsGetOptions{API: api}
	return &cobra.Command{
		Use:   "get CONFIGURATION",
		Short: "Show a Configuration and its document (by ID or name)",
		Args:  cobra.ExactArgs(1),
		RunE: run(api, func(ctx context.Context, args []string) error {
			opts.Configuration = args[0]
			return runConfigurationsGet(ctx, opts)
		}),
	}
}

func runConfigurationsGet(ctx context.Context, opts *configurationsGetOptions) error {
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	ns, err := opts.API.namespaceID(ctx, c)
	if err != nil {
		return err
	}
	id, err := resolveConfiguration(ctx, c, ns, opts.Configuration)
	if err != nil {
		return err
	}
	cfg, err := c.GetConfiguration(ctx, ns, id)
	if err != nil {
		return err
	}
	return printConfiguration(opts.API, cfg)
}
