package kubernetes

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// applier is a typed client's Get and Apply of one kind.
type applier[T metav1.Object, A any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Apply(ctx context.Context, ac A, opts metav1.ApplyOptions) (T, error)
}

// applyOwned applies ac unless an object of that name exists without the
// labels want (refused, never adopted), or exists as occ last applied it
// (marks). With once, an existing object is left as it is (claims and
// immutable ConfigMaps are written once).
func applyOwned[T metav1.Object, A any](ctx context.Context, m *marks, c applier[T, A], kind, ns, name string, want map[string]string, ac A, once bool) (T, error) {
	cur, found, err := getOwned(ctx, kind, ns, name, want, c.Get)
	if err != nil || (found && once) {
		return cur, err
	}
	return applyChanged(ctx, m, c.Apply, kind, ns, name, cur, found, ac)
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
	m.record(k, sum, obj)
	return obj, nil
}

// marks remember, per object, what occ last applied (a hash of the apply
// configuration) and the object the API server answered with.
type marks struct {
	mu sync.Mutex
	m  map[markKey]mark
}

type markKey struct{ kind, ns, name string }

type mark struct {
	sum  [sha256.Size]byte
	uid  types.UID
	rv   string
	gen  int64
	meta [sha256.Size]byte
}

func hashOf(v any) ([sha256.Size]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return [sha256.Size]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// metaOf hashes an object's labels and annotations.
func metaOf(o metav1.Object) [sha256.Size]byte {
	sum, _ := hashOf([2]map[string]string{o.GetLabels(), o.GetAnnotations()})
	return sum
}

// current reports whether o is what the last apply of sum answered: the
// same object (UID), and either unchanged (resourceVersion) or, for a kind
// whose spec changes bump metadata.generation (a Deployment, whose status
// changes often), the same generation with the same labels and
// annotations. A deleted object is not current (it is not found, or has
// another UID): it is applied again.
func (m *marks) current(k markKey, sum [sha256.Size]byte, o metav1.Object) bool {
	m.mu.Lock()
	c, ok := m.m[k]
	m.mu.Unlock()
	if !ok || c.sum != sum || c.uid != o.GetUID() {
		return false
	}
	return c.rv == o.GetResourceVersion() || (c.gen > 0 && c.gen == o.GetGeneration() && c.meta == metaOf(o))
}

func (m *marks) record(k markKey, sum [sha256.Size]byte, o metav1.Object) {
	c := mark{sum: sum, uid: o.GetUID(), rv: o.GetResourceVersion(), gen: o.GetGeneration(), meta: metaOf(o)}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[markKey]mark{}
	}
	m.m[k] = c
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
