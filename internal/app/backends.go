package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// ActBackendList is the audit action of a refused Backend listing.
const ActBackendList = "backends.list"

// backendList is the configured Backends ordered by ID.
func (a *App) backendList() []Backend {
	bs := slices.Clone(a.opts.Backends)
	slices.SortFunc(bs, func(x, y Backend) int { return strings.Compare(x.ID, y.ID) })
	return bs
}

// ListBackends returns one page of the installation's Backends, ordered by
// ID. They come from the installation configuration only; callers see IDs
// and types, never URLs or other private settings (the HTTP layer maps
// only those).
func (a *App) ListBackends(ctx context.Context, c occ.Caller, page PageRequest) (Page[Backend], error) {
	if err := a.require(ctx, c, occ.P(occ.KindInstallation, occ.ActionAdminister), a.installationRef(), ActBackendList, nil); err != nil {
		return Page[Backend]{}, err
	}
	all := a.backendList()
	fetch := func(_ context.Context, after store.Cursor, limit int) ([]Backend, error) {
		i, _ := slices.BinarySearchFunc(all, after.ID, func(b Backend, id string) int { return strings.Compare(b.ID, id) })
		if i < len(all) && all[i].ID == after.ID {
			i++
		}
		return all[i:min(len(all), i+limit)], nil
	}
	return paginate(ctx, page, fetch, func(b Backend) (time.Time, string) { return time.UnixMilli(0), b.ID },
		func(Backend) bool { return true })
}
