package docker_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRealOpenClawDockerLane is the real lane of the docker driver: the
// pinned OpenClaw runtime (OCC_TEST_RUNTIME_CACHE) built into the gateway
// image by `occ runtime image build --load` straight into the package's
// dockerd (realGatewayEngine), occ on SQLite with compute.docker pointing
// at that engine and image, and a fake
// OpenAI-compatible provider the gateway reaches from its container.
// Through the HTTP API one Agent deploys to succeeded, its workspace files
// are written and read live through occ (and are in the workspace volume),
// it stops (container gone, volumes kept), deploys again in a new container
// with its workspace and state as they were, and is deleted (container and
// both volumes gone). It asserts no timing.
//
// The provider listens on the Namespace network's gateway address (the
// host's address on that bridge), the only address of the host a
// container on a user-defined bridge reaches; the network is made first
// by the driver's own EnsureNamespace (what occ's first deploy does), so
// the Configuration can name that address.
func TestRealOpenClawDockerLane(t *testing.T) {
	t.Parallel()
	l := startRealDockerLane(t, "real-docker", 5*time.Minute)
	e, d, ns := l.e, l.d, l.ns
	prov := servertest.StartFakeProviderOn(t, net.JoinHostPort(l.bridge, "0"))
	t.Logf("image %s; the provider at %s (the bridge's address)", l.image, prov.URL)

	w := &servertest.RealWorld{T: t, E: e, Ns: ns, Prov: prov}
	canary := "sk-occ-real-docker-canary-" + servertest.RandomHex(8)
	r := e.Call("POST", w.Path("/secrets"), e.Admin, map[string]any{"name": "provider-key", "value": canary})
	if r.Status != 201 {
		t.Fatalf("create secret = %d %v", r.Status, r.Body)
	}
	w.Secret = r.Data()["id"].(string)
	(&realDockerWorld{RealWorld: w, d: d}).lifecycle(canary)
}

// realDockerLane is a real Docker lane's engine, its gateway image, occ
// using both, a Namespace and the host's address on its bridge.
type realDockerLane struct {
	e      *servertest.Env
	d      *dockertest.Daemon
	image  string
	ns     string
	bridge string
}

// gatewayEngine is the package's one dockerd of its own (dockertest) with
// the real gateway image loaded: `occ runtime image build --output
// --load` (the occ binary: under the race detector the compression would
// take minutes) on the pinned runtime with its Codex pieces
// (OCC_TEST_RUNTIME_CACHE). The real lanes share it, each with its own
// occ and Namespace (so its own network and names), as a company's occ
// replicas would share an engine; the archive the build wrote is what
// TestRealGatewayImageRuns unpacks.
type gatewayEngine struct {
	d       *dockertest.Daemon
	image   string // the loaded reference
	archive string // the docker-load archive --output wrote
	digest  string // the manifest digest the build printed
}

// realGatewayEngine prepares the engine once for every test of the
// binary (servertest.Shared).
func realGatewayEngine(t *testing.T) gatewayEngine {
	t.Helper()
	return servertest.Shared(t, "dockerd with the real gateway image", func(tb testing.TB) gatewayEngine {
		cache := servertest.RuntimeWithCodex(tb)
		d := dockertest.Start(tb)
		g := gatewayEngine{d: d, archive: filepath.Join(tb.TempDir(), "gateway.tar")}
		began := time.Now()
		var stdout, stderr bytes.Buffer
		build := exec.Command(servertest.BuildOCC(tb), "runtime", "image", "build", "--runtime-dir", cache, "--data-dir", tb.TempDir(),
			"--output", g.archive, "--load", d.Host())
		build.Stdout, build.Stderr = &stdout, &stderr
		if err := build.Run(); err != nil {
			tb.Fatalf("occ runtime image build --output --load: %v\n%s%s", err, stdout.String(), stderr.String())
		}
		tb.Logf("built and loaded in %s:\n%s", time.Since(began).Round(time.Second), stdout.String())
		for _, l := range strings.Split(stdout.String(), "\n") {
			if ref, ok := strings.CutPrefix(l, "loaded: "); ok {
				g.image = ref
			}
			if digest, ok := strings.CutPrefix(l, "digest: "); ok {
				g.digest = digest
			}
		}
		if g.image == "" || g.digest == "" {
			tb.Fatalf("occ runtime image build printed no loaded reference or digest:\n%s", stdout.String())
		}
		return g
	})
}

