package local_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
)

// TestLayoutPortAndToken: the Agent directory's files, their modes and
// owners (initial workspace files too; see users.go), ports PortSpacing apart, the occ-owned
// keys of openclaw.json, and the port and token kept across a stop and a
// new revision.
func TestLayoutPortAndToken(t *testing.T) {
	d, _ := open(t, "")
	ag1, ag2 := newAgent(t, d), newAgent(t, d)
	spec1 := newSpec(ag1, 1)
	spec1.Document = map[string]any{"gateway": map[string]any{"port": 1, "auth": map[string]any{"mode": "none"}}, "ui": map[string]any{"seamColor": "#123456"}}
	spec1.InitialFiles = map[string]string{"USER.md": "initial\n"}
	ready(t, d, spec1)
	ready(t, d, newSpec(ag2, 1))

	dir := d.AgentDir(ag1)
	for _, name := range []string{"openclaw.json", "run.json", "token", "state", "workspace", "home", "logs/gateway.log", "console.log"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("agent directory lacks %s: %v", name, err)
		}
	}
	ep1, ok1 := d.GatewayEndpoint(context.Background(), ag1)
	ep2, ok2 := d.GatewayEndpoint(context.Background(), ag2)
	if !ok1 || !ok2 {
		t.Fatal("no endpoints")
	}
	port := func(ep compute.Endpoint) int {
		p, err := strconv.Atoi(strings.TrimPrefix(ep.URL, "ws://127.0.0.1:"))
		if err != nil {
			t.Fatalf("endpoint URL %q", ep.URL)
		}
		return p
	}
	p1, p2 := port(ep1), port(ep2)
	if d := p1 - p2; d < local.PortSpacing && d > -local.PortSpacing {
		t.Fatalf("ports %d and %d are less than %d apart", p1, p2, local.PortSpacing)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "openclaw.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), ep1.Token) {
		t.Fatal("openclaw.json holds the gateway token")
	}
	var doc struct {
		Gateway struct {
			Port int `json:"port"`
			Bind string
			Auth map[string]any
		}
		UI map[string]any `json:"ui"`
	}
	if err := json.Unmarshal(cfg, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Gateway.Port != p1 || doc.Gateway.Bind != "loopback" || doc.Gateway.Auth["mode"] != "token" || doc.UI["seamColor"] != "#123456" {
		t.Fatalf("openclaw.json = %s", cfg)
	}
	// Modes and owners: occ's own 0700/0600 when it is not root; as root
	// the gateway's user owns its tree and reads openclaw.json, occ keeps
	// the rest, and the directories above let gateways pass through.
	type perm struct {
		mode     os.FileMode
		uid, gid int
	}
	uid, gid := os.Getuid(), os.Getgid()
	gwUID, gwGID := uid, gid
	agentDir, config, above := perm{0o700, uid, gid}, perm{0o600, uid, gid}, perm{0o700, uid, gid}
	if os.Geteuid() == 0 {
		n, _ := strconv.Atoi(procIDs(t, onlyPID(t, d, ag1)).uids[0])
		gwUID, gwGID = n, n
		agentDir, config, above = perm{0o710, 0, n}, perm{0o640, 0, n}, perm{0o711, 0, 0}
	}
	private, tree, file := perm{0o600, uid, gid}, perm{0o700, gwUID, gwGID}, perm{0o600, gwUID, gwGID}
	layout := map[string]perm{".": agentDir, "openclaw.json": config, "token": private, "run.json": private, "console.log": private,
		"state": tree, "workspace": tree, "home": tree, "logs": tree, "workspace/USER.md": file,
		"..": above, "../..": above, "../../..": above, "../../../..": above}
	for name, want := range layout {
		var st syscall.Stat_t
		if err := syscall.Lstat(filepath.Join(dir, name), &st); err != nil {
			t.Fatal(err)
		}
		if got := (perm{os.FileMode(st.Mode).Perm(), int(st.Uid), int(st.Gid)}); got != want {
			t.Errorf("%s: mode and owner %+v; want %+v", name, got, want)
		}
	}

	// The port and the token stay across a stop and a new revision.
	if err := d.StopAgent(context.Background(), ag1); err != nil {
		t.Fatal(err)
	}
	ready(t, d, newSpec(ag1, 2))
	ep, ok := d.GatewayEndpoint(context.Background(), ag1)
	if !ok || ep.URL != ep1.URL || ep.Token != ep1.Token || ep.Password != "" {
		t.Fatalf("endpoint after restart = %+v, %v; want the URL and token of %+v", ep, ok, ep1)
	}
}

