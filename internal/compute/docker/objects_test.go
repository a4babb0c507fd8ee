package docker_test

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

func newRevision() compute.RevisionRef {
	return compute.RevisionRef{AgentRef: compute.AgentRef{NamespaceID: occ.NewID(occ.PrefixNamespace), AgentID: occ.NewID(occ.PrefixAgent)},
		RevisionID: occ.NewID(occ.PrefixRevision)}
}

func specOf(rev compute.RevisionRef, n int64) compute.RevisionSpec {
	return compute.RevisionSpec{RevisionRef: rev, Number: n, ServicePrincipalID: occ.NewID(occ.PrefixServicePrincipal),
		ExecutionMode: occ.ExecutionEmbedded, Document: map[string]any{}}
}

// awaitReadiness prepares spec until want holds (2 min at most) and
// returns the last answer.
func awaitReadiness(t *testing.T, d compute.Driver, spec compute.RevisionSpec, want func(compute.Readiness) bool) compute.Readiness {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		r, err := d.PrepareRevision(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if want(r) || time.Now().After(deadline) {
			return r
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func isReady(r compute.Readiness) bool { return r.Ready }

// fullContainer is what the engine reports of a container, as far as the
// tests read it.
type fullContainer struct {
	ID     string `json:"Id"`
	Config struct {
		User       string
		Env        []string
		Labels     map[string]string
		Entrypoint []string
		Cmd        []string
	}
	HostConfig struct {
		NetworkMode    string
		Binds          []string
		PortBindings   map[string][]struct{ HostIp, HostPort string }
		Mounts         []struct{ Type, Source, Target string }
		Tmpfs          map[string]string
		ReadonlyRootfs bool
		CapAdd         []string
		CapDrop        []string
		SecurityOpt    []string
		Privileged     bool
		Memory         int64
		NanoCpus       int64
		PidsLimit      int64
		Devices        []any
		Init           *bool
	}
	Mounts          []struct{ Type, Name, Source, Destination string }
	NetworkSettings struct {
		Networks map[string]any
		Ports    map[string][]struct{ HostIp, HostPort string }
	}
}

// TestDockerContainerObjects: every container, network and volume occ made
// for a ready Agent, as the engine reports them: hardening, labels with
// the raw IDs, the published address, and no secret anywhere but the
// container's environment.
func TestDockerContainerObjects(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	d := open(t)
	ctx := context.Background()
	rev := newRevision()
	spec := specOf(rev, 3)
	secret := "canary-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	spec.Env = map[string]string{"MODEL_KEY": secret}
	spec.Document = map[string]any{"models": map[string]any{"providers": map[string]any{"p": map[string]any{
		"baseUrl": "http://127.0.0.1:9/v1", "apiKey": "${MODEL_KEY}", "api": "openai-completions", "models": []any{map[string]any{"id": "m", "name": "M"}}}}}}
	if r := awaitReadiness(t, d, spec, isReady); !r.Ready {
		t.Fatalf("not ready: %+v", r)
	}
	t.Cleanup(func() { _, _ = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID}) })
	obs := observer{d: dd}
	ws := obs.Workloads(t, rev.AgentRef)
	if len(ws) != 1 {
		t.Fatalf("containers of the Agent: %v, want one", ws)
	}
	var c fullContainer
	dd.MustDo(t, http.MethodGet, "/containers/"+ws[0]+"/json", nil, &c)
	h := c.HostConfig
	if c.Config.User != "1000:1000" || !h.ReadonlyRootfs || !slices.Equal(h.CapDrop, []string{"ALL"}) || len(h.CapAdd) > 0 || h.Privileged ||
		!slices.Contains(h.SecurityOpt, "no-new-privileges:true") || len(h.Binds) > 0 || len(h.Devices) > 0 {
		t.Errorf("not hardened: user %q, read-only %v, caps -%v +%v, privileged %v, security %v, binds %v, devices %v",
			c.Config.User, h.ReadonlyRootfs, h.CapDrop, h.CapAdd, h.Privileged, h.SecurityOpt, h.Binds, h.Devices)
	}
	if h.Init == nil || !*h.Init {
		t.Errorf("no init process (docker-init) to reap the gateway's orphans")
	}
	if h.Memory != 512<<20 || h.NanoCpus != 1e9 || h.PidsLimit != docker.PidsLimit {
		t.Errorf("limits: memory %d, CPUs %d, pids %d", h.Memory, h.NanoCpus, h.PidsLimit)
	}
	if _, ok := h.Tmpfs["/tmp"]; !ok || h.Tmpfs[docker.HomeDir] == "" {
		t.Errorf("tmpfs %v, want /tmp and %s", h.Tmpfs, docker.HomeDir)
	}
	for _, m := range c.Mounts {
		if m.Type != "volume" || (m.Name != docker.StateVolumeName(rev.AgentRef) && m.Name != docker.WorkspaceVolumeName(rev.AgentRef)) {
			t.Errorf("mount %+v is not one of the Agent's volumes", m)
		}
	}
	if len(c.Mounts) != 2 {
		t.Errorf("mounts %+v, want the state and workspace volumes", c.Mounts)
	}
	net := docker.NetworkName(rev.NamespaceID)
	if h.NetworkMode != net || len(c.NetworkSettings.Networks) != 1 || c.NetworkSettings.Networks[net] == nil {
		t.Errorf("networks %v (mode %s), want only %s", c.NetworkSettings.Networks, h.NetworkMode, net)
	}
	for port, bs := range c.NetworkSettings.Ports {
		for _, b := range bs {
			if b.HostIp != "127.0.0.1" {
				t.Errorf("port %s published on %q, want 127.0.0.1 only", port, b.HostIp)
			}
		}
	}
	if len(c.NetworkSettings.Ports["8081/tcp"]) != 1 {
		t.Errorf("published ports %v, want the relay's 8081 on 127.0.0.1", c.NetworkSettings.Ports)
	}
	wantLabels := map[string]string{docker.LabelManaged: "true", docker.LabelDriver: "docker", docker.LabelNamespace: rev.NamespaceID,
		docker.LabelAgent: rev.AgentID, docker.LabelRevision: rev.RevisionID, docker.LabelRevisionNumber: "3", docker.LabelRole: docker.RoleGateway,
		docker.LabelVersion: dd.GatewayImage(t)}
	for k, v := range wantLabels {
		if c.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Config.Labels[k], v)
		}
	}
	if h := c.Config.Labels[docker.LabelConfigHash]; len(h) != 32 {
		t.Errorf("configuration hash label %q, want 32 hex digits", h)
	}
	// Every process of the container runs as 1000.
	var top struct {
		Titles    []string
		Processes [][]string
	}
	dd.MustDo(t, http.MethodGet, "/containers/"+c.ID+"/top?ps_args=-o+pid,uid,args", nil, &top)
	if len(top.Processes) < 2 {
		t.Errorf("processes %v, want the wrapper and the gateway", top.Processes)
	}
	for _, p := range top.Processes {
		if len(p) < 2 || p[1] != "1000" {
			t.Errorf("process %v does not run as uid 1000 (%v)", p, top.Titles)
		}
	}
	// The state and the workspace belong to the gateway's user, the
	// volumes' roots to root (HOME, a tmpfs, the engine's archive does not
	// see).
	for dir, want := range map[string]int{docker.StateDir: 1000, docker.WorkspaceDir: 1000, docker.DataDir: 0, docker.WorkspaceMount: 0} {
		if uid := ownerOf(t, dd, c.ID, dir); uid != want {
			t.Errorf("%s belongs to uid %d, want %d", dir, uid, want)
		}
	}
	// occ's backend client, through the relay, writes a workspace file
	// (operator.admin: the gateway sees direct loopback), which lands in
	// the workspace volume.
	ep, ok := d.GatewayEndpoint(ctx, rev.AgentRef)
	if !ok {
		t.Fatal("no endpoint")
	}
	conn, err := gateway.Dial(ctx, gateway.Options{URL: ep.URL, Token: ep.Token})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "USER.md", Content: "written through the relay"}); err != nil {
		t.Errorf("agents.files.set through the relay: %v", err)
	}
	conn.Close()
	if got, ok := obs.WorkspaceFile(t, rev.AgentRef, "USER.md"); !ok || got != "written through the relay" {
		t.Errorf("workspace file in the volume: %q %v", got, ok)
	}
	// The secret is in the environment only; the token too.
	env := strings.Join(c.Config.Env, "\n")
	if !strings.Contains(env, "MODEL_KEY="+secret) || !strings.Contains(env, "OPENCLAW_GATEWAY_TOKEN=") {
		t.Errorf("environment lacks the secret or the token")
	}
	token := ""
	for _, kv := range c.Config.Env {
		if v, ok := strings.CutPrefix(kv, "OPENCLAW_GATEWAY_TOKEN="); ok {
			token = v
		}
	}
	rendered := readConfig(t, dd, c.ID)
	for what, b := range map[string][]byte{"labels": mustJSON(c.Config.Labels), "rendered openclaw.json": rendered} {
		if bytes.Contains(b, []byte(secret)) || bytes.Contains(b, []byte(token)) {
			t.Errorf("%s hold a secret value", what)
		}
	}
	if !bytes.Contains(rendered, []byte("${MODEL_KEY}")) {
		t.Errorf("rendered openclaw.json lacks the reference ${MODEL_KEY}: %s", rendered)
	}
	obs.ScanState(t, func(where string, content []byte) {
		if bytes.Contains(content, []byte(secret)) || bytes.Contains(content, []byte(token)) {
			t.Errorf("%s holds a secret value", where)
		}
	})
	// The network and the volumes carry occ's labels with the raw IDs.
	var n struct {
		Labels map[string]string
		Driver string
	}
	dd.MustDo(t, http.MethodGet, "/networks/"+net, nil, &n)
	if n.Driver != "bridge" || n.Labels[docker.LabelNamespace] != rev.NamespaceID || n.Labels[docker.LabelManaged] != "true" {
		t.Errorf("network %+v", n)
	}
	for _, name := range []string{docker.StateVolumeName(rev.AgentRef), docker.WorkspaceVolumeName(rev.AgentRef)} {
		var v struct{ Labels map[string]string }
		dd.MustDo(t, http.MethodGet, "/volumes/"+name, nil, &v)
		if v.Labels[docker.LabelAgent] != rev.AgentID || v.Labels[docker.LabelNamespace] != rev.NamespaceID || v.Labels[docker.LabelManaged] != "true" {
			t.Errorf("volume %s labels %v", name, v.Labels)
		}
	}
	// A second revision recreates the container; the volumes stay.
	next := specOf(compute.RevisionRef{AgentRef: rev.AgentRef, RevisionID: occ.NewID(occ.PrefixRevision)}, 4)
	if r := awaitReadiness(t, d, next, isReady); !r.Ready {
		t.Fatalf("revision 4 not ready: %+v", r)
	}
	if ws2 := obs.Workloads(t, rev.AgentRef); len(ws2) != 1 || ws2[0] == ws[0] {
		t.Errorf("containers after a new revision %v (before %v), want one new", ws2, ws)
	}
	if !listed(t, d, rev.AgentRef) {
		t.Errorf("AgentsWithWorkloads does not list the Agent whose gateway runs")
	}
	if err := d.DeleteAgent(ctx, rev.AgentRef); err != nil {
		t.Fatal(err)
	}
	if obs.AgentExists(t, rev.AgentRef) {
		t.Error("the Agent's container or volumes survive DeleteAgent")
	}
	if listed(t, d, rev.AgentRef) {
		t.Errorf("AgentsWithWorkloads lists the deleted Agent")
	}
}

