package app

import (
	"context"

	"github.com/openclaw/occ/internal/store"
)

// secretExists reports store.ErrNotFound when a Secret is missing. Until
// Secrets are stored no Secret exists, so every binding is refused.
func (a *App) secretExists(ctx context.Context, nsID, id string) error {
	return store.ErrNotFound
}