func TestConcurrentAgentsGetOwnPorts(t *testing.T) {
	d, _ := open(t, "")
	const n = 12
	ags := make([]compute.AgentRef, n)
	for i := range ags {
		ags[i] = newAgent(t, d)
	}
	errs := make(chan error, n)
	for _, ag := range ags {
		go func() { errs <- tryReady(d, newSpec(ag, 1)) }()
	}
	for range ags {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var ports []int
	for _, ag := range ags {
		ep, ok := d.GatewayEndpoint(context.Background(), ag)
		if !ok {
			t.Fatal("no endpoint")
		}
		p, _ := strconv.Atoi(strings.TrimPrefix(ep.URL, "ws://127.0.0.1:"))
		for _, q := range ports {
			if p-q < local.PortSpacing && q-p < local.PortSpacing {
				t.Fatalf("ports %d and %d are less than %d apart", p, q, local.PortSpacing)
			}
		}
		ports = append(ports, p)
		onlyPID(t, d, ag)
	}
}

func TestTakenPortIsReplaced(t *testing.T) {
	d, _ := open(t, "")
	ag := newAgent(t, d)
	ready(t, d, newSpec(ag, 1))
	ep1, _ := d.GatewayEndpoint(context.Background(), ag)
	if err := d.StopAgent(context.Background(), ag); err != nil {
		t.Fatal(err)
	}
	// Someone else listens on the Agent's port meanwhile.
	l, err := net.Listen("tcp", strings.TrimPrefix(ep1.URL, "ws://"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ready(t, d, newSpec(ag, 2))
	ep2, _ := d.GatewayEndpoint(context.Background(), ag)
	if ep2.URL == ep1.URL || ep2.Token != ep1.Token {
		t.Fatalf("endpoint %+v after its port was taken (was %+v); want a new port, the same token", ep2, ep1)
	}
}

// TestPortClaimsAcrossRoots: drivers on different roots sharing a claim
// directory never give two gateways the same port, also while the gateways
// do not listen yet (a command that never opens its port); with four slots
// and four Agents every slot is used once, and a fifth Agent finds none.
// A deleted Agent's slot is free again.
func TestPortClaimsAcrossRoots(t *testing.T) {
	claims := t.TempDir()
	first := 65535 - local.PortSpacing - 3*local.PortSpacing // four slots
	neverListens := func(port int) ([]string, error) { return []string{"/bin/sh", "-c", "exec sleep 600"}, nil }
	tune := func(o *local.Options) { o.PortClaimDir, o.FirstPort, o.Command = claims, first, neverListens }
	d1, _ := open(t, "", tune)
	d2, _ := open(t, "", tune)
	type placed struct {
		d  *local.Driver
		ag compute.AgentRef
	}
	var all []placed
	for _, d := range []*local.Driver{d1, d2, d1, d2} {
		ag := newAgent(t, d)
		if r, err := d.PrepareRevision(context.Background(), newSpec(ag, 1)); err != nil || r.Ready {
			t.Fatalf("PrepareRevision = %+v, %v; want started, not ready", r, err)
		}
		all = append(all, placed{d, ag})
	}
	seen := map[string]bool{}
	for _, p := range all {
		ep, ok := p.d.GatewayEndpoint(context.Background(), p.ag)
		if !ok || seen[ep.URL] {
			t.Fatalf("endpoint %q (ok %v) given twice or missing; seen %v", ep.URL, ok, seen)
		}
		seen[ep.URL] = true
	}
	extra := newAgent(t, d1)
	if _, err := d1.PrepareRevision(context.Background(), newSpec(extra, 1)); err == nil || !strings.Contains(err.Error(), "no free loopback port") {
		t.Fatalf("a fifth Agent on four slots: %v; want no free loopback port", err)
	}
	// Deleting one of d2's Agents frees its slot for d1.
	if err := d2.DeleteAgent(context.Background(), all[1].ag); err != nil {
		t.Fatal(err)
	}
	if _, err := d1.PrepareRevision(context.Background(), newSpec(extra, 1)); err != nil {
		t.Fatalf("after a deletion: %v", err)
	}
}
