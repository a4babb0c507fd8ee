package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// applier is a typed client's Get, Create and Apply of one kind.
type applier[T metav1.Object, A any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Create(ctx context.Context, obj T, opts metav1.CreateOptions) (T, error)
	Apply(ctx context.Context, ac A, opts metav1.ApplyOptions) (T, error)
}

// applyOwned applies ac unless an object of that name exists without the
// labels want (refused, never adopted), or exists as occ last applied it
// (marks). With once, an existing object is left as it is (claims and
// immutable ConfigMaps are written once), and one this process has not
// seen is created first (createUnseen).
func applyOwned[T metav1.Object, A any](ctx context.Context, m *marks, c applier[T, A], kind, ns, name string, want map[string]string, ac A, once bool) (T, error) {
	if once {
		if obj, made, err := createUnseen(ctx, m, c, kind, ns, name, ac); made || err != nil {
			return obj, err
		}
	}
	cur, found, err := getOwned(ctx, kind, ns, name, want, c.Get)
	if err != nil {
		return cur, err
	}
	if found && once {
		m.note(markKey{kind, ns, name}, cur)
		return cur, nil
	}
	return applyChanged(ctx, m, c.Apply, kind, ns, name, cur, found, ac)
}

// createUnseen creates an object written once that this process has not
// seen (no mark): a first pass over an Agent finds its claim and its
// revision's ConfigMap missing, so one create does the work of a read and
// an apply. made is false when the object exists already (it is then read
// and checked as any other) or was seen.
func createUnseen[T metav1.Object, A any](ctx context.Context, m *marks, c applier[T, A], kind, ns, name string, ac A) (obj T, made bool, err error) {
	var zero T
	k := markKey{kind, ns, name}
	if m.seen(k) {
		return zero, false, nil
	}
	obj = reflect.New(reflect.TypeFor[T]().Elem()).Interface().(T)
	b, err := json.Marshal(ac)
	if err == nil {
		err = json.Unmarshal(b, obj)
	}
	if err != nil {
		return zero, false, fmt.Errorf("create %s %s: %w", kind, name, err)
	}
	created, err := c.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
	switch {
	case apierrors.IsAlreadyExists(err):
		return zero, false, nil
	case err != nil:
		return zero, false, classify("create "+kind+" "+name, err)
	}
	m.note(k, created)
	return created, true, nil
}

// applyChanged applies ac, unless cur (read just before; found says
// whether it exists) is the object occ's last apply of the same ac
// answered, untouched since: then cur is returned as it is. A pass over an
// Agent that changed nothing thus reads its objects (ownership, existence)
// without writing them.
func applyChanged[T metav1.Object, A any](ctx context.Context, m *marks, apply func(context.Context, A, metav1.ApplyOptions) (T, error),
	kind, ns, name string, cur T, found bool, ac A) (T, error) {
	k := markKey{kind, ns, name}
	sum, err := hashOf(ac)
	if err != nil {
		return cur, fmt.Errorf("apply %s %s: %w", kind, name, err)
	}
	if found && m.current(k, sum, cur) {
		return cur, nil
	}
	obj, err := apply(ctx, ac, applyOpts)
	if err != nil {
		m.drop(kind, ns, name)
		return obj, classify("apply "+kind+" "+name, err)
	}
	m.record(k, sum, obj, ac)
	return obj, nil
}

// marks remember, per object, what occ last applied (the apply
// configuration and its hash) and the object the API server answered with.
type marks struct {
	mu sync.Mutex
	m  map[markKey]mark
}

type markKey struct{ kind, ns, name string }

type mark struct {
	sum [sha256.Size]byte
	uid types.UID
	rv  string
	gen int64
	// labels and annotations are the keys the apply set, and meta a hash
	// of their values as answered.
	labels, annotations []string
	meta                [sha256.Size]byte
	// spec is a Deployment's spec as answered (nil for other kinds).
	spec *appsv1.DeploymentSpec
	// applied is the apply configuration (never changed after).
	applied any
}

