package kubetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterDomain is the DNS domain of a service network's Services
// (WithServiceNetwork): <service>.<namespace>.svc.ClusterDomain.
const ClusterDomain = "cluster.local"

// WithServiceNetwork is WithRealNode with the service network a cluster's
// Pods rely on:
//
//   - kube-proxy v1.37.2 (iptables mode) routes every Service's cluster IP
//     to its ready endpoints, from the node's Pods and from the host;
//   - CoreDNS (the kubernetes plugin), on the host's bridge address port
//     53, answers <service>.<namespace>.svc.cluster.local; kubelet gives
//     it to every Pod as its DNS server, with the cluster's search path;
//   - the "kubernetes" Service in "default" reaches the API server, as
//     client-go's in-cluster configuration expects (a relay on the host's
//     bridge address is its endpoint; the API server itself listens on
//     loopback only).
//
// kube-proxy's rules are the host's: one service network runs on the
// machine at a time, so New waits while another test process's runs (a
// machine-wide lock). Stop removes kube-proxy's rules (kube-proxy
// --cleanup). It needs the kube-proxy and coredns binaries of
// scripts/kube-assets.
func WithServiceNetwork() Option {
	return func(o *options) { o.realNode, o.serviceNetwork = true, true }
}

// serviceNetwork is WithServiceNetwork's part of a real node.
type serviceNetwork struct {
	apiRelay  *Proxy
	kubeProxy *process
	coredns   *process
	// firewallChain: the host had kube-proxy's KUBE-FIREWALL chain before
	// (then it is left there).
	firewallChain map[string]bool
}

// iptablesCommands are the host's rule tables kube-proxy writes: IPv4's and IPv6's.
var iptablesCommands = []string{"iptables", "ip6tables"}

// firewallChain is the filter chain kube-proxy's iptables mode adds (for
// its localhost NodePort rules) and `kube-proxy --cleanup` leaves behind.
const firewallChain = "KUBE-FIREWALL"

// hasChain reports whether the host's filter table of command has chain.
func hasChain(command, chain string) bool {
	return exec.Command(command, "-w", "-S", chain).Run() == nil
}

// removeFirewallChain removes firewallChain and its jumps from the host's
// filter table of command.
func removeFirewallChain(command string) {
	for _, args := range [][]string{
		{"-D", "INPUT", "-j", firewallChain}, {"-D", "OUTPUT", "-j", firewallChain},
		{"-F", firewallChain}, {"-X", firewallChain},
	} {
		_ = exec.Command(command, append([]string{"-w"}, args...)...).Run()
	}
}

// serviceNetworkLock is the machine-wide lock of WithServiceNetwork, in
// hostStateDir.
const serviceNetworkLock = ".service-network"

// serviceNetworkWait bounds New's wait for another test process's service
// network to end (the Kubernetes node lane holds it for about 15 minutes).
const serviceNetworkWait = 45 * time.Minute

