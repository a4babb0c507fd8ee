package kubetest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
)

// writeLater renames content into file after a moment, as scripts/test
// does when its build ends.
func writeLater(t *testing.T, file, content string) {
	go func() {
		time.Sleep(1500 * time.Millisecond)
		tmp := file + ".tmp"
		if err := os.WriteFile(tmp, []byte(content), 0o644); err == nil {
			os.Rename(tmp, file)
		}
	}()
}

func TestAwaitBuildWaitsForTheDirectory(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pending")
	writeLater(t, file, "/var/cache/occ-test-kube/v1\n")
	dir, err := kubetest.AwaitBuild(file)
	if err != nil || dir != "/var/cache/occ-test-kube/v1" {
		t.Fatalf("AwaitBuild = %q, %v; want the directory the build wrote", dir, err)
	}
}

func TestAwaitBuildReportsAFailedBuild(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pending")
	writeLater(t, file, "FAILED (exit 1): go build kube-apiserver: no space left on device\n")
	dir, err := kubetest.AwaitBuild(file)
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("AwaitBuild = %q, %v; want the build's failure", dir, err)
	}
}
