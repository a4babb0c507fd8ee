package dockertest

import "github.com/openclaw/occ/internal/compute/hosttest"

// storageDriver names the storage driver a daemon under dir uses: the
// overlay one (dockerd's overlay2, Podman's overlay) when the kernel can
// mount an overlay whose layers live in dir, and vfs otherwise. On vfs
// every container is a full copy of its image, which for the real gateway
// image (about 1.2 GB) costs minutes per container on a busy machine; an
// overlay shares the image's layers and starts a container at once.
func storageDriver(dir string, podman bool) string {
	if !hosttest.OverlayMounts(dir) {
		return "vfs"
	}
	if podman {
		return "overlay"
	}
	return "overlay2"
}
