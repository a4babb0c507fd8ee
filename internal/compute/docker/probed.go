package docker

import (
	"context"
	"strings"
	"time"
)

// probedFile, at the root of the state volume (root's, not the gateway
// user's), holds the ID of the container whose model credential occ's
// probe accepted: a restarted occ that finds that container running checks
// its health and identity only, without a second (billable) model call.
const probedFile = "model-probed"

// probedBefore reports whether an earlier occ recorded that it probed the
// running container c (only asked of a container started before this
// driver was made).
func (d *Driver) probedBefore(ctx context.Context, c containerJSON) bool {
	started, err := time.Parse(time.RFC3339Nano, c.State.StartedAt)
	if err != nil || !started.Before(d.opened) {
		return false
	}
	return strings.TrimSpace(d.readFile(ctx, c.ID, DataDir+"/"+probedFile)) == c.ID
}

// recordProbed writes probedFile for c. A failure costs one more probe
// after a restart, nothing else: it is logged, not returned.
func (d *Driver) recordProbed(ctx context.Context, c containerJSON) {
	content := []byte(c.ID + "\n")
	err := d.e.putArchive(ctx, c.ID, DataDir, fileArchive(probedFile, 0o444, 0, content))
	if err != nil {
		d.o.Logger.Debug("could not record the model probe in the state volume", "container", c.ID, "error", err)
	}
}
