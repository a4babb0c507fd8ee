package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// Where things are in the gateway container. The state volume is mounted
// at DataDir, the workspace volume at WorkspaceMount (inside it); HOME and
// /tmp are tmpfs; the rendered configuration is copied to ConfigPath
// (owned by root, read-only to the gateway) before the container starts.
// The volumes' roots stay root's: the gateway writes in StateDir, the
// logs directory and WorkspaceDir, which occ gives to its user.
const (
	DataDir        = "/var/lib/openclaw"
	StateDir       = DataDir + "/state"
	WorkspaceMount = DataDir + "/agent"
	WorkspaceDir   = WorkspaceMount + "/" + WorkspaceSubdir
	// WorkspaceSubdir is the workspace's directory in its volume.
	WorkspaceSubdir = "workspace"
	LogFile         = DataDir + "/logs/gateway.log"
	ConfigDir       = DataDir + "/config"
	ConfigPath      = ConfigDir + "/" + gateway.ConfigFileName
	HomeDir         = "/home/node"
	// GatewayUser is the user and group the gateway runs as (the image's
	// non-root "node" user).
	GatewayUser = "1000:1000"
	gatewayID   = 1000
	// PidsLimit bounds the processes of one gateway container.
	PidsLimit = 4096
	// tmpfs of HOME (the gateway's: uid=/gid= for Docker, U, "chown to
	// the container's user", for Podman, which refuses uid=) and /tmp.
	homeTmpfs       = "rw,nosuid,nodev,size=1024m,mode=0700,uid=1000,gid=1000"
	homeTmpfsPodman = "rw,nosuid,nodev,size=1024m,mode=0700,U"
	tmpTmpfs        = "rw,nosuid,nodev,noexec,size=64m,mode=1777"
)

