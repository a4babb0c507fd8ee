package cli

// The verbs every Namespace resource has, made once: list, get and delete
// of a noun described by a nounSpec. A noun's create and update, whose
// inputs differ, are written beside its spec.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/openclaw/occ/internal/client"
)

// nounSpec describes a resource of a Namespace.
type nounSpec[T any] struct {
	// noun is the command ("presets"), kind the resource's name in
	// messages ("Preset"), prefix its ID's ("pre_").
	noun, kind, prefix string
	list               func(c *client.Client, ctx context.Context, ns string) ([]T, error)
	get                func(c *client.Client, ctx context.Context, ns, id string) (*T, error)
	// del deletes without a precondition.
	del    func(c *client.Client, ctx context.Context, ns, id string) error
	nameID func(*T) (name, id string)
	// header and row are the list's columns; fields one object's.
	header []string
	row    func(*T) []string
	fields func(*T) [][2]string
	// show, when set, prints one resource instead of fields.
	show func(*apiOptions, *T) error
}

// resolve returns the ID of the resource ref names (an ID or a name).
func (n *nounSpec[T]) resolve(ctx context.Context, c *client.Client, ns, ref string) (string, error) {
	return resolveByName(ctx, ref, n.prefix, n.kind,
		func(ctx context.Context) ([]T, error) { return n.list(c, ctx, ns) },
		func(x T) (string, string) { return n.nameID(&x) })
}

// print writes one resource.
func (n *nounSpec[T]) print(api *apiOptions, v *T) error {
	if n.show != nil {
		return n.show(api, v)
	}
	return api.printObject(v, func() [][2]string { return n.fields(v) })
}

// createCmd is `create -f FILE`: the body from a JSON or YAML file.
func (n *nounSpec[T]) createCmd(api *apiOptions, short, example string,
	create func(c *client.Client, ctx context.Context, ns string, body json.RawMessage) (*T, error)) *cobra.Command {
	var file string
	cmd := verbCmd(api, "create -f FILE", short, func(ctx context.Context) error {
		body, err := readBody(api, file)
		if err != nil {
			return err
		}
		c, ns, err := api.namespaced(ctx)
		if err != nil {
			return err
		}
		v, err := create(c, ctx, ns, body)
		if err != nil {
			return err
		}
		return n.print(api, v)
	})
	cmd.Example = example
	addFileFlag(cmd, &file, "the "+n.kind)
	return cmd
}

// updateCmd is `update NAME -f FILE`: a patch from a JSON or YAML file.
func (n *nounSpec[T]) updateCmd(api *apiOptions, short, example string,
	update func(c *client.Client, ctx context.Context, ns, id string, patch json.RawMessage) (*T, error)) *cobra.Command {
	var ref, file string
	cmd := verbCmd(api, "update NAME -f FILE", short, func(ctx context.Context) error {
		patch, err := readBody(api, file)
		if err != nil {
			return err
		}
		return actOn(ctx, api, ref, n.resolve, func(c *client.Client, ctx context.Context, ns, id string) (*T, error) {
			return update(c, ctx, ns, id, patch)
		}, n.print)
	}, &ref)
	cmd.Example = example
	addFileFlag(cmd, &file, "the patch")
	cmd.ValidArgsFunction = completeNames(api, n.list, n.nameID)
	return cmd
}

func (n *nounSpec[T]) listCmd(api *apiOptions) *cobra.Command {
	cmd := verbCmd(api, "list", fmt.Sprintf("List the Namespace's %ss", n.kind), func(ctx context.Context) error {
		return listIn(ctx, api, n.list, n.header, n.row)
	})
	cmd.Example = fmt.Sprintf("  occ %s list\n  occ %s list -n team -o name", n.noun, n.noun)
	return cmd
}

func (n *nounSpec[T]) getCmd(api *apiOptions) *cobra.Command {
	var ref string
	cmd := verbCmd(api, "get NAME", fmt.Sprintf("Show a %s (by ID or name)", n.kind), func(ctx context.Context) error {
		return actOn(ctx, api, ref, n.resolve, n.get, n.print)
	}, &ref)
	cmd.Example = fmt.Sprintf("  occ %s get NAME\n  occ %s get NAME -o yaml", n.noun, n.noun)
	cmd.ValidArgsFunction = completeNames(api, n.list, n.nameID)
	return cmd
}

func (n *nounSpec[T]) deleteCmd(api *apiOptions) *cobra.Command {
	var ref string
	cmd := verbCmd(api, "delete NAME", fmt.Sprintf("Delete a %s (by ID or name)", n.kind), func(ctx context.Context) error {
		c, ns, id, err := api.target(ctx, ref, n.resolve)
		if err != nil {
			return err
		}
		if err := n.del(c, ctx, ns, id); err != nil {
			return err
		}
		return printGone(api, n.kind, id)
	}, &ref)
	cmd.Example = fmt.Sprintf("  occ %s delete NAME", n.noun)
	cmd.ValidArgsFunction = completeNames(api, n.list, n.nameID)
	return cmd
}

// readBody reads a request body from a JSON or YAML file ("-": standard
// input) and returns it as JSON.
func readBody(api *apiOptions, file string) (json.RawMessage, error) {
	raw, err := readInput(file, api.IO.In)
	if err != nil {
		return nil, err
	}
	var tree any
	if err := yaml.Unmarshal(raw, &tree); err != nil {
		return nil, fmt.Errorf("%s: not JSON or YAML: %w", file, err)
	}
	if _, ok := tree.(map[string]any); !ok {
		return nil, fmt.Errorf("%s: must hold an object", file)
	}
	out, err := json.Marshal(tree)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return out, nil
}

// addFileFlag adds the required --file/-f of a create or update from a
// file.
func addFileFlag(cmd *cobra.Command, file *string, what string) {
	cmd.Flags().StringVarP(file, "file", "f", "", what+" as JSON or YAML (- for standard input)")
	_ = cmd.MarkFlagRequired("file")
}

// errNoChange is an edit that changed nothing (nothing is sent).
var errNoChange = errors.New("no changes")
