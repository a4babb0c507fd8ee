package kubetest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// WithRealNode also starts kube-controller-manager, kube-scheduler and one
// real node: containerd (Debian's, with runc) started by the test with its
// directories and socket in the cluster's directory, a CNI bridge of its own
// (Debian's containernetworking-plugins) on a subnet 10.233.<n>.0/24 no other
// live cluster on the machine uses, kubelet v1.37.2 from the kube-assets
// directory, the locally built PauseImage as the sandbox image (no registry
// is ever reached), and a provisioner for PersistentVolumeClaims of
// LocalStorageClass. It needs root; the Debian packages are installed with
// apt-get when missing. Stop deletes the node's Pods, stops everything and
// restores the host: mounts, the bridge, CNI cache files, and (the last
// real node on the machine to stop) the sysctls kubelet and the bridge
// plugin changed. Cannot be combined with WithNodes.
func WithRealNode() Option {
	return func(o *options) { o.realNode = true }
}

// realNode is WithRealNode's node.
type realNode struct {
	c            *Cluster
	dir          string
	name         string
	netName      string
	lease        hostLease
	leased       bool
	cgroupDriver string
	snapshotter  string
	ctr          string
	containerd   *process
	kubelet      *process
	containerIDs []string // what containerd held at Stop, for the CNI cache
	stopProv     context.CancelFunc
	provDone     chan struct{}
	services     *serviceNetwork // WithServiceNetwork's
}

// RealNode returns the name of the real node (WithRealNode), "" without one.
func (c *Cluster) RealNode() string {
	if c.realNode == nil {
		return ""
	}
	return c.realNode.name
}

// BridgeAddress returns the host's address on the real node's bridge: the
// address of the host the node's Pods reach (a server the Pods call listens
// there). "" without a real node.
func (c *Cluster) BridgeAddress() string {
	if c.realNode == nil {
		return ""
	}
	return c.realNode.address()
}

func (n *realNode) path(name string) string { return filepath.Join(n.dir, name) }

func (c *Cluster) startRealNode(ctx context.Context, withServices bool) error {
	if os.Geteuid() != 0 {
		return errors.New("kubetest: WithRealNode needs root (containerd, kubelet and the CNI bridge change the host)")
	}
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	suffix := hex.EncodeToString(id)
	n := &realNode{c: c, dir: c.path("node"), name: "kubetest-node-" + suffix, netName: "kubetest-" + suffix, cgroupDriver: cgroupDriver()}
	if err := os.MkdirAll(n.dir, 0o711); err != nil {
		return err
	}
	// The cluster's directory is 0700 (MkdirTemp); the gateway's user needs
	// to reach its volume's directory through it.
	if err := os.Chmod(c.dir, 0o711); err != nil {
		return err
	}
	c.realNode = n
	lease, err := joinHost("kt" + suffix)
	if err != nil {
		return err
	}
	n.lease, n.leased = lease, true
	if withServices {
		n.services = &serviceNetwork{}
	}
	if err := c.startControllers(ctx); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}
	if err := n.startKubelet(ctx); err != nil {
		return err
	}
	pctx, cancel := context.WithCancel(context.Background())
	n.stopProv = cancel
	if n.provDone, err = n.startProvisioner(pctx); err != nil {
		return err
	}
	if n.services != nil {
		return n.startServiceNetwork(ctx)
	}
	return nil
}

// stop deletes the node's Pods (kubelet stops their containers and tears
// their network down), stops kubelet and containerd, removes what they
// left, and restores the host. What it had to force is printed.
func (n *realNode) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var notes []string
	if n.kubelet != nil && !n.kubelet.exited() {
		if err := n.drain(ctx); err != nil {
			notes = append(notes, err.Error())
		}
	}
	if n.stopProv != nil {
		n.stopProv()
		<-n.provDone
	}
	if n.kubelet != nil {
		n.kubelet.stop(stopGrace)
	}
	if n.services != nil {
		notes = append(notes, n.stopServiceNetwork()...)
	}
	if n.containerd != nil && !n.containerd.exited() {
		if left := n.removeContainers(ctx); len(left) > 0 {
			notes = append(notes, fmt.Sprintf("killed what kubelet left running: %v", left))
		}
		n.containerd.stop(stopGrace)
	}
	if left := killShims(n.dir); len(left) > 0 {
		notes = append(notes, fmt.Sprintf("killed containerd shims that outlived containerd: %v", left))
	}
	if err := unmountUnder(n.dir); err != nil {
		notes = append(notes, err.Error())
	}
	n.removeHostFiles()
	if n.leased {
		deleteLink(n.lease.bridge)
		if err := n.lease.leave(); err != nil {
			notes = append(notes, "restore the host: "+err.Error())
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(os.Stderr, "kubetest: stopping node %s: %s\n", n.name, strings.Join(notes, "; "))
	}
}

// drain cordons the node (so controllers' replacement Pods, such as a
// Deployment's, are not scheduled onto it), deletes every Pod on it and
// waits until kubelet has stopped their containers and sandboxes.
func (n *realNode) drain(ctx context.Context) error {
	client, err := n.c.client()
	if err != nil {
		return err
	}
	cordon := []byte(`{"spec":{"unschedulable":true}}`)
	if _, err := client.CoreV1().Nodes().Patch(ctx, n.name, types.MergePatchType, cordon, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("kubetest: cordon node %s: %w", n.name, err)
	}
	pods := func() ([]string, error) {
		list, err := client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + n.name})
		if err != nil {
			return nil, err
		}
		var names []string
		for _, p := range list.Items {
			names = append(names, p.Namespace+"/"+p.Name)
			if p.DeletionTimestamp == nil {
				grace := int64(2)
				_ = client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace})
			}
		}
		return names, nil
	}
	return n.kubelet.waitFor(ctx, "stopping the node's Pods", func(context.Context) error {
		left, err := pods()
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("%w: Pods %v", errNotReady, left)
		}
		tasks, err := n.tasks(ctx)
		if err != nil || len(tasks) > 0 {
			return fmt.Errorf("%w: containerd tasks %v (%v)", errNotReady, tasks, err)
		}
		return nil
	})
}

// removeHostFiles removes the node's files outside its directory: kubelet's
// links in /var/log/containers and the CNI plugins' result cache.
func (n *realNode) removeHostFiles() {
	if links, err := filepath.Glob("/var/log/containers/*.log"); err == nil {
		for _, l := range links {
			if target, err := os.Readlink(l); err == nil && strings.HasPrefix(target, n.dir+"/") {
				_ = os.Remove(l)
			}
		}
	}
	const cache = "/var/lib/cni/results"
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		var res struct {
			ContainerID string `json:"containerId"`
			NetworkName string `json:"networkName"`
		}
		b, err := os.ReadFile(filepath.Join(cache, e.Name()))
		if err != nil || json.Unmarshal(b, &res) != nil {
			continue
		}
		ours := res.NetworkName == n.netName
		for _, id := range n.containerIDs {
			ours = ours || res.ContainerID == id
		}
		if ours {
			_ = os.Remove(filepath.Join(cache, e.Name()))
		}
	}
}

// unmountUnder unmounts every mount point under dir, deepest first.
func unmountUnder(dir string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		// Octal escapes (\040 for a space) never occur in this package's paths.
		if p := fields[4]; strings.HasPrefix(p, dir+"/") {
			points = append(points, p)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	var errs []error
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
