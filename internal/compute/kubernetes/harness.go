package kubernetes

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// A dedicated revision's gateway Pod carries the Codex harness as a native
// sidecar (an init container that keeps running, docs/KUBERNETES.md
// "Dedicated Codex"): its own container, with the model credential in its
// environment only, logged in and probed before it serves the app-server
// on the Pod's loopback; the kubelet starts the gateway container only once
// the harness's startup probe (the app-server's /readyz) passes. Before
// both, a one-shot init container installs the codex plugin into the
// gateway's state volume, once per Agent.
const (
	// HarnessContainerName and PluginContainerName are the init
	// containers' names.
	HarnessContainerName = "harness"
	PluginContainerName  = "codex-plugin"
	// AppServerPort is where the app-server listens, on the Pod's
	// loopback (the Pod's containers share it; nothing else reaches it).
	AppServerPort = 4500
	// CodexDir is the harness's own volume (an emptyDir mounted in no
	// other container): HOME, and CODEX_HOME (CodexHome) with its login.
	CodexDir  = "/var/lib/codex"
	CodexHome = CodexDir + "/home"
	// CodexProgram is the Codex CLI on the gateway image's PATH (occ
	// runtime image build, with Codex).
	CodexProgram = "/usr/local/bin/codex"
	// CodexNPMCache is the npm cache in the gateway image that the codex
	// plugin's offline install reads (occ runtime image build).
	CodexNPMCache = "/opt/openclaw-codex/npm-cache"
	// OpenClawCLI is the OpenClaw command line in the gateway image: its
	// entry point is `node OpenClawCLI` (occ runtime image build).
	OpenClawCLI = "/opt/openclaw/node_modules/openclaw/openclaw.mjs"
	// PluginMarker, at the root of the state volume, names the plugin spec
	// installed into the gateway's state.
	PluginMarker = DataDir + "/codex-plugin"
	// pluginScratch is the configuration the plugin install writes (the
	// gateway's own is the revision's ConfigMap).
	pluginScratch = StateDir + "/plugin-install.json"

	// Keys of a dedicated revision's secret environment (EnvSecretName)
	// that only the harness container refers to; not environment variable
	// names, so no key of the gateway's environment can be one of them.
	harnessCredentialKey = "occ-harness-credential"
	appServerTokenKey    = "occ-app-server-token"
	// The harness container's variables holding them until its first
	// process has read (and removed) them.
	harnessCredentialEnv = "OCC_HARNESS_CREDENTIAL"
	harnessTokenEnv      = "OCC_CODEX_APP_SERVER_TOKEN"
	// TerminationLog is where the harness writes why it stopped (the
	// kubelet's default termination message path).
	TerminationLog = "/dev/termination-log"
)

// CodexPluginSpec is the npm spec of the gateway's codex plugin.
var CodexPluginSpec = agentruntime.CodexPluginPackage + "@" + agentruntime.CodexPluginVersion

// AppServerURL is where a dedicated gateway reaches its harness.
var AppServerURL = "ws://127.0.0.1:" + strconv.Itoa(AppServerPort)

// HarnessPlan is what the harness's first process (HarnessScript) does: its
// only argument, as JSON. Every field is public: no credential, no token.
type HarnessPlan struct {
	Codex     string   `json:"codex"`
	Overrides []string `json:"overrides"`
	Login     []string `json:"login"`
	Probe     []string `json:"probe"`
	// LoginMillis and ProbeMillis bound the login and the probe.
	LoginMillis int64  `json:"loginMillis"`
	ProbeMillis int64  `json:"probeMillis"`
	Listen      string `json:"listen"`
	// TerminationLog is where a failed login or probe is described
	// (HarnessStop).
	TerminationLog string `json:"terminationLog"`
}

// HarnessStop is what the harness writes to its termination log when its
// login or model probe fails: the stage, whether it ran out of time, and
// the end of the command's output with the credential removed.
type HarnessStop struct {
	Stage    string `json:"stage"`
	TimedOut bool   `json:"timedOut"`
	Output   string `json:"output"`
}

