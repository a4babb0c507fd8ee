package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// A dedicated revision (executionMode dedicated) runs two containers of
// the gateway image: the harness, the Codex app-server holding the model
// credential, and the gateway, configured for the codex agent runtime over
// WebSocket to it (docs/DOCKER.md, "Dedicated Codex"). The harness
// container:
//
//  1. is created with the harness wrapper as its first process
//     (harnessWrapper), which waits until occ writes serveFile into the
//     Codex volume before it runs the app-server; its command line holds
//     the SHA-256 of the app-server's token, never a secret;
//  2. once started, occ logs it in with an exec whose stdin carries the
//     credential (compute.CodexLogin: nothing of it in the container's
//     configuration), then probes the model with an exec (`codex exec`);
//     a failure is held with the shared codes and the container removed;
//  3. then occ writes serveFile and the app-server starts, supervised by
//     the engine (restart policy unless-stopped); occ waits for its /readyz
//     through its port published on 127.0.0.1;
//  4. the gateway container, created after, gets the app-server's URL
//     (the harness's address on the Namespace's network) in its rendered
//     document and the token in its environment (gateway.CodexTokenEnv),
//     and the codex plugin is installed into its state volume before its
//     first start (installPlugin).

// Where things are in the harness container: the Codex volume at
// CodexMount, CODEX_HOME in it (the harness user's), serveFile at its
// root (root's).
const (
	CodexMount = "/var/lib/codex"
	CodexHome  = CodexMount + "/" + codexHomeSubdir
	// AppServerPort is the app-server's port in the harness container (on
	// every interface: the gateway container connects to it).
	AppServerPort   = 4500
	codexHomeSubdir = "home"
	serveFile       = "serve"
	// codexProgram is the Codex CLI on the image's PATH.
	codexProgram = "codex"
	// pluginTimeout bounds the codex plugin's install.
	pluginTimeout = 10 * time.Minute
	// pluginMarker, at the root of the state volume, names the plugin
	// spec installed into the gateway's state.
	pluginMarker = "codex-plugin"
	// pluginScratch is the configuration the plugin install writes (the
	// gateway's own is occ's).
	pluginScratch = StateDir + "/plugin-install.json"
)

// CodexPluginSpec is the npm spec of the gateway's codex plugin.
var CodexPluginSpec = agentruntime.CodexPluginPackage + "@" + agentruntime.CodexPluginVersion

// harnessWrapper is the harness container's first process (`node -e
// harnessWrapper <serveFile> <sha256> codex … app-server …`): it waits
// until serveFile holds the SHA-256 its command line names (occ writes it
// after the login and the probe passed, for this container only), then
// runs the app-server as its child, forwards SIGTERM and SIGINT (SIGKILL
// 8 s later) and exits with its code.
const harnessWrapper = `'use strict';
const fs = require('fs'), { spawn } = require('child_process');
const [serve, want, cmd, ...args] = process.argv.slice(1);
let child = null;
for (const s of ['SIGTERM', 'SIGINT']) {
  process.on(s, () => {
    if (!child) process.exit(0);
    child.kill(s); setTimeout(() => child.kill('SIGKILL'), 8000).unref();
  });
}
const ready = () => { try { return fs.readFileSync(serve, 'utf8').trim() === want; } catch { return false; } };
const poll = setInterval(() => {
  if (!ready()) return;
  clearInterval(poll);
  child = spawn(cmd, args, { stdio: 'inherit' });
  child.on('error', (e) => { console.error('occ harness wrapper: ' + e.message); process.exit(127); });
  child.on('exit', (code) => process.exit(code === null ? 128 : code));
}, 200);
`

