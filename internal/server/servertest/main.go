package servertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// perBinary is the directory a test binary keeps what it prepared once
// for all its tests in; Main removes it when the tests are over.
var perBinary struct {
	mu  sync.Mutex
	dir string
}

// buildOnce runs `go build -o name pkg` (in the repository's root, with
// env added to its environment) the first time a test of the binary asks
// for name, and gives every test the same path (Shared).
func buildOnce(t testing.TB, name, pkg string, env ...string) string {
	t.Helper()
	return Shared(t, "binary "+name, func(tb testing.TB) string {
		path, err := build(RepoRoot(tb), name, pkg, env)
		if err != nil {
			tb.Fatal(err)
		}
		return path
	})
}

// BuildDirEnv names a directory scripts/test makes for one run and
// removes after it: the test binaries of that run (up to -p at once) share
// the binaries built there, each built by the first binary that needs it
// while the others wait (a lock file beside it), instead of compiling the
// same packages at once. Without it each test binary builds its own.
const BuildDirEnv = "OCC_TEST_BUILD_DIR"

// build links pkg into name in the run's build directory (BuildDirEnv)
// unless a test binary of the run already did, or else into the per-binary
// directory.
func build(root, name, pkg string, env []string) (string, error) {
	dir := os.Getenv(BuildDirEnv)
	if dir == "" {
		var err error
		if dir, err = binaryDir(); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, name)
	lock, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("lock %s: %v", lock.Name(), err)
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	cmd := exec.Command("go", "build", "-o", path+".tmp", pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s %s: %v\n%s", strings.Join(env, " "), pkg, err, out)
	}
	return path, os.Rename(path+".tmp", path)
}

// binaryDir makes the per-binary directory the first time; gateways run
// as users of their own when the tests run as root, so it is 0755.
func binaryDir() (string, error) {
	perBinary.mu.Lock()
	defer perBinary.mu.Unlock()
	if perBinary.dir != "" {
		return perBinary.dir, nil
	}
	dir, err := os.MkdirTemp("", "occ-testbin-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err != nil {
		return "", err
	}
	perBinary.dir = dir
	return dir, nil
}

// FakeGatewayBinary builds the fake gateway once per test binary; servers
// booted without an explicit driver run it as their gateway
// (compute.gatewayCommand), so no test starts the real runtime by accident.
func FakeGatewayBinary(t testing.TB) string {
	return buildOnce(t, "fakegateway", gatewaytest.BinaryPackage)
}

// BuildOCC builds cmd/occ (without the race detector) once per test
// binary; every test that runs occ as a process shares it.
func BuildOCC(t testing.TB) string {
	t.Helper()
	return buildOnce(t, "occ", "./cmd/occ")
}

// BuildStaticOCC builds a static cmd/occ (CGO_ENABLED=0), what an image
// of occ itself carries, once per test binary.
func BuildStaticOCC(t testing.TB) string {
	t.Helper()
	return buildOnce(t, "occ-static", "./cmd/occ", "CGO_ENABLED=0")
}

// Main runs an e2e package's tests and removes what they built once for
// the whole binary. Every test runs in parallel with the others (each
// boots its own occ on its own database, data directory and ports) but
// for those that change the process environment (t.Setenv): they run
// first, one at a time, as Go runs tests that do not call t.Parallel.
func Main(m *testing.M) {
	code := m.Run()
	releaseShared()
	if perBinary.dir != "" {
		os.RemoveAll(perBinary.dir)
	}
	os.Exit(code)
}
