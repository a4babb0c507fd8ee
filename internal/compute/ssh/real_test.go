package ssh_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cachetest"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/ssh"
	"github.com/openclaw/occ/internal/compute/ssh/sshtest"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

// TestRealOpenClaw runs the pinned OpenClaw gateway (OCC_TEST_RUNTIME_CACHE,
// installed when missing, bound read-only into a host of its own) as an
// Agent's systemd unit. The operator puts the model key in the Agent's
// environment file before the first deploy (the runtime harness method);
// the gateway becomes ready after its startup model probe with that key
// against a fake provider on loopback (the host shares this machine's
// network); workspace files are written and read live through the
// gateway's endpoint; a second revision keeps the workspace; delete leaves
// nothing of the Agent on the host. It asserts no timing.
func TestRealOpenClaw(t *testing.T) {
	cache := cachetest.Runtime(t)
	rt, err := agentruntime.Install(t.Context(), agentruntime.Options{Dir: cache})
	if err != nil {
		t.Fatalf("install the pinned runtime into %s: %v", cache, err)
	}
	h := sshtest.Start(t, sshtest.BindReadOnly(cache))
	prov := gatewaytest.StartProvider(t, "127.0.0.1:0")
	d, err := ssh.New(ssh.Options{IdentityFile: h.IdentityFile, KnownHostsFile: h.KnownHostsFile,
		Hosts: map[string]ssh.Host{"real": target(h)}, Command: []string{rt.Node, rt.Entry()}, UserPrefix: "occ-agent",
		StateRoot: "/var/lib/occ-ssh", UnitDir: "/etc/systemd/system", PortStart: 17600, PortEnd: 17699, ModelProbeTimeout: 3 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Preflight(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := compute.NamespaceRef{ID: occ.NewID(occ.PrefixNamespace), Name: "real"}
	if _, err := d.EnsureNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	a := compute.AgentRef{NamespaceID: ns.ID, AgentID: occ.NewID(occ.PrefixAgent)}
	p := d.Paths(a)
	const key = "sk-good"
	if _, err := h.Run("mkdir -p " + p.Dir + " && umask 077 && printf 'FAKEPROV_API_KEY=" + key + "\\n' > " + p.Dir + "/env"); err != nil {
		t.Fatal(err)
	}
	document := func() map[string]any {
		return map[string]any{
			"models": map[string]any{"providers": map[string]any{"fakeprov": map[string]any{
				"baseUrl": prov.URL + "/v1", "apiKey": "${FAKEPROV_API_KEY}", "api": "openai-completions",
				"models": []any{map[string]any{"id": "m1", "name": "M1"}}}}},
			"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1"}}},
		}
	}
	rev1 := spec(a, 1)
	rev1.Document = document()
	began := time.Now()
	awaitReadyWithin(t, d, rev1, 8*time.Minute)
	t.Logf("revision 1 ready in %s", time.Since(began).Round(time.Second))
	if prov.Count("Bearer "+key) == 0 {
		t.Fatalf("the gateway never called the provider with the operator's key: %v", prov.Requests())
	}
	for _, f := range []string{d.UnitPath(a), p.Dir + "/agent.json", p.Dir + "/gateway-token.env", p.Dir + "/revisions/" + rev1.RevisionID + "/openclaw.json"} {
		if strings.Contains(readHost(t, h, f), key) {
			t.Fatalf("%s, a file occ wrote, holds the operator's key", f)
		}
	}
	if err := d.ActivateRevision(ctx, rev1.RevisionRef); err != nil {
		t.Fatal(err)
	}

	// Live workspace files through the endpoint.
	ep, ok := d.GatewayEndpoint(ctx, a)
	if !ok {
		t.Fatal("no endpoint of the ready gateway")
	}
	c, err := gateway.Dial(ctx, gateway.Options{URL: ep.URL, Token: ep.Token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "USER.md", Content: "written through occ\n"}); err != nil {
		t.Fatal(err)
	}
	f, err := c.GetAgentFile(ctx, "", "USER.md")
	c.Close()
	if err != nil || f.Content != "written through occ\n" {
		t.Fatalf("USER.md read back = %+v, %v", f, err)
	}
	if b, err := os.ReadFile(filepath.Join(h.Root(), p.Workspace, "USER.md")); err != nil || string(b) != "written through occ\n" {
		t.Fatalf("USER.md in the Agent's workspace on the host = %q, %v", b, err)
	}

	// A second revision: a new gateway process with the workspace as it was.
	rev2 := spec(a, 2)
	rev2.Document = document()
	awaitReadyWithin(t, d, rev2, 8*time.Minute)
	if err := d.RetireRevision(ctx, rev1.RevisionRef); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(h.Root(), p.Workspace, "USER.md")); err != nil || string(b) != "written through occ\n" {
		t.Fatalf("USER.md after the second revision = %q, %v", b, err)
	}
	if l, err := d.Logs(ctx, rev2.RevisionRef, compute.LogOptions{TailLines: 20}); err != nil || !l.Found || len(l.Lines) == 0 {
		t.Fatalf("Logs of the running real gateway = %+v, %v", l, err)
	}

	user := d.User(a)
	if err := d.DeleteAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	if _, ok := accounts(t, h)[user]; ok || exists(h, p.Dir) || exists(h, d.UnitPath(a)) {
		t.Fatal("DeleteAgent left the account, tree or unit")
	}
	if out, _ := h.Run("pgrep -af '[o]penclaw' || true"); strings.TrimSpace(out) != "" {
		t.Fatalf("gateway processes left after DeleteAgent: %s", out)
	}
	if _, err := d.DeleteNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
}

// awaitReadyWithin is awaitReady with its own bound.
func awaitReadyWithin(t *testing.T, d compute.Driver, spec compute.RevisionSpec, limit time.Duration) compute.Readiness {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		r, err := d.PrepareRevision(context.Background(), spec)
		if err == nil && r.Ready {
			return r
		}
		if compute.PermanentCode(err) != "" || r.Held || time.Now().After(deadline) {
			t.Fatalf("revision %d not ready: %+v %+v, %v", spec.Number, r, r.RuntimeFailure, err)
		}
		time.Sleep(time.Second)
	}
}