// listed reports whether the driver lists the Agent among those it holds
// workloads for (other tests' Agents share the engine).
func listed(t *testing.T, d compute.WorkloadLister, a compute.AgentRef) bool {
	t.Helper()
	refs, err := d.AgentsWithWorkloads(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(refs, a)
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

// ownerOf is the owner of a directory of the container, through the
// engine's archive.
func ownerOf(t *testing.T, dd interface {
	Do(string, string, any) (int, []byte, error)
}, id, dir string) int {
	t.Helper()
	status, b, err := dd.Do(http.MethodGet, "/containers/"+id+"/archive?path="+dir, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("read %s: %d %v", dir, status, err)
	}
	hdr, err := tar.NewReader(bytes.NewReader(b)).Next()
	if err != nil {
		t.Fatal(err)
	}
	return hdr.Uid
}

// readConfig reads the container's openclaw.json through the engine.
func readConfig(t *testing.T, dd interface {
	Do(string, string, any) (int, []byte, error)
}, id string) []byte {
	t.Helper()
	status, b, err := dd.Do(http.MethodGet, "/containers/"+id+"/archive?path="+docker.ConfigPath, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("read %s: %d %v", docker.ConfigPath, status, err)
	}
	tr := tar.NewReader(bytes.NewReader(b))
	hdr, err := tr.Next()
	if err != nil {
		t.Fatal(err)
	}
	if hdr.Uid != 0 || hdr.Mode&0o222 != 0 {
		t.Errorf("%s: owner %d mode %o, want root's and read-only", docker.ConfigPath, hdr.Uid, hdr.Mode)
	}
	out, _ := io.ReadAll(tr)
	return out
}

// TestDockerForeignObjectsRefused: a container, network or volume under
// one of occ's names without occ's labels is refused with
// DOCKER_OWNERSHIP_CONFLICT and left as it is; a foreign container on a
// Namespace's network keeps DeleteNamespace from removing it.
func TestDockerForeignObjectsRefused(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	d := open(t)
	ctx := context.Background()
	image := dd.GatewayImage(t)
	foreignContainer := func(name, network string) string {
		var out struct{ Id string }
		body := map[string]any{"Image": image, "Cmd": []string{"gateway", "run"}, "Labels": map[string]string{"owner": "someone-else"},
			"HostConfig": map[string]any{"NetworkMode": network}}
		dd.MustDo(t, http.MethodPost, "/containers/create?name="+name, body, &out)
		t.Cleanup(func() { _, _, _ = dd.Do(http.MethodDelete, "/containers/"+out.Id+"?force=1", nil) })
		return out.Id
	}
	wantConflict := func(what string, err error) {
		t.Helper()
		if code := compute.PermanentCode(err); code != docker.CodeOwnershipConflict {
			t.Errorf("%s: %v (code %q), want %s", what, err, code, docker.CodeOwnershipConflict)
		}
	}

	// A foreign network under the Namespace's name.
	ns := occ.NewID(occ.PrefixNamespace)
	dd.MustDo(t, http.MethodPost, "/networks/create", map[string]any{"Name": docker.NetworkName(ns)}, nil)
	t.Cleanup(func() { _, _, _ = dd.Do(http.MethodDelete, "/networks/"+docker.NetworkName(ns), nil) })
	_, err := d.EnsureNamespace(ctx, compute.NamespaceRef{ID: ns})
	wantConflict("EnsureNamespace over a foreign network", err)
	_, err = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: ns})
	wantConflict("DeleteNamespace of a foreign network", err)
	var n struct{ Labels map[string]string }
	dd.MustDo(t, http.MethodGet, "/networks/"+docker.NetworkName(ns), nil, &n)
	if len(n.Labels) != 0 {
		t.Errorf("foreign network changed: labels %v", n.Labels)
	}

	// A foreign container under the Agent's gateway name.
	rev := newRevision()
	id := foreignContainer(docker.GatewayName(rev.AgentRef), "none")
	_, err = d.PrepareRevision(ctx, specOf(rev, 1))
	wantConflict("PrepareRevision over a foreign container", err)
	if ep, ok := d.GatewayEndpoint(ctx, rev.AgentRef); ok {
		t.Errorf("endpoint %+v of a foreign container", ep)
	}
	_, err = d.Diagnose(ctx, rev)
	wantConflict("Diagnose of a foreign container", err)
	if err := d.DeleteAgent(ctx, rev.AgentRef); err != nil {
		t.Errorf("DeleteAgent next to a foreign container: %v", err)
	}
	var fc struct{ Id string }
	dd.MustDo(t, http.MethodGet, "/containers/"+docker.GatewayName(rev.AgentRef)+"/json", nil, &fc)
	if fc.Id != id {
		t.Errorf("foreign container replaced: %s, was %s", fc.Id, id)
	}

	// A foreign volume under the Agent's state volume name.
	rev2 := newRevision()
	dd.MustDo(t, http.MethodPost, "/volumes/create", map[string]any{"Name": docker.StateVolumeName(rev2.AgentRef)}, nil)
	t.Cleanup(func() { _, _, _ = dd.Do(http.MethodDelete, "/volumes/"+docker.StateVolumeName(rev2.AgentRef), nil) })
	_, err = d.PrepareRevision(ctx, specOf(rev2, 1))
	wantConflict("PrepareRevision over a foreign volume", err)
	wantConflict("DeleteAgent of a foreign volume", d.DeleteAgent(ctx, rev2.AgentRef))
	if status, _, _ := dd.Do(http.MethodGet, "/volumes/"+docker.StateVolumeName(rev2.AgentRef), nil); status != http.StatusOK {
		t.Errorf("foreign volume removed: %d", status)
	}
	t.Cleanup(func() { _, _ = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev2.NamespaceID}) })

	// A foreign container attached to occ's network.
	ns3 := occ.NewID(occ.PrefixNamespace)
	if _, err := d.EnsureNamespace(ctx, compute.NamespaceRef{ID: ns3}); err != nil {
		t.Fatal(err)
	}
	stray := foreignContainer("stray-"+ns3, docker.NetworkName(ns3))
	dd.MustDo(t, http.MethodPost, "/containers/"+stray+"/start", nil, nil)
	_, err = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: ns3})
	if code := compute.PermanentCode(err); code != docker.CodeForeignObjects {
		t.Errorf("DeleteNamespace with a foreign container on its network: %v, want %s", err, docker.CodeForeignObjects)
	}
	if status, _, _ := dd.Do(http.MethodGet, "/networks/"+docker.NetworkName(ns3), nil); status != http.StatusOK {
		t.Errorf("network removed under a foreign container: %d", status)
	}
	dd.MustDo(t, http.MethodDelete, "/containers/"+stray+"?force=1", nil, nil)
	if o, err := d.DeleteNamespace(ctx, compute.NamespaceRef{ID: ns3}); err != nil || !o.Done {
		t.Errorf("DeleteNamespace once the foreign container is gone: %+v %v", o, err)
	}
}

