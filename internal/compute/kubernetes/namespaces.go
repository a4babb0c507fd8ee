package kubernetes

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/openclaw/occ/internal/compute"
)

func resourceInt(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }

// EnsureNamespace applies the tenant namespace and its quota, limits and
// NetworkPolicies. A namespace of that name without occ's labels for this
// Namespace ID is refused (CodeOwnershipConflict); one still terminating
// (deleted just before) is not done yet.
func (d *Driver) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	done, err := d.ensureNamespace(ctx, ns.ID)
	return compute.NamespaceObservation{Done: done}, err
}

// namespaceRecheck is how long PrepareRevision trusts its last check of a
// tenant namespace's objects (EnsureNamespace always checks). A pass over
// an Agent otherwise reads the namespace, its quota, limits and
// NetworkPolicies every time: with 50 Agents per namespace, the same
// objects many times a second. An object deleted or replaced meanwhile is
// found at the next check (and by the Namespace's own reconcile).
const namespaceRecheck = 10 * time.Second

// namespaceChecked is ensureNamespace, skipped when it found everything in
// place less than namespaceRecheck ago.
func (d *Driver) namespaceChecked(ctx context.Context, nsID string) (bool, error) {
	d.mu.Lock()
	at, ok := d.checked[nsID]
	d.mu.Unlock()
	if ok && time.Since(at) < namespaceRecheck {
		return true, nil
	}
	done, err := d.ensureNamespace(ctx, nsID)
	if done && err == nil {
		d.mu.Lock()
		d.checked[nsID] = time.Now()
		d.mu.Unlock()
	}
	return done, err
}

func (d *Driver) ensureNamespace(ctx context.Context, nsID string) (bool, error) {
	name := NamespaceName(nsID)
	cur, found, err := getOwned(ctx, "namespace", "", name, namespaceLabels(nsID), d.cs.CoreV1().Namespaces().Get)
	if err != nil {
		return false, err
	}
	if found && cur.DeletionTimestamp != nil {
		return false, nil
	}
	if _, err := applyChanged(ctx, &d.marks, d.cs.CoreV1().Namespaces().Apply, "namespace", "", name, cur, found, namespaceObject(nsID)); err != nil {
		return false, err
	}
	// The namespace-level objects have fixed names: one that exists
	// without occ's labels is refused, not overwritten.
	nsLabels := namespaceLabels(nsID)
	if _, err := applyOwned(ctx, &d.marks, d.cs.CoreV1().ResourceQuotas(name), "resourcequota", name, QuotaName, nsLabels, d.quotaObject(nsID), false); err != nil {
		return false, err
	}
	if _, err := applyOwned(ctx, &d.marks, d.cs.CoreV1().LimitRanges(name), "limitrange", name, LimitRangeName, nsLabels, d.limitRangeObject(nsID), false); err != nil {
		return false, err
	}
	policies := d.cs.NetworkingV1().NetworkPolicies(name)
	for _, p := range d.policyObjects(nsID) {
		if _, err := applyOwned(ctx, &d.marks, policies, "networkpolicy", name, *p.Name, nsLabels, p, false); err != nil {
			return false, err
		}
	}
	return true, nil
}

// DeleteNamespace removes every Agent occ runs in the tenant namespace
// (waiting for their Pods to end), then the namespace itself, but only if
// nothing remains in it that occ did not create (CodeForeignObjects
// otherwise: the namespace and the foreign objects stay). Done once the
// namespace is gone; while Kubernetes still finalizes it (past the
// termination timeout) not done yet. A namespace without occ's labels is
// never deleted.
func (d *Driver) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	name := NamespaceName(ns.ID)
	d.marks.dropNamespace(name)
	d.mu.Lock()
	delete(d.checked, ns.ID)
	d.mu.Unlock()
	cur, found, err := getOwned(ctx, "namespace", "", name, namespaceLabels(ns.ID), d.cs.CoreV1().Namespaces().Get)
	if err != nil {
		return compute.NamespaceObservation{}, err
	}
	if !found {
		return compute.NamespaceObservation{Done: true}, nil
	}
	if cur.DeletionTimestamp != nil {
		return d.waitNamespaceGone(ctx, name)
	}
	agents, err := d.agentsIn(ctx, ns.ID)
	if err != nil {
		return compute.NamespaceObservation{}, err
	}
	for _, a := range agents {
		if err := d.DeleteAgent(ctx, a); err != nil {
			return compute.NamespaceObservation{}, err
		}
	}
	if err := d.foreignObjects(ctx, name); err != nil {
		return compute.NamespaceObservation{}, err
	}
	uid := cur.UID
	err = d.cs.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return compute.NamespaceObservation{}, classify("delete namespace "+name, err)
	}
	return d.waitNamespaceGone(ctx, name)
}

