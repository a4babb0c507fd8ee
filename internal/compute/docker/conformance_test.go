package docker_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/computetest"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/docker/dockertest"
	"github.com/openclaw/occ/internal/occ"
)

// observer sees the engine through its API and the volumes on disk.
type observer struct{ d *dockertest.Daemon }

func labelQuery(labels ...string) string {
	b, _ := json.Marshal(map[string][]string{"label": labels})
	return url.Values{"filters": {string(b)}, "all": {"1"}}.Encode()
}

type summary struct {
	ID     string `json:"Id"`
	Labels map[string]string
	State  string
}

func (o observer) containers(t *testing.T, labels ...string) []summary {
	t.Helper()
	var l []summary
	o.d.MustDo(t, http.MethodGet, "/containers/json?"+labelQuery(labels...), nil, &l)
	return l
}

type vol struct {
	Name       string
	Mountpoint string
	Labels     map[string]string
}

func (o observer) volumes(t *testing.T, labels ...string) []vol {
	t.Helper()
	var out struct{ Volumes []vol }
	o.d.MustDo(t, http.MethodGet, "/volumes?"+labelQuery(labels...), nil, &out)
	return out.Volumes
}

func (o observer) exists(t *testing.T, path string) bool {
	t.Helper()
	status, b, err := o.d.Do(http.MethodGet, path, nil)
	if err != nil || (status != http.StatusOK && status != http.StatusNotFound) {
		t.Fatalf("GET %s: %d %v %s", path, status, err, b)
	}
	return status == http.StatusOK
}

func (o observer) NamespaceExists(t *testing.T, id string) bool {
	t.Helper()
	return o.exists(t, "/networks/"+docker.NetworkName(id)) || len(o.containers(t, docker.LabelNamespace+"="+id)) > 0
}

// Workloads are the containers labelled with the Agent's ID, whatever
// their state: a dedicated revision's gateway and harness are one
// workload ("gateway+harness", the gateway's own label naming its
// harness), any other container one of its own.
func (o observer) Workloads(t *testing.T, ag compute.AgentRef) []string {
	t.Helper()
	cs := o.containers(t, docker.LabelAgent+"="+ag.AgentID)
	paired := map[string]bool{}
	for _, c := range cs {
		if h := c.Labels[docker.LabelHarness]; h != "" {
			for _, x := range cs {
				if x.ID == h {
					paired[h] = true
				}
			}
		}
	}
	var out []string
	for _, c := range cs {
		switch {
		case paired[c.ID]:
		case paired[c.Labels[docker.LabelHarness]]:
			out = append(out, c.ID+"+"+c.Labels[docker.LabelHarness])
		default:
			out = append(out, c.ID)
		}
	}
	return out
}

type inspected struct {
	ID     string `json:"Id"`
	State  struct{ Running bool }
	Config struct {
		Env    []string
		Labels map[string]string
	}
}

func (o observer) inspect(t *testing.T, id string) inspected {
	t.Helper()
	var c inspected
	o.d.MustDo(t, http.MethodGet, "/containers/"+id+"/json", nil, &c)
	return c
}

func (o observer) WorkloadEnv(t *testing.T, ag compute.AgentRef) (map[string]string, bool) {
	t.Helper()
	ws := o.Workloads(t, ag)
	if len(ws) != 1 {
		return nil, false
	}
	gw, _, _ := strings.Cut(ws[0], "+")
	c := o.inspect(t, gw)
	if !c.State.Running {
		return nil, false
	}
	env := map[string]string{}
	for _, kv := range c.Config.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, true
}

// workspace is the Agent's workspace volume as the host sees it.
func (o observer) workspace(ag compute.AgentRef) string {
	return filepath.Join(o.d.VolumeDir(docker.WorkspaceVolumeName(ag)), docker.WorkspaceSubdir)
}

func (o observer) WorkspaceFile(t *testing.T, ag compute.AgentRef, name string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(o.workspace(ag), name))
	return string(b), err == nil
}

