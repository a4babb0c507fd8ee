package kubernetes

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// dedicatedTestSpec is a dedicated revision whose harness logs in with an
// API key, the gateway getting one secret variable of its own.
func dedicatedTestSpec() compute.RevisionSpec {
	return compute.RevisionSpec{RevisionRef: testRevision(), ExecutionMode: occ.ExecutionDedicated,
		Env:        map[string]string{"SLACK_BOT_TOKEN": "xoxb-canary-slack"},
		HarnessEnv: map[string]string{compute.HarnessAPIKeyEnv: "sk-canary-model-key", compute.HarnessBaseURLEnv: "http://provider.example/v1"},
		Document:   map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "openai/gpt-5.4"}}}}}
}

// dedicatedDriver is a driver whose image runs dedicated Codex.
func dedicatedDriver(t *testing.T) *Driver {
	return newTestDriver(t, func(o *Options) {
		o.DedicatedCodex = true
		o.HarnessResources = Resources{RequestsCPU: "100m", RequestsMemory: "768Mi", LimitsCPU: "4", LimitsMemory: "6Gi"}
	})
}

func TestDedicatedCodexCapabilities(t *testing.T) {
	t.Parallel()
	if r := newTestDriver(t).Capabilities().Refusal("kubernetes", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated}); r == nil || r.Code != occ.DeployExecutionModeUnsupported {
		t.Errorf("without dedicatedCodex: refusal %+v, want %s", r, occ.DeployExecutionModeUnsupported)
	}
	d := dedicatedDriver(t)
	for _, m := range []string{occ.HarnessAPIKey, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource} {
		if r := d.Capabilities().Refusal("kubernetes", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: m}); r != nil {
			t.Errorf("dedicated %s refused: %+v", m, r)
		}
	}
	if r := d.Capabilities().Refusal("kubernetes", occ.RevisionNeeds{ExecutionMode: occ.ExecutionDedicated, HarnessAuthMethod: occ.HarnessRuntime}); r == nil || r.Code != occ.DeployHarnessAuthUnsupported {
		t.Errorf("runtime method: refusal %+v, want %s", r, occ.DeployHarnessAuthUnsupported)
	}
	if _, err := New(func() Options {
		o := testOptions()
		o.DedicatedCodex = true
		o.HarnessResources.LimitsMemory = "lots"
		return o
	}()); err == nil ||
		!strings.Contains(err.Error(), "resources.harness") {
		t.Errorf("a bad harness quantity: %v", err)
	}
}

