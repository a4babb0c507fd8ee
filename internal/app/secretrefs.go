package app

import "context"

// secretExists reports store.ErrNotFound when a Secret is missing from the
// Namespace.
func (a *App) secretExists(ctx context.Context, nsID, id string) error {
	_, err := a.st.GetSecret(ctx, nsID, id)
	return err
}