// TestDockerStartupFailure: a gateway that exits is RUNTIME_STARTUP_FAILED
// evidence, and its diagnosis says the container failed.
func TestDockerStartupFailure(t *testing.T) {
	t.Parallel()
	d := open(t)
	rev := newRevision()
	spec := specOf(rev, 1)
	spec.Env = map[string]string{"FAKEGATEWAY_LISTEN_DELAY": "not-a-duration"} // the fake exits 2
	t.Cleanup(func() { _, _ = d.DeleteNamespace(context.Background(), compute.NamespaceRef{ID: rev.NamespaceID}) })
	failed := func(r compute.Readiness) bool { return r.RuntimeFailure != nil }
	r := awaitReadiness(t, d, spec, failed)
	if r.RuntimeFailure == nil || r.RuntimeFailure.Code != occ.DeployRuntimeStartup || r.RuntimeFailure.Component != "gateway" {
		t.Fatalf("readiness %+v, want a %s runtime failure", r, occ.DeployRuntimeStartup)
	}
	dg, err := d.Diagnose(context.Background(), rev)
	if err != nil {
		t.Fatal(err)
	}
	if len(dg.Checks) == 0 || dg.Checks[0].Check != docker.CheckContainer || dg.Checks[0].Code != docker.CodeContainerFailed || dg.Checks[0].Message == "" {
		t.Errorf("diagnosis %+v, want container failed first", dg.Checks)
	}
}

