package ssh_test

import (
	"os"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
)

// One test host for the package's tests (booted at the first test that
// needs it, powered off after the last). Tests keep apart by their own
// lock files, Namespaces and Agents.
var host struct {
	once sync.Once
	h    *sshtest.Host
	err  error
}

func testHost(t testing.TB) *sshtest.Host {
	t.Helper()
	host.once.Do(func() { host.h, host.err = sshtest.New() })
	if host.err != nil {
		t.Fatal(host.err)
	}
	return host.h
}

func TestMain(m *testing.M) {
	code := m.Run()
	if host.h != nil {
		host.h.Stop()
	}
	os.Exit(code)
}