// lockServiceNetwork waits for, and takes, the machine-wide lock; the
// cluster holds it until Stop.
func lockServiceNetwork(ctx context.Context) (*os.File, error) {
	for {
		f, err := tryLockServiceNetwork()
		if f != nil || err != nil {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("kubetest: another test's service network held the machine until the start's deadline: %w", ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// tryLockServiceNetwork takes the machine-wide lock if no one holds it
// (nil, nil when someone does).
func tryLockServiceNetwork() (*os.File, error) {
	f, err := lockFile(serviceNetworkLock, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil
	}
	return f, err
}

// dnsAddress is CoreDNS's address: the host's on the node's bridge.
func (n *realNode) dnsAddress() string { return n.address() }

// startServiceNetwork starts the relay to the API server and its
// EndpointSlice, CoreDNS and kube-proxy, once the node is Ready.
func (n *realNode) startServiceNetwork(ctx context.Context) error {
	s := n.services
	u, err := url.Parse(n.c.host)
	if err != nil {
		return err
	}
	if s.apiRelay, err = startRelay(net.JoinHostPort(n.address(), "0"), u.Host); err != nil {
		return fmt.Errorf("kubetest: the API server's relay for Pods: %w", err)
	}
	if err := n.publishAPIServer(ctx); err != nil {
		return err
	}
	if err := n.startCoreDNS(ctx); err != nil {
		return err
	}
	return n.startKubeProxy(ctx)
}

// publishAPIServer makes the relay the endpoint of the "kubernetes" Service
// (the API server runs with --endpoint-reconciler-type=none).
func (n *realNode) publishAPIServer(ctx context.Context) error {
	client, err := n.c.client()
	if err != nil {
		return err
	}
	_, port, _ := net.SplitHostPort(n.services.apiRelay.addr)
	p, _ := strconv.Atoi(port)
	portName, protocol, port32 := "https", corev1.ProtocolTCP, int32(p)
	ready := true
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "kubernetes", Namespace: metav1.NamespaceDefault, Labels: map[string]string{
			discoveryv1.LabelServiceName: "kubernetes", discoveryv1.LabelManagedBy: "kubetest"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{n.address()}, Conditions: discoveryv1.EndpointConditions{Ready: &ready}}},
		Ports:       []discoveryv1.EndpointPort{{Name: &portName, Protocol: &protocol, Port: &port32}},
	}
	return n.kubelet.waitFor(ctx, "publishing the API server's endpoint", func(ctx context.Context) error {
		_, err := client.DiscoveryV1().EndpointSlices(metav1.NamespaceDefault).Create(ctx, slice, metav1.CreateOptions{})
		return err
	})
}

// startCoreDNS starts CoreDNS on the bridge address, answering the
// cluster's names from the API server, and waits until it has read them.
func (n *realNode) startCoreDNS(ctx context.Context) error {
	kubeconfig, err := n.c.componentKubeconfig("coredns", "system:coredns", "system:masters")
	if err != nil {
		return err
	}
	readyPort, err := freePort()
	if err != nil {
		return err
	}
	corefile := fmt.Sprintf(`.:53 {
	bind %s
	ready 127.0.0.1:%d
	errors
	kubernetes %s in-addr.arpa ip6.arpa {
		kubeconfig %s %s
		pods insecure
	}
}
`, n.dnsAddress(), readyPort, ClusterDomain, kubeconfig, ContextName)
	if err := writeFile(n.path("Corefile"), []byte(corefile)); err != nil {
		return err
	}
	p, err := n.c.run("coredns", "-conf", n.path("Corefile"))
	if err != nil {
		return err
	}
	n.services.coredns = p
	return p.waitFor(ctx, "ready", func(ctx context.Context) error { return httpOK(ctx, "http://"+hostPort(readyPort)+"/ready") })
}

// startKubeProxy starts kube-proxy in iptables mode for the node, leaving
// the host's conntrack settings as they are, and waits until it has
// programmed the Services it found.
func (n *realNode) startKubeProxy(ctx context.Context) error {
	kubeconfig, err := n.c.componentKubeconfig("kube-proxy", "system:kube-proxy", "system:masters")
	if err != nil {
		return err
	}
	healthz, err := freePort()
	if err != nil {
		return err
	}
	metrics, err := freePort()
	if err != nil {
		return err
	}
	subnet, _ := n.lease.subnet()
	cfg := map[string]any{
		"apiVersion":         "kubeproxy.config.k8s.io/v1alpha1",
		"kind":               "KubeProxyConfiguration",
		"clientConnection":   map[string]any{"kubeconfig": kubeconfig},
		"hostnameOverride":   n.name,
		"mode":               "iptables",
		"clusterCIDR":        subnet,
		"detectLocalMode":    "ClusterCIDR",
		"healthzBindAddress": hostPort(healthz),
		"metricsBindAddress": hostPort(metrics),
		"nodePortAddresses":  []string{n.address() + "/32"},
		"iptables":           map[string]any{"masqueradeAll": true, "localhostNodePorts": false, "syncPeriod": "10s", "minSyncPeriod": "0s"},
		"conntrack":          map[string]any{"maxPerCore": 0, "min": 0, "tcpEstablishedTimeout": "0s", "tcpCloseWaitTimeout": "0s"},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(n.path("kube-proxy.json"), b); err != nil {
		return err
	}
	n.services.firewallChain = map[string]bool{}
	for _, command := range iptablesCommands {
		n.services.firewallChain[command] = hasChain(command, firewallChain)
	}
	p, err := n.c.run("kube-proxy", "--config="+n.path("kube-proxy.json"), "--v=2")
	if err != nil {
		return err
	}
	n.services.kubeProxy = p
	return p.waitFor(ctx, "healthy", func(ctx context.Context) error { return httpOK(ctx, "http://"+hostPort(healthz)+"/healthz") })
}

// stopServiceNetwork stops kube-proxy and removes its rules, stops CoreDNS
// and the relay: the host's rules are then as before the start (Stop then
// gives the machine-wide lock back).
func (n *realNode) stopServiceNetwork() []string {
	s := n.services
	var notes []string
	if s.kubeProxy != nil {
		s.kubeProxy.stop(stopGrace)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, n.c.asset("kube-proxy"), "--cleanup", "--proxy-mode=iptables").CombinedOutput()
		cancel()
		if err != nil {
			notes = append(notes, fmt.Sprintf("kube-proxy --cleanup: %v: %s", err, strings.TrimSpace(string(out))))
		}
		for command, had := range s.firewallChain {
			if !had {
				removeFirewallChain(command)
			}
		}
	}
	if s.coredns != nil {
		s.coredns.stop(stopGrace)
	}
	if s.apiRelay != nil {
		s.apiRelay.Down()
	}
	return notes
}

// DNSAddress returns the address of the cluster's DNS server (host:port)
// with WithServiceNetwork, "" without: a test resolves Service names there
// as the node's Pods do.
func (c *Cluster) DNSAddress() string {
	if c.realNode == nil || c.realNode.services == nil {
		return ""
	}
	return net.JoinHostPort(c.realNode.dnsAddress(), "53")
}

// httpOK reports whether GET url answers 200.
func httpOK(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w: GET %s: %s", errNotReady, url, resp.Status)
	}
	return nil
}

// RelayForPods starts a relay on the host's bridge address to target, a
// server on the host's loopback (such as the test's PostgreSQL), and
// returns its address: the node's Pods reach target there. It stops when
// the test ends. Only with a real node.
func (c *Cluster) RelayForPods(t testing.TB, target string) string {
	t.Helper()
	if c.realNode == nil {
		t.Fatal("kubetest: RelayForPods needs WithRealNode")
	}
	p, err := startRelay(net.JoinHostPort(c.realNode.address(), "0"), target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Down)
	return p.addr
}
