package kubetest

import (
	"os"
	"path/filepath"
	"syscall"
)

// LockServiceNetwork takes the machine-wide lock of WithServiceNetwork if
// no cluster holds it (ok false otherwise): while held, no kube-proxy of
// this package runs on the machine.
func LockServiceNetwork() (unlock func(), ok bool) {
	if err := os.MkdirAll(hostStateDir, 0o755); err != nil {
		return nil, false
	}
	f, err := os.OpenFile(filepath.Join(hostStateDir, serviceNetworkLock), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}