// PrepareRevision ensures the Namespace's network and the Agent's volumes,
// makes the Agent's gateway container run the revision (a container of
// another revision is removed first: a new revision recreates it) and
// reports readiness: the container's state, then the gateway's own probes
// through its published port and, once per container, the model
// credential. A dedicated revision's harness container (harness.go) is
// made to serve first, and its gateway made for it.
func (d *Driver) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	if err := spec.RevisionRef.Validate(); err != nil {
		return compute.Readiness{}, err
	}
	if r := d.Capabilities().Refusal(d.Name(), occ.RevisionNeeds{ExecutionMode: spec.ExecutionMode, InitialFiles: len(spec.InitialFiles) > 0}); r != nil {
		return compute.Readiness{}, compute.Permanent(r.Code, errors.New(r.Message))
	}
	if spec.NativeAdminOrigin != "" {
		return compute.Readiness{}, compute.Permanent(occ.DeployInvalidConfiguration, errors.New("the docker compute driver does not run the native admin UI"))
	}
	dedicated := spec.ExecutionMode == occ.ExecutionDedicated
	render := func(as *appServer) ([]byte, error) {
		in := gateway.RenderInput{Document: spec.Document, Port: d.o.GatewayPort, Bind: gateway.BindLoopback, WorkspaceDir: WorkspaceDir, LogFile: LogFile}
		if as != nil {
			in.CodexAppServer = &gateway.CodexAppServer{URL: as.url}
		}
		b, err := gateway.RenderConfig(in)
		if err != nil {
			return nil, compute.Permanent(occ.DeployInvalidConfiguration, err)
		}
		return b, nil
	}
	rendered, err := render(nil)
	if err != nil {
		return compute.Readiness{}, err
	}
	if _, err := d.ensureNetwork(ctx, spec.NamespaceID); err != nil {
		return compute.Readiness{}, err
	}
	roles := []string{RoleState, RoleWorkspace}
	if dedicated {
		roles = append(roles, RoleCodex)
	}
	for _, role := range roles {
		if err := d.ensureVolume(ctx, spec.AgentRef, role); err != nil {
			return compute.Readiness{}, err
		}
	}
	c, found, err := d.gateway(ctx, spec.AgentRef)
	if err != nil {
		return compute.Readiness{}, err
	}
	if found && c.Config.Labels[LabelRevision] == spec.RevisionID && dedicated && !d.harnessServes(ctx, c) {
		// Its harness is gone (or another one than it was made for): both
		// start again, the harness first.
		d.o.Logger.Warn("dedicated gateway without its harness; recreating both", "agent", spec.AgentID, "revision", spec.RevisionID)
		d.forget(spec.AgentRef)
		if err := d.e.removeContainer(ctx, c.ID, StopSeconds); err != nil {
			return compute.Readiness{}, classify(err)
		}
		found = false
	}
	if found && c.Config.Labels[LabelRevision] != spec.RevisionID {
		d.forget(spec.AgentRef)
		if err := d.e.removeContainer(ctx, c.ID, StopSeconds); err != nil {
			return compute.Readiness{}, classify(err)
		}
		found = false
	}
	var as *appServer
	if dedicated && (!found || c.State.Status == "created") {
		a, r, done, err := d.prepareHarness(ctx, spec)
		if err != nil || done {
			return r, err
		}
		as = &a
		if found && c.Config.Labels[LabelHarness] != as.harnessID {
			// Made for another harness (by an earlier pass): made again.
			if err := d.e.removeContainer(ctx, c.ID, StopSeconds); err != nil {
				return compute.Readiness{}, classify(err)
			}
			found = false
		}
		if rendered, err = render(as); err != nil {
			return compute.Readiness{}, err
		}
	}
	hash := configHash(rendered)
	if found && c.Config.Labels[LabelRevision] == spec.RevisionID && c.Config.Labels[LabelConfigHash] != hash && (!dedicated || as != nil) {
		return compute.Readiness{}, compute.Permanent(occ.DeployInvalidConfiguration,
			fmt.Errorf("container %s runs revision %s with another configuration", GatewayName(spec.AgentRef), spec.RevisionID))
	}
	var entrypoint []string
	if !found {
		if c.ID, entrypoint, err = d.create(ctx, spec, hash, as); err != nil {
			return compute.Readiness{}, err
		}
		if c.ID == "" { // another occ process creates it meanwhile
			return compute.Readiness{PendingReason: occ.PendingGatewayStarting}, nil
		}
		c.State.Status = "created"
	}
	if c.State.Status == "created" {
		// The configuration goes in before the first start (whoever
		// created the container: the same bytes, by the hash label).
		if err := d.e.putArchive(ctx, c.ID, DataDir, stateArchive(rendered)); err != nil {
			return compute.Readiness{}, classify(err)
		}
		if err := d.e.putArchive(ctx, c.ID, WorkspaceMount, workspaceArchive()); err != nil {
			return compute.Readiness{}, classify(err)
		}
		if dedicated {
			if entrypoint == nil {
				img, err := d.e.inspectImage(ctx, d.o.GatewayImage)
				if err != nil {
					return compute.Readiness{}, classify(err)
				}
				entrypoint = img.Config.Entrypoint
			}
			pending, err := d.installPlugin(ctx, spec, c.ID, entrypoint)
			if err != nil {
				return compute.Readiness{}, err
			}
			if pending {
				return compute.Readiness{PendingReason: occ.PendingGatewayStarting}, nil
			}
		}
		if err := d.e.startContainer(ctx, c.ID); err != nil {
			return compute.Readiness{}, classify(err)
		}
	}
	return d.readiness(ctx, spec)
}