// TestDockerRefusals: what the engine cannot do is refused at start with
// the setting named, and is retryable at run time.
func TestDockerRefusals(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	ctx := context.Background()
	d, err := docker.New(docker.Options{Host: dd.Host(), GatewayImage: "occ-test/missing:1", GatewayPort: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Preflight(ctx); err == nil || !strings.Contains(err.Error(), docker.SettingGatewayImage) || !strings.Contains(err.Error(), "never pulls") {
		t.Errorf("preflight without the image: %v, want a refusal naming %s", err, docker.SettingGatewayImage)
	}
	rev := newRevision()
	t.Cleanup(func() { _, _ = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID}) })
	_, err = d.PrepareRevision(ctx, specOf(rev, 1))
	if err == nil || compute.PermanentCode(err) != "" || errors.Is(err, compute.ErrUnavailable) || !strings.Contains(err.Error(), docker.SettingGatewayImage) {
		t.Errorf("PrepareRevision without the image: %v, want a retryable error naming %s", err, docker.SettingGatewayImage)
	}

	gone, err := docker.New(docker.Options{Host: "unix:///nonexistent/docker.sock", GatewayImage: dd.GatewayImage(t), GatewayPort: 8080,
		RequestTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gone.Preflight(ctx); err == nil || !strings.Contains(err.Error(), docker.SettingHost) {
		t.Errorf("preflight of an unreachable engine: %v, want a refusal naming %s", err, docker.SettingHost)
	}
	for what, err := range map[string]error{
		"EnsureNamespace": func() error {
			_, err := gone.EnsureNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID})
			return err
		}(),
		"PrepareRevision": func() error { _, err := gone.PrepareRevision(ctx, specOf(rev, 1)); return err }(),
		"StopAgent":       gone.StopAgent(ctx, rev.AgentRef),
		"DeleteAgent":     gone.DeleteAgent(ctx, rev.AgentRef),
	} {
		if err == nil || compute.PermanentCode(err) != "" || !errors.Is(err, compute.ErrUnavailable) {
			t.Errorf("%s with the engine unreachable: %v, want a retryable error marked unavailable", what, err)
		}
	}
	if _, err := docker.New(docker.Options{Host: "ssh://root@host", GatewayImage: "x", GatewayPort: 8080}); err == nil || !strings.Contains(err.Error(), docker.SettingHost) {
		t.Errorf("an ssh host: %v, want a refusal naming %s", err, docker.SettingHost)
	}
	// The contract's admission: the runtime harness method is refused
	// with its code, in either mode; dedicated Codex with the methods the
	// harness container takes is admitted.
	caps := open(t).Capabilities()
	var spec compute.RevisionSpec
	for _, mode := range []string{occ.ExecutionEmbedded, occ.ExecutionDedicated} {
		if r := caps.Refusal("docker", occ.RevisionNeeds{ExecutionMode: mode, HarnessAuthMethod: occ.HarnessRuntime}); r == nil || r.Code != occ.DeployHarnessAuthUnsupported {
			t.Errorf("runtime harness auth, %s: %+v, want %s", mode, r, occ.DeployHarnessAuthUnsupported)
		}
	}
	for _, m := range []string{occ.HarnessAPIKey, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource} {
		if r := caps.Refusal("docker", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: m}); r != nil {
			t.Errorf("dedicated with %s: refused %+v, want admitted", m, r)
		}
	}

	// A gateway image that does not say it runs dedicated Codex (its
	// label emptied): dedicated is not declared, and refused with its code.
	var created struct {
		ID string `json:"Id"`
	}
	dd.MustDo(t, http.MethodPost, "/containers/create", map[string]any{"Image": dd.GatewayImage(t)}, &created)
	t.Cleanup(func() { _, _, _ = dd.Do(http.MethodDelete, "/containers/"+created.ID+"?force=1", nil) })
	dd.MustDo(t, http.MethodPost, "/commit?"+url.Values{"container": {created.ID}, "repo": {"occ-test/embedded-only"}, "tag": {"1"},
		"changes": {"LABEL " + docker.LabelDedicatedCodex + "="}}.Encode(), nil, nil)
	plain := open(t, func(o *docker.Options) { o.GatewayImage = "occ-test/embedded-only:1" })
	if r := plain.Capabilities().Refusal("docker", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: occ.HarnessAPIKey}); r == nil || r.Code != occ.DeployExecutionModeUnsupported {
		t.Errorf("dedicated on an image without %s: %+v, want %s", docker.LabelDedicatedCodex, r, occ.DeployExecutionModeUnsupported)
	}
	spec = specOf(rev, 1)
	spec.ExecutionMode = occ.ExecutionDedicated
	if _, err := plain.PrepareRevision(ctx, spec); compute.PermanentCode(err) != occ.DeployExecutionModeUnsupported {
		t.Errorf("dedicated on an image without %s: %v, want %s", docker.LabelDedicatedCodex, err, occ.DeployExecutionModeUnsupported)
	}
}