// pluginInstallScript is the plugin install container's first process
// (`node -e pluginInstallScript <npm cache> <entrypoint…> plugins install
// <spec> --pin`): with the image's npm cache named (LabelNPMCache), it
// copies it into HOME (npm writes to its cache; the image is read-only)
// and has npm work offline from it; then it runs the OpenClaw CLI and
// exits with its code.
const pluginInstallScript = `'use strict';
const fs = require('fs'), path = require('path'), { spawnSync } = require('child_process');
const [cache, cmd, ...args] = process.argv.slice(1);
const env = { ...process.env };
if (cache) {
  const copy = path.join(process.env.HOME, 'npm-cache');
  fs.cpSync(cache, copy, { recursive: true });
  Object.assign(env, { npm_config_cache: copy, npm_config_offline: 'true', npm_config_update_notifier: 'false', npm_config_audit: 'false', npm_config_fund: 'false' });
}
const r = spawnSync(cmd, args, { stdio: 'inherit', env });
if (r.error) { console.error('occ plugin install: ' + r.error.message); process.exit(127); }
process.exit(r.status === null ? 128 : r.status);
`

// harnessTokenEnv holds the app-server's token in the harness container's
// environment, for occ (a restarted occ, or a pass after a request that
// timed out, makes the gateway with it).
const harnessTokenEnv = "OCC_CODEX_APP_SERVER_TOKEN"

// heldRevision is a dedicated revision's held failure, kept so that
// PrepareRevision answers it again without a second login or probe.
type heldRevision struct {
	revisionID string
	r          compute.Readiness
}

// harnessOf returns the Agent's harness container: found false when none
// exists; an error when one exists without occ's labels for the Agent.
func (d *Driver) harnessOf(ctx context.Context, a compute.AgentRef) (containerJSON, bool, error) {
	return d.owned(ctx, HarnessName(a), AgentLabels(a, RoleHarness))
}

// appServer is a running harness's app-server as its gateway reaches it.
type appServer struct {
	harnessID string
	url       string
	token     string
}

// prepareHarness makes the revision's harness run, logged in, probed and
// serving, and returns its app-server; done with r when the revision is
// held or not there yet.
func (d *Driver) prepareHarness(ctx context.Context, spec compute.RevisionSpec) (as appServer, r compute.Readiness, done bool, err error) {
	a := spec.AgentRef
	d.mu.Lock()
	h, isHeld := d.held[a]
	d.mu.Unlock()
	if isHeld && h.revisionID == spec.RevisionID {
		// Its harness container goes (and with it a probe that did not
		// return) before the held answer is given.
		l := AgentLabels(a, RoleHarness)
		l[LabelRevision] = spec.RevisionID
		if err := d.removeContainers(ctx, a, l); err != nil {
			return as, r, false, err
		}
		return as, h.r, true, nil
	}
	c, found, err := d.harnessOf(ctx, a)
	if err != nil {
		return as, r, false, err
	}
	token := envValue(c, harnessTokenEnv)
	if found && (c.Config.Labels[LabelRevision] != spec.RevisionID || token == "") {
		if err := d.e.removeContainer(ctx, c.ID, StopSeconds); err != nil {
			return as, r, false, classify(err)
		}
		found = false
	}
	overrides := compute.CodexOverrides(spec.Document, spec.HarnessEnv[compute.HarnessBaseURLEnv], spec.HarnessEnv[compute.HarnessWorkspaceEnv])
	if !found {
		// A new harness container: a new token. One found (made by an
		// earlier pass whose request timed out, or by an occ that stopped
		// meanwhile) goes on where it is.
		serve, tok, err := compute.CodexAppServerArgs("ws://0.0.0.0:" + itoa(AppServerPort))
		if err != nil {
			return as, r, false, err
		}
		argv := append(append([]string{CodexMount + "/" + serveFile, compute.CodexTokenSum(tok), codexProgram}, overrides...), serve...)
		id, err := d.e.createContainer(ctx, HarnessName(a), d.harnessSpec(spec, argv, tok))
		switch {
		case isConflict(err): // another occ process creates it meanwhile
			return as, compute.Readiness{PendingReason: occ.PendingGatewayStarting}, true, nil
		case err != nil:
			return as, r, false, classify(err)
		}
		if c, err = d.e.inspectContainer(ctx, id); err != nil {
			return as, r, false, classify(err)
		}
		token = tok
	}
	if c.State.Status == "created" {
		if err := d.e.putArchive(ctx, c.ID, CodexMount, codexArchive()); err != nil {
			return as, r, false, classify(err)
		}
		if err := d.e.startContainer(ctx, c.ID); err != nil {
			return as, r, false, classify(err)
		}
	}
	want := compute.CodexTokenSum(token)
	if strings.TrimSpace(d.readFile(ctx, c.ID, CodexMount+"/"+serveFile)) != want {
		// Not logged in and probed yet (for this container).
		if held, ok, err := d.verifyHarness(ctx, c.ID, spec, overrides); err != nil || ok {
			if !held.Held {
				return as, held, err == nil, err
			}
			// The verdict stays until a new revision; answered (after the
			// container is removed) as any later pass answers it.
			d.mu.Lock()
			d.held[a] = heldRevision{revisionID: spec.RevisionID, r: held}
			d.mu.Unlock()
			d.o.Logger.Info("dedicated revision held by its harness", "agent", a.AgentID, "revision", spec.RevisionID, "code", held.RuntimeFailure.Code)
			return d.prepareHarness(ctx, spec)
		}
		if err := d.e.putArchive(ctx, c.ID, CodexMount, fileArchive(serveFile, 0o444, 0, []byte(want+"\n"))); err != nil {
			return as, r, false, classify(err)
		}
		d.o.Logger.Info("harness logged in and probed; its app-server starts", "agent", a.AgentID, "revision", spec.RevisionID, "container", c.ID)
	}
	if err := d.awaitAppServer(ctx, c.ID); err != nil {
		return as, r, false, err
	}
	if c, err = d.e.inspectContainer(ctx, c.ID); err != nil {
		return as, r, false, classify(err)
	}
	ip := harnessAddress(c, NetworkName(spec.NamespaceID))
	if ip == "" {
		return as, r, false, fmt.Errorf("harness container %s has no address on network %s", HarnessName(a), NetworkName(spec.NamespaceID))
	}
	return appServer{harnessID: c.ID, url: "ws://" + ip + ":" + itoa(AppServerPort), token: token}, r, false, nil
}

