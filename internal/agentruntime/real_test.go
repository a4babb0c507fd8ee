package agentruntime

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/cachetest"
)

// TestInstallRealOpenClaw installs the pinned openclaw and Node.js from the
// npm registry with the machine's npm (slow the first time on a machine,
// instant afterwards), then checks the result and the workspace templates.
func TestInstallRealOpenClaw(t *testing.T) {
	t.Parallel()
	cache := cachetest.Runtime(t)
	ctx := t.Context()

	start := time.Now()
	rt, err := Install(ctx, Options{Dir: cache, Progress: logWriter(t)})
	if err != nil {
		t.Fatalf("Install into %s: %v", cache, err)
	}
	t.Logf("Install took %s; the install at %s holds %s", time.Since(start).Round(time.Millisecond), rt.Dir, formatBytes(dirSize(rt.Dir)))

	// Installed means reused: a second Install never needs npm.
	again, err := Install(ctx, Options{Dir: cache, NPM: "/nonexistent/npm"})
	if err != nil || again != rt {
		t.Fatalf("second Install = %+v, %v; want %+v", again, err, rt)
	}
	if found, ok := Find(cache, Pinned()); !ok || found != rt {
		t.Fatalf("Find = %+v, %v", found, ok)
	}

	// Node.js is a 24.x at or after 24.16.0 and reports the version the
	// marker recorded.
	got, err := nodeVersion(ctx, rt.Node)
	if err != nil {
		t.Fatal(err)
	}
	min, _ := parseVersion(MinNodeVersion)
	if got.String() != rt.NodeVersion || got[0] != 24 || compareVersions(got, min) < 0 {
		t.Errorf("node --version = %s, marker %s; want 24.x >= %s", got, rt.NodeVersion, MinNodeVersion)
	}
	// openclaw runs and names its version; its lifecycle scripts completed.
	if err := verifyOpenClaw(ctx, rt.Node, rt.OpenClawPkg, OpenClawVersion); err != nil {
		t.Error(err)
	}
	// npm ran under the new Node.js: the native fs-safe package, an optional
	// dependency that requires Node >= 22, is there.
	if _, err := os.Stat(filepath.Join(rt.Dir, "node_modules/@openclaw/fs-safe-linux-x64-gnu/package.json")); err != nil {
		t.Errorf("optional native dependency missing (was npm run with the old Node.js?): %v", err)
	}

	// The workspace templates render to the files the gateway writes
	// (openclaw-runtime.md §4).
	tpl, err := WorkspaceTemplates(rt)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"AGENTS.md":   "1e17784e422c0e47e44c5214d0b37092f7b378bb2d3746976032be3075203c88",
		"SOUL.md":     "4f9042f259b076e429d0f01ce39340030f47ea5b7f5befe306296c36baf1f60f",
		"IDENTITY.md": "59b223766c8dd978162044e333a684c72e22af753d1ba3dc3bff4b2d915c54e2",
		"USER.md":     "46e0d8c937df7b104de97a23c58537292672654194879ca9f76b02075e022555",
	}
	if len(tpl) != len(want) {
		t.Errorf("WorkspaceTemplates returned %d files, want %d", len(tpl), len(want))
	}
	for name, digest := range want {
		sum := sha256.Sum256(tpl[name])
		if got := hex.EncodeToString(sum[:]); got != digest {
			t.Errorf("%s: sha256 %s, want %s (openclaw %s)", name, got, digest, OpenClawVersion)
		}
	}
}

// logWriter returns a writer that logs each line it is given to t, and is
// closed when t ends.
func logWriter(t *testing.T) io.Writer {
	r, w := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := bufio.NewScanner(r)
		for s.Scan() {
			t.Log(s.Text())
		}
	}()
	t.Cleanup(func() {
		w.Close()
		<-done
	})
	return w
}