// TestDockerCPULimitCapped: a CPU limit above the engine's CPUs (which
// the engine refuses with a 400) is capped at all of them: the preflight
// says so, and the gateway container is created with that limit.
func TestDockerCPULimitCapped(t *testing.T) {
	t.Parallel()
	dd := daemon(t)
	ctx := context.Background()
	d, err := docker.New(docker.Options{Host: dd.Host(), GatewayImage: dd.GatewayImage(t), GatewayPort: 8080,
		MemoryBytes: 512 << 20, NanoCPUs: 4096e9, RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	e, err := d.Preflight(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if e.CPUs < 1 || e.CPULimit != int64(e.CPUs)*1e9 {
		t.Fatalf("preflight: %d CPUs, limit %d nano-CPUs; want all the engine's CPUs", e.CPUs, e.CPULimit)
	}
	rev := newRevision()
	t.Cleanup(func() { _, _ = d.DeleteNamespace(ctx, compute.NamespaceRef{ID: rev.NamespaceID}) })
	if _, err := d.PrepareRevision(ctx, specOf(rev, 1)); err != nil {
		t.Fatalf("PrepareRevision: %v", err)
	}
	var c struct{ HostConfig struct{ NanoCpus int64 } }
	dd.MustDo(t, http.MethodGet, "/containers/"+docker.GatewayName(rev.AgentRef)+"/json", nil, &c)
	if c.HostConfig.NanoCpus != e.CPULimit {
		t.Fatalf("the container's CPU limit %d, want %d", c.HostConfig.NanoCpus, e.CPULimit)
	}
	if err := d.DeleteAgent(ctx, rev.AgentRef); err != nil {
		t.Fatal(err)
	}
}
