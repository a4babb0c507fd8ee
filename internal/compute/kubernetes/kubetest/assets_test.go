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
	dir, err := kubetest.AwaitBuild(file, []string{"etcd", "kube-apiserver"})
	if err != nil || dir != "/var/cache/occ-test-kube/v1" {
		t.Fatalf("AwaitBuild = %q, %v; want the directory the build wrote", dir, err)
	}
}

func TestAwaitBuildReportsAFailedBuild(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "pending")
	writeLater(t, file, "FAILED (exit 1): go build kube-apiserver: no space left on device\n")
	dir, err := kubetest.AwaitBuild(file, []string{"etcd", "kube-apiserver"})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("AwaitBuild = %q, %v; want the build's failure", dir, err)
	}
}

// TestAwaitBuildReturnsOnceTheNeededBinariesAreLinked: while the build
// goes on, a test that needs only binaries already renamed into the
// directory goes on at once; one that needs a binary still to come waits
// for it.
func TestAwaitBuildReturnsOnceTheNeededBinariesAreLinked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "pending")
	if err := os.WriteFile(filepath.Join(dir, "etcd"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("BUILDING "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := kubetest.AwaitBuild(file, []string{"etcd"}); err != nil || got != dir {
		t.Fatalf("AwaitBuild(etcd) = %q, %v; want %s while the build goes on", got, err, dir)
	}
	go func() {
		time.Sleep(1500 * time.Millisecond)
		os.WriteFile(filepath.Join(dir, "kube-apiserver"), []byte("#!/bin/sh\n"), 0o755)
	}()
	if got, err := kubetest.AwaitBuild(file, []string{"etcd", "kube-apiserver"}); err != nil || got != dir {
		t.Fatalf("AwaitBuild(etcd, kube-apiserver) = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil {
		t.Fatalf("AwaitBuild returned before kube-apiserver was linked: %v", err)
	}
}

// TestAwaitBuildWaitsForTheEndForFiles: kwok's YAML files are written by a
// program, not renamed into place, so a test that needs them waits for
// the build's end even when they are already there.
func TestAwaitBuildWaitsForTheEndForFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "pending")
	for _, name := range []string{"kwok", "kwok-stages.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(file, []byte("BUILDING "+dir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeLater(t, file, dir+"\n")
	if got, err := kubetest.AwaitBuild(file, []string{"kwok", "kwok-stages.yaml"}); err != nil || got != dir {
		t.Fatalf("AwaitBuild = %q, %v", got, err)
	}
	if b, _ := os.ReadFile(file); strings.HasPrefix(string(b), "BUILDING") {
		t.Fatal("AwaitBuild returned before the build's end")
	}
}
