package app

import "context"

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
