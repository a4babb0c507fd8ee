// Package kubetest runs a real Kubernetes control plane for tests: etcd and
// kube-apiserver (and, with WithNodes, kube-controller-manager, kube-scheduler
// and kwok's fake nodes) started from the binaries scripts/kube-assets builds,
// on free 127.0.0.1 ports, in a temporary directory removed afterwards.
//
// The API server runs with RBAC authorization and its default admission
// plugins (PodSecurity included), trusting a throw-away CA that signs every
// client certificate: the admin's (group system:masters) and those of the
// users UserKubeconfig creates, so permission checks answer as in a real
// cluster.
//
// With nodes, Cluster.StartKubelet stands in for the kubelet of occ's gateway
// Pods (it runs the fake gateway for each); Cluster.StartProxy puts a proxy
// in front of the API server that a test takes down and brings back.
// WithRealNode instead runs one real node (kubelet, containerd, runc, a CNI
// bridge) whose Pods run real containers of images the test imports.
//
// The binaries come from the directory named by OCC_TEST_KUBE_ASSETS, or
// the one scripts/test's build beside the other packages' tests writes to
// the file named by OCC_TEST_KUBE_ASSETS_PENDING (assets.go). Without
// either every function here fails the test with a message saying how to
// build them; nothing is skipped.
//
// The package starts the binaries itself rather than through
// controller-runtime's envtest: the lane needs the same CA and service-account
// key in kube-controller-manager, kube-scheduler and kwok, which envtest does
// not start, and doing it here keeps controller-runtime out of go.mod.
package kubetest

import (
	"context"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// AssetsEnv names the environment variable holding the directory with the
// kube-apiserver, etcd, kube-controller-manager, kube-scheduler, kubelet,
// kwok and helm binaries (the directory `scripts/kube-assets` prints).
const AssetsEnv = "OCC_TEST_KUBE_ASSETS"

// ContextName is the name of the context (and cluster) in every kubeconfig
// this package writes.
const ContextName = "kubetest"

// startTimeout bounds how long New waits for each component to become ready
// (a loaded two-core machine needs tens of seconds for the API server).
const startTimeout = 3 * time.Minute

// stopGrace is how long a component gets to exit after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// Cluster is a running control plane. Stop it with Stop (Start does that when
// the test ends).
type Cluster struct {
	dir        string
	assets     string
	ca         *ca
	host       string
	etcdURL    string
	admin      *rest.Config
	kubeconfig string
	procs      []*process // in start order
	apiserver  *process
	nodes      []string
	realNode   *realNode // WithRealNode's node, stopped first
	netLock    *os.File  // WithServiceNetwork's machine-wide lock, given back last
	stopOnce   sync.Once
}

// Option configures New and Start.
type Option func(*options)

type options struct {
	nodes          int
	realNode       bool
	serviceNetwork bool
}

// WithNodes also starts kube-controller-manager, kube-scheduler and kwok, and
// registers n fake nodes kwok keeps Ready: a Deployment then gets Pods that
// are scheduled and reported Running and Ready by kwok (no containers run).
// As in any cluster, a namespace's "default" ServiceAccount appears shortly
// after the namespace (kube-controller-manager creates it), and the API
// server refuses Pods in the namespace until then; controllers such as a
// Deployment's ReplicaSet retry on their own.
func WithNodes(n int) Option {
	return func(o *options) { o.nodes = n }
}

// Start starts a cluster for the test and stops it when the test ends; it
// fails the test when the cluster cannot start. When the test has failed, the
// last lines of each component's log go to the test's log first.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	c, err := New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.procs {
				t.Logf("kubetest: last lines of %s's log:\n%s", p.name, p.tail(20))
			}
		}
		c.Stop()
	})
	return c
}