// TestDedicatedCodexPodObjects: a dedicated revision's Pod runs the plugin
// install and the harness before the gateway; the model credential reaches
// only the harness container (secretKeyRef), the gateway gets the
// app-server's token and URL, every container is restricted, and the
// Codex home is the harness's alone.
func TestDedicatedCodexPodObjects(t *testing.T) {
	t.Parallel()
	d := dedicatedDriver(t)
	spec := dedicatedTestSpec()
	login, secret, held := compute.CodexLogin(spec.HarnessEnv)
	if held != nil || secret != "sk-canary-model-key" {
		t.Fatalf("login %v %q %v", login, secret, held)
	}
	plan := d.harnessPlan(spec, login)
	dep := roundTrip[appsv1.Deployment](t, d.deploymentObject(spec, &plan, 1))
	ps := dep.Spec.Template.Spec
	if len(ps.InitContainers) != 2 || ps.InitContainers[0].Name != PluginContainerName || ps.InitContainers[1].Name != HarnessContainerName {
		t.Fatalf("init containers %+v", ps.InitContainers)
	}
	plugin, harness, gw := ps.InitContainers[0], ps.InitContainers[1], ps.Containers[0]
	if plugin.RestartPolicy != nil {
		t.Errorf("the plugin install is a one-shot init container, restart policy %v", *plugin.RestartPolicy)
	}
	if harness.RestartPolicy == nil || *harness.RestartPolicy != corev1.ContainerRestartPolicyAlways || harness.StartupProbe == nil {
		t.Errorf("the harness is a sidecar whose startup probe gates the gateway: %+v %+v", harness.RestartPolicy, harness.StartupProbe)
	}
	if harness.Resources.Limits.Memory().String() != "6Gi" || harness.TerminationMessagePath != TerminationLog {
		t.Errorf("harness resources %+v termination log %q", harness.Resources, harness.TerminationMessagePath)
	}
	refs := func(c corev1.Container) map[string]corev1.SecretKeySelector {
		out := map[string]corev1.SecretKeySelector{}
		for _, e := range c.Env {
			if e.ValueFrom != nil {
				out[e.Name] = *e.ValueFrom.SecretKeyRef
			}
			if strings.Contains(e.Value, "canary") {
				t.Errorf("container %s: env %s carries a secret literally", c.Name, e.Name)
			}
		}
		for _, a := range append(append([]string{}, c.Command...), c.Args...) {
			if strings.Contains(a, "canary") {
				t.Errorf("container %s: its command line carries a secret", c.Name)
			}
		}
		return out
	}
	hr, gr, pr := refs(harness), refs(gw), refs(plugin)
	if r := hr[harnessCredentialEnv]; r.Name != EnvSecretName(spec.RevisionRef) || r.Key != harnessCredentialKey || len(hr) != 2 {
		t.Errorf("harness secret env %+v", hr)
	}
	if r := gr[gateway.CodexTokenEnv]; r.Name != EnvSecretName(spec.RevisionRef) || r.Key != appServerTokenKey {
		t.Errorf("gateway app-server token from %+v", r)
	}
	for name, r := range gr {
		if r.Key == harnessCredentialKey || name == compute.HarnessAPIKeyEnv {
			t.Errorf("the gateway gets the model credential: %s from %+v", name, r)
		}
	}
	if len(pr) != 0 {
		t.Errorf("the plugin install gets secrets: %+v", pr)
	}
	mounts := func(c corev1.Container) map[string]bool {
		out := map[string]bool{}
		for _, m := range c.VolumeMounts {
			out[m.Name] = true
		}
		return out
	}
	if !mounts(harness)["codex"] || mounts(gw)["codex"] || mounts(plugin)["codex"] || mounts(harness)["state"] || mounts(harness)["config"] {
		t.Errorf("mounts: harness %v gateway %v plugin %v", mounts(harness), mounts(gw), mounts(plugin))
	}
	for _, c := range []corev1.Container{plugin, harness, gw} {
		sc := c.SecurityContext
		if sc == nil || !*sc.RunAsNonRoot || *sc.AllowPrivilegeEscalation || !*sc.ReadOnlyRootFilesystem || sc.Capabilities.Drop[0] != "ALL" ||
			sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("container %s security context %+v", c.Name, sc)
		}
	}
	for _, want := range []string{"--with-api-key", "exec", "--sandbox", "gpt-5.4", "openai_base_url=", "provider.example/v1", "ws://127.0.0.1:4500"} {
		if !strings.Contains(harness.Command[3], want) {
			t.Errorf("the harness plan %s lacks %q", harness.Command[3], want)
		}
	}

	data := roundTrip[corev1.Secret](t, envSecretObject(spec.RevisionRef, spec.Env, harnessSecretData(secret, appServerToken("gw-token", spec.RevisionID)))).Data
	if string(data[harnessCredentialKey]) != "sk-canary-model-key" || len(data[appServerTokenKey]) != 64 || string(data["SLACK_BOT_TOKEN"]) != "xoxb-canary-slack" {
		t.Errorf("the revision's secret environment: %v", data)
	}
	first, again := appServerToken("gw-token", "rev-a"), appServerToken("gw-token", "rev-a")
	if first == appServerToken("gw-token", "rev-b") || first != again || first == appServerToken("gw-other", "rev-a") {
		t.Error("the app-server token is not per revision and Agent, or not stable")
	}
}

// TestDedicatedCodexRendersTheAppServer: the gateway's document reaches the
// harness on the Pod's loopback with the token from its environment, and
// holds no credential.
func TestDedicatedCodexRendersTheAppServer(t *testing.T) {
	t.Parallel()
	spec := dedicatedTestSpec()
	in := gateway.RenderInput{Document: spec.Document, Port: 8080, Bind: gateway.BindLoopback, WorkspaceDir: WorkspaceDir, LogFile: LogFile}
	codexRender(&in)
	b, err := gateway.RenderConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), AppServerURL) || !strings.Contains(string(b), "${"+gateway.CodexTokenEnv+"}") || strings.Contains(string(b), "canary") {
		t.Errorf("rendered %s", b)
	}
}

