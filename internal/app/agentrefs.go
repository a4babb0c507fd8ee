package app

import "context"

// checkAccountBackend requires a bound ChatGPT service account's Backend to
// be the Agent's. Service accounts are not stored yet, so a binding to one
// cannot have passed the existence check before this.
func (a *App) checkAccountBackend(ctx context.Context, nsID, accountID, backendID string) error {
	return invalidAt("/harnessAuth/serviceAccountId", "The service account does not exist in this Namespace.")
}
