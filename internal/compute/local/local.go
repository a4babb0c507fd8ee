// Package local is the embedded default Compute Driver: it runs gateways as
// supervised processes on this host, one directory per Namespace and Agent
// under its root.
package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Driver is the local Compute Driver.
type Driver struct {
	root string
}

// New returns a local driver keeping its state under root (created 0700).
func New(root string) (*Driver, error) {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("local compute root: %w", err)
	}
	return &Driver{root: root}, nil
}

// Name implements compute.Driver.
func (d *Driver) Name() string { return "local" }

// NamespaceDir is where a Namespace's Agents live.
func (d *Driver) NamespaceDir(id string) string { return filepath.Join(d.root, "namespaces", id) }

// EnsureNamespace creates the Namespace's directory.
func (d *Driver) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if !occ.ValidID(occ.PrefixNamespace, ns.ID) {
		return compute.NamespaceObservation{}, compute.Permanent("INVALID_NAMESPACE_ID", fmt.Errorf("bad id %q", ns.ID))
	}
	if err := os.MkdirAll(d.NamespaceDir(ns.ID), 0o700); err != nil {
		return compute.NamespaceObservation{}, fmt.Errorf("create namespace directory: %w", err)
	}
	return compute.NamespaceObservation{Done: true}, nil
}

// DeleteNamespace removes the Namespace's directory and all it holds.
func (d *Driver) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if !occ.ValidID(occ.PrefixNamespace, ns.ID) {
		return compute.NamespaceObservation{}, compute.Permanent("INVALID_NAMESPACE_ID", fmt.Errorf("bad id %q", ns.ID))
	}
	if err := os.RemoveAll(d.NamespaceDir(ns.ID)); err != nil {
		return compute.NamespaceObservation{}, fmt.Errorf("remove namespace directory: %w", err)
	}
	return compute.NamespaceObservation{Done: true}, nil
}
