package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// PendingEnv names the environment variable scripts/test sets while it
// builds the binaries beside the tests of the packages that do not need
// them: the file it names is empty until the build ends, then holds the
// assets directory, or "FAILED" and the build's last words.
const PendingEnv = "OCC_TEST_KUBE_ASSETS_PENDING"

// pendingWait bounds the wait for a build beside the tests: a cold build
// takes about 20 min on a busy 2-core machine.
const pendingWait = 50 * time.Minute

var pending struct {
	once sync.Once
	dir  string
	err  error
}

// assetDir returns the assets directory after checking that it holds need.
func assetDir(need []string) (string, error) {
	const how = "run the tests with scripts/test, or build the binaries once with\n" +
		"\texport " + AssetsEnv + "=$(scripts/kube-assets)"
	dir := os.Getenv(AssetsEnv)
	if dir == "" && os.Getenv(PendingEnv) != "" {
		pending.once.Do(func() { pending.dir, pending.err = awaitBuild(os.Getenv(PendingEnv)) })
		if pending.err != nil {
			return "", pending.err
		}
		dir = pending.dir
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

// awaitBuild waits for the build beside the tests to write its outcome to
// file (renamed into place whole, so a read sees all of it or nothing).
func awaitBuild(file string) (string, error) {
	deadline := time.Now().Add(pendingWait)
	for {
		b, err := os.ReadFile(file)
		if err != nil && !os.IsNotExist(err) {
			return "", fmt.Errorf("kubetest: %s=%s: %v", PendingEnv, file, err)
		}
		if out := strings.TrimSpace(string(b)); out != "" {
			if rest, failed := strings.CutPrefix(out, "FAILED"); failed {
				return "", fmt.Errorf("kubetest: scripts/kube-assets failed beside the tests:%s", rest)
			}
			return out, nil
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("kubetest: the Kubernetes binaries' build (%s=%s) did not end within %v", PendingEnv, file, pendingWait)
		}
		time.Sleep(time.Second)
	}
}
