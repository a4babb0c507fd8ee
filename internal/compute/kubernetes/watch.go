package kubernetes

import (
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/openclaw/occ/internal/compute"
)

var _ compute.WorkloadWatcher = (*Driver)(nil)

// WatchWorkloads implements compute.WorkloadWatcher: one watch of the
// gateway Pods of every tenant namespace (by occ's labels), which calls
// changed for a Pod's Agent when what readiness reads of the Pod changed
// (podState: it became Ready, unschedulable, or its container failed; a
// dedicated gateway's harness stopped; it is being deleted), when a Pod
// appears in such a state, and when it is deleted. A Pod that is merely
// created, placed or started is not reported: the revision waiting on it
// would only find it starting again. The watch holds of each Pod its
// labels and status only, and the driver reads its gateway Pods there
// rather than list them (pods); it ends when the driver is closed.
func (d *Driver) WatchWorkloads(changed func(compute.AgentRef)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watchStop != nil {
		return errors.New("kubernetes compute driver: workloads are watched already")
	}
	// A watch lasts minutes (the reflector asks the API server to end it
	// after 5-10): the per-request timeout of the settings would cut it
	// every requestTimeout.
	cfg := rest.CopyConfig(d.o.Config)
	cfg.Timeout = 0
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		return err
	}
	selector := labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy, LabelRole: RoleGateway}).String()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }),
		informers.WithTransform(podVerdictOnly))
	report := func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			if a := (compute.AgentRef{NamespaceID: p.Labels[LabelNamespace], AgentID: p.Labels[LabelAgent]}); a.Validate() == nil {
				d.signalChanged(a)
				changed(a)
			}
		}
	}
	informer := factory.Core().V1().Pods().Informer()
	if err := informer.AddIndexers(cache.Indexers{agentIndex: agentKey}); err != nil {
		return err
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			p, ok := obj.(*corev1.Pod)
			if !ok {
				return
			}
			if verdictOf(p) != (podVerdict{state: podStarting}) {
				report(obj)
			} else {
				d.signalChanged(compute.AgentRef{NamespaceID: p.Labels[LabelNamespace], AgentID: p.Labels[LabelAgent]})
			}
		},
		UpdateFunc: func(old, obj any) {
			o, ok1 := old.(*corev1.Pod)
			p, ok2 := obj.(*corev1.Pod)
			if ok1 && ok2 && verdictOf(o) != verdictOf(p) {
				report(obj)
			}
		},
		DeleteFunc: report,
	}); err != nil {
		return err
	}
	d.watchStop, d.watched = make(chan struct{}), informer
	factory.Start(d.watchStop)
	return nil
}

// agentIndex indexes the watched Pods by tenant namespace and Agent.
const agentIndex = "agent"

func agentKey(obj any) ([]string, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok || p.Labels[LabelAgent] == "" {
		return nil, nil
	}
	return []string{p.Namespace + "/" + p.Labels[LabelAgent]}, nil
}

// watchedPods returns the Agent's gateway Pods (of one revision when
// revisionID is set) as the watch has them, with ok false when the driver
// does not watch or its watch has not yet listed every Pod. They hold what
// podVerdictOnly keeps.
func (d *Driver) watchedPods(a compute.AgentRef, revisionID string) (pods []corev1.Pod, ok bool) {
	d.mu.Lock()
	informer := d.watched
	d.mu.Unlock()
	if informer == nil || !informer.HasSynced() {
		return nil, false
	}
	objs, err := informer.GetIndexer().ByIndex(agentIndex, NamespaceName(a.NamespaceID)+"/"+a.AgentID)
	if err != nil {
		return nil, false
	}
	for _, obj := range objs {
		if p, is := obj.(*corev1.Pod); is && (revisionID == "" || p.Labels[LabelRevision] == revisionID) {
			pods = append(pods, *p.DeepCopy())
		}
	}
	return pods, true
}

// podVerdict is what readiness reads of a gateway Pod.
type podVerdict struct {
	state    int
	held     bool // a dedicated gateway's harness stopped (harnessVerdict)
	deleting bool
}

func verdictOf(p *corev1.Pod) podVerdict {
	_, held := harnessVerdict(p)
	state := podState(p)
	if state == podRunning {
		// Started, not Ready: the revision would find it starting again.
		state = podStarting
	}
	return podVerdict{state: state, held: held, deleting: p.DeletionTimestamp != nil}
}

// podVerdictOnly keeps of a watched Pod what WatchWorkloads reads: its
// identity, labels, deletion and the status verdictOf reads.
func podVerdictOnly(obj any) (any, error) {
	p, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID,
		ResourceVersion: p.ResourceVersion, Labels: p.Labels, DeletionTimestamp: p.DeletionTimestamp},
		Status: corev1.PodStatus{Phase: p.Status.Phase, Conditions: p.Status.Conditions,
			ContainerStatuses: p.Status.ContainerStatuses, InitContainerStatuses: p.Status.InitContainerStatuses}}, nil
}

// podChanged returns a channel that receives when a Pod of a is added,
// changes its verdict (verdictOf) or is deleted, and a function that ends
// it; the channel is nil when the driver does not watch.
func (d *Driver) podChanged(a compute.AgentRef) (<-chan struct{}, func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watchStop == nil {
		return nil, func() {}
	}
	ch := make(chan struct{}, 1)
	d.added[a] = append(d.added[a], ch)
	return ch, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.added[a] = slices.DeleteFunc(d.added[a], func(c chan struct{}) bool { return c == ch })
		if len(d.added[a]) == 0 {
			delete(d.added, a)
		}
	}
}

// signalChanged tells the waiters of podChanged that a Pod of a changed.
func (d *Driver) signalChanged(a compute.AgentRef) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, ch := range d.added[a] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// stopWatch ends the watch WatchWorkloads started, if any.
func (d *Driver) stopWatch() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.watchStop != nil {
		close(d.watchStop)
		d.watchStop, d.watched = nil, nil
	}
}
