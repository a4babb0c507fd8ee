package kubetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/openclaw/occ/internal/compute/hosttest"
)

// cniBinDir is where Debian's containernetworking-plugins puts the plugins.
const cniBinDir = "/usr/lib/cni"

// k8sNamespace is containerd's namespace of the CRI plugin (kubelet's).
const k8sNamespace = "k8s.io"

// containerdConfig is containerd 1.6's configuration for a real node: every
// directory and socket under the node's directory (the CRI plugin's network
// namespaces and runc's state too), CNI from the node's configuration
// directory, the locally built sandbox image, and runc with the node's cgroup
// driver. restrict_oom_score_adj: these machines' processes lack
// CAP_SYS_RESOURCE, and without it every sandbox fails with "can't get final
// child's PID from pipe".
var containerdConfig = template.Must(template.New("containerd").Parse(`version = 2
root = "{{.Dir}}/root"
state = "{{.Dir}}/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]

[grpc]
  address = "{{.Socket}}"

[ttrpc]
  address = "{{.Socket}}.ttrpc"

[plugins."io.containerd.internal.v1.opt"]
  path = "{{.Dir}}/opt"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "{{.SandboxImage}}"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "{{.Snapshotter}}"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "{{.Runc}}"
        Root = "{{.Dir}}/runc"
        SystemdCgroup = {{.SystemdCgroup}}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "{{.CNIBin}}"
    conf_dir = "{{.CNIConf}}"
    max_conf_num = 1
`))

// startContainerd writes the CNI configuration and containerd's, starts
// containerd and imports the pause image.
func (n *realNode) startContainerd(ctx context.Context) error {
	bin, err := hosttest.DebianProgram("containerd", "containerd")
	if err != nil {
		return fmt.Errorf("kubetest: the real node's container runtime: %w", err)
	}
	runc, err := hosttest.DebianProgram("runc", "runc")
	if err != nil {
		return fmt.Errorf("kubetest: the real node's container runtime: %w", err)
	}
	if _, err := hosttest.DebianProgram(filepath.Join(cniBinDir, "bridge"), "containernetworking-plugins"); err != nil {
		return fmt.Errorf("kubetest: the real node's network: %w", err)
	}
	if n.ctr, err = hosttest.DebianProgram("ctr", "containerd"); err != nil {
		return err
	}
	if err := n.createBridge(); err != nil {
		return err
	}
	if err := n.writeCNIConfig(); err != nil {
		return err
	}
	dir := n.path("containerd")
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	// overlayfs shares an image's layers between containers; native copies
	// the whole image for each (minutes for the real gateway image).
	n.snapshotter = "native"
	if hosttest.OverlayMounts(dir) {
		n.snapshotter = "overlayfs"
	}
	var cfg bytes.Buffer
	if err := containerdConfig.Execute(&cfg, map[string]any{
		"Dir": dir, "Socket": n.socket(), "SandboxImage": PauseImage, "Snapshotter": n.snapshotter,
		"Runc": runc, "SystemdCgroup": n.cgroupDriver == "systemd", "CNIBin": cniBinDir, "CNIConf": n.path("cni"),
	}); err != nil {
		return err
	}
	if err := writeFile(n.path("containerd.toml"), cfg.Bytes()); err != nil {
		return err
	}
	p, err := n.c.runAs("containerd", bin, "--config="+n.path("containerd.toml"), "--log-level=info")
	if err != nil {
		return err
	}
	n.containerd = p
	if err := p.waitFor(ctx, "serving", func(ctx context.Context) error {
		_, err := n.ctrRun(ctx, "version")
		return err
	}); err != nil {
		return err
	}
	pause, err := buildPauseImage(n.dir)
	if err != nil {
		return err
	}
	return n.importImage(ctx, pause)
}

