package dockertest

import (
	"os"
	"path/filepath"
	"syscall"
)

// storageDriver names the storage driver a daemon under dir uses: the
// overlay one (dockerd's overlay2, Podman's overlay) when the kernel can
// mount an overlay whose layers live in dir, and vfs otherwise. On vfs
// every container is a full copy of its image, which for the real gateway
// image (about 1.2 GB) costs minutes per container on a busy machine; an
// overlay shares the image's layers and starts a container at once.
func storageDriver(dir string, podman bool) string {
	if !overlayMounts(dir) {
		return "vfs"
	}
	if podman {
		return "overlay"
	}
	return "overlay2"
}

// overlayMounts mounts and unmounts a small overlay in a scratch directory
// under dir: the same test the engines make of the kernel and of dir's
// file system (an overlay cannot be layered on another overlay, for one).
func overlayMounts(dir string) bool {
	root, err := os.MkdirTemp(dir, "overlay-check")
	if err != nil {
		return false
	}
	defer os.RemoveAll(root)
	p := func(name string) string { return filepath.Join(root, name) }
	for _, name := range []string{"lower", "upper", "work", "merged"} {
		if err := os.Mkdir(p(name), 0o700); err != nil {
			return false
		}
	}
	opts := "lowerdir=" + p("lower") + ",upperdir=" + p("upper") + ",workdir=" + p("work")
	if err := syscall.Mount("overlay", p("merged"), "overlay", 0, opts); err != nil {
		return false
	}
	return syscall.Unmount(p("merged"), 0) == nil
}