// New starts a cluster the caller stops with Stop: for a cluster shared by the
// tests of a package, started in TestMain.
func New(opts ...Option) (*Cluster, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	if o.nodes != 0 && o.realNode {
		return nil, errors.New("kubetest: WithNodes and WithRealNode cannot be combined")
	}
	if o.nodes < 0 {
		return nil, fmt.Errorf("kubetest: WithNodes(%d): the number of nodes cannot be negative", o.nodes)
	}
	need := []string{"etcd", "kube-apiserver"}
	if o.nodes > 0 {
		need = append(need, "kube-controller-manager", "kube-scheduler", "kwok", "kwok-stages.yaml", "kwok-crds.yaml")
	}
	if o.realNode {
		need = append(need, "kube-controller-manager", "kube-scheduler", "kubelet")
	}
	if o.serviceNetwork {
		need = append(need, "kube-proxy", "coredns")
	}
	assets, err := assetDir(need)
	if err != nil {
		return nil, err
	}
	var netLock *os.File
	if o.serviceNetwork {
		ctx, cancel := context.WithTimeout(context.Background(), serviceNetworkWait)
		netLock, err = lockServiceNetwork(ctx)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	// Ports are chosen free but bound only by the child processes; another
	// process can take one in between, so that case is retried.
	for attempt := 1; ; attempt++ {
		c, err := start(assets, o)
		if err == nil {
			c.netLock = netLock
			return c, nil
		}
		if attempt == 3 || !isPortTaken(err) {
			if netLock != nil {
				netLock.Close()
			}
			return nil, err
		}
	}
}

// Asset returns the path of a binary in OCC_TEST_KUBE_ASSETS (helm for the
// Helm chart's test), failing the test with how to build it when it is not
// there.
func Asset(t testing.TB, name string) string {
	t.Helper()
	dir, err := assetDir([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, name)
}

// start runs one attempt at starting the cluster.
func start(assets string, o options) (_ *Cluster, err error) {
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{dir: dir, assets: assets}
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if c.ca, err = newCA(); err != nil {
		return nil, err
	}
	if err := os.WriteFile(c.path("ca.crt"), c.ca.certPEM, 0o600); err != nil {
		return nil, err
	}
	if err := c.startEtcd(ctx); err != nil {
		return nil, err
	}
	if err := c.startAPIServer(ctx); err != nil {
		return nil, err
	}
	if o.nodes > 0 {
		if err := c.startNodes(ctx, o.nodes); err != nil {
			return nil, err
		}
	}
	if o.realNode {
		if err := c.startRealNode(ctx, o.serviceNetwork); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Stop stops every component by PID, last started first, and removes the
// cluster's directory. It may be called more than once.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		if c.realNode != nil {
			c.realNode.stop()
		}
		for i := len(c.procs) - 1; i >= 0; i-- {
			c.procs[i].stop(stopGrace)
		}
		_ = os.RemoveAll(c.dir)
		if c.netLock != nil {
			c.netLock.Close()
		}
	})
}

// Config returns a copy of the admin's client configuration (a user in
// system:masters).
func (c *Cluster) Config() *rest.Config {
	return rest.CopyConfig(c.admin)
}

// KubeconfigPath returns the admin's kubeconfig file, whose current context
// is ContextName.
func (c *Cluster) KubeconfigPath() string {
	return c.kubeconfig
}

// Host returns the API server's URL (https://127.0.0.1:<port>).
func (c *Cluster) Host() string {
	return c.host
}

// Nodes returns the names of the fake nodes WithNodes registered.
func (c *Cluster) Nodes() []string {
	return append([]string(nil), c.nodes...)
}

func (c *Cluster) path(name string) string {
	return filepath.Join(c.dir, name)
}

func (c *Cluster) asset(name string) string {
	return filepath.Join(c.assets, name)
}

// run starts a component of the kube-assets directory and records it for
// Stop.
func (c *Cluster) run(name string, args ...string) (*process, error) {
	return c.runAs(name, c.asset(name), args...)
}

// runAs starts the program bin as the component name and records it for
// Stop.
func (c *Cluster) runAs(name, bin string, args ...string) (*process, error) {
	p, err := startProcess(c.dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// client is a clientset of the admin.
func (c *Cluster) client() (*kubernetes.Clientset, error) {
	return kubernetes.NewForConfig(c.admin)
}

// clientCert writes a client certificate for user name in groups and returns
// the pair.
func (c *Cluster) clientCert(name string, groups ...string) (keyPair, error) {
	return c.ca.issue(pkix.Name{CommonName: name, Organization: groups}, nil, nil)
}

// servingCert writes a serving certificate for 127.0.0.1 (and dnsNames) as
// dir/name.crt and dir/name.key.
func (c *Cluster) servingCert(name string, ips []net.IP, dnsNames ...string) (certFile, keyFile string, err error) {
	ips = append([]net.IP{net.IPv4(127, 0, 0, 1)}, ips...)
	kp, err := c.ca.issue(pkix.Name{CommonName: name}, ips, append([]string{"localhost"}, dnsNames...))
	if err != nil {
		return "", "", err
	}
	return kp.write(c.dir, name)
}

var errNotReady = errors.New("not ready")