// Stages of HarnessStop.
const (
	StageLogin = "login"
	StageProbe = "probe"
)

// HarnessScript is the harness container's first process (`node -e
// HarnessScript <HarnessPlan JSON>`). It takes the credential and the
// app-server token from its environment and deletes both from it, logs
// Codex in with the credential on stdin, runs the tool-less model probe,
// and then runs the app-server (the token's SHA-256 on its command line)
// as its child, forwarding SIGTERM and SIGINT, exiting with its code. A
// failed login or probe writes a HarnessStop to the termination log and
// exits 1: the kubelet keeps the message in the Pod's status, where occ
// reads it (harnessVerdict).
const HarnessScript = `'use strict';
const fs = require('fs'), crypto = require('crypto'), { spawn } = require('child_process');
const plan = JSON.parse(process.argv[1]), overrides = plan.overrides || [];
const secret = process.env.` + harnessCredentialEnv + ` || '', token = process.env.` + harnessTokenEnv + ` || '';
delete process.env.` + harnessCredentialEnv + `; delete process.env.` + harnessTokenEnv + `;
fs.mkdirSync(process.env.CODEX_HOME, { recursive: true, mode: 0o700 });
const clean = (s) => (secret ? s.split(secret).join('[redacted]') : s).slice(-2048);
const stop = (stage, r) => {
  fs.writeFileSync(plan.terminationLog, JSON.stringify({ stage, timedOut: r.timedOut, output: clean(r.out) }));
  process.exit(1);
};
const run = (args, input, ms) => new Promise((resolve) => {
  const child = spawn(plan.codex, [...overrides, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '', timedOut = false;
  const keep = (b) => { out = (out + b).slice(-65536); };
  child.stdout.on('data', keep); child.stderr.on('data', keep);
  const timer = setTimeout(() => { timedOut = true; child.kill('SIGKILL'); }, ms);
  child.on('error', (e) => { out += e.message; });
  child.on('close', (code) => { clearTimeout(timer); resolve({ code, out, timedOut }); });
  child.stdin.on('error', () => {});
  child.stdin.end(input);
});
(async () => {
  const login = await run(plan.login, secret, plan.loginMillis);
  if (login.code !== 0) stop('` + StageLogin + `', login);
  const probe = await run(plan.probe, '', plan.probeMillis);
  if (probe.code !== 0) stop('` + StageProbe + `', probe);
  const sum = crypto.createHash('sha256').update(token).digest('hex');
  const child = spawn(plan.codex, [...overrides, 'app-server', '--listen', plan.listen,
    '--ws-auth', 'capability-token', '--ws-token-sha256', sum], { stdio: 'inherit' });
  child.on('error', (e) => { console.error('occ harness: ' + e.message); process.exit(127); });
  child.on('exit', (code) => process.exit(code === null ? 128 : code));
  for (const s of ['SIGTERM', 'SIGINT']) {
    process.on(s, () => { child.kill(s); setTimeout(() => child.kill('SIGKILL'), 8000).unref(); });
  }
})();
`

// PluginScript is the plugin install container's first process (`node -e
// PluginScript <marker> <spec> <npm cache> <cli> plugins install <spec>
// --pin`): when the marker names the spec it exits at once; otherwise it
// copies the image's npm cache into HOME (npm writes to its cache; the
// image is read-only), runs the OpenClaw CLI's install with npm offline
// from that copy, and writes the marker when it succeeded.
const PluginScript = `'use strict';
const fs = require('fs'), path = require('path'), { spawnSync } = require('child_process');
const [marker, spec, cache, ...cmd] = process.argv.slice(1);
try { if (fs.readFileSync(marker, 'utf8').trim() === spec) process.exit(0); } catch {}
const copy = path.join(process.env.HOME, 'npm-cache');
fs.cpSync(cache, copy, { recursive: true });
const env = { ...process.env, npm_config_cache: copy, npm_config_offline: 'true',
  npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' };
const r = spawnSync(process.execPath, cmd, { stdio: 'inherit', env });
if (r.error) { console.error('occ plugin install: ' + r.error.message); process.exit(127); }
if (r.status !== 0) process.exit(r.status === null ? 128 : r.status);
fs.writeFileSync(marker, spec + '\n');
`

