package ssh_test

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
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
	if job := os.Getenv(crashChildEnv); job != "" {
		os.Exit(crashChild(job))
	}
	code := m.Run()
	if host.h != nil {
		host.h.Stop()
	}
	os.Exit(code)
}

// The fake gateway binary, copied into the test host once.
var fake struct {
	once sync.Once
	path string
	err  error
}

// fakeGateway is the fake gateway's path on the test host.
func fakeGateway(t testing.TB) string {
	t.Helper()
	h := testHost(t)
	fake.once.Do(func() {
		bin := gatewaytest.BuildStaticBinary(t)
		b, err := os.ReadFile(bin)
		if err != nil {
			fake.err = err
			return
		}
		fake.path = "/opt/occ-test/fakegateway"
		if err := os.MkdirAll(filepath.Join(h.Root(), "opt/occ-test"), 0o755); err != nil {
			fake.err = err
			return
		}
		fake.err = os.WriteFile(filepath.Join(h.Root(), fake.path), b, 0o755)
	})
	if fake.err != nil {
		t.Fatal(fake.err)
	}
	return fake.path
}

// testStateRoot is the drivers' state root on the test host. Gateway
// ports of the tests on this machine (the hosts share its network) are
// disjoint: 17100-17499 here, 17500-17599 TestCrashRounds, 17800-17999 internal/server's SSH lanes. They are
// below the machine's ephemeral ports (which any connection may take, so
// the driver's preflight refuses a range overlapping them) and below the
// local driver's gateways (20000 and up), which other tests run at the
// same time.
const testStateRoot = "/var/lib/occ-test"

// options are a driver's options on the test host: every Namespace name
// the tests use maps to it.
func options(t testing.TB) ssh.Options {
	h := testHost(t)
	hst := target(h)
	return ssh.Options{IdentityFile: h.IdentityFile, KnownHostsFile: h.KnownHostsFile,
		Hosts:   map[string]ssh.Host{"conformance": hst, "default": hst, "team": hst},
		Command: []string{fakeGateway(t)}, UserPrefix: "occ", StateRoot: testStateRoot, UnitDir: "/etc/systemd/system",
		PortStart: 17100, PortEnd: 17499}
}

// open returns a driver on the test host; edit changes its options first.
func open(t testing.TB, edit ...func(*ssh.Options)) *ssh.Driver {
	t.Helper()
	o := options(t)
	for _, e := range edit {
		e(&o)
	}
	d, err := ssh.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// viaOperatorEnv writes the spec's environment into the Agent's
// operator environment file on the host, as an operator puts model
// credentials there before the first deploy (docs/SSH.md), and returns the
// spec without it: the driver delivers no environment of occ's. The fake
// gateway's settings (slow start, a rejected key) reach it this way.
func viaOperatorEnv(t testing.TB, d *ssh.Driver, s compute.RevisionSpec) compute.RevisionSpec {
	t.Helper()
	var lines strings.Builder
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		lines.WriteString(k + "=" + s.Env[k] + "\n")
	}
	dir := d.Paths(s.AgentRef).Dir
	script := "mkdir -p " + dir + " && printf '%s' '" + lines.String() + "' > " + dir + "/env && chmod 0600 " + dir + "/env"
	if _, err := testHost(t).Run(script); err != nil {
		t.Fatalf("write the operator's environment file: %v", err)
	}
	s.Env = nil
	return s
}
