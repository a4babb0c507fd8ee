package cli

// `occ service-keys …`: the installation's service keys. A new key is
// written to a file (mode 0600), never printed.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// keyState is a service key's state: revoked, expired or active.
func keyState(k *client.ServiceKey) string {
	switch {
	case k.Revoked:
		return "revoked"
	}
	if t, err := time.Parse(time.RFC3339Nano, k.ExpiresAt); err == nil && !t.After(time.Now()) {
		return "expired"
	}
	return "active"
}

// printServiceKey writes one key's metadata (the key itself never).
func printServiceKey(api *apiOptions, k *client.ServiceKey) error {
	k.Key = nil
	return api.printObject(k, func() [][2]string {
		return [][2]string{{"id", k.Id}, {"name", k.Name}, {"service principal", k.ServicePrincipalId},
			{"namespace", k.NamespaceId.GetOrEmpty()}, {"state", keyState(k)}, {"expires", k.ExpiresAt}, {"created", k.CreatedAt}}
	})
}

// resolveServiceKey returns the ID of a key given by ID or name.
func resolveServiceKey(ctx context.Context, c *client.Client, ref string) (string, error) {
	return resolveByName(ctx, ref, "key_", "service key", c.ListAllServiceKeys,
		func(k client.ServiceKey) (string, string) { return k.Name, k.Id })
}

func serviceKeysCmd(api *apiOptions) *cobra.Command {
	var ref, name, principal, keyOut string
	var expiresIn time.Duration
	var bound bool
	withKey := func(fn func(ctx context.Context, c *client.Client, id string) error) func(context.Context) error {
		return func(ctx context.Context) error {
			c, err := api.client()
			if err != nil {
				return err
			}
			id, err := resolveServiceKey(ctx, c, ref)
			if err != nil {
				return err
			}
			return fn(ctx, c, id)
		}
	}
	list := verbCmd(api, "list", "List the service keys (never the keys themselves)", func(ctx context.Context) error {
		c, err := api.client()
		if err != nil {
			return err
		}
		keys, err := c.ListAllServiceKeys(ctx)
		if err != nil {
			return err
		}
		return printList(api, keys, []string{"ID", "NAME", "SERVICE PRINCIPAL", "STATE", "EXPIRES", "CREATED"}, func(k *client.ServiceKey) []string {
			return []string{k.Id, k.Name, k.ServicePrincipalId, keyState(k), k.ExpiresAt, k.CreatedAt}
		})
	})
	list.Example = "  occ service-keys list\n  occ service-keys list -o name"
	get := verbCmd(api, "get KEY", "Show a service key's metadata (by ID or name)", withKey(func(ctx context.Context, c *client.Client, id string) error {
		k, err := c.GetServiceKey(ctx, id)
		if err != nil {
			return err
		}
		return printServiceKey(api, k)
	}), &ref)
	get.Example = "  occ service-keys get ci"
	create := verbCmd(api, "create --name NAME --principal spn_… --key-out FILE", "Issue a service key for a service principal; the key goes to --key-out (mode 0600), never to the terminal",
		func(ctx context.Context) error {
			if _, err := os.Lstat(keyOut); err == nil {
				return fmt.Errorf("%s exists; choose a new file", keyOut)
			} else if !errors.Is(err, os.ErrNotExist) {
				return err
			}
			c, err := api.client()
			if err != nil {
				return err
			}
			body := client.ServiceKeyCreate{Name: name, ServicePrincipalId: principal}
			if expiresIn > 0 {
				secs := int(expiresIn / time.Second)
				body.ExpiresIn = &secs
			}
			if bound {
				ns, err := api.namespaceID(ctx, c)
				if err != nil {
					return err
				}
				body.NamespaceId = &ns
			}
			k, err := c.CreateServiceKey(ctx, body)
			if err != nil {
				return err
			}
			if k.Key == nil {
				return fmt.Errorf("the server issued key %s without the key", k.Id)
			}
			if err := os.WriteFile(keyOut, []byte(*k.Key+"\n"), 0o600); err != nil {
				return fmt.Errorf("key %s was issued but could not be saved (revoke it: occ service-keys delete %s): %w", k.Id, k.Id, err)
			}
			fmt.Fprintf(api.IO.ErrOut, "the key is in %s\n", keyOut)
			return printServiceKey(api, k)
		})
	create.Example = "  occ service-keys create --name ci --principal spn_… --key-out ci.key --expires-in 720h\n  occ login --url http://127.0.0.1:8080 --key-file ci.key --context ci"
	create.Flags().StringVar(&name, "name", "", "the key's name")
	create.Flags().StringVar(&principal, "principal", "", "the service principal (spn_…) the key authenticates")
	create.Flags().StringVar(&keyOut, "key-out", "", "the file to write the key to (created with mode 0600; it must not exist)")
	create.Flags().DurationVar(&expiresIn, "expires-in", 0, "lifetime (default: the server's)")
	create.Flags().BoolVar(&bound, "namespace-bound", false, "limit the key to the Namespace of -n")
	for _, f := range []string{"name", "principal", "key-out"} {
		_ = create.MarkFlagRequired(f)
	}
	del := verbCmd(api, "delete KEY", "Revoke a service key (by ID or name)", withKey(func(ctx context.Context, c *client.Client, id string) error {
		if err := c.RevokeServiceKey(ctx, id); err != nil {
			return err
		}
		fmt.Fprintf(api.IO.ErrOut, "service key %s revoked\n", id)
		return printGone(api, "service key", id)
	}), &ref)
	del.Aliases = []string{"revoke"}
	del.Example = "  occ service-keys delete ci"
	cmd := groupCmd("service-keys", "Service keys: bearer keys of service principals (installation administrators)", list, get, create, del)
	cmd.Aliases = []string{"service-key"}
	return cmd
}