func hashOf(v any) ([sha256.Size]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// appliedKeys returns the label and annotation keys an apply
// configuration sets.
func appliedKeys(ac any) (labels, annotations []string) {
	b, err := json.Marshal(ac)
	if err != nil {
		return nil, nil
	}
	var m struct {
		Metadata struct {
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(b, &m) != nil {
		return nil, nil
	}
	return slices.Sorted(maps.Keys(m.Metadata.Labels)), slices.Sorted(maps.Keys(m.Metadata.Annotations))
}

// ownMeta hashes the values o has for the given label and annotation keys
// (absent ones included as absent).
func ownMeta(o metav1.Object, labels, annotations []string) [sha256.Size]byte {
	h := sha256.New()
	for _, set := range []struct {
		keys []string
		m    map[string]string
	}{{labels, o.GetLabels()}, {annotations, o.GetAnnotations()}} {
		for _, k := range set.keys {
			v, ok := set.m[k]
			fmt.Fprintf(h, "%q=%q,%v;", k, v, ok)
		}
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

// current reports whether o is what the last apply of sum answered (see
// answers). A deleted object is not current (it is not found, or has
// another UID): it is applied again.
func (m *marks) current(k markKey, sum [sha256.Size]byte, o metav1.Object) bool {
	m.mu.Lock()
	c, ok := m.m[k]
	m.mu.Unlock()
	return ok && c.sum == sum && c.answers(o)
}

// answers reports whether o is the object the apply answered: the same
// object (UID), and either unchanged (resourceVersion) or, for a kind
// whose spec changes bump metadata.generation (a Deployment, whose status
// changes often), changed since in nothing occ applied: the labels and
// annotations it set have the same values, and so has the spec (the same
// generation; a Deployment's generation also grows with any change of its
// annotations, such as the Deployment controller's revision annotation or
// the model probe's mark, so its spec is compared).
func (c mark) answers(o metav1.Object) bool {
	if c.uid != o.GetUID() {
		return false
	}
	if c.rv == o.GetResourceVersion() {
		return true
	}
	if c.gen == 0 || c.meta != ownMeta(o, c.labels, c.annotations) {
		return false
	}
	if c.gen == o.GetGeneration() {
		return true
	}
	dep, ok := o.(*appsv1.Deployment)
	return ok && c.spec != nil && apiequality.Semantic.DeepEqual(*c.spec, dep.Spec)
}

func (m *marks) record(k markKey, sum [sha256.Size]byte, o metav1.Object, applied any) {
	labels, annotations := appliedKeys(applied)
	c := mark{sum: sum, uid: o.GetUID(), rv: o.GetResourceVersion(), gen: o.GetGeneration(),
		labels: labels, annotations: annotations, meta: ownMeta(o, labels, annotations), applied: applied}
	if dep, ok := o.(*appsv1.Deployment); ok {
		c.spec = dep.Spec.DeepCopy()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[markKey]mark{}
	}
	m.m[k] = c
}

// note marks an object as seen, with nothing applied (objects written
// once).
func (m *marks) note(k markKey, o metav1.Object) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[markKey]mark{}
	}
	m.m[k] = mark{uid: o.GetUID(), rv: o.GetResourceVersion()}
}

// seen reports whether the object has a mark.
func (m *marks) seen(k markKey) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.m[k]
	return ok
}

// lastApplied returns what occ last applied to o when o is what that
// apply answered (answers): what occ's field manager owns of o.
func (m *marks) lastApplied(k markKey, o metav1.Object) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.m[k]
	if !ok || c.applied == nil || !c.answers(o) {
		return nil, false
	}
	return c.applied, true
}

// drop forgets an object's mark (it was deleted, or its apply failed).
func (m *marks) drop(kind, ns, name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, markKey{kind, ns, name})
}

// dropNamespace forgets the marks of a tenant namespace's objects.
func (m *marks) dropNamespace(ns string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.m {
		if k.ns == ns || (k.kind == "namespace" && k.name == ns) {
			delete(m.m, k)
		}
	}
}