// startRealDockerLane boots occ on SQLite with compute.docker at the
// shared engine and image, and creates a Namespace whose network it makes
// at once with the driver's own EnsureNamespace (what occ's first deploy
// does), to learn the bridge's gateway address: the only address of the
// host a container on a user-defined bridge reaches. occ's log is shown
// when t fails.
func startRealDockerLane(t *testing.T, nsName string, convergence time.Duration) realDockerLane {
	t.Helper()
	g := realGatewayEngine(t)
	d, image := g.d, g.image
	serverLog := &servertest.EventLog{Min: slog.LevelInfo}
	e := servertest.Boot(t, storetest.URL(t, "sqlite"), nil, func(m *server.Main) {
		m.Config.Compute.Driver = "docker"
		m.Config.Compute.Docker.Host = d.Host()
		m.Config.Compute.Docker.Images.Gateway = image
		m.Config.Worker.ConvergenceTimeout = config.Duration(convergence)
		m.Logger = slog.New(serverLog)
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("occ's log:\n%s", serverLog)
		}
	})
	ns := e.CreateNamespace(nsName)
	drv, err := docker.New(docker.Options{Host: d.Host(), RequestTimeout: 30 * time.Second, GatewayImage: image, GatewayPort: 8080,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer drv.Close()
	if _, err := drv.Preflight(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := drv.EnsureNamespace(t.Context(), compute.NamespaceRef{ID: ns, Name: nsName}); err != nil {
		t.Fatal(err)
	}
	var netw struct {
		IPAM struct{ Config []struct{ Gateway string } }
	}
	d.MustDo(t, http.MethodGet, "/networks/"+docker.NetworkName(ns), nil, &netw)
	if len(netw.IPAM.Config) == 0 || net.ParseIP(netw.IPAM.Config[0].Gateway) == nil {
		t.Fatalf("network %s has no gateway address: %+v", docker.NetworkName(ns), netw)
	}
	return realDockerLane{e: e, d: d, image: image, ns: ns, bridge: netw.IPAM.Config[0].Gateway}
}

// realDockerWorld is the lane's occ and its engine.
type realDockerWorld struct {
	*servertest.RealWorld
	d *dockertest.Daemon
}

// container is what the test reads of the Agent's gateway container.
type realContainer struct {
	ID     string `json:"Id"`
	Config struct{ Env []string }
	State  struct {
		Status  string
		Running bool
	}
}

// gatewayContainer inspects the Agent's gateway container; found false on
// 404.
func (w *realDockerWorld) gatewayContainer(ref compute.AgentRef) (realContainer, bool) {
	var c realContainer
	status, b, err := w.d.Do(http.MethodGet, "/containers/"+docker.GatewayName(ref)+"/json", nil)
	if err != nil || (status != 200 && status != 404) {
		w.T.Fatalf("inspect container %s: %d %v %s", docker.GatewayName(ref), status, err, b)
	}
	if status == 404 {
		return c, false
	}
	w.d.MustDo(w.T, http.MethodGet, "/containers/"+docker.GatewayName(ref)+"/json", nil, &c)
	return c, true
}

// volumeExists reports whether the engine has the volume.
func (w *realDockerWorld) volumeExists(name string) bool {
	status, b, err := w.d.Do(http.MethodGet, "/volumes/"+name, nil)
	if err != nil || (status != 200 && status != 404) {
		w.T.Fatalf("inspect volume %s: %d %v %s", name, status, err, b)
	}
	return status == 200
}

// dump logs what the engine and the gateway say: the container's state
// (restarts, exit code, OOM kill), its log and the gateway's log file in
// the state volume.
func (w *realDockerWorld) dump(ref compute.AgentRef) {
	var c struct {
		RestartCount int
		State        map[string]any
	}
	if status, b, err := w.d.Do(http.MethodGet, "/containers/"+docker.GatewayName(ref)+"/json", nil); err == nil && status == 200 && json.Unmarshal(b, &c) == nil {
		w.T.Logf("container %s: %d restarts, state %v", docker.GatewayName(ref), c.RestartCount, c.State)
	}
	_, b, _ := w.d.Do(http.MethodGet, "/containers/"+docker.GatewayName(ref)+"/logs?stdout=1&stderr=1&tail=200", nil)
	w.T.Logf("container log of %s:\n%s", docker.GatewayName(ref), b)
	log, _ := os.ReadFile(filepath.Join(w.d.VolumeDir(docker.StateVolumeName(ref)), "logs", "gateway.log"))
	if len(log) > 20000 {
		log = log[len(log)-20000:]
	}
	w.T.Logf("gateway.log:\n%s", log)
}

// stateFiles lists the files the gateway keeps in the state volume's state/.
func stateFiles(dir string) []string {
	var files []string
	_ = filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, rel)
		}
		return nil
	})
	return files
}

