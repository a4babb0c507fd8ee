package iam

import (
	"sync"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// policyCacheSize bounds the rows kept for the newest generation: one entry
// per principal and permission in use. A full cache starts over.
const policyCacheSize = 4096

// policyCache keeps policy rows read at one generation of the policy (see
// store.Holder.PolicyGeneration). Rows are stored under the generation the
// caller authenticated at and read no earlier than that authentication,
// so they are never older than their generation says; a newer generation
// drops them all.
type policyCache struct {
	mu   sync.Mutex
	gen  int64
	rows map[policyKey]store.PolicyRows
}

type policyKey struct {
	principalID string
	perm        occ.Permission
}

func newPolicyCache() *policyCache { return &policyCache{rows: map[policyKey]store.PolicyRows{}} }

func (c *policyCache) get(gen int64, k policyKey) (store.PolicyRows, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return store.PolicyRows{}, false
	}
	r, ok := c.rows[k]
	return r, ok
}

func (c *policyCache) put(gen int64, k policyKey, r store.PolicyRows) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case gen < c.gen:
		return
	case gen > c.gen || len(c.rows) >= policyCacheSize:
		c.gen, c.rows = gen, map[policyKey]store.PolicyRows{}
	}
	c.rows[k] = r
}
