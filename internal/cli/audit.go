package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/openclaw/occ/internal/occ"
)

// auditCmd is `occ audit export`.
func auditCmd(api *apiOptions) *cobra.Command {
	return groupCmd("audit", "The audit log", auditExportCmd(api))
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