// waitNamespaceGone waits, within the termination timeout, until the
// namespace no longer exists: done, or not yet.
func (d *Driver) waitNamespaceGone(ctx context.Context, name string) (compute.NamespaceObservation, error) {
	deadline := time.Now().Add(d.o.TerminationTimeout)
	for {
		_, err := d.cs.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return compute.NamespaceObservation{Done: true}, nil
		case err != nil:
			return compute.NamespaceObservation{}, classify("read namespace "+name, err)
		case time.Now().After(deadline):
			return compute.NamespaceObservation{}, nil
		}
		select {
		case <-ctx.Done():
			return compute.NamespaceObservation{}, ctx.Err()
		case <-time.After(terminationPoll):
		}
	}
}

// agentsIn lists the Agents occ has objects of in the Namespace's tenant
// namespace (from the labels of its Deployments, Secrets and claims).
func (d *Driver) agentsIn(ctx context.Context, nsID string) ([]compute.AgentRef, error) {
	name := NamespaceName(nsID)
	sel := metav1.ListOptions{LabelSelector: LabelManagedBy + "=" + ManagedBy + "," + LabelNamespace + "=" + nsID + "," + LabelAgent}
	seen := map[string]bool{}
	var out []compute.AgentRef
	add := func(items []metav1.Object) {
		for _, o := range items {
			id := o.GetLabels()[LabelAgent]
			a := compute.AgentRef{NamespaceID: nsID, AgentID: id}
			if !seen[id] && a.Validate() == nil {
				seen[id] = true
				out = append(out, a)
			}
		}
	}
	lists := []func() ([]metav1.Object, error){
		func() ([]metav1.Object, error) { return itemsOf(d.cs.AppsV1().Deployments(name).List(ctx, sel)) },
		func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().Secrets(name).List(ctx, sel)) },
		func() ([]metav1.Object, error) {
			return itemsOf(d.cs.CoreV1().PersistentVolumeClaims(name).List(ctx, sel))
		},
		func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().ConfigMaps(name).List(ctx, sel)) },
	}
	for _, list := range lists {
		items, err := list()
		if err != nil {
			return nil, classify("list the Agents' objects", err)
		}
		add(items)
	}
	return out, nil
}

// itemsOf returns the items of a list answer.
func itemsOf(l runtime.Object, err error) ([]metav1.Object, error) {
	if err != nil {
		return nil, err
	}
	objs, err := meta.ExtractList(l)
	if err != nil {
		return nil, err
	}
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		a, err := meta.Accessor(o)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// systemObjects are the objects Kubernetes itself puts in every namespace.
var systemObjects = map[string]bool{"configmap/kube-root-ca.crt": true, "serviceaccount/default": true}

// foreignObjects fails with CodeForeignObjects when the namespace holds an
// object of a kind occ creates there without occ's labels (other than those
// Kubernetes puts in every namespace).
func (d *Driver) foreignObjects(ctx context.Context, ns string) error {
	var foreign []string
	check := func(kind string, items []metav1.Object) {
		for _, o := range items {
			if o.GetLabels()[LabelManagedBy] != ManagedBy && !systemObjects[kind+"/"+o.GetName()] {
				foreign = append(foreign, kind+"/"+o.GetName())
			}
		}
	}
	all := metav1.ListOptions{}
	lists := []struct {
		kind string
		list func() ([]metav1.Object, error)
	}{
		{"deployment", func() ([]metav1.Object, error) { return itemsOf(d.cs.AppsV1().Deployments(ns).List(ctx, all)) }},
		{"pod", func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().Pods(ns).List(ctx, all)) }},
		{"service", func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().Services(ns).List(ctx, all)) }},
		{"configmap", func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().ConfigMaps(ns).List(ctx, all)) }},
		{"secret", func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().Secrets(ns).List(ctx, all)) }},
		{"persistentvolumeclaim", func() ([]metav1.Object, error) {
			return itemsOf(d.cs.CoreV1().PersistentVolumeClaims(ns).List(ctx, all))
		}},
		{"serviceaccount", func() ([]metav1.Object, error) { return itemsOf(d.cs.CoreV1().ServiceAccounts(ns).List(ctx, all)) }},
		{"networkpolicy", func() ([]metav1.Object, error) {
			return itemsOf(d.cs.NetworkingV1().NetworkPolicies(ns).List(ctx, all))
		}},
	}
	for _, l := range lists {
		items, err := l.list()
		if err != nil {
			return classify("list "+l.kind+"s", err)
		}
		check(l.kind, items)
	}
	if len(foreign) > 0 {
		return compute.Permanent(CodeForeignObjects, fmt.Errorf("namespace %s holds objects occ did not create (%v); occ does not delete it", ns, foreign))
	}
	return nil
}