// writeCNIConfig writes the node's network: a bridge of its own with the
// host's address on it (isGateway, so Pods reach the host there), addresses
// from the node's subnet kept in the node's directory, no masquerading (Pods
// need no address beyond the bridge, so the plugin adds no iptables rules).
// With a service network, Pods also route the Service range through the
// host, where kube-proxy's rules take it.
func (n *realNode) writeCNIConfig() error {
	subnet, gateway := n.lease.subnet()
	ipam := map[string]any{
		"type":    "host-local",
		"ranges":  [][]map[string]string{{{"subnet": subnet, "gateway": gateway}}},
		"dataDir": n.path("cni-ipam"),
	}
	if n.services != nil {
		ipam["routes"] = []map[string]string{{"dst": serviceCIDR, "gw": gateway}}
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       n.netName,
		"plugins": []any{
			map[string]any{
				"type": "bridge", "bridge": n.lease.bridge, "isGateway": true, "ipMasq": false, "hairpinMode": true,
				"ipam": ipam,
			},
		},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(n.path("cni"), 0o755); err != nil {
		return err
	}
	return writeFile(filepath.Join(n.path("cni"), "10-kubetest.conflist"), b)
}

// createBridge creates the node's bridge with the host's address on it
// before any Pod (the bridge plugin adopts it), so that a server for the
// Pods can listen there from the start.
func (n *realNode) createBridge() error {
	_, gateway := n.lease.subnet()
	for _, args := range [][]string{
		{"link", "add", "name", n.lease.bridge, "type", "bridge"},
		{"address", "add", gateway + "/24", "dev", n.lease.bridge},
		{"link", "set", n.lease.bridge, "up"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("kubetest: ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

// socket is containerd's gRPC socket.
func (n *realNode) socket() string { return n.path("containerd.sock") }

// ctrRun runs ctr against the node's containerd in the CRI namespace.
func (n *realNode) ctrRun(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, n.ctr, append([]string{"--address", n.socket(), "--namespace", k8sNamespace}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ctr %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// importImage imports an image tarball (docker or OCI) into the node's
// containerd, unpacked for its snapshotter, where kubelet finds it.
func (n *realNode) importImage(ctx context.Context, tarball string) error {
	_, err := n.ctrRun(ctx, "images", "import", "--snapshotter", n.snapshotter, tarball)
	if err != nil {
		return fmt.Errorf("kubetest: import %s into the node's containerd: %w", tarball, err)
	}
	return nil
}

// ImportImage imports an image tarball (what `occ runtime image build
// --output x.tar` and `docker save` write) into the real node's containerd,
// so Pods run it without any pull (their imagePullPolicy must not be
// Always). Only for a cluster started WithRealNode.
func (c *Cluster) ImportImage(ctx context.Context, tarball string) error {
	if c.realNode == nil {
		return fmt.Errorf("kubetest: ImportImage needs a cluster started WithRealNode")
	}
	return c.realNode.importImage(ctx, tarball)
}

// tasks lists the IDs of containerd's running tasks (containers and
// sandboxes) on the node.
func (n *realNode) tasks(ctx context.Context) ([]string, error) {
	out, err := n.ctrRun(ctx, "tasks", "list", "--quiet")
	return strings.Fields(out), err
}

// removeContainers kills and deletes whatever containerd still holds.
func (n *realNode) removeContainers(ctx context.Context) []string {
	var left []string
	tasks, _ := n.tasks(ctx)
	for _, id := range tasks {
		left = append(left, "task "+id)
		_, _ = n.ctrRun(ctx, "tasks", "kill", "--signal", "SIGKILL", id)
		_, _ = n.ctrRun(ctx, "tasks", "delete", "--force", id)
	}
	out, _ := n.ctrRun(ctx, "containers", "list", "--quiet")
	for _, id := range strings.Fields(out) {
		n.containerIDs = append(n.containerIDs, id)
		_, _ = n.ctrRun(ctx, "containers", "delete", id)
	}
	return left
}