// harnessPlan is a dedicated revision's HarnessPlan; the login's secret is
// the harness Secret's (harnessSecretData).
func (d *Driver) harnessPlan(spec compute.RevisionSpec, login []string) HarnessPlan {
	return HarnessPlan{
		Codex:          CodexProgram,
		Overrides:      compute.CodexOverrides(spec.Document, spec.HarnessEnv[compute.HarnessBaseURLEnv], spec.HarnessEnv[compute.HarnessWorkspaceEnv]),
		Login:          login,
		Probe:          compute.CodexProbeArgs(spec.Document),
		LoginMillis:    compute.HarnessLoginTimeout.Milliseconds(),
		ProbeMillis:    d.o.ModelProbeTimeout.Milliseconds(),
		Listen:         "ws://127.0.0.1:" + strconv.Itoa(AppServerPort),
		TerminationLog: TerminationLog,
	}
}

// harnessStartupBudget bounds how long the kubelet gives the harness to
// serve (login, probe, the app-server's start) before it restarts it.
func (d *Driver) harnessStartupBudget() time.Duration {
	return compute.HarnessLoginTimeout + d.o.ModelProbeTimeout + compute.HarnessAppServerWait
}

// pluginContainer is the one-shot init container that installs the codex
// plugin into the state volume, hardened like the gateway.
func (d *Driver) pluginContainer() *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().WithName(PluginContainerName).WithImage(d.o.GatewayImage).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithCommand("node", "-e", PluginScript, PluginMarker, CodexPluginSpec, CodexNPMCache, OpenClawCLI,
			"plugins", "install", CodexPluginSpec, "--pin").
		WithEnv(corev1ac.EnvVar().WithName("HOME").WithValue("/tmp"),
			corev1ac.EnvVar().WithName("OPENCLAW_STATE_DIR").WithValue(StateDir),
			corev1ac.EnvVar().WithName("OPENCLAW_CONFIG_PATH").WithValue(pluginScratch)).
		WithResources(d.resources(d.q.gateway)).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("state").WithMountPath(DataDir),
			corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp")).
		WithSecurityContext(restricted())
}

// harnessContainer is the Codex harness: a native sidecar (an init
// container that restarts with the Pod) whose startup probe is the
// app-server's /readyz, so the gateway starts after it serves.
func (d *Driver) harnessContainer(spec compute.RevisionSpec, plan HarnessPlan) *corev1ac.ContainerApplyConfiguration {
	planJSON, _ := json.Marshal(plan)
	secret := EnvSecretName(spec.RevisionRef)
	budget := d.harnessStartupBudget()
	const period = 5
	return corev1ac.Container().WithName(HarnessContainerName).WithImage(d.o.GatewayImage).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithRestartPolicy(corev1.ContainerRestartPolicyAlways).
		WithCommand("node", "-e", HarnessScript, string(planJSON)).
		WithWorkingDir(CodexDir).
		WithEnv(
			corev1ac.EnvVar().WithName("HOME").WithValue(CodexDir),
			corev1ac.EnvVar().WithName("CODEX_HOME").WithValue(CodexHome),
			corev1ac.EnvVar().WithName("RUST_LOG").WithValue("warn,codex_otel=off"),
			secretRef(harnessCredentialEnv, secret, harnessCredentialKey),
			secretRef(harnessTokenEnv, secret, appServerTokenKey)).
		WithTerminationMessagePath(TerminationLog).
		WithTerminationMessagePolicy(corev1.TerminationMessageReadFile).
		WithResources(d.resources(d.q.harness)).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("codex").WithMountPath(CodexDir),
			corev1ac.VolumeMount().WithName("harness-tmp").WithMountPath("/tmp")).
		WithStartupProbe(corev1ac.Probe().WithPeriodSeconds(period).WithTimeoutSeconds(10).
			WithFailureThreshold(int32(budget/time.Second/period) + 1).
			WithExec(corev1ac.ExecAction().WithCommand("node", "-e", readyProbeScript(AppServerPort)))).
		WithReadinessProbe(readyProbe(AppServerPort)).
		WithSecurityContext(restricted())
}