// create creates the revision's gateway container (not started) and
// returns it with the image's entry point; an empty ID means another occ
// process created one under the name meanwhile.
func (d *Driver) create(ctx context.Context, spec compute.RevisionSpec, hash string, as *appServer) (string, []string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	img, err := d.e.inspectImage(ctx, d.o.GatewayImage)
	switch {
	case isNotFound(err):
		// Removed since the start: retryable, an operator may load it
		// again (occ never pulls).
		return "", nil, fmt.Errorf("%s: the engine has no image %q any more: %w", SettingGatewayImage, d.o.GatewayImage, err)
	case err != nil:
		return "", nil, classify(err)
	case len(img.Config.Entrypoint) == 0:
		return "", nil, compute.Permanent(occ.DeployInvalidConfiguration,
			fmt.Errorf("%s: image %q has no entry point (the OpenClaw CLI)", SettingGatewayImage, d.o.GatewayImage))
	}
	name := GatewayName(spec.AgentRef)
	id, err := d.e.createContainer(ctx, name, d.containerSpec(spec, hash, hex.EncodeToString(b), img.Config.Entrypoint, as))
	switch {
	case isConflict(err):
		return "", nil, nil
	case err != nil:
		return "", nil, classify(err)
	}
	return id, img.Config.Entrypoint, nil
}

// containerSpec is the gateway container of a revision: hardened, joined
// only to the Namespace's network, its port published on 127.0.0.1 only.
// A dedicated revision's (as set) gets the app-server's token instead of
// the revision's model credential, and the harness's ID as a label.
func (d *Driver) containerSpec(spec compute.RevisionSpec, hash, token string, entrypoint []string, as *appServer) containerCreate {
	env := gateway.LaunchEnv(gateway.LaunchInput{Home: HomeDir, ConfigPath: ConfigPath, StateDir: StateDir, Token: token,
		SkipChannels: !compute.WantsChannels(spec.Document), ConfigReadOnly: true})
	for _, k := range compute.SecretEnvNames(spec.Env) {
		env = append(env, k+"="+spec.Env[k])
	}
	env = append(env, codexEnv(as)...)
	port := portKey(d.relayPort())
	cmd := append([]string{itoa(d.relayPort()), itoa(d.o.GatewayPort)}, entrypoint...)
	cmd = append(cmd, gateway.LaunchArgs(d.o.GatewayPort)...)
	labels := revisionLabels(spec, hash, d.o.GatewayImage)
	if as != nil {
		labels[LabelHarness] = as.harnessID
	}
	c := d.hardened(spec.NamespaceID, []mount{{Type: "volume", Source: StateVolumeName(spec.AgentRef), Target: DataDir}, {Type: "volume", Source: WorkspaceVolumeName(spec.AgentRef), Target: WorkspaceMount}})
	c.containerConfig = containerConfig{
		User: GatewayUser, Env: env, Entrypoint: []string{"node", "-e", wrapperScript}, Cmd: cmd, Image: d.o.GatewayImage,
		Labels: labels, ExposedPorts: map[string]struct{}{port: {}}, StopSignal: "SIGTERM", StopTimeout: intPtr(StopSeconds),
	}
	c.HostConfig.PortBindings = map[string][]portBinding{port: {{HostIP: "127.0.0.1"}}}
	c.NetworkingConfig = networkingConfig{EndpointsConfig: map[string]endpointSettings{NetworkName(spec.NamespaceID): {Aliases: []string{GatewayName(spec.AgentRef)}}}}
	return c
}

