package kubernetes

import (
	"context"

	"github.com/openclaw/occ/internal/compute"
)

// Logs refuses: the driver does not read gateway output yet. Reading it
// is one pods/log call (the revision's Pod, container ContainerName,
// bounded by TailLines and LimitBytes), but the node lane that tests the
// driver cannot serve it: kwok's fake kubelet answers a Pod's logs only
// from a file a kwok Logs object names, and kubetest installs only kwok's
// PortForward resource. Until the lane can, the driver says so
// (compute.ErrLogsUnsupported: the API answers 501) rather than ship an
// untested read.
func (d *Driver) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	if err := rev.Validate(); err != nil {
		return compute.Logs{}, err
	}
	return compute.Logs{}, compute.ErrLogsUnsupported
}
