package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/client"
	"github.com/openclaw/occ/internal/occ"
)

// auditCmd is `occ audit list|export`.
func auditCmd(api *apiOptions) *cobra.Command {
	return groupCmd("audit", "The audit log", auditListCmd(api), auditExportCmd(api))
}

// auditListOptions are the inputs of `occ audit list`.
type auditListOptions struct {
	API    *apiOptions
	Filter client.AuditFilter
	// InNamespace lists the Namespace's events (namespace:administer)
	// instead of the installation's.
	InNamespace bool
	Limit       int
}

func auditListCmd(api *apiOptions) *cobra.Command {
	opts := &auditListOptions{API: api}
	cmd := verbCmd(api, "list", "List audit events, newest first, with filters",
		func(ctx context.Context) error { return runAuditList(ctx, opts) })
	cmd.Long = `List audit events, newest first: the installation's (installation
administrators; --for-namespace NS narrows them to a Namespace), or with
--in-namespace the events of the Namespace of -n (namespace:administer).
Filters combine; --limit bounds how many are fetched.`
	cmd.Example = `  occ audit list --limit 20
  occ audit list --outcome denied --since 2026-01-01T00:00:00Z
  occ audit list --in-namespace -n team --action secret.update -o json`
	f := cmd.Flags()
	f.StringVar(&opts.Filter.Action, "action", "", "only this action (e.g. secret.create)")
	f.StringVar(&opts.Filter.Kind, "kind", "", "only this kind: bootstrap, mutation, authorization_denial, reconcile or access")
	f.StringVar(&opts.Filter.Outcome, "outcome", "", "only this outcome: success, denied, failure or pending")
	f.StringVar(&opts.Filter.ActorID, "actor", "", "only events of this principal ID")
	f.StringVar(&opts.Filter.ResourceID, "resource", "", "only events about this resource ID")
	f.StringVar(&opts.Filter.NamespaceID, "for-namespace", "", "only events of this Namespace (ID or name; installation list)")
	f.StringVar(&opts.Filter.Since, "since", "", "first time included (RFC 3339)")
	f.StringVar(&opts.Filter.Until, "until", "", "first time excluded (RFC 3339)")
	f.BoolVar(&opts.InNamespace, "in-namespace", false, "list the events of the Namespace of -n (namespace:administer)")
	f.IntVar(&opts.Limit, "limit", 100, "at most this many events (0: all)")
	cmd.MarkFlagsMutuallyExclusive("in-namespace", "for-namespace")
	return cmd
}

func runAuditList(ctx context.Context, opts *auditListOptions) error {
	f := opts.Filter
	var err error
	if f.Since, err = apiTime("since", f.Since); err != nil {
		return err
	}
	if f.Until, err = apiTime("until", f.Until); err != nil {
		return err
	}
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	ns := ""
	if opts.InNamespace {
		if ns, err = opts.API.namespaceID(ctx, c); err != nil {
			return err
		}
	}
	if f.NamespaceID != "" {
		if f.NamespaceID, err = resolveNamespace(ctx, c, f.NamespaceID); err != nil {
			return err
		}
	}
	var events []client.AuditEvent
	p := client.Page{Size: 200}
	for {
		if opts.Limit > 0 {
			p.Size = min(200, opts.Limit-len(events))
		}
		items, next, err := c.ListAuditEvents(ctx, ns, f, p)
		if err != nil {
			return err
		}
		events = append(events, items...)
		if next == "" || (opts.Limit > 0 && len(events) >= opts.Limit) {
			break
		}
		p.Token = next
	}
	return printList(opts.API, events, []string{"ID", "TIME", "KIND", "ACTION", "OUTCOME", "ACTOR", "RESOURCE"}, func(e *client.AuditEvent) []string {
		return []string{e.Id, e.OccurredAt, string(e.Kind), e.Action, string(e.Outcome), e.ActorId, e.Resource.Kind + "/" + e.Resource.Id}
	})
}

// auditExportOptions are the inputs of `occ audit export`.
type auditExportOptions struct {
	API          *apiOptions
	Since, Until string // RFC 3339; "" = open bound
	Out          string
}

func auditExportCmd(api *apiOptions) *cobra.Command {
	opts := &auditExportOptions{API: api}
	cmd := verbCmd(api, "export", "Write audit events to a JSON Lines file, oldest first (installation administrators)",
		func(ctx context.Context) error { return runAuditExport(ctx, opts) })
	cmd.Flags().StringVar(&opts.Since, "since", "", "first time included (RFC 3339, e.g. 2026-01-01T00:00:00Z)")
	cmd.Flags().StringVar(&opts.Until, "until", "", "first time excluded (RFC 3339)")
	cmd.Flags().StringVar(&opts.Out, "out", "", "the file to write (created with mode 0600; it must not exist)")
	_ = cmd.MarkFlagRequired("out")
	return cmd
}

// apiTime turns an RFC 3339 flag into the API's timestamp form.
func apiTime(flag, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return "", fmt.Errorf("--%s %q is not an RFC 3339 time such as 2026-01-01T00:00:00Z", flag, v)
	}
	return occ.FormatTime(t), nil
}

// runAuditExport writes the export to a temporary file beside --out and
// renames it into place only once the server sent all of it: a file at
// --out is always a whole export.
func runAuditExport(ctx context.Context, opts *auditExportOptions) (err error) {
	since, err := apiTime("since", opts.Since)
	if err != nil {
		return err
	}
	until, err := apiTime("until", opts.Until)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(opts.Out); err == nil {
		return fmt.Errorf("%s exists; choose a new file", opts.Out)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	c, err := opts.API.client()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(opts.Out), "."+filepath.Base(opts.Out)+".*.partial") // mode 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := c.ExportAuditEvents(ctx, since, until, tmp)
	if err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp.Name(), opts.Out); err != nil { // fails, rather than replaces, when --out appeared meanwhile
		return err
	}
	_ = os.Remove(tmp.Name())
	fmt.Fprintf(opts.API.IO.ErrOut, "exported %d audit events to %s\n", n, opts.Out)
	return nil
}