// hardened is the host side every container of occ's gets: user 1000's
// tmpfs HOME and /tmp, a read-only root filesystem, no capability, no new
// privileges, private IPC, an init reaping orphans, the resource limits,
// only the Namespace's network, and these volumes.
func (d *Driver) hardened(nsID string, mounts []mount) containerCreate {
	pids := int64(PidsLimit)
	// Docker's init (docker-init, shipped with the engine) is PID 1 and
	// reaps orphans; Podman's needs catatonit, which a host may lack
	// (creation then fails), so there the wrapper is PID 1.
	init := !d.podman
	home := homeTmpfs
	if d.podman {
		home = homeTmpfsPodman
	}
	var limits []ulimit
	if d.o.OpenFiles > 0 {
		limits = append(limits, ulimit{Name: "nofile", Soft: d.o.OpenFiles, Hard: d.o.OpenFiles})
	}
	if d.o.Processes > 0 {
		limits = append(limits, ulimit{Name: "nproc", Soft: d.o.Processes, Hard: d.o.Processes})
	}
	return containerCreate{HostConfig: hostConfig{
		NetworkMode:    NetworkName(nsID),
		RestartPolicy:  restartPolicy{Name: "unless-stopped"},
		Mounts:         mounts,
		Tmpfs:          map[string]string{HomeDir: home, "/tmp": tmpTmpfs},
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges:true"},
		Init:           &init,
		IpcMode:        "private",
		Memory:         d.o.MemoryBytes,
		NanoCPUs:       d.o.NanoCPUs,
		PidsLimit:      &pids,
		Ulimits:        limits,
	}}
}

// relayPort is the port of the wrapper's relay (wrapperScript), the one
// the engine publishes: the gateway's port plus one.
func (d *Driver) relayPort() int { return d.o.GatewayPort + 1 }

// portKey is the engine's name of the gateway's TCP port.
func portKey(port int) string { return itoa(port) + "/tcp" }

// stateArchive is what occ puts into the state volume before a
// container's first start: state and logs directories owned by the
// gateway's user, and the rendered openclaw.json in a directory owned by
// root, readable by the gateway and not writable. (occ does not rely on
// the engine copying the image's directory into a new volume: Docker does
// it at creation, Podman at the first start and only into an empty
// volume.)
func stateArchive(rendered []byte) *bytes.Reader {
	return archive(func(tw *tar.Writer, now time.Time) {
		for _, dir := range []string{"state/", "logs/"} {
			_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: 0o700, Uid: gatewayID, Gid: gatewayID, ModTime: now})
		}
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "config/", Mode: 0o755, ModTime: now})
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "config/" + gateway.ConfigFileName, Mode: 0o444, Size: int64(len(rendered)), ModTime: now})
		_, _ = tw.Write(rendered)
	})
}

// workspaceArchive is the workspace directory in its volume, owned by the
// gateway's user.
func workspaceArchive() *bytes.Reader {
	return archive(func(tw *tar.Writer, now time.Time) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: WorkspaceSubdir + "/", Mode: 0o700, Uid: gatewayID, Gid: gatewayID, ModTime: now})
	})
}

// fileArchive is one file, owned by uid (and its group).
func fileArchive(name string, mode int64, uid int, content []byte) *bytes.Reader {
	return archive(func(tw *tar.Writer, now time.Time) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Uid: uid, Gid: uid, Size: int64(len(content)), ModTime: now})
		_, _ = tw.Write(content)
	})
}

func archive(write func(*tar.Writer, time.Time)) *bytes.Reader {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	write(tw, time.Now())
	_ = tw.Close()
	return bytes.NewReader(buf.Bytes())
}

// ensureVolume creates one of the Agent's volumes the first time; one of
// that name without occ's labels for the Agent is refused.
func (d *Driver) ensureVolume(ctx context.Context, a compute.AgentRef, role string) error {
	name, want := volumeName(a, role), AgentLabels(a, role)
	v, err := d.e.inspectVolume(ctx, name)
	if isNotFound(err) {
		// Creating an existing volume answers that volume: its labels are
		// checked the same way.
		v, err = d.e.createVolume(ctx, name, want)
	}
	if err != nil {
		return classify(err)
	}
	if !owns(v.Labels, want) {
		return errNotOwned("volume", name)
	}
	return nil
}

func volumeName(a compute.AgentRef, role string) string {
	switch role {
	case RoleState:
		return StateVolumeName(a)
	case RoleCodex:
		return CodexVolumeName(a)
	}
	return WorkspaceVolumeName(a)
}