// harnessSecretData is what a dedicated revision adds to its secret
// environment: the login's secret and the app-server's token (new for
// each revision, so a revision's gateway and harness share one).
func harnessSecretData(secret, token string) map[string]string {
	return map[string]string{harnessCredentialKey: secret, appServerTokenKey: token}
}

// harnessVerdict reads the harness's status in a gateway Pod: held, a
// login or probe that failed (the HarnessStop it left), or a harness that
// keeps stopping without one (RUNTIME_STARTUP_FAILED, component harness);
// ok false while it starts or serves.
func harnessVerdict(p *corev1.Pod) (r compute.Readiness, stopped bool) {
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.Name != HarnessContainerName {
			continue
		}
		if stop := lastStop(&cs); stop.Stage != "" {
			return stopVerdict(stop), true
		}
		crashing := cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff"
		if crashing || cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 {
			return compute.Readiness{RuntimeFailure: &compute.RuntimeFailure{Component: compute.HarnessComponent,
				Check: compute.HarnessCheckProcess, CheckedAt: time.Now().UTC(), Code: occ.DeployRuntimeStartup}}, true
		}
	}
	return compute.Readiness{}, false
}

// lastStop is the HarnessStop the harness container left when it last
// stopped (its current or last termination), zero when none.
func lastStop(cs *corev1.ContainerStatus) HarnessStop {
	for _, t := range []*corev1.ContainerStateTerminated{cs.State.Terminated, cs.LastTerminationState.Terminated} {
		if t == nil || t.ExitCode == 0 {
			continue
		}
		var stop HarnessStop
		if json.Unmarshal([]byte(t.Message), &stop) == nil && stop.Stage != "" {
			return stop
		}
	}
	return HarnessStop{}
}

// stopVerdict is the held failure a HarnessStop describes, read as the
// other drivers read the same commands' outcomes (compute.Codex*).
func stopVerdict(s HarnessStop) compute.Readiness {
	switch {
	case s.Stage == StageProbe && s.TimedOut:
		return compute.CodexProbeTimedOut()
	case s.Stage == StageProbe:
		return compute.CodexProbeVerdict(s.Output)
	}
	return compute.CodexLoginFailed(s.Output)
}

// codexRender is a dedicated revision's part of the rendered document: the
// app-server on the Pod's loopback.
func codexRender(in *gateway.RenderInput) {
	in.CodexAppServer = &gateway.CodexAppServer{URL: AppServerURL}
}

// dedicated reports whether a revision runs dedicated Codex.
func dedicated(spec compute.RevisionSpec) bool { return spec.ExecutionMode == occ.ExecutionDedicated }

// appServerToken is a revision's app-server token: derived from the Agent's
// gateway token (its transport Secret) and the revision, so every pass of
// the revision applies the same one and a new revision gets a new one.
func appServerToken(gatewayToken, revisionID string) string {
	m := hmac.New(sha256.New, []byte(gatewayToken))
	m.Write([]byte("occ/kubernetes/app-server-token/v1\x00" + revisionID))
	return hex.EncodeToString(m.Sum(nil))
}

// rendersCodex reports whether a rendered document reaches a harness's
// app-server on the Pod's loopback (a dedicated revision's, codexRender).
func rendersCodex(doc map[string]any) bool {
	plugins, _ := doc["plugins"].(map[string]any)
	entries, _ := plugins["entries"].(map[string]any)
	codex, _ := entries[gateway.CodexPluginID].(map[string]any)
	cfg, _ := codex["config"].(map[string]any)
	as, _ := cfg["appServer"].(map[string]any)
	return as["url"] == AppServerURL
}
