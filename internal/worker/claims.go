package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/occ"
)

// claimRetry is how soon a job that found its resource claimed tries again.
const claimRetry = 200 * time.Millisecond

// claim takes the one live claim on a resource for the length of a job
// pass, so two jobs never act on the same Namespace (or Agent) at once. When
// another job holds it, the caller snoozes (no attempt is spent).
func (d *deps) claim(ctx context.Context, resourceID string) (release func(), err error) {
	release, ok, err := d.tryClaim(ctx, resourceID)
	if err == nil && !ok {
		return nil, river.JobSnooze(claimRetry)
	}
	return release, err
}

// tryClaim takes the claim on a resource if no other job holds it (ok
// false: one does).
func (d *deps) tryClaim(ctx context.Context, resourceID string) (release func(), ok bool, err error) {
	token := occ.NewUUID()
	now := d.now()
	ok, err = d.st.ClaimWork(ctx, resourceID, token, occ.Millis(now), occ.Millis(now.Add(d.opts.JobTimeout+30*time.Second)))
	if err != nil {
		// The claim may have committed all the same (a commit whose
		// outcome is unknown): give it back, or the retry would find the
		// resource held by this very attempt until the claim expires.
		if rerr := d.st.ReleaseWork(context.WithoutCancel(ctx), resourceID, token); rerr != nil {
			d.log.Warn("release a claim that may have been taken", "resource", resourceID, "error", rerr)
		}
		return nil, false, err
	}
	if !ok {
		return nil, false, nil
	}
	return func() {
		if err := d.st.ReleaseWork(context.WithoutCancel(ctx), resourceID, token); err != nil {
			d.log.Warn("release work claim", "resource", resourceID, "error", err)
		}
	}, true, nil
}