// gateway returns the Agent's gateway container: found false when none
// exists under its name; an error when one exists without occ's labels
// for the Agent.
func (d *Driver) gateway(ctx context.Context, a compute.AgentRef) (containerJSON, bool, error) {
	return d.owned(ctx, GatewayName(a), AgentLabels(a, RoleGateway))
}

// owned returns the container of that name: found false when none
// exists; an error when one exists without the labels.
func (d *Driver) owned(ctx context.Context, name string, labels map[string]string) (containerJSON, bool, error) {
	c, err := d.e.inspectContainer(ctx, name)
	switch {
	case isNotFound(err):
		return containerJSON{}, false, nil
	case err != nil:
		return c, false, classify(err)
	case !owns(c.Config.Labels, labels):
		return c, true, errNotOwned("container", name)
	}
	return c, true, nil
}

// running reports whether the container runs (and is not restarting).
func running(c containerJSON) bool { return c.State.Running && !c.State.Restarting }

// ActivateRevision checks that the Agent's gateway container runs the
// revision: the container is the revision's from its creation, so there
// is nothing else to switch.
func (d *Driver) ActivateRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	c, found, err := d.gateway(ctx, rev.AgentRef)
	if err != nil {
		return err
	}
	if !found || c.Config.Labels[LabelRevision] != rev.RevisionID || !running(c) {
		return fmt.Errorf("activate revision %s: the Agent's gateway does not run it", rev.RevisionID)
	}
	return nil
}

// RetireRevision removes the Agent's containers (gateway, harness) of the
// revision; containers of another revision are left alone.
func (d *Driver) RetireRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	l := agentObjects(rev.AgentRef)
	l[LabelRevision] = rev.RevisionID
	return d.removeContainers(ctx, rev.AgentRef, l)
}

// StopAgent removes every container of the Agent (gateway, harness, a
// plugin install); its volumes stay.
func (d *Driver) StopAgent(ctx context.Context, a compute.AgentRef) error {
	if err := a.Validate(); err != nil {
		return err
	}
	d.mu.Lock()
	delete(d.held, a)
	d.mu.Unlock()
	return d.removeContainers(ctx, a, agentObjects(a))
}

// agentObjects are the labels every object of the Agent carries,
// whatever its role.
func agentObjects(a compute.AgentRef) map[string]string {
	l := AgentLabels(a, "")
	delete(l, LabelRole)
	return l
}

// removeContainers removes every container carrying the labels.
func (d *Driver) removeContainers(ctx context.Context, a compute.AgentRef, labels map[string]string) error {
	cs, err := d.e.listContainers(ctx, labels)
	if err != nil {
		return classify(err)
	}
	if len(cs) > 0 {
		d.forget(a)
	}
	for _, c := range cs {
		if err := d.e.removeContainer(ctx, c.ID, StopSeconds); err != nil {
			return classify(err)
		}
	}
	return nil
}

// DeleteAgent removes the Agent's gateway container and its volumes
// (those carrying occ's labels for it: a foreign volume under its name is
// refused and left alone).
func (d *Driver) DeleteAgent(ctx context.Context, a compute.AgentRef) error {
	if err := a.Validate(); err != nil {
		return err
	}
	if err := d.StopAgent(ctx, a); err != nil {
		return err
	}
	for _, role := range []string{RoleWorkspace, RoleState, RoleCodex} {
		name := volumeName(a, role)
		v, err := d.e.inspectVolume(ctx, name)
		switch {
		case isNotFound(err):
			continue
		case err != nil:
			return classify(err)
		case !owns(v.Labels, AgentLabels(a, role)):
			return errNotOwned("volume", name)
		}
		if err := d.e.removeVolume(ctx, name); err != nil {
			return classify(err)
		}
	}
	d.forget(a)
	return nil
}

// forget drops what the driver remembers of an Agent's container.
func (d *Driver) forget(a compute.AgentRef) {
	d.mu.Lock()
	delete(d.verified, a)
	d.mu.Unlock()
}
