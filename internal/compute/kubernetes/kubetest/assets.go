package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// PendingEnv names the environment variable scripts/test sets while it
// builds the binaries beside the tests of the packages that do not need
// them. The file it names says where the build stands: empty at first;
// "BUILDING <dir>" once scripts/kube-assets knows its directory (each
// binary is renamed into it whole when linked, so one that is there is
// final); the directory alone when the build ended; "FAILED" and the
// build's last words when it failed.
const PendingEnv = "OCC_TEST_KUBE_ASSETS_PENDING"

// buildingPrefix starts the pending file while the build goes on.
const buildingPrefix = "BUILDING "

// pendingWait bounds the wait for a build beside the tests: a cold build
// takes about 20 min on a busy 2-core machine.
const pendingWait = 50 * time.Minute

// assetDir returns the assets directory after checking that it holds need.
func assetDir(need []string) (string, error) {
	const how = "run the tests with scripts/test, or build the binaries once with\n" +
		"\texport " + AssetsEnv + "=$(scripts/kube-assets)"
	dir := os.Getenv(AssetsEnv)
	if dir == "" && os.Getenv(PendingEnv) != "" {
		var err error
		if dir, err = awaitBuild(os.Getenv(PendingEnv), need); err != nil {
			return "", err
		}
	}
	if dir == "" {
		return "", fmt.Errorf("kubetest: %s is not set; it names the directory holding the Kubernetes test binaries: %s", AssetsEnv, how)
	}
	var missing []string
	for _, name := range need {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("kubetest: %s=%s lacks %v: %s", AssetsEnv, dir, missing, how)
	}
	return dir, nil
}

// awaitBuild waits until the build beside the tests has linked every
// binary of need, or has ended (its outcome is renamed into file whole, so
// a read sees all of it or nothing), and returns the directory. Files
// that are not binaries (kwok's *.yaml, written by a program) count only
// once the build has ended.
func awaitBuild(file string, need []string) (string, error) {
	deadline := time.Now().Add(pendingWait)
	for {
		b, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("kubetest: %s=%s: %v", PendingEnv, file, err)
		}
		out := strings.TrimSpace(string(b))
		if rest, failed := strings.CutPrefix(out, "FAILED"); failed {
			return "", fmt.Errorf("kubetest: scripts/kube-assets failed beside the tests:%s", rest)
		}
		if dir, building := strings.CutPrefix(out, buildingPrefix); building {
			if linked(dir, need) {
				return dir, nil
			}
		} else if out != "" {
			return out, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("kubetest: the Kubernetes binaries' build (%s=%s) did not end within %v", PendingEnv, file, pendingWait)
		}
		time.Sleep(time.Second)
	}
}

// linked reports whether every name of need is a binary already in dir.
func linked(dir string, need []string) bool {
	for _, name := range need {
		if strings.Contains(name, ".") {
			return false
		}
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return false
		}
	}
	return true
}
