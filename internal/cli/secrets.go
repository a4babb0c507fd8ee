package cli

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// resolveSecret returns the ID of a Secret given by ID or name.
func resolveSecret(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return resolveByName(ctx, ref, "sec_", "Secret",
		func(ctx context.Context) ([]client.Secret, error) { return c.ListAllSecrets(ctx, ns) },
		func(x client.Secret) (string, string) { return x.Name, x.Id })
}

// printSecret writes one Secret's metadata.
func printSecret(api *apiOptions, s *client.Secret) error {
	return api.printObject(s, func() [][2]string {
		return [][2]string{{"id", s.Id}, {"name", s.Name}, {"version", strconv.FormatInt(s.Version, 10)},
			{"created", s.CreatedAt}, {"updated", s.UpdatedAt}}
	})
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
	raw, err := readInput(opts.ValueFile, opts.API.IO.In)
	if err != nil {
		return err // names the file, never the contents
	}
	value := strings.TrimSuffix(strings.TrimSuffix(string(raw), "\n"), "\r")
	clear(raw)
	if value == "" {
		return errors.New("the Secret's value is empty")
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
	return listIn(ctx, opts.API, (*client.Client).ListAllSecrets, []string{"ID", "NAME", "VERSION", "UPDATED"},
		func(s *client.Secret) []string {
			return []string{s.Id, s.Name, strconv.FormatInt(s.Version, 10), s.UpdatedAt}
		})
}
