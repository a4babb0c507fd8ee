package cli

// The building blocks of the client commands' verbs: one way to make a
// command from its positional arguments and run function, to add --wait
// and --timeout, to reach the Namespace and the resource a command acts on,
// to print one object or a list, and to wait for a resource's state.

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/client/gen"
)

// verbCmd is a client command taking exactly len(args) positional
// arguments (none: cobra.NoArgs), stored in order into args before fn runs.
func verbCmd(api *apiOptions, use, short string, fn func(context.Context) error, args ...*string) *cobra.Command {
	check := cobra.NoArgs
	if len(args) > 0 {
		check = cobra.ExactArgs(len(args))
	}
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  check,
		RunE: run(api, func(ctx context.Context, given []string) error {
			for i, p := range args {
				*p = given[i]
			}
			return fn(ctx)
		}),
	}
}

// addWaitFlags adds --wait (with its usage) and --timeout (how long it
// waits, def by default) to cmd.
func addWaitFlags(cmd *cobra.Command, wait *bool, timeout *time.Duration, usage string, def time.Duration) {
	cmd.Flags().BoolVar(wait, "wait", false, usage)
	cmd.Flags().DurationVar(timeout, "timeout", def, "how long --wait waits (0: no limit)")
}

// namespaced returns a client and the ID of --namespace.
func (o *apiOptions) namespaced(ctx context.Context) (*client.Client, string, error) {
	c, err := o.client()
	if err != nil {
		return nil, "", err
	}
	ns, err := o.namespaceID(ctx, c)
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}

// resolver returns the ID of the resource ref names (an ID or a name) in
// the Namespace ns.
type resolver func(ctx context.Context, c *client.Client, ns, ref string) (string, error)

// target returns a client, the ID of --namespace and the ID resolve finds
// for ref in it.
func (o *apiOptions) target(ctx context.Context, ref string, resolve resolver) (*client.Client, string, string, error) {
	c, ns, err := o.namespaced(ctx)
	if err != nil {
		return nil, "", "", err
	}
	id, err := resolve(ctx, c, ns, ref)
	if err != nil {
		return nil, "", "", err
	}
	return c, ns, id, nil
}

// actOn resolves ref in --namespace, calls do with the Namespace and
// resource IDs (a client method expression fits, e.g.
// (*client.Client).GetAgent), and prints what it returns.
func actOn[T any](ctx context.Context, api *apiOptions, ref string, resolve resolver,
	do func(c *client.Client, ctx context.Context, ns, id string) (T, error), print func(*apiOptions, T) error) error {
	c, ns, id, err := api.target(ctx, ref, resolve)
	if err != nil {
		return err
	}
	v, err := do(c, ctx, ns, id)
	if err != nil {
		return err
	}
	return print(api, v)
}

// listIn lists --namespace's items with list (e.g.
// (*client.Client).ListAllAgents) and prints them.
func listIn[T any](ctx context.Context, api *apiOptions, list func(c *client.Client, ctx context.Context, ns string) ([]T, error),
	header []string, row func(*T) []string) error {
	c, ns, err := api.namespaced(ctx)
	if err != nil {
		return err
	}
	items, err := list(c, ctx, ns)
	if err != nil {
		return err
	}
	return printList(api, items, header, row)
}

// printList writes items: as a JSON array (never null), or as a table of
// header and a row per item.
func printList[T any](api *apiOptions, items []T, header []string, row func(*T) []string) error {
	if api.structured() {
		return api.printData(nonNil(items))
	}
	rows := make([][]string, 0, len(items))
	for i := range items {
		rows = append(rows, row(&items[i]))
	}
	return api.printTable(header, rows)
}

// printObject writes one object: v as JSON, or the fields as
// "field:  value" lines.
func (o *apiOptions) printObject(v any, fields func() [][2]string) error {
	if o.structured() {
		return o.printData(v)
	}
	return o.printFields(fields())
}

// nonNil returns items, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](items []T) []T {
	if items == nil {
		return []T{}
	}
	return items
}

// waitFor reports "noun ID: status" on standard error, then runs wait
// bounded by timeout.
func waitFor(ctx context.Context, api *apiOptions, noun, id, status string, timeout time.Duration, wait func(context.Context) error) error {
	fmt.Fprintf(api.IO.ErrOut, "%s %s: %s\n", noun, id, status)
	wctx, cancel := withTimeout(ctx, timeout)
	defer cancel()
	return wait(wctx)
}

// printGone is the end of `delete --wait`: "noun ID deleted" (JSON: the
// ID and status gone).
func printGone(api *apiOptions, noun, id string) error {
	if api.structured() {
		return api.printData(map[string]string{"id": id, "status": "gone"})
	}
	fmt.Fprintf(api.IO.Out, "%s %s deleted\n", noun, id)
	return nil
}

// readErrorField is the "read error" field of an object whose
// Configuration could not be read, or nothing.
func readErrorField(e *gen.ReadError) [][2]string {
	if e == nil {
		return nil
	}
	return [][2]string{{"read error", string(e.Code) + " " + e.Field}}
}