func TestDedicatedCodexHarnessVerdicts(t *testing.T) {
	t.Parallel()
	pod := func(cs corev1.ContainerStatus) *corev1.Pod {
		cs.Name = HarnessContainerName
		return &corev1.Pod{Status: corev1.PodStatus{InitContainerStatuses: []corev1.ContainerStatus{cs}}}
	}
	stopped := func(msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: msg}}}
	}
	started := true
	cases := []struct {
		name    string
		status  corev1.ContainerStatus
		stopped bool
		code    string
		held    bool
	}{
		{"serving", corev1.ContainerStatus{Started: &started, Ready: true, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, false, "", false},
		{"starting", corev1.ContainerStatus{State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}, false, "", false},
		{"provider refused the key", stopped(`{"stage":"probe","output":"unexpected status 401 Unauthorized: bad key"}`), true, compute.HeldAuthenticationFailed, true},
		{"probe timed out", stopped(`{"stage":"probe","timedOut":true,"output":""}`), true, compute.HeldModelProbeTimeout, true},
		{"probe failed", stopped(`{"stage":"probe","output":"unexpected status 500"}`), true, compute.HeldModelProbeFailed, true},
		{"login refused the token", stopped(`{"stage":"login","output":"401 Unauthorized"}`), true, compute.HeldAuthenticationFailed, true},
		{"login failed", stopped(`{"stage":"login","output":"no such file"}`), true, occ.DeployRuntimeStartup, true},
		{"crashed without a word", stopped("segfault"), true, occ.DeployRuntimeStartup, false},
	}
	for _, c := range cases {
		r, stop := harnessVerdict(pod(c.status))
		if stop != c.stopped {
			t.Errorf("%s: stopped %v, want %v", c.name, stop, c.stopped)
			continue
		}
		if !stop {
			continue
		}
		if r.RuntimeFailure == nil || r.RuntimeFailure.Code != c.code || r.Held != c.held {
			t.Errorf("%s: %+v (failure %+v), want code %s held %v", c.name, r, r.RuntimeFailure, c.code, c.held)
		}
	}
	if checks := diagnoseHarness(pod(stopped(`{"stage":"login","output":"x"}`))); len(checks) != 3 || checks[0].Code != CodeHarnessFailed || checks[1].Code != compute.HarnessNotLoggedIn {
		t.Errorf("diagnostics of a failed login: %+v", checks)
	}
	if checks := diagnoseHarness(pod(cases[0].status)); checks[0].Code != CodeOK || checks[1].Code != CodeOK || checks[2].Code != CodeOK {
		t.Errorf("diagnostics of a serving harness: %+v", checks)
	}
	if checks := diagnoseHarness(nil); checks[0].Status != gateway.CheckUnknown || checks[2].Code != CodeUnavailable {
		t.Errorf("diagnostics without a Pod: %+v", checks)
	}
}

// TestDedicatedCodexLoginByMethod: what the harness's plan and Secret get
// for each delivery (the worker's HarnessEnv): an access token logs in as
// one, a Credential Gateway's base URL and a ChatGPT workspace become
// overrides of every Codex command, and a credential no login can take is
// held before anything is applied.
func TestDedicatedCodexLoginByMethod(t *testing.T) {
	t.Parallel()
	d := dedicatedDriver(t)
	cases := []struct {
		name   string
		env    map[string]string
		login  string
		secret string
		plan   []string
		held   string
	}{
		{"codex_pat", map[string]string{compute.HarnessAccessTokenEnv: "at-canary"}, "--with-access-token", "at-canary", nil, ""},
		{"credential_source", map[string]string{compute.HarnessAPIKeyEnv: "cgw-placeholder", compute.HarnessBaseURLEnv: "http://cgw.example/v1"},
			"--with-api-key", "cgw-placeholder", []string{"openai_base_url=", "cgw.example"}, ""},
		{"chatgpt_service_account", map[string]string{compute.HarnessAccessTokenEnv: "at-issued", compute.HarnessWorkspaceEnv: "ws-1"},
			"--with-access-token", "at-issued", []string{"forced_chatgpt_workspace_id=", "ws-1"}, ""},
		{"not a Codex token", map[string]string{compute.HarnessAccessTokenEnv: "sess-canary"}, "", "", nil, compute.HeldAuthenticationFailed},
	}
	for _, c := range cases {
		spec := dedicatedTestSpec()
		spec.HarnessEnv = c.env
		login, secret, held := compute.CodexLogin(spec.HarnessEnv)
		if c.held != "" {
			if held == nil || held.RuntimeFailure.Code != c.held {
				t.Errorf("%s: held %+v, want %s", c.name, held, c.held)
			}
			continue
		}
		if held != nil || secret != c.secret || login[len(login)-1] != c.login {
			t.Errorf("%s: login %v secret %q held %+v", c.name, login, secret, held)
			continue
		}
		plan := d.harnessPlan(spec, login)
		dep := roundTrip[appsv1.Deployment](t, d.deploymentObject(spec, &plan, 1))
		cmd := dep.Spec.Template.Spec.InitContainers[1].Command[3]
		for _, want := range append([]string{c.login}, c.plan...) {
			if !strings.Contains(cmd, want) {
				t.Errorf("%s: plan %s lacks %q", c.name, cmd, want)
			}
		}
		if strings.Contains(cmd, c.secret) {
			t.Errorf("%s: the plan holds the credential", c.name)
		}
	}
}
