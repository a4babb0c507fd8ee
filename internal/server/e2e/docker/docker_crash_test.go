package docker_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server/servertest"
)

// dockerCrashRounds is the Docker lane's deploy crash rounds unless
// OCC_TEST_DOCKER_CRASH_ROUNDS asks for more.
const dockerCrashRounds = 20

// TestDockerDeployCrashRestart is TestDeployCrashRestart on the Docker
// lane: occ runs with --compute docker against a dockerd of the test's own
// (dockertest) holding the fake gateway image; occ is SIGKILLed at a
// random moment of a burst of deploys, stops, deletes and workspace
// writes, started again, and once everything settled: no Agent has (or
// ever had, at any scan) two gateway containers, a running Agent has one
// and a stopped one none (not even a created or exited one), nothing of a
// deleted Agent is left (container, state and workspace volumes), no
// container or volume belongs to an Agent occ does not know, every
// deployment is terminal and stays so, and River holds no unfinished work.
// At the end the Namespace is deleted, and with it its network: the
// engine holds nothing of it nor of any Agent (only the installation's
// "default" Namespace's network).
//
// OCC_TEST_DOCKER_CRASH_ROUNDS raises the rounds (default 20). It runs in
// parallel (after the package's serial tests): most of its time is spent
// waiting for containers and gateways.
func TestDockerDeployCrashRestart(t *testing.T) {
	// Not parallel: it runs before the package's parallel tests, alone, as
	// its settle deadlines want (run beside the real lanes it missed them).
	rounds := dockerCrashRounds
	if s := os.Getenv("OCC_TEST_DOCKER_CRASH_ROUNDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("OCC_TEST_DOCKER_CRASH_ROUNDS=%q: want a positive number", s)
		}
		rounds = max(n, rounds)
	}
	d := dockertest.Start(t)
	dc := &dockerCrashCompute{t: t, d: d, image: d.GatewayImage(t)}
	w := servertest.DeployCrashLoop(t, servertest.BuildOCC(t), dc, gatewaytest.ReachableDir(t), "", rounds)
	w.DeleteEverything()
	dc.awaitNone(w.Ns, w.Last)
	w.Last.Stop()
}

// dockerCrashCompute sees the engine through its API.
type dockerCrashCompute struct {
	t     *testing.T
	d     *dockertest.Daemon
	image string
}

func (k *dockerCrashCompute) Env() []string {
	return []string{"OCC_COMPUTE=docker", "OCC_COMPUTE_DOCKER_HOST=" + k.d.Host(), "OCC_COMPUTE_DOCKER_IMAGES_GATEWAY=" + k.image}
}

func (k *dockerCrashCompute) SettleWait() time.Duration { return 2 * time.Minute }

// SweepsStrays: the docker driver lists its containers (servertest.StraySweeper).
func (k *dockerCrashCompute) SweepsStrays() {}

// dockerObject is one object occ made, as the crash test sees it.
type dockerObject struct {
	what  string // "container NAME (state)", "volume NAME", "network NAME"
	ns    string // its occ Namespace's ID
	agent string // its Agent's ID ("" for a Namespace's network)
	role  string
}

// objects lists the engine's containers (in any state), volumes and
// networks carrying occ's managed label.
func (k *dockerCrashCompute) objects() []dockerObject {
	b, _ := json.Marshal(map[string][]string{"label": {docker.LabelManaged + "=true"}})
	f := url.Values{"filters": {string(b)}}.Encode()
	var containers []struct {
		Names  []string
		State  string
		Labels map[string]string
	}
	k.d.MustDo(k.t, http.MethodGet, "/containers/json?all=1&"+f, nil, &containers)
	var volumes struct {
		Volumes []struct {
			Name   string
			Labels map[string]string
		}
	}
	k.d.MustDo(k.t, http.MethodGet, "/volumes?"+f, nil, &volumes)
	var networks []struct {
		Name   string
		Labels map[string]string
	}
	k.d.MustDo(k.t, http.MethodGet, "/networks?"+f, nil, &networks)
	var out []dockerObject
	for _, c := range containers {
		out = append(out, dockerObject{what: "container " + c.Names[0] + " (" + c.State + ")", ns: c.Labels[docker.LabelNamespace], agent: c.Labels[docker.LabelAgent], role: c.Labels[docker.LabelRole]})
	}
	for _, v := range volumes.Volumes {
		out = append(out, dockerObject{what: "volume " + v.Name, ns: v.Labels[docker.LabelNamespace], agent: v.Labels[docker.LabelAgent], role: v.Labels[docker.LabelRole]})
	}
	for _, n := range networks {
		out = append(out, dockerObject{what: "network " + n.Name, ns: n.Labels[docker.LabelNamespace], agent: n.Labels[docker.LabelAgent], role: n.Labels[docker.LabelRole]})
	}
	return out
}

// workloads: the Agents' gateway containers, whatever their state.
func (k *dockerCrashCompute) Workloads() map[string][]string {
	out := map[string][]string{}
	for _, o := range k.objects() {
		if o.role == docker.RoleGateway {
			out[o.agent] = append(out[o.agent], o.what)
		}
	}
	return out
}

// held: each Agent's containers and volumes.
func (k *dockerCrashCompute) Held() map[string][]string {
	out := map[string][]string{}
	for _, o := range k.objects() {
		if o.agent != "" {
			out[o.agent] = append(out[o.agent], o.what)
		}
	}
	return out
}

// awaitNone waits (bounded) until the engine holds nothing of the deleted
// Namespace nsID (its network is removed last) and nothing of any Agent:
// what is left is other Namespaces' networks (the installation's
// "default" one).
func (k *dockerCrashCompute) awaitNone(nsID string, p *servertest.OccProc) {
	deadline := time.Now().Add(k.SettleWait())
	for {
		var left []dockerObject
		for _, o := range k.objects() {
			if o.ns == nsID || o.agent != "" || o.role != docker.RoleNetwork {
				left = append(left, o)
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var more []string
			for _, o := range left {
				if n, ok := strings.CutPrefix(o.what, "network "); ok {
					_, b, _ := k.d.Do(http.MethodGet, "/networks/"+n, nil)
					more = append(more, string(b))
				}
			}
			k.t.Fatalf("%v after the Namespace's deletion, the engine holds %v\n%s\n%s", k.SettleWait(), left, strings.Join(more, "\n"), servertest.ReadTail(p.Logs))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
