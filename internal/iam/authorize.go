package iam

import (
	"context"
	"fmt"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Authorizer answers authorization questions against the policy in the
// database as of the caller's authentication: rows read at the caller's
// policy generation are reused for later callers at the same generation,
// and any change to the policy moves the generation, so a revoked grant
// stops working with the next request.
type Authorizer struct {
	st    *store.Store
	cache *policyCache
}

// NewAuthorizer returns an Authorizer over st.
func NewAuthorizer(st *store.Store) *Authorizer { return &Authorizer{st: st, cache: newPolicyCache()} }

// load reads the caller's policy rows for perm, reusing rows read at the
// caller's generation; a caller of unknown generation reads afresh.
func (a *Authorizer) load(ctx context.Context, caller occ.Caller, perm occ.Permission) (store.PolicyRows, error) {
	gen, k := caller.PolicyGeneration, policyKey{caller.PrincipalID, perm}
	if gen > 0 {
		if rows, ok := a.cache.get(gen, k); ok {
			return rows, nil
		}
	}
	rows, err := readPolicy(ctx, a.st, caller.PrincipalID, perm)
	if err != nil {
		return store.PolicyRows{}, err
	}
	if gen > 0 {
		a.cache.put(gen, k, rows)
	}
	return rows, nil
}

// Check is one authorization question.
type Check struct {
	Caller     occ.Caller
	Permission occ.Permission
	Resource   occ.ResourceRef
	Action     string // audit action of the operation, e.g. "namespaces.create"
}

// Authorize decides c and, when it denies, appends an authorization_denial
// audit event. It returns an error only when the policy or the audit log is
// unavailable (fail closed: the caller answers 503).
func (a *Authorizer) Authorize(ctx context.Context, c Check) (Decision, error) {
	d, err := a.Decide(ctx, c.Caller, c.Permission, c.Resource)
	if err != nil || d.Allowed {
		return d, err
	}
	ev := audit.Denial(c.Action, c.Caller.PrincipalID, c.Resource, occ.ReasonAuthorizationDenied, map[string]any{
		"permission":     c.Permission.String(),
		"decisionReason": d.Reason,
		"restrictionIds": d.RestrictionIDs,
	})
	if err := audit.Append(ctx, a.st, ev); err != nil {
		return d, occ.Unavailable(fmt.Errorf("append denial audit: %w", err))
	}
	return d, nil
}

// Decide answers without auditing: for probes such as "may the caller read
// what it was just refused?" and for the worker's re-authorization.
func (a *Authorizer) Decide(ctx context.Context, caller occ.Caller, perm occ.Permission, res occ.ResourceRef) (Decision, error) {
	rows, err := a.load(ctx, caller, perm)
	if err != nil {
		return Decision{}, err
	}
	return Decide(rows, caller.PinnedNS, res), nil
}

// Restricted reports whether a Restriction of perm applies to the caller
// on res, whatever the caller is granted: for a permission that another
// one covers (agent:administer covers agent:read_logs), whose Restriction
// must block the covering one too.
func (a *Authorizer) Restricted(ctx context.Context, caller occ.Caller, perm occ.Permission, res occ.ResourceRef) (bool, error) {
	rows, err := a.load(ctx, caller, perm)
	if err != nil {
		return false, err
	}
	for _, r := range rows.Restrictions {
		if matches(r, res) {
			return true, nil
		}
	}
	return false, nil
}

// PolicyLoader reads policy rows: the store, or a transaction in progress
// (a SQLite transaction holds the only connection).
type PolicyLoader interface {
	LoadPolicy(ctx context.Context, principalID string, perm occ.Permission) (store.PolicyRows, error)
}

// DecideIn is Decide over a given loader, for use inside a transaction: it
// reads afresh, never from the cache.
func DecideIn(ctx context.Context, q PolicyLoader, caller occ.Caller, perm occ.Permission, res occ.ResourceRef) (Decision, error) {
	rows, err := readPolicy(ctx, q, caller.PrincipalID, perm)
	if err != nil {
		return Decision{}, err
	}
	return Decide(rows, caller.PinnedNS, res), nil
}

// readPolicy reads a principal's policy rows for perm; a failure is
// DEPENDENCY_UNAVAILABLE (fail closed).
func readPolicy(ctx context.Context, q PolicyLoader, principalID string, perm occ.Permission) (store.PolicyRows, error) {
	rows, err := q.LoadPolicy(ctx, principalID, perm)
	if err != nil {
		return store.PolicyRows{}, occ.Unavailable(fmt.Errorf("load policy of %s: %w", principalID, err))
	}
	return rows, nil
}

// Filter loads once what a caller holds for one permission, to filter a list
// item by item before paging.
func (a *Authorizer) Filter(ctx context.Context, caller occ.Caller, perm occ.Permission) (*Matcher, error) {
	rows, err := a.load(ctx, caller, perm)
	if err != nil {
		return nil, err
	}
	return &Matcher{rows: rows, pin: caller.PinnedNS}, nil
}

// Matcher applies Decide to many resources with one policy read.
type Matcher struct {
	rows store.PolicyRows
	pin  string
}

// Allows reports whether the permission holds on res.
func (m *Matcher) Allows(res occ.ResourceRef) bool { return Decide(m.rows, m.pin, res).Allowed }
