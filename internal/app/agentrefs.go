package app

import (
	"context"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// checkAccountBackend requires a bound ChatGPT service account's Backend to
// be the Agent's (seed: the account's matching backendId).
func (a *App) checkAccountBackend(ctx context.Context, nsID, accountID, backendID string) error {
	acct, err := a.st.GetServiceAccount(ctx, nsID, accountID)
	if err != nil {
		return notFoundOr(err)
	}
	if acct.BackendID != backendID {
		return invalidAt("/backendId", "A ChatGPT service account needs the Agent's backendId to be the account's Backend.")
	}
	return nil
}

// referencedBy answers 409 while an Agent's harness binding names the
// resource (what it is, for the message).
func referencedBy(ctx context.Context, tx *store.Tx, nsID, id, what string) error {
	users, err := tx.AgentsReferencing(ctx, nsID, id)
	if err != nil {
		return occ.Unavailable(err)
	}
	if len(users) > 0 {
		return occ.E(occ.CodeResourceConflict, "An Agent's harness binding references this "+what+": "+blockerList(users)+".")
	}
	return nil
}
