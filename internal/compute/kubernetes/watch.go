package kubernetes

import (
	"errors"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/openclaw/occ/internal/compute"
)

var _ compute.WorkloadWatcher = (*Driver)(nil)

// WatchWorkloads implements compute.WorkloadWatcher: one watch of the
// gateway Pods of every tenant namespace (by occ's labels), which calls
// changed for a Pod's Agent each time the Pod is added, updated (the
// scheduler placed it, a container started, its Ready condition changed)
// or deleted. The watch holds each Pod as its name and labels only; it
// ends when the driver is closed.
func (d *Driver) WatchWorkloads(changed func(compute.AgentRef)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watchStop != nil {
		return errors.New("kubernetes compute driver: workloads are watched already")
	}
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy, LabelRole: RoleGateway}).String()
	factory := informers.NewSharedInformerFactoryWithOptions(d.cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }),
		informers.WithTransform(podIdentity))
	report := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			if a := (compute.AgentRef{NamespaceID: p.Labels[LabelNamespace], AgentID: p.Labels[LabelAgent]}); a.Validate() == nil {
				changed(a)
			}
		}
	}
	if _, err := factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    report,
		UpdateFunc: func(_, obj any) { report(obj) },
		DeleteFunc: report,
	}); err != nil {
		return err
	}
	d.watchStop = make(chan struct{})
	factory.Start(d.watchStop)
	return nil
}

// podIdentity keeps of a watched Pod what WatchWorkloads reads: its name,
// UID, resourceVersion and labels.
func podIdentity(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, Labels: p.Labels}}, nil
}

// stopWatch ends the watch WatchWorkloads started, if any.
func (d *Driver) stopWatch() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watchStop != nil {
		close(d.watchStop)
		d.watchStop = nil
	}
}
