package ssh_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// account is a line of the host's /etc/passwd.
type account struct {
	uid, gid int
	home     string
	shell    string
}

// accounts reads the host's /etc/passwd.
func accounts(t *testing.T, h *sshtest.Host) map[string]account {
	t.Helper()
	f, err := os.Open(filepath.Join(h.Root(), "etc/passwd"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]account{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Split(sc.Text(), ":")
		if len(p) == 7 {
			uid, _ := strconv.Atoi(p[2])
			gid, _ := strconv.Atoi(p[3])
			out[p[0]] = account{uid: uid, gid: gid, home: p[5], shell: p[6]}
		}
	}
	return out
}

// groupExists reports whether the host's /etc/group names the group.
func groupExists(t *testing.T, h *sshtest.Host, name string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Root(), "etc/group"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains("\n"+string(b), "\n"+name+":")
}

// wantMode checks a path's mode and owner on the host.
func wantMode(t *testing.T, h *sshtest.Host, path string, mode os.FileMode, uid, gid int) {
	t.Helper()
	fi, err := os.Lstat(filepath.Join(h.Root(), path))
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if fi.Mode().Perm() != mode || int(st.Uid) != uid || int(st.Gid) != gid {
		t.Fatalf("%s: mode %v owner %d:%d; want %v %d:%d", path, fi.Mode().Perm(), st.Uid, st.Gid, mode, uid, gid)
	}
}

func exists(h *sshtest.Host, path string) bool {
	_, err := os.Lstat(filepath.Join(h.Root(), path))
	return err == nil
}

func readHost(t *testing.T, h *sshtest.Host, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(h.Root(), path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// awaitReady calls PrepareRevision until it answers ready (2 min).
func awaitReady(t *testing.T, d compute.Driver, spec compute.RevisionSpec) compute.Readiness {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err := d.PrepareRevision(context.Background(), spec)
		if err == nil && r.Ready {
			return r
		}
		if compute.PermanentCode(err) != "" || r.Held || r.RuntimeFailure != nil || time.Now().After(deadline) {
			t.Fatalf("revision %d not ready: %+v %+v, %v", spec.Number, r, r.RuntimeFailure, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// unitShow is a property of the Agent's unit as systemd sees it.
func unitShow(t *testing.T, h *sshtest.Host, a compute.AgentRef, prop string) string {
	t.Helper()
	out, err := h.Run("systemctl show -p " + prop + " --value " + ssh.UnitName(a))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(out)
}

// gatewayEnv is the environment of the Agent's gateway process.
func gatewayEnv(t *testing.T, h *sshtest.Host, a compute.AgentRef) map[string]string {
	t.Helper()
	pid := unitShow(t, h, a, "MainPID")
	out, err := h.Run("cat /proc/" + pid + "/environ | tr '\\0' '\\n'")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

func spec(a compute.AgentRef, n int64) compute.RevisionSpec {
	return compute.RevisionSpec{RevisionRef: compute.RevisionRef{AgentRef: a, RevisionID: occ.NewID(occ.PrefixRevision)}, Number: n,
		ServicePrincipalID: occ.NewID(occ.PrefixServicePrincipal), ExecutionMode: occ.ExecutionEmbedded, Document: map[string]any{}}
}

// TestDriverOnTheHost follows one Agent through its life and reads back
// from the host what each step left: the account, the tree and its
// modes, the snapshots, the unit, the port claims, the operator's
// environment file, and nothing left after deletion.
func TestDriverOnTheHost(t *testing.T) {
	h := testHost(t)
	d := open(t)
	ctx := context.Background()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"}
	if o, err := d.EnsureNamespace(ctx, ns); err != nil || !o.Done {
		t.Fatalf("EnsureNamespace = %+v, %v", o, err)
	}
	a := compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
	p := d.Paths(a)
	// A revision with Secret bindings is refused before anything is made
	// on the host (the operator's env file holds what the gateway needs).
	withSecret := spec(a, 1)
	withSecret.Env = map[string]string{"OCC_TEST_SECRET": "canary"}
	if _, err := d.PrepareRevision(ctx, withSecret); compute.PermanentCode(err) != occ.DeploySecretEnvironmentUnsupported {
		t.Fatalf("PrepareRevision with a secret = %v; want %s", err, occ.DeploySecretEnvironmentUnsupported)
	}
	if exists(h, p.Dir) {
		t.Fatal("the refused revision made the Agent's tree")
	}
	rev1 := spec(a, 1)
	awaitReady(t, d, rev1)

	user := d.User(a)
	acct, ok := accounts(t, h)[user]
	if !ok || acct.uid == 0 || acct.gid == 0 || acct.shell != "/usr/sbin/nologin" || !groupExists(t, h, user) {
		t.Fatalf("account %s = %+v (found %v); want a system user with a group of its own, nologin, not uid 0", user, acct, ok)
	}
	wantMode(t, h, p.Dir, 0o750, 0, acct.gid)
	for _, dir := range []string{p.Home, p.State, p.Workspace, p.Logs} {
		wantMode(t, h, dir, 0o700, acct.uid, acct.gid)
	}
	wantMode(t, h, p.Dir+"/gateway-token.env", 0o600, 0, 0)
	wantMode(t, h, p.Dir+"/agent.json", 0o600, 0, 0)
	snap1 := p.Dir + "/revisions/" + rev1.RevisionID + "/openclaw.json"
	wantMode(t, h, snap1, 0o640, 0, acct.gid)
	if exists(h, p.Dir+"/env") {
		t.Fatal("occ created the operator's environment file")
	}
	unit := readHost(t, h, d.UnitPath(a))
	for _, line := range []string{"Type=simple", "User=" + user, "Restart=always", "NoNewPrivileges=true", "PrivateTmp=true",
		"EnvironmentFile=-" + p.Dir + "/env", "ExecStart=" + fakeGateway(t) + " gateway run --port 17100"} {
		if !strings.Contains(unit, "\n"+line+"\n") {
			t.Fatalf("unit lacks %q:\n%s", line, unit)
		}
	}
	if unitShow(t, h, a, "UnitFileState") != "enabled" || unitShow(t, h, a, "ActiveState") != "active" {
		t.Fatal("the unit is not enabled and active")
	}
	env := gatewayEnv(t, h, a)
	if env["OPENCLAW_GATEWAY_TOKEN"] == "" || env["HOME"] != p.Home {
		t.Fatalf("gateway environment lacks the token or HOME: %v", env)
	}
	// A user's account may not read another's files, nor the snapshot of
	// another Agent (runuser as the Agent's user, as the reference's test).
	if _, err := h.Run("runuser -u " + user + " -- cat " + p.Dir + "/gateway-token.env"); err == nil {
		t.Fatal("the Agent's user reads its gateway token file")
	}

	// A second Agent: its own account and the next port.
	b := compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
	awaitReady(t, d, spec(b, 1))
	if d.User(b) == user || !strings.Contains(readHost(t, h, d.UnitPath(b)), "--port 17101") {
		t.Fatal("the second Agent shares the account or does not get the next port")
	}
	if _, err := h.Run("runuser -u " + d.User(b) + " -- ls " + p.Workspace); err == nil {
		t.Fatal("another Agent's user lists this Agent's workspace")
	}

	// The operator's environment file reaches the next start; occ never
	// rewrites it.
	if _, err := h.Run("printf 'OPERATOR_KEY=operator-canary\\n' > " + p.Dir + "/env && chmod 0600 " + p.Dir + "/env"); err != nil {
		t.Fatal(err)
	}
	rev2 := spec(a, 2)
	awaitReady(t, d, rev2)
	if env := gatewayEnv(t, h, a); env["OPERATOR_KEY"] != "operator-canary" {
		t.Fatalf("revision 2's environment: operator key %q; want the operator's", env["OPERATOR_KEY"])
	}
	if got, _ := os.Readlink(filepath.Join(h.Root(), p.Dir, "current")); got != "revisions/"+rev2.RevisionID {
		t.Fatalf("current -> %q; want revision 2", got)
	}
	if !exists(h, snap1) {
		t.Fatal("revision 1's snapshot went before it was retired")
	}
	if err := d.ActivateRevision(ctx, rev2.RevisionRef); err != nil {
		t.Fatal(err)
	}
	if err := d.RetireRevision(ctx, rev1.RevisionRef); err != nil {
		t.Fatal(err)
	}
	if exists(h, snap1) || unitShow(t, h, a, "ActiveState") != "active" {
		t.Fatal("retiring revision 1 left its snapshot or stopped revision 2")
	}

	if err := d.StopAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if unitShow(t, h, a, "ActiveState") != "inactive" || unitShow(t, h, a, "UnitFileState") != "disabled" || !exists(h, p.Workspace) {
		t.Fatal("StopAgent left the unit running or enabled, or removed the tree")
	}
	if readHost(t, h, p.Dir+"/env") != "OPERATOR_KEY=operator-canary\n" {
		t.Fatal("occ changed the operator's environment file")
	}

	if err := d.DeleteAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, ok := accounts(t, h)[user]; ok || groupExists(t, h, user) || exists(h, p.Dir) || exists(h, d.UnitPath(a)) ||
		exists(h, testStateRoot+"/ports/17100") || exists(h, testStateRoot+"/accounts/"+user) {
		t.Fatal("DeleteAgent left the account, group, tree, unit, port claim or account mark")
	}
	if unitShow(t, h, b, "ActiveState") != "active" {
		t.Fatal("deleting one Agent stopped another")
	}
	if o, err := d.DeleteNamespace(ctx, ns); err != nil || !o.Done {
		t.Fatalf("DeleteNamespace = %+v, %v", o, err)
	}
	if _, ok := accounts(t, h)[d.User(b)]; ok || exists(h, d.UnitPath(b)) || exists(h, testStateRoot+"/namespaces/"+ns.ID) {
		t.Fatal("DeleteNamespace left the second Agent's account, unit or the Namespace's tree")
	}
}

// TestDriverRefusesForeignAccounts: an account under the name occ would
// give an Agent, which occ did not make, is refused permanently and left
// alone; so is a Namespace deletion that finds something occ did not make.
func TestDriverRefusesForeignAccounts(t *testing.T) {
	h := testHost(t)
	d := open(t)
	ctx := context.Background()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"}
	if _, err := d.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	a := compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
	if _, err := h.Run("useradd --system " + d.User(a)); err != nil {
		t.Fatal(err)
	}
	_, err := d.PrepareRevision(ctx, spec(a, 1))
	if compute.PermanentCode(err) != occ.SSHOwnershipConflict {
		t.Fatalf("PrepareRevision with a foreign account = %v; want %s", err, occ.SSHOwnershipConflict)
	}
	if exists(h, d.Paths(a).Dir) {
		t.Fatal("the refused Agent got a tree")
	}
	if err := d.DeleteAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, ok := accounts(t, h)[d.User(a)]; !ok {
		t.Fatal("DeleteAgent removed an account occ did not make")
	}

	foreign := testStateRoot + "/namespaces/" + ns.ID + "/agents/not-an-agent"
	if _, err := h.Run("mkdir -p " + foreign); err != nil {
		t.Fatal(err)
	}
	_, err = d.DeleteNamespace(ctx, ns)
	if compute.PermanentCode(err) != occ.SSHOwnershipConflict || !exists(h, foreign) {
		t.Fatalf("DeleteNamespace with a foreign entry = %v (entry kept %v); want %s, nothing removed", err, exists(h, foreign), occ.SSHOwnershipConflict)
	}
}

// TestDriverHostErrors: a Namespace whose name has no host is SSH_NO_HOST;
// a host with a wrong key refuses every call with SSH_HOST_KEY_MISMATCH.
func TestDriverHostErrors(t *testing.T) {
	h := testHost(t)
	d := open(t)
	_, err := d.EnsureNamespace(context.Background(), compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "elsewhere"})
	if compute.PermanentCode(err) != occ.SSHNoHost {
		t.Fatalf("EnsureNamespace of a name without a host = %v; want %s", err, occ.SSHNoHost)
	}
	_, other := newKeyPair(t)
	wrong := writeFile(t, "known_hosts", []byte(fmt.Sprintf("[%s]:%d %s", h.Address, h.Port, strings.TrimSpace(string(marshal(other))))+"\n"))
	dw := open(t, func(o *ssh.Options) { o.KnownHostsFile = wrong })
	_, err = dw.EnsureNamespace(context.Background(), compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"})
	if compute.PermanentCode(err) != occ.SSHHostKeyMismatch {
		t.Fatalf("EnsureNamespace on a host with another key = %v; want %s", err, occ.SSHHostKeyMismatch)
	}
	down := open(t, func(o *ssh.Options) {
		o.Hosts = map[string]ssh.Host{"team": {Address: "127.0.0.1", Port: 1, User: "root"}}
	})
	_, err = down.EnsureNamespace(context.Background(), compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"})
	if !errors.Is(err, compute.ErrUnavailable) || ssh.CodeOf(err) != occ.SSHHostUnreachable {
		t.Fatalf("EnsureNamespace on an unreachable host = %v; want %s, unavailable", err, occ.SSHHostUnreachable)
	}
}

// TestPreflight: the test host has everything; a gateway command that is
// not there, a port range among the host's ephemeral ports, or a host
// whose key is not the known one, stops occ with the setting named.
func TestPreflight(t *testing.T) {
	h := testHost(t)
	if err := open(t).Preflight(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := open(t, func(o *ssh.Options) { o.Command = []string{"/opt/node/bin/node", "/opt/openclaw/openclaw.mjs"} }).Preflight(context.Background())
	if err == nil || !strings.Contains(err.Error(), "compute.ssh.hosts.") || !strings.Contains(err.Error(), "missing file /opt/node/bin/node (compute.ssh.runtime)") {
		t.Fatalf("Preflight without the runtime = %v; want the missing files named", err)
	}
	// A range that overlaps the host's ephemeral ports (read from the
	// host, not assumed).
	eph, err := h.Run("cat /proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Fatal(err)
	}
	var lo, hi int
	if _, err := fmt.Sscan(eph, &lo, &hi); err != nil {
		t.Fatalf("ip_local_port_range %q: %v", eph, err)
	}
	err = open(t, func(o *ssh.Options) { o.PortStart, o.PortEnd = hi-10, hi }).Preflight(context.Background())
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("compute.ssh.portRange %d-%d overlaps the host's ephemeral ports %d-%d", hi-10, hi, lo, hi)) {
		t.Fatalf("Preflight with a range in the ephemeral ports = %v; want the overlap named", err)
	}
	_, other := newKeyPair(t)
	wrong := writeFile(t, "known_hosts", []byte(fmt.Sprintf("[%s]:%d %s", h.Address, h.Port, marshal(other))))
	err = open(t, func(o *ssh.Options) { o.KnownHostsFile = wrong }).Preflight(context.Background())
	if ssh.CodeOf(err) != occ.SSHHostKeyMismatch || !strings.Contains(err.Error(), "compute.ssh.hosts.") {
		t.Fatalf("Preflight with another host key = %v; want %s naming the host", err, occ.SSHHostKeyMismatch)
	}
}

// TestTunnel: occ reaches a gateway (listening on the host's loopback
// only) through the SSH connection, at a loopback address of its own that
// every driver instance gives alike; when the instance that listened
// closes, the next one to give the endpoint serves it.
func TestTunnel(t *testing.T) {
	d1 := open(t)
	ctx := context.Background()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"}
	if _, err := d1.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d1.DeleteNamespace(context.Background(), ns) })
	a := compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
	awaitReady(t, d1, spec(a, 1))
	ep1, ok := d1.GatewayEndpoint(ctx, a)
	if !ok || !strings.HasPrefix(ep1.URL, "ws://127.77.") {
		t.Fatalf("endpoint %+v; want the tunnel's loopback address", ep1)
	}
	d2 := open(t)
	ep2, ok := d2.GatewayEndpoint(ctx, a)
	if !ok || ep2 != ep1 {
		t.Fatalf("endpoint from another instance = %+v; want %+v", ep2, ep1)
	}
	probe := func() error {
		pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		_, err := gateway.Probe(pctx, "http://"+strings.TrimPrefix(ep1.URL, "ws://"))
		return err
	}
	if err := probe(); err != nil {
		t.Fatalf("probe through the tunnel: %v", err)
	}
	d1.Close()
	if _, ok := d2.GatewayEndpoint(ctx, a); !ok {
		t.Fatal("no endpoint after the first instance closed")
	}
	if err := probe(); err != nil {
		t.Fatalf("probe through the second instance's tunnel: %v", err)
	}
}

// TestRuntimeMethodRunsNoModelProbe: with the runtime harness method the
// credentials are the operator's and occ runs no model probe (the seed):
// a gateway whose provider would reject the key is ready on its own
// probes, and the gateway logged no model probe. Without the method the
// same revision is held (the conformance suite's RejectedCredentialIsHeld).
func TestRuntimeMethodRunsNoModelProbe(t *testing.T) {
	d := open(t)
	ctx := context.Background()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "team"}
	if _, err := d.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.DeleteNamespace(context.Background(), ns) })
	a := compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
	s := viaOperatorEnv(t, d, computetest.FakeGatewayRejectCredential(spec(a, 1)))
	s.HarnessAuthMethod = occ.HarnessRuntime
	awaitReady(t, d, s)
	if n := computetest.FakeGatewayModelProbes(t, d, s.RevisionRef); n != 0 {
		t.Fatalf("the gateway answered %d model probes for a runtime-method revision; want none", n)
	}
}
