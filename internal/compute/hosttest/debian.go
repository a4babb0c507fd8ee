// Package hosttest gives the compute drivers' test lanes what they need of
// the machine: Debian packages installed when missing (as scripts/test does)
// and whether the kernel mounts an overlay in a directory.
package hosttest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// aptMu makes the tests of one process install one package at a time
// (apt-get waits for other processes on dpkg's lock).
var aptMu sync.Mutex

// DebianProgram returns the path of program (a name looked up on PATH, or
// an absolute path), installing Debian's package pkg first when it is
// missing and this process is root, as scripts/test does. A lane that
// needs the program fails, rather than skips, when it cannot be had.
func DebianProgram(program, pkg string) (string, error) {
	if p, err := find(program); err == nil {
		return p, nil
	}
	aptMu.Lock()
	defer aptMu.Unlock()
	if p, err := find(program); err == nil {
		return p, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("%s is missing; install Debian's %s (scripts/test does as root)", program, pkg)
	}
	fmt.Fprintf(os.Stderr, "hosttest: %s not found; installing the Debian package %s\n", program, pkg)
	for _, args := range [][]string{{"-o", "DPkg::Lock::Timeout=900", "update", "-q"}, {"-o", "DPkg::Lock::Timeout=900", "install", "-y", "-q", "--no-install-recommends", pkg}} {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if b, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("apt-get %s (for %s): %v\n%s", strings.Join(args, " "), program, err, b)
		}
	}
	p, err := find(program)
	if err != nil {
		return "", fmt.Errorf("the Debian package %s is installed but %s is still missing: %v", pkg, program, err)
	}
	return p, nil
}

func find(program string) (string, error) {
	if filepath.IsAbs(program) {
		if _, err := os.Stat(program); err != nil {
			return "", err
		}
		return program, nil
	}
	return exec.LookPath(program)
}
