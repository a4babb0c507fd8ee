package servertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// fakeGateway is the fake gateway binary, built at most once per test
// binary and removed by Main when its tests are over.
var fakeGateway struct {
	once sync.Once
	dir  string
	path string
	err  error
}

// FakeGatewayBinary builds the fake gateway once per test binary; servers
// booted without an explicit driver run it as their gateway
// (compute.gatewayCommand), so no test starts the real runtime by accident.
func FakeGatewayBinary(t testing.TB) string {
	fakeGateway.once.Do(func() {
		fakeGateway.dir, fakeGateway.err = os.MkdirTemp("", "occ-fakegateway-")
		if fakeGateway.err != nil {
			return
		}
		// Gateways run as users of their own when the tests run as root.
		if fakeGateway.err = os.Chmod(fakeGateway.dir, 0o755); fakeGateway.err != nil {
			return
		}
		fakeGateway.path = filepath.Join(fakeGateway.dir, "fakegateway")
		out, err := exec.Command("go", "build", "-o", fakeGateway.path, gatewaytest.BinaryPackage).CombinedOutput()
		if err != nil {
			fakeGateway.err = fmt.Errorf("build the fake gateway: %v\n%s", err, out)
		}
	})
	if fakeGateway.err != nil {
		t.Fatal(fakeGateway.err)
	}
	return fakeGateway.path
}

// Main runs an e2e package's tests and removes what they built once for
// the whole binary. Every test runs in parallel with the others (each
// boots its own occ on its own database, data directory and ports) but
// for those that change the process environment (t.Setenv): they run
// first, one at a time, as Go runs tests that do not call t.Parallel.
func Main(m *testing.M) {
	code := m.Run()
	if fakeGateway.dir != "" {
		os.RemoveAll(fakeGateway.dir)
	}
	os.Exit(code)
}
