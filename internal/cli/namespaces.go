package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
)

// namespacesCmd is `occ namespaces list|create|get|delete`.
func namespacesCmd(api *apiOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "namespaces", Aliases: []string{"namespace", "ns"}, Short: "Namespaces"}
	cmd.AddCommand(namespacesListCmd(api), namespacesCreateCmd(api), namespacesGetCmd(api), namespacesDeleteCmd(api))
	return cmd
}

// namespaceRows are a list's table rows.
func namespaceRows(items []client.Namespace) [][]string {
	rows := make([][]string, 0, len(items))
	for _, n := range items {
		rows = append(rows, []string{n.Id, n.Name, string(n.Status), n.CreatedAt})
	}
	return rows
}

// printNamespace writes one Namespace.
func printNamespace(api *apiOptions, n *client.Namespace) error {
	if api.json() {
		return api.printJSON(n)
	}
	return api.printFields([][2]string{{"id", n.Id}, {"name", n.Name}, {"status", string(n.Status)},
		{"created", n.CreatedAt}, {"updated", n.UpdatedAt}})
}

// namespacesListOptions are the inputs of `occ namespaces list`.
type namespacesListOptions struct {
	API *apiOptions
}

func namespacesListCmd(api *apiOptions) *cobra.Command {
	opts := &namespacesListOptions{API: api}
	return &cobra.Command{
		Use:   "list",
		Short: "List the Namespaces you may read",
		Args:  cobra.NoArgs,
		RunE:  run(api, func(ctx context.Context, _ []string) error { return runNamespacesList(ctx, opts) }),
	}
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
	if opts.API.json() {
		return opts.API.printJSON(nonNil(items))
	}
	return opts.API.printTable([]string{"ID", "NAME", "STATUS", "CREATED"}, namespaceRows(items))
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
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a Namespace (it starts provisioning; --wait waits until ready)",
		Args:  cobra.ExactArgs(1),
		RunE: run(api, func(ctx context.Context, args []string) error {
			opts.Name = args[0]
			return runNamespacesCreate(ctx, opts)
		}),
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until the Namespace is ready")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "how long --wait waits (0: no limit)")
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
		fmt.Fprintf(opts.API.IO.ErrOut, "namespace %s: %s\n", ns.Id, ns.Status)
		wctx, cancel := withTimeout(ctx, opts.Timeout)
		defer cancel()
		if ns, err = c.WaitNamespace(wctx, ns.Id, client.NamespaceReady); err != nil {
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
	return &cobra.Command{
		Use:   "get NAMESPACE",
		Short: "Show a Namespace (by ID or name)",
		Args:  cobra.ExactArgs(1),
		RunE: run(api, func(ctx context.Context, args []string) error {
			opts.Namespace = args[0]
			return runNamespacesGet(ctx, opts)
		}),
	}
}

func runNamespacesGet(ctx context.Context, opts *namespacesGetOptions) error {
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	id, err := resolveNamespace(ctx, c, opts.Namespace)
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
	cmd := &cobra.Command{
		Use:   "delete NAMESPACE",
		Short: "Delete an empty Namespace (by ID or name; --wait waits until it is gone)",
		Args:  cobra.ExactArgs(1),
		RunE: run(api, func(ctx context.Context, args []string) error {
			opts.Namespace = args[0]
			return runNamespacesDelete(ctx, opts)
		}),
	}
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "wait until the Namespace is gone")
	cmd.Flags().DurationVar(&opts.Timeout, "timeout", 10*time.Minute, "how long --wait waits (0: no limit)")
	return cmd
}

func runNamespacesDelete(ctx context.Context, opts *namespacesDeleteOptions) error {
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	id, err := resolveNamespace(ctx, c, opts.Namespace)
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
	fmt.Fprintf(opts.API.IO.ErrOut, "namespace %s: %s\n", ns.Id, ns.Status)
	wctx, cancel := withTimeout(ctx, opts.Timeout)
	defer cancel()
	if _, err := c.WaitNamespace(wctx, id, client.NamespaceGone); err != nil {
		return err
	}
	if opts.API.json() {
		return opts.API.printJSON(map[string]string{"id": id, "status": client.NamespaceGone})
	}
	fmt.Fprintf(opts.API.IO.Out, "namespace %s deleted\n", id)
	return nil
}

// nonNil returns items, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](items []T) []T {
	if items == nil {
		return []T{}
	}
	return items
}
