package hosttest

import (
	"os"
	"path/filepath"
	"syscall"
)

// OverlayMounts mounts and unmounts a small overlay in a scratch directory
// under dir: the test container engines (dockerd, Podman, containerd) make
// of the kernel and of dir's file system before they use overlays (an
// overlay cannot be layered on another overlay, for one).
func OverlayMounts(dir string) bool {
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