// verifyHarness logs the harness in with the revision's credential (on
// the exec's stdin) and probes the model. ok false: both passed;
// otherwise r is the answer (a held failure, or pending when ctx ended).
func (d *Driver) verifyHarness(ctx context.Context, id string, spec compute.RevisionSpec, overrides []string) (r compute.Readiness, ok bool, err error) {
	login, secret, held := compute.CodexLogin(spec.HarnessEnv)
	if held != nil {
		return *held, true, nil
	}
	cmd := append(append([]string{codexProgram}, overrides...), login...)
	lctx, cancel := context.WithTimeout(ctx, compute.HarnessLoginTimeout)
	res, err := d.e.exec(lctx, id, cmd, secret+"\n")
	cancel()
	switch {
	case ctx.Err() != nil:
		return compute.Readiness{PendingReason: occ.PendingGatewayStarting}, true, nil
	case err != nil && lctx.Err() != nil:
		return compute.HarnessHeld(compute.HarnessCheckLogin, occ.DeployRuntimeStartup, nil), true, nil
	case err != nil:
		return r, false, classify(err)
	case res.ExitCode != 0:
		d.o.Logger.Warn("harness login failed", "agent", spec.AgentID, "exit", res.ExitCode)
		return compute.CodexLoginFailed(res.Out), true, nil
	}
	pctx, cancel := context.WithTimeout(ctx, d.o.ModelProbeTimeout)
	defer cancel()
	res, err = d.e.exec(pctx, id, append(append([]string{codexProgram}, overrides...), compute.CodexProbeArgs(spec.Document)...), "")
	switch {
	case ctx.Err() != nil:
		return compute.Readiness{PendingReason: occ.PendingGatewayStarting}, true, nil
	case err != nil && pctx.Err() != nil:
		return compute.CodexProbeTimedOut(), true, nil
	case err != nil:
		return r, false, classify(err)
	case res.ExitCode != 0:
		return compute.CodexProbeVerdict(res.Out), true, nil
	}
	return r, false, nil
}

