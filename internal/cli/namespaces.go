package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// namespacesCmd is `occ namespaces list|create|get|update|delete`.
func namespacesCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "namespaces", Aliases: []string{"namespace", "ns"}, Short: "Namespaces"}
	cmd.AddCommand(namespacesListCmd(api), namespacesCreateCmd(api), namespacesGetCmd(api), namespacesUpdateCmd(api), namespacesDeleteCmd(api))
	return cmd
}

// printNamespace writes one Namespace.
func printNamespace(api *apiOptions, n *client.Namespace) error {
	return api.printObject(n, func() [][2]string {
		return [][2]string{{"id", n.Id}, {"name", n.Name}, {"status", string(n.Status)},
			{"created", n.CreatedAt}, {"updated", n.UpdatedAt}}
	})
}

// namespaceTarget returns a client and the ID of the Namespace ref names
// (an ID or a name).
func namespaceTarget(ctx context.Context, api *apiOptions, ref string) (*client.Client, string, error) {
	c, err := api.client()
	if err != nil {
		return nil, "", err
	}
	id, err := resolveNamespace(ctx, c, ref)
	if err != nil {
		return nil, "", err
	}
	return c, id, nil
}

// namespacesListOptions are the inputs of `occ namespaces list`.
type namespacesListOptions struct {
	API *apiOptions
}

func namespacesListCmd(api *apiOptions) *cobra.Command {
	opts := &namespacesListOptions{API: api}
	return verbCmd(api, "list", "List the Namespaces you may read", func(ctx context.Context) error { return runNamespacesList(ctx, opts) })
}

func runNamespacesList(ctx context.Context, opts *namespacesListOptions) error {
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	items, err := c.ListAllNamespaces(ctx)
	if err != nil {
		return err
	}
	return printList(opts.API, items, []string{"ID", "NAME", "STATUS", "CREATED"},
		func(n *client.Namespace) []string { return []string{n.Id, n.Name, string(n.Status), n.CreatedAt} })
}

// namespacesCreateOptions are the inputs of `occ namespaces create`.
type namespacesCreateOptions struct {
	API     *apiOptions
	Name    string
	Wait    bool
	Timeout time.Duration
}

func namespacesCreateCmd(api *apiOptions) *cobra.Command {
	opts := &namespacesCreateOptions{API: api}
	cmd := verbCmd(api, "create NAME", "Create a Namespace (it starts provisioning; --wait waits until ready)",
		func(ctx context.Context) error { return runNamespacesCreate(ctx, opts) }, &opts.Name)
	addWaitFlags(cmd, &opts.Wait, &opts.Timeout, "wait until the Namespace is ready", 10*time.Minute)
	return cmd
}

func runNamespacesCreate(ctx context.Context, opts *namespacesCreateOptions) error {
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	ns, err := c.CreateNamespace(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.Wait {
		id := ns.Id
		if err := waitFor(ctx, opts.API, "namespace", id, string(ns.Status), opts.Timeout, func(ctx context.Context) (err error) {
			ns, err = c.WaitNamespace(ctx, id, client.NamespaceReady)
			return err
		}); err != nil {
			return err
		}
	}
	return printNamespace(opts.API, ns)
}

// namespacesGetOptions are the inputs of `occ namespaces get`.
type namespacesGetOptions struct {
	API *apiOptions
	// Namespace is an ID or a name.
	Namespace string
}

func namespacesGetCmd(api *apiOptions) *cobra.Command {
	opts := &namespacesGetOptions{API: api}
	return verbCmd(api, "get NAMESPACE", "Show a Namespace (by ID or name)",
		func(ctx context.Context) error { return runNamespacesGet(ctx, opts) }, &opts.Namespace)
}

func runNamespacesGet(ctx context.Context, opts *namespacesGetOptions) error {
	c, id, err := namespaceTarget(ctx, opts.API, opts.Namespace)
	if err != nil {
		return err
	}
	ns, err := c.GetNamespace(ctx, id)
	if err != nil {
		return err
	}
	return printNamespace(opts.API, ns)
}

// namespacesDeleteOptions are the inputs of `occ namespaces delete`.
type namespacesDeleteOptions struct {
	API *apiOptions
	// Namespace is an ID or a name.
	Namespace string
	Wait      bool
	Timeout   time.Duration
}

func namespacesDeleteCmd(api *apiOptions) *cobra.Command {
	opts := &namespacesDeleteOptions{API: api}
	cmd := verbCmd(api, "delete NAMESPACE", "Delete an empty Namespace (by ID or name; --wait waits until it is gone)",
		func(ctx context.Context) error { return runNamespacesDelete(ctx, opts) }, &opts.Namespace)
	addWaitFlags(cmd, &opts.Wait, &opts.Timeout, "wait until the Namespace is gone", 10*time.Minute)
	return cmd
}

func runNamespacesDelete(ctx context.Context, opts *namespacesDeleteOptions) error {
	c, id, err := namespaceTarget(ctx, opts.API, opts.Namespace)
	if err != nil {
		return err
	}
	ns, err := c.DeleteNamespace(ctx, id, "")
	if err != nil {
		return err
	}
	if !opts.Wait {
		return printNamespace(opts.API, ns)
	}
	if err := waitFor(ctx, opts.API, "namespace", ns.Id, string(ns.Status), opts.Timeout, func(ctx context.Context) error {
		_, err := c.WaitNamespace(ctx, id, client.NamespaceGone)
		return err
	}); err != nil {
		return err
	}
	return printGone(opts.API, "namespace", id)
}

func namespacesUpdateCmd(api *apiOptions) *cobra.Command {
	var ref, name string
	cmd := verbCmd(api, "update NAMESPACE --name NEW", "Rename a Namespace (by ID or name)", func(ctx context.Context) error {
		c, id, err := namespaceTarget(ctx, api, ref)
		if err != nil {
			return err
		}
		ns, err := c.RenameNamespace(ctx, id, name, "")
		if err != nil {
			return err
		}
		return printNamespace(api, ns)
	}, &ref)
	cmd.Example = "  occ namespaces update team --name support-team"
	cmd.Flags().StringVar(&name, "name", "", "the new name")
	_ = cmd.MarkFlagRequired("name")
	cmd.ValidArgsFunction = completeNamespaces(api)
	return cmd
}
