// Package cachetest gives tests the directories outside the checkout where
// slow, reusable things live across runs (the pinned OpenClaw runtime, npm
// tools), and installs pinned npm tools there once per machine.
package cachetest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Dir returns a shared cache directory: $env when set, else
// /var/cache/<name>, else (when that cannot be created, as for a normal
// user) <user cache dir>/<name>. scripts/test sets env.
func Dir(t testing.TB, env, name string) string {
	t.Helper()
	if dir := os.Getenv(env); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatalf("%s=%s: %v", env, dir, err)
		}
		return dir
	}
	dir := filepath.Join("/var/cache", name)
	if err := os.MkdirAll(dir, 0o755); err == nil {
		return dir
	}
	user, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("no cache directory for %s (set %s): %v", name, env, err)
	}
	dir = filepath.Join(user, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("create %s (set %s): %v", dir, env, err)
	}
	return dir
}

// NPMCacheEnv names the directory npm tools are installed into.
const NPMCacheEnv = "OCC_TEST_NPM_CACHE"

// NPM returns a directory whose node_modules holds exactly the pinned
// packages ("name@version"), installed with the machine's npm the first
// time on a machine (without running their install scripts) and reused
// afterwards. Concurrent tests and runs wait for one another.
func NPM(t testing.TB, packages ...string) string {
	t.Helper()
	sum := sha256.Sum256([]byte(strings.Join(packages, "\n")))
	root := Dir(t, NPMCacheEnv, "occ-test-npm")
	dir := filepath.Join(root, hex.EncodeToString(sum[:6]))
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	lock, err := os.OpenFile(filepath.Join(root, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(done); err == nil {
		return dir
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("npm is not on PATH (scripts/test installs it): it installs %v", packages)
	}
	tmp, err := os.MkdirTemp(root, ".install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	manifest, _ := json.Marshal(map[string]any{"name": "occ-test-tools", "private": true})
	if err := os.WriteFile(filepath.Join(tmp, "package.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--save-exact"}, packages...)
	cmd := exec.Command(npm, args...)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm install %v: %v\n%s", packages, err, out)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".installed"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_ = os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// RuntimeCacheEnv names the directory the real lanes install the pinned
// OpenClaw runtime into (about 750 MB the first time on a machine).
const RuntimeCacheEnv = "OCC_TEST_RUNTIME_CACHE"

// Runtime returns the real lanes' runtime directory (see Dir).
func Runtime(t testing.TB) string {
	t.Helper()
	return Dir(t, RuntimeCacheEnv, "occ-test-runtime")
}