// awaitAppServer waits until the harness's app-server answers /readyz
// through its published port (compute.HarnessAppServerWait at most).
func (d *Driver) awaitAppServer(ctx context.Context, id string) error {
	deadline := time.Now().Add(compute.HarnessAppServerWait)
	for {
		c, err := d.e.inspectContainer(ctx, id)
		if err != nil {
			return classify(err)
		}
		if containerPhase(c) == containerFailed {
			return fmt.Errorf("the harness container %s exited (code %d) before its app-server answered", c.Name, c.State.ExitCode)
		}
		if appServerReady(ctx, c) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the harness app-server of %s did not answer /readyz within %v", c.Name, compute.HarnessAppServerWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// appServerReady asks the harness container's app-server its /readyz
// through the port published on 127.0.0.1.
func appServerReady(ctx context.Context, c containerJSON) bool {
	port := ""
	for _, b := range c.NetworkSettings.Ports[portKey(AppServerPort)] {
		if b.HostIP == "127.0.0.1" && b.HostPort != "" {
			port = b.HostPort
		}
	}
	if port == "" || !running(c) {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/readyz", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// harnessAddress is the container's address on the network: the gateway
// container reaches the app-server there (an engine without its embedded
// DNS, as with iptables off, resolves no container name).
func harnessAddress(c containerJSON, net string) string {
	return c.NetworkSettings.Networks[net].IPAddress
}

// harnessSpec is the harness container of a revision: hardened like the
// gateway's, its Codex volume its only mount, joined to the Namespace's
// network, the app-server's port published on 127.0.0.1 only (occ's
// readiness and diagnostics). Its environment holds no model credential:
// the app-server's token (harnessTokenEnv, which the app-server does not
// read), kept there for occ, which reads it back to make the gateway (the
// same exposure as the gateway's environment, where the token goes).
func (d *Driver) harnessSpec(spec compute.RevisionSpec, argv []string, token string) containerCreate {
	port := portKey(AppServerPort)
	c := d.hardened(spec.NamespaceID, []mount{{Type: "volume", Source: CodexVolumeName(spec.AgentRef), Target: CodexMount}})
	c.containerConfig = containerConfig{
		User: GatewayUser, Image: d.o.GatewayImage,
		Env:        []string{"HOME=" + HomeDir, "CODEX_HOME=" + CodexHome, "RUST_LOG=warn,codex_otel=off", harnessTokenEnv + "=" + token},
		Entrypoint: []string{"node", "-e", harnessWrapper}, Cmd: argv,
		Labels:       roleRevisionLabels(spec, RoleHarness, "", d.o.GatewayImage),
		ExposedPorts: map[string]struct{}{port: {}}, StopSignal: "SIGTERM", StopTimeout: intPtr(StopSeconds),
	}
	c.HostConfig.PortBindings = map[string][]portBinding{port: {{HostIP: "127.0.0.1"}}}
	c.NetworkingConfig = networkingConfig{EndpointsConfig: map[string]endpointSettings{NetworkName(spec.NamespaceID): {Aliases: []string{HarnessName(spec.AgentRef)}}}}
	return c
}

func intPtr(n int) *int { return &n }

// codexArchive is the Codex home in its volume, the harness user's.
func codexArchive() *bytes.Reader {
	return archive(func(tw *tar.Writer, now time.Time) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: codexHomeSubdir + "/", Mode: 0o700, Uid: gatewayID, Gid: gatewayID, ModTime: now})
	})
}

// installPlugin installs the codex plugin into the gateway's state volume
// once (pluginMarker), through the gateway container c, created and not
// started: a one-shot container of the gateway image runs `openclaw plugins
// install <spec> --pin` on the same volume (the gateway trusts only a
// plugin whose install record its own CLI wrote; docs/DOCKER.md).
func (d *Driver) installPlugin(ctx context.Context, spec compute.RevisionSpec, gw string, entrypoint []string) (pending bool, err error) {
	a := spec.AgentRef
	name := pluginInstallName(a)
	c, found, err := d.owned(ctx, name, AgentLabels(a, RolePluginInstall))
	if err != nil {
		return false, err
	}
	if strings.TrimSpace(d.readFile(ctx, gw, DataDir+"/"+pluginMarker)) == CodexPluginSpec {
		// Installed; its container goes if a removal that timed out left it.
		if found {
			return false, classify(d.e.removeContainer(ctx, c.ID, StopSeconds))
		}
		return false, nil
	}
	if found && c.State.Status != "created" && c.State.Status != "running" && c.State.Status != "exited" {
		// Being removed (or dead): waited out, then made again.
		return true, classify(d.e.removeContainer(ctx, c.ID, StopSeconds))
	}
	if !found {
		// One found goes on where it is (an earlier pass whose request
		// timed out made it, or it still runs).
		cc := d.hardened(spec.NamespaceID, []mount{{Type: "volume", Source: StateVolumeName(a), Target: DataDir}})
		cc.containerConfig = containerConfig{
			User: GatewayUser, Image: d.o.GatewayImage,
			Env:        []string{"HOME=" + HomeDir, "OPENCLAW_STATE_DIR=" + StateDir, "OPENCLAW_CONFIG_PATH=" + pluginScratch},
			Entrypoint: []string{"node", "-e", pluginInstallScript},
			Cmd:        append(append([]string{d.npmCache}, entrypoint...), "plugins", "install", CodexPluginSpec, "--pin"),
			Labels:     AgentLabels(a, RolePluginInstall),
		}
		cc.HostConfig.RestartPolicy = restartPolicy{Name: "no"}
		id, err := d.e.createContainer(ctx, name, cc)
		switch {
		case isConflict(err): // the engine still makes it
			return true, nil
		case err != nil:
			return false, classify(err)
		}
		if c, err = d.e.inspectContainer(ctx, id); err != nil {
			return false, classify(err)
		}
	}
	began := time.Now()
	if c.State.Status == "created" {
		scratch := []byte("{}\n")
		if err := d.e.putArchive(ctx, c.ID, StateDir, fileArchive(path.Base(pluginScratch), 0o600, gatewayID, scratch)); err != nil {
			return false, classify(err)
		}
		if err := d.e.startContainer(ctx, c.ID); err != nil {
			return false, classify(err)
		}
	}
	code, err := d.e.wait(ctx, c.ID, pluginTimeout)
	if err != nil {
		return false, classify(err)
	}
	if code != 0 {
		var out tailDemux
		_ = d.e.containerLogs(ctx, c.ID, 50, &out)
		d.o.Logger.Warn("codex plugin install failed", "agent", a.AgentID, "exit", code, "output", string(out.payload.Bytes()))
		_ = d.e.removeContainer(ctx, c.ID, StopSeconds) // StopAgent and DeleteAgent remove it otherwise
		return false, compute.PermanentWith(occ.DeployPluginInstallFailed, map[string]any{"pluginId": agentruntime.CodexPluginPackage},
			fmt.Errorf("install %s into the gateway's state: exit %d", CodexPluginSpec, code))
	}
	// The marker first: a removal that times out is finished by a later
	// pass, never answered with a second install.
	marker := []byte(CodexPluginSpec + "\n")
	if err := d.e.putArchive(ctx, gw, DataDir, fileArchive(pluginMarker, 0o444, 0, marker)); err != nil {
		return false, classify(err)
	}
	d.o.Logger.Info("codex plugin installed into the gateway's state", "agent", a.AgentID, "spec", CodexPluginSpec, "in", time.Since(began).Round(time.Millisecond))
	return false, classify(d.e.removeContainer(ctx, c.ID, StopSeconds))
}

// readFile reads a small file of a container ("" when it cannot).
func (d *Driver) readFile(ctx context.Context, id, path string) string {
	var buf bytes.Buffer
	if d.e.getArchive(ctx, id, path, &buf) != nil {
		return ""
	}
	tr := tar.NewReader(&buf)
	if _, err := tr.Next(); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(tr, 1<<20))
	return string(b)
}

// codexEnv is the gateway container's part of the app-server: its token.
func codexEnv(as *appServer) []string {
	if as == nil {
		return nil
	}
	return []string{gateway.CodexTokenEnv + "=" + as.token}
}

// harnessServes reports whether the dedicated gateway container c's
// harness container is still the one it was made for.
func (d *Driver) harnessServes(ctx context.Context, c containerJSON) bool {
	a := compute.AgentRef{NamespaceID: c.Config.Labels[LabelNamespace], AgentID: c.Config.Labels[LabelAgent]}
	h, found, err := d.harnessOf(ctx, a)
	return err == nil && found && h.ID == c.Config.Labels[LabelHarness]
}
