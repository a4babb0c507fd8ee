package computetest

import (
	"context"
	"errors"
	"sync"

	"github.com/openclaw/occ/internal/compute"
)

// Faulty wraps a driver and injects failures by Namespace ID, for worker
// tests of retries, exhaustion and permanent errors.
type Faulty struct {
	compute.Driver
	mu    sync.Mutex
	fails map[string]fault
	calls map[string]int
}

type fault struct {
	remaining int // retryable failures left; -1 = forever
	permanent string
}

// NewFaulty wraps d.
func NewFaulty(d compute.Driver) *Faulty {
	return &Faulty{Driver: d, fails: map[string]fault{}, calls: map[string]int{}}
}

// FailTimes makes the next n calls for a Namespace fail retryably (-1: always).
func (f *Faulty) FailTimes(nsID string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails[nsID] = fault{remaining: n}
}

// FailPermanently makes calls for a Namespace fail with a permanent code.
func (f *Faulty) FailPermanently(nsID, code string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fails[nsID] = fault{permanent: code}
}

// Heal removes injected failures for a Namespace.
func (f *Faulty) Heal(nsID string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.fails, nsID)
}

// Calls reports how many calls reached the driver for a Namespace.
func (f *Faulty) Calls(nsID string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[nsID]
}

var errInjected = errors.New("injected driver failure")

func (f *Faulty) inject(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[id]++
	ft, ok := f.fails[id]
	switch {
	case !ok:
		return nil
	case ft.permanent != "":
		return compute.Permanent(ft.permanent, errInjected)
	case ft.remaining == 0:
		return nil
	case ft.remaining > 0:
		ft.remaining--
		f.fails[id] = ft
	}
	return errInjected
}

// EnsureNamespace implements compute.Driver with injected failures.
func (f *Faulty) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := f.inject(ns.ID); err != nil {
		return compute.NamespaceObservation{}, err
	}
	return f.Driver.EnsureNamespace(ctx, ns)
}

// DeleteNamespace implements compute.Driver with injected failures.
func (f *Faulty) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := f.inject(ns.ID); err != nil {
		return compute.NamespaceObservation{}, err
	}
	return f.Driver.DeleteNamespace(ctx, ns)
}
