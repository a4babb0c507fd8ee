package cli

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// secrets describes Secrets (metadata only: a value is never returned).
var secrets = &nounSpec[client.Secret]{
	noun: "secrets", kind: "Secret", prefix: "sec_",
	list: (*client.Client).ListAllSecrets, get: (*client.Client).GetSecret,
	del: func(c *client.Client, ctx context.Context, ns, id string) error {
		return c.DeleteSecret(ctx, ns, id, "")
	},
	nameID: func(s *client.Secret) (string, string) { return s.Name, s.Id },
	header: []string{"ID", "NAME", "VERSION", "UPDATED"},
	row: func(s *client.Secret) []string {
		return []string{s.Id, s.Name, strconv.FormatInt(s.Version, 10), s.UpdatedAt}
	},
	fields: func(s *client.Secret) [][2]string {
		return [][2]string{{"id", s.Id}, {"name", s.Name}, {"version", strconv.FormatInt(s.Version, 10)},
			{"created", s.CreatedAt}, {"updated", s.UpdatedAt}}
	},
}

// resolveSecret returns the ID of a Secret given by ID or name.
func resolveSecret(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return secrets.resolve(ctx, c, ns, ref)
}

// printSecret writes one Secret's metadata.
func printSecret(api *apiOptions, s *client.Secret) error { return secrets.print(api, s) }

// readSecretValue reads a Secret's value from a file ("-": standard
// input) without one trailing newline; an error names the file, never the
// contents.
func readSecretValue(file string, in io.Reader) (string, error) {
	raw, err := readInput(file, in)
	if err != nil {
		return "", err
	}
	value := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
	clear(raw)
	if value == "" {
		return "", errors.New("the Secret's value is empty")
	}
	return value, nil
}

// secretsCreateOptions are the inputs of `occ secrets create`.
type secretsCreateOptions struct {
	API  *apiOptions
	Name string
	// ValueFile holds the value ("-": standard input); one trailing newline
	// is dropped.
	ValueFile string
}

func secretsCreateCmd(api *apiOptions) *cobra.Command {
	opts := &secretsCreateOptions{API: api}
	cmd := verbCmd(api, "create --name NAME --value-file FILE",
		"Create a Secret in the Namespace (the value is read from a file, never from the command line)",
		func(ctx context.Context) error { return runSecretsCreate(ctx, opts) })
	cmd.Long = `Create a Secret in the Namespace. The value is read from --value-file ("-"
reads standard input), without one trailing newline; it is sent once,
encrypted at rest by the server, and never printed or returned.`
	cmd.Flags().StringVar(&opts.Name, "name", "", "the Secret's name")
	cmd.Flags().StringVar(&opts.ValueFile, "value-file", "", "file holding the value (- for standard input)")
	_ = cmd.MarkFlagRequired("name")
	_ = cmd.MarkFlagRequired("value-file")
	return cmd
}

func runSecretsCreate(ctx context.Context, opts *secretsCreateOptions) error {
	value, err := readSecretValue(opts.ValueFile, opts.API.IO.In)
	if err != nil {
		return err
	}
	c, ns, err := opts.API.namespaced(ctx)
	if err != nil {
		return err
	}
	s, err := c.CreateSecret(ctx, ns, opts.Name, value)
	if err != nil {
		return err
	}
	return printSecret(opts.API, s)
}

// secretsListOptions are the inputs of `occ secrets list`.
type secretsListOptions struct {
	API *apiOptions
}

func secretsListCmd(api *apiOptions) *cobra.Command {
	opts := &secretsListOptions{API: api}
	return verbCmd(api, "list", "List the Namespace's Secrets (metadata only)", func(ctx context.Context) error { return runSecretsList(ctx, opts) })
}

func runSecretsList(ctx context.Context, opts *secretsListOptions) error {
	return listIn(ctx, opts.API, secrets.list, secrets.header, secrets.row)
}

func secretsGetCmd(api *apiOptions) *cobra.Command { return secrets.getCmd(api) }

func secretsDeleteCmd(api *apiOptions) *cobra.Command { return secrets.deleteCmd(api) }

// secretsUpdateCmd is `occ secrets update`: a new value, from a file or
// standard input, never from the command line.
func secretsUpdateCmd(api *apiOptions) *cobra.Command {
	var ref, file string
	cmd := verbCmd(api, "update NAME --value-file FILE", "Replace a Secret's value (version + 1; running gateways keep theirs until redeployed)",
		func(ctx context.Context) error {
			value, err := readSecretValue(file, api.IO.In)
			if err != nil {
				return err
			}
			return actOn(ctx, api, ref, resolveSecret, func(c *client.Client, ctx context.Context, ns, id string) (*client.Secret, error) {
				return c.UpdateSecret(ctx, ns, id, value, "")
			}, printSecret)
		}, &ref)
	cmd.Example = `  occ secrets update openai --value-file new.key
  pass show openai | occ secrets update openai --value-file -`
	cmd.Flags().StringVar(&file, "value-file", "", "file holding the new value (- for standard input)")
	_ = cmd.MarkFlagRequired("value-file")
	cmd.ValidArgsFunction = completeNames(api, secrets.list, secrets.nameID)
	return cmd
}
