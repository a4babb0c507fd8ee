package app

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// IfMatch is a request's precondition on the version (the ETag) of the
// resource it changes or deletes. The zero value is no precondition: the
// change applies to the current version, and when a concurrent writer wins
// the race occ reads the resource again and re-applies the change (see
// optimistic), never answering 412. MatchAny (If-Match: *) holds for any
// existing resource, with the same retries; MatchVersion holds only while
// the resource is at that version (412 PRECONDITION_FAILED otherwise, also
// when it changes between the read and the write).
type IfMatch struct {
	set, any bool
	version  int64
}

// MatchAny is If-Match: *, which every existing resource satisfies (a
// missing one is still 404).
func MatchAny() IfMatch { return IfMatch{set: true, any: true} }

// MatchVersion is If-Match naming one version; versions start at 1, so a
// tag that names none (MatchVersion(-1)) never matches.
func MatchVersion(v int64) IfMatch { return IfMatch{set: true, version: v} }

// check is 412 PRECONDITION_FAILED unless a resource at version current
// satisfies m.
func (m IfMatch) check(current int64) error {
	if m.set && !m.any && m.version != current {
		return occ.E(occ.CodePreconditionFailed, occ.MsgPreconditionFailed)
	}
	return nil
}

// staleAttempts bounds how often one change runs in all while it keeps
// losing optimistic races, before the answer is 409 RESOURCE_CONFLICT.
const staleAttempts = 5

// staleBackoff scales the random pause before a change runs again: up to
// 4, 16, 64 and 256 times it before the second to fifth attempts, so
// writers in other processes (replicas, the worker) that keep colliding
// spread out (at most about a third of a second in all).
const staleBackoff = time.Millisecond

// optimistic runs attempt, one optimistic change: it reads the current
// state, checks the request's precondition on it, and writes with a version
// compare, returning store.ErrStale when another writer got there first.
// Then attempt runs again on fresh state after a random pause (a
// precondition naming a version then fails with 412), at most
// staleAttempts times in all, after which the answer is 409
// RESOURCE_CONFLICT with a fixed message. Database failures become 503;
// occ errors stay as they are.
//
// With a resource ID as key, changes to that resource made through this
// process wait for each other, so they never race among themselves; the
// retries are for other writers (other replicas, the worker).
func (a *App) optimistic(ctx context.Context, key string, attempt func() error) error {
	if key != "" {
		defer a.writers.lock(key)()
	}
	var err error
	for try := 0; try < staleAttempts; try++ {
		if try > 0 {
			if err := pause(ctx, time.Duration(rand.Int64N(int64(staleBackoff)<<(2*try)))); err != nil {
				return err
			}
		}
		if err = attempt(); !errors.Is(err, store.ErrStale) {
			break
		}
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrStale):
		return occ.E(occ.CodeResourceConflict, occ.MsgChangedConcurrently)
	case errors.Is(err, store.ErrCommitUnknown):
		return &occ.Error{Code: occ.CodeUnknownOutcome, Message: occ.MsgCommitUnknown, Cause: err}
	case occ.AsError(err) != nil:
		return err
	}
	return occ.Unavailable(err)
}

// retried is optimistic for an attempt that returns the changed resource.
func retried[T any](ctx context.Context, a *App, key string, attempt func() (T, error)) (T, error) {
	var out T
	err := a.optimistic(ctx, key, func() (err error) {
		out, err = attempt()
		return err
	})
	return out, err
}

// pause waits for d or until ctx ends (503: the request is gone).
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return occ.Unavailable(ctx.Err())
	}
}

// tx runs fn in a transaction, as one optimistic attempt: a transaction
// that lost a race (store.ErrStale, such as a version compare that found
// another version or a PostgreSQL serialization failure) runs again on
// fresh state.
func (a *App) tx(ctx context.Context, fn func(tx *store.Tx) error) error {
	return a.txFor(ctx, "", fn)
}

// txFor is tx for a change of the resource with ID key: this process's
// writers of it take turns (optimistic). The first transaction of a
// request under an IdempotencyClaim also writes the claim's record, so the
// record commits exactly when the change does.
func (a *App) txFor(ctx context.Context, key string, fn func(tx *store.Tx) error) error {
	cl := claimIn(ctx)
	if cl != nil {
		inner := fn
		fn = func(tx *store.Tx) error {
			if err := cl.record(ctx, tx); err != nil {
				return err
			}
			return inner(tx)
		}
	}
	err := a.optimistic(ctx, key, func() error {
		err := a.st.InTx(ctx, fn)
		if cl != nil && errors.Is(err, store.ErrCommitUnknown) && cl.committed(ctx) {
			return nil // the record, and so the change, committed
		}
		return err
	})
	if err == nil && cl != nil {
		cl.recorded.Store(true)
	}
	return err
}

// keyLocks is one mutex per key in use: the writers of one resource in
// this process take turns.
type keyLocks struct {
	mu   sync.Mutex
	held map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int // holders and waiters; the entry goes when it drops to 0
}

// lock takes key's mutex and returns its release.
func (k *keyLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.held == nil {
		k.held = map[string]*keyLock{}
	}
	l := k.held[key]
	if l == nil {
		l = &keyLock{}
		k.held[key] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.held, key)
		}
		k.mu.Unlock()
	}
}