// WriteWorkspaceFile writes as the gateway would: owned by its user.
func (o observer) WriteWorkspaceFile(t *testing.T, ag compute.AgentRef, name, content string) {
	t.Helper()
	p := filepath.Join(o.workspace(ag), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(p, 1000, 1000); err != nil {
		t.Fatal(err)
	}
}

// AgentExists: a container or a volume labelled with the Agent's ID, or a
// volume under one of its names.
func (o observer) AgentExists(t *testing.T, ag compute.AgentRef) bool {
	t.Helper()
	return len(o.containers(t, docker.LabelAgent+"="+ag.AgentID)) > 0 || len(o.volumes(t, docker.LabelAgent+"="+ag.AgentID)) > 0 ||
		o.exists(t, "/volumes/"+docker.StateVolumeName(ag)) || o.exists(t, "/volumes/"+docker.WorkspaceVolumeName(ag))
}

// ScanState visits every object occ made as the engine reports it (each
// container without its environment: the container's environment is where
// the engine keeps a revision's secret values, by design, as Kubernetes
// keeps them in Secrets) and every file of every volume occ made.
func (o observer) ScanState(t *testing.T, visit func(where string, content []byte)) {
	t.Helper()
	managed := docker.LabelManaged + "=true"
	for _, c := range o.containers(t, managed) {
		_, b, err := o.d.Do(http.MethodGet, "/containers/"+c.ID+"/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if cfg, ok := m["Config"].(map[string]any); ok {
			delete(cfg, "Env")
		}
		b, _ = json.Marshal(m)
		visit("container/"+c.ID, b)
	}
	var nets []map[string]any
	o.d.MustDo(t, http.MethodGet, "/networks?"+url.Values{"filters": {`{"label":["` + managed + `"]}`}}.Encode(), nil, &nets)
	for _, n := range nets {
		b, _ := json.Marshal(n)
		visit("network/"+n["Name"].(string), b)
	}
	for _, v := range o.volumes(t, managed) {
		b, _ := json.Marshal(v)
		visit("volume/"+v.Name, b)
		root := o.d.VolumeDir(v.Name)
		_ = filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(p); err == nil {
				visit("volume/"+v.Name+"/"+strings.TrimPrefix(p, root), b)
			}
			return nil
		})
	}
}

// TestPodmanConformance runs the same suite against Podman's
// Docker-compatible service, with the open files and processes limits set:
// Podman's defaults are above this machine's hard limits (runc: "error
// setting rlimit type 7: operation not permitted").
func TestPodmanConformance(t *testing.T) {
	pd := dockertest.StartPodman(t)
	var nofile syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile); err != nil {
		t.Fatal(err)
	}
	limits := func(o *docker.Options) {
		o.OpenFiles, o.Processes = int64(min(nofile.Max, 65536)), 4096
	}
	computetest.Run(t, func(t *testing.T) computetest.Harness {
		return computetest.Harness{
			Driver:   openOn(t, pd, limits),
			Observer: observer{d: pd},
			Reopen:   func(t *testing.T) compute.Driver { return openOn(t, pd, limits) },
			Options:  conformanceOptions(),
		}
	})
}

// conformanceOptions: the fake gateway's switches, and a dedicated
// revision's model key and primary model (the fake Codex CLI in the image
// accepts the key).
func conformanceOptions() computetest.Options {
	return computetest.Options{
		ReadyTimeout: 2 * time.Minute,
		Spec: func(s compute.RevisionSpec) compute.RevisionSpec {
			if s.ExecutionMode == occ.ExecutionDedicated {
				d := dedicatedSpec(s.RevisionRef, s.Number, map[string]string{compute.HarnessAPIKeyEnv: "sk-conformance"})
				s.Document, s.HarnessEnv = d.Document, d.HarnessEnv
			}
			return s
		},
		SlowStart:        computetest.FakeGatewaySlowStart,
		RejectCredential: computetest.FakeGatewayRejectCredential,
	}
}

// TestDockerConformance runs the driver contract's suite against a real
// dockerd with the fake gateway in real containers.
func TestDockerConformance(t *testing.T) {
	dd := daemon(t)
	computetest.Run(t, func(t *testing.T) computetest.Harness {
		return computetest.Harness{
			Driver:   open(t),
			Observer: observer{d: dd},
			Reopen:   func(t *testing.T) compute.Driver { return open(t) },
			Options:  conformanceOptions(),
		}
	})
}
