package docker_test

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/server/servertest"
)

// TestRealDedicatedCodexDockerLane is the real lane of dedicated Codex on
// the Docker driver: the gateway image `occ runtime image build` makes from
// the pinned runtime with its Codex pieces, loaded into a dockerd of the
// test, and a fake OpenAI Responses API on the Namespace bridge's address.
// Through the HTTP API it deploys a dedicated api_key Agent: in its own
// container the real Codex CLI logs in (the key on the exec's stdin) and
// probes the model, the real app-server serves with a capability token;
// the real gateway, in its container, gets the official codex plugin
// installed offline from the image's npm cache and connects to the
// app-server; the deployment succeeds, and neither container's
// configuration, the gateway's environment nor its openclaw.json holds the
// key. A second Agent whose key the provider rejects fails with
// RUNTIME_AUTHENTICATION_FAILED and no gateway container. It asserts no
// timing; it logs how long the deploy took.
func TestRealDedicatedCodexDockerLane(t *testing.T) {
	t.Parallel()
	l := startRealDockerLane(t, "real-dedicated-docker", 10*time.Minute)
	e, d, ns := l.e, l.d, l.ns
	prov := servertest.StartResponsesProviderOn(t, net.JoinHostPort(l.bridge, "0"))
	// The image says it runs dedicated Codex (what the driver declares on).
	var img struct {
		Config struct{ Labels map[string]string }
	}
	d.MustDo(t, http.MethodGet, "/images/"+l.image+"/json", nil, &img)
	if img.Config.Labels[docker.LabelDedicatedCodex] != docker.CodexPluginSpec {
		t.Fatalf("image %s labels %v; want %s=%s", l.image, img.Config.Labels, docker.LabelDedicatedCodex, docker.CodexPluginSpec)
	}
	w := &servertest.RealWorld{T: t, E: e, Ns: ns}
	dump := func(ref compute.AgentRef) {
		for _, name := range []string{docker.HarnessName(ref), docker.GatewayName(ref)} {
			_, b, _ := d.Do(http.MethodGet, "/containers/"+name+"/logs?stdout=1&stderr=1&tail=200", nil)
			t.Logf("container log of %s:\n%s", name, b)
		}
		log, _ := os.ReadFile(filepath.Join(d.VolumeDir(docker.StateVolumeName(ref)), "logs", "gateway.log"))
		if len(log) > 20000 {
			log = log[len(log)-20000:]
		}
		t.Logf("gateway.log:\n%s", log)
	}

	t.Run("api-key-succeeds", func(t *testing.T) {
		w := w.WithT(t)
		key := "sk-good-" + servertest.RandomHex(8)
		agent := w.NewDedicatedAgent("codex", key, prov.URL+"/v1")
		ref := compute.AgentRef{NamespaceID: ns, AgentID: agent}
		requested := time.Now()
		rev, _ := w.Deploy(agent)
		st, at := w.WaitDeployment(agent, rev, 10*time.Minute)
		if st["status"] != "succeeded" {
			dump(ref)
			t.Fatalf("dedicated deployment = %v; provider saw %v", st, prov.Requests())
		}
		t.Logf("dedicated deploy on docker: succeeded %s after the request", at.Sub(requested).Round(time.Millisecond))
		if prov.Count(key) == 0 {
			t.Fatalf("the provider never saw the harness's key: %v", prov.Requests())
		}
		for _, name := range []string{docker.HarnessName(ref), docker.GatewayName(ref)} {
			_, b, err := d.Do(http.MethodGet, "/containers/"+name+"/json", nil)
			if err != nil || strings.Contains(string(b), key) || !strings.Contains(string(b), `"Running":true`) {
				t.Fatalf("container %s: %v; want it running, the key nowhere in its inspect", name, err)
			}
		}
		conf, err := os.ReadFile(filepath.Join(d.VolumeDir(docker.StateVolumeName(ref)), "config", "openclaw.json"))
		if err != nil || strings.Contains(string(conf), key) || !strings.Contains(string(conf), "websocket") {
			t.Fatalf("openclaw.json: %v, or it holds the key, or no codex app-server", err)
		}
		// The real codex plugin reached the real app-server in the other
		// container.
		w.CodexConnected(agent, rev, filepath.Join(d.VolumeDir(docker.StateVolumeName(ref)), "logs", "gateway.log"), "harness/container")
	})

	t.Run("rejected-key-fails-authentication", func(t *testing.T) {
		w := w.WithT(t)
		agent := w.NewDedicatedAgent("codex-bad", "sk-bad-"+servertest.RandomHex(8), prov.URL+"/v1")
		ref := compute.AgentRef{NamespaceID: ns, AgentID: agent}
		rev, _ := w.Deploy(agent)
		st, _ := w.WaitDeployment(agent, rev, 10*time.Minute)
		er, _ := st["error"].(map[string]any)
		if st["status"] != "failed" || er["code"] != "RUNTIME_AUTHENTICATION_FAILED" {
			dump(ref)
			t.Fatalf("dedicated deployment with a rejected key = %v; provider saw %v", st, prov.Requests())
		}
		for _, name := range []string{docker.HarnessName(ref), docker.GatewayName(ref)} {
			if status, _, _ := d.Do(http.MethodGet, "/containers/"+name+"/json", nil); status != http.StatusNotFound {
				t.Errorf("container %s exists (%d) although the harness was rejected", name, status)
			}
		}
	})
}
