// Package computetest holds the conformance suite every Compute Driver runs,
// and a fault-injecting driver for worker tests.
package computetest

import (
	"context"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Observer lets the suite check a driver's effect from outside.
type Observer interface {
	NamespaceExists(t *testing.T, id string) bool
}

// Run checks the driver contract: every method is idempotent and keyed by ID.
func Run(t *testing.T, d compute.Driver, obs Observer) {
	ctx := context.Background()
	t.Run("EnsureNamespaceIsIdempotent", func(t *testing.T) {
		ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "conformance"}
		for i := 0; i < 2; i++ {
			o, err := d.EnsureNamespace(ctx, ns)
			if err != nil || !o.Done {
				t.Fatalf("EnsureNamespace #%d = %+v, %v; want done", i+1, o, err)
			}
		}
		if !obs.NamespaceExists(t, ns.ID) {
			t.Fatalf("namespace %s missing after EnsureNamespace", ns.ID)
		}
	})
	t.Run("DeleteNamespaceIsIdempotent", func(t *testing.T) {
		ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "conformance"}
		if _, err := d.EnsureNamespace(ctx, ns); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			o, err := d.DeleteNamespace(ctx, ns)
			if err != nil || !o.Done {
				t.Fatalf("DeleteNamespace #%d = %+v, %v; want done", i+1, o, err)
			}
		}
		if obs.NamespaceExists(t, ns.ID) {
			t.Fatalf("namespace %s still present after DeleteNamespace", ns.ID)
		}
	})
	t.Run("DeleteOfUnknownNamespaceSucceeds", func(t *testing.T) {
		o, err := d.DeleteNamespace(ctx, compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace)})
		if err != nil || !o.Done {
			t.Fatalf("DeleteNamespace of unknown = %+v, %v; want done", o, err)
		}
	})
}