func (w *realDockerWorld) lifecycle(canary string) {
	t, e := w.T, w.E
	const initial = "Answer support questions.\n"
	agent, cfg := w.NewAgent("bot", "sk-good", nil)
	ref := compute.AgentRef{NamespaceID: w.Ns, AgentID: agent}
	w.Dump = func(string) { w.dump(ref) }
	stateVol, wsVol := docker.StateVolumeName(ref), docker.WorkspaceVolumeName(ref)
	wsDir, stateDir := w.d.VolumeDir(wsVol), filepath.Join(w.d.VolumeDir(stateVol), "state")

	// Deploy: revision 1 to succeeded, the provider called with the key.
	began := time.Now()
	rev1, _ := w.Deploy(agent)
	st, _ := w.WaitDeployment(agent, rev1, 330*time.Second)
	if st["status"] != "succeeded" || st["error"] != nil {
		w.dump(ref)
		t.Fatalf("first deployment = %v; provider saw %v", st, w.Prov.Requests())
	}
	t.Logf("revision 1 succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	if g := w.AgentGET(agent).Data(); g["activeRevisionId"] != rev1 || g["desiredRuntimeState"] != "running" {
		t.Fatalf("agent after deploy = %v", g)
	}
	if n := w.Prov.Count("Bearer sk-good"); n == 0 {
		t.Errorf("the gateway never called the model provider with the configured key; requests: %v", w.Prov.Requests())
	}
	c1, ok := w.gatewayContainer(ref)
	if !ok || !c1.State.Running {
		t.Fatalf("container %s after the deploy: found %v %+v", docker.GatewayName(ref), ok, c1.State)
	}
	// The Secret reached the gateway through the container's environment.
	if !slices.Contains(c1.Config.Env, "OPENAI_API_KEY="+canary) {
		t.Errorf("the container's environment lacks the Secret as OPENAI_API_KEY")
	}
	var token string
	for _, kv := range c1.Config.Env {
		if v, ok := strings.CutPrefix(kv, "OPENCLAW_GATEWAY_TOKEN="); ok {
			token = v
		}
	}

	// Live workspace files through occ, in the workspace volume; fresh
	// diagnostics; the runtime logs of the real gateway, redacted.
	if r := e.Call("PUT", w.Path("/agents/"+agent+"/workspace/files/AGENTS.md"), e.Admin, map[string]any{"content": initial}); r.Status != 200 {
		t.Fatalf("PUT AGENTS.md = %d %v", r.Status, r.Body)
	}
	w.LiveFiles(agent, wsDir, initial)
	w.Diagnose(agent, rev1, "succeeded")
	logs := e.Call("GET", w.Path("/agents/"+agent+"/deployments/"+rev1+"/runtime/logs"), e.Admin, nil)
	lines, _ := logs.Data()["lines"].([]any)
	if logs.Status != 200 || logs.Data()["found"] != true || len(lines) == 0 {
		t.Fatalf("runtime logs = %d %v", logs.Status, logs.Body)
	}
	if body := servertest.RawBody(logs); strings.Contains(body, canary) || token == "" || strings.Contains(body, token) {
		t.Fatalf("runtime logs hold the Secret or the gateway token (token known: %v)", token != "")
	}
	t.Logf("runtime logs: %d lines, the last %v", len(lines), lines[len(lines)-1])
	for _, dir := range []string{w.d.VolumeDir(stateVol), wsDir} {
		servertest.CheckNoSecret(t, dir, canary)
	}
	before := stateFiles(stateDir)
	if len(before) == 0 {
		t.Fatalf("the gateway wrote nothing in its state directory %s", stateDir)
	}

	// Stop: the container gone, the volumes kept.
	if r := e.Call("POST", w.Path("/agents/"+agent+"/stop"), e.Admin, nil); r.Status != 202 {
		t.Fatalf("stop = %d %v", r.Status, r.Body)
	}
	took := w.WaitUntil("activeRevisionId cleared", 6*time.Minute, func() bool { return w.AgentGET(agent).Data()["activeRevisionId"] == nil })
	t.Logf("stop: activeRevisionId null %s after the 202", took.Round(time.Millisecond))
	if c, ok := w.gatewayContainer(ref); ok {
		t.Fatalf("the stopped Agent's container still exists (%s)", c.State.Status)
	}
	if !w.volumeExists(stateVol) || !w.volumeExists(wsVol) {
		t.Fatal("a volume of the stopped Agent is gone")
	}
	servertest.CheckWorkspaceFile(t, wsDir, initial)

	// Deploy again: a new container, the workspace and the state as they were.
	began = time.Now()
	rev2, _ := w.Deploy(agent)
	if st, _ := w.WaitDeployment(agent, rev2, 330*time.Second); st["status"] != "succeeded" {
		w.dump(ref)
		t.Fatalf("second deployment = %v", st)
	}
	t.Logf("revision 2 succeeded %s after the request", time.Since(began).Round(time.Millisecond))
	c2, ok := w.gatewayContainer(ref)
	if !ok || c2.ID == c1.ID || !c2.State.Running {
		t.Fatalf("container after the second deploy: found %v, id %s (first %s)", ok, c2.ID, c1.ID)
	}
	servertest.CheckWorkspaceFile(t, wsDir, initial)
	r := e.Call("GET", w.Path("/agents/"+agent+"/workspace/files/SOUL.md"), e.Admin, nil)
	if r.Status != 200 || !strings.HasPrefix(r.Data()["content"].(string), "# SOUL.md") {
		t.Fatalf("SOUL.md after the redeploy = %d %v", r.Status, r.Body)
	}
	after := stateFiles(stateDir)
	kept := slices.DeleteFunc(slices.Clone(before), func(f string) bool { return !slices.Contains(after, f) })
	t.Logf("state: %d files after the first run, %d of them kept after the redeploy, %d now", len(before), len(kept), len(after))
	if len(kept) == 0 {
		t.Fatalf("none of the first container's state files (%v) is in the state volume after the redeploy (%v)", before, after)
	}

	// Delete: 404, the container and both volumes gone, the name free.
	if r := e.Call("DELETE", w.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	took = w.WaitUntil("the Agent gone (404)", 6*time.Minute, func() bool { return w.AgentGET(agent).Status == 404 })
	t.Logf("delete: 404 %s after the 202", took.Round(time.Millisecond))
	if c, ok := w.gatewayContainer(ref); ok {
		t.Fatalf("the deleted Agent's container still exists (%s)", c.State.Status)
	}
	if w.volumeExists(stateVol) || w.volumeExists(wsVol) {
		t.Fatal("a volume of the deleted Agent still exists")
	}
	if r := e.Call("POST", w.Path("/agents"), e.Admin, map[string]any{"name": "bot", "configurationId": cfg}); r.Status != 201 {
		t.Fatalf("reuse the name of the deleted Agent = %d %v", r.Status, r.Body)
	}
}
