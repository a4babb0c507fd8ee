package docker

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/compute"
)

// errNotOwned is the permanent error of an object occ did not create.
func errNotOwned(kind, name string) error {
	return compute.Permanent(CodeOwnershipConflict,
		fmt.Errorf("%s %s exists without occ's labels (%s=true and the occ IDs); occ does not adopt it", kind, name, LabelManaged))
}

// EnsureNamespace creates the Namespace's bridge network. A network of
// that name without occ's labels for this Namespace ID is refused
// (CodeOwnershipConflict).
func (d *Driver) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	if _, err := d.ensureNetwork(ctx, ns.ID); err != nil {
		return compute.NamespaceObservation{}, err
	}
	return compute.NamespaceObservation{Done: true}, nil
}

// ensureNetwork returns the Namespace's network, creating it the first
// time (two occ processes racing: the engine's duplicate check lets one
// win, and the other reads it back).
func (d *Driver) ensureNetwork(ctx context.Context, nsID string) (network, error) {
	name, want := NetworkName(nsID), NamespaceLabels(nsID)
	for range 2 {
		n, err := d.e.inspectNetwork(ctx, name)
		switch {
		case err == nil && !owns(n.Labels, want):
			return n, errNotOwned("network", name)
		case err == nil:
			return n, nil
		case !isNotFound(err):
			return n, classify(err)
		}
		err = d.e.createNetwork(ctx, network{Name: name, Driver: "bridge", Labels: want})
		if err != nil && !isConflict(err) {
			return network{}, classify(err)
		}
	}
	return network{}, fmt.Errorf("network %s: created and not found", name)
}

// DeleteNamespace removes the Namespace's Agents (containers and volumes
// carrying occ's labels for it), then its network, but only if no other
// container is attached to it (CodeForeignObjects otherwise: the network
// and the foreign containers stay). A network without occ's labels is
// never removed.
func (d *Driver) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	done := compute.NamespaceObservation{Done: true}
	byNS := managed()
	byNS[LabelNamespace] = ns.ID
	cs, err := d.e.listContainers(ctx, byNS)
	if err != nil {
		return compute.NamespaceObservation{}, classify(err)
	}
	vs, err := d.e.listVolumes(ctx, byNS)
	if err != nil {
		return compute.NamespaceObservation{}, classify(err)
	}
	agents := map[compute.AgentRef]bool{}
	for _, c := range cs {
		agents[compute.AgentRef{NamespaceID: ns.ID, AgentID: c.Labels[LabelAgent]}] = true
	}
	for _, v := range vs {
		agents[compute.AgentRef{NamespaceID: ns.ID, AgentID: v.Labels[LabelAgent]}] = true
	}
	for a := range agents {
		if a.Validate() != nil {
			continue
		}
		if err := d.DeleteAgent(ctx, a); err != nil {
			return compute.NamespaceObservation{}, err
		}
	}
	name := NetworkName(ns.ID)
	n, err := d.e.inspectNetwork(ctx, name)
	switch {
	case isNotFound(err):
		return done, nil
	case err != nil:
		return compute.NamespaceObservation{}, classify(err)
	case !owns(n.Labels, NamespaceLabels(ns.ID)):
		return compute.NamespaceObservation{}, errNotOwned("network", name)
	case len(n.Containers) > 0:
		return compute.NamespaceObservation{}, compute.Permanent(CodeForeignObjects,
			fmt.Errorf("network %s has %d container(s) occ did not create attached; occ does not remove it", name, len(n.Containers)))
	}
	if err := d.e.removeNetwork(ctx, n.ID); err != nil && !isNotFound(err) {
		return compute.NamespaceObservation{}, classify(err)
	}
	return done, nil
}
