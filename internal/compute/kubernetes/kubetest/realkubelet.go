package kubetest

import (
	"context"
	"encoding/json"
	"net"
	"os"
)

// cgroupDriver is the cgroup driver of this machine's containers: systemd's
// when systemd runs the machine, cgroupfs otherwise (as on these machines,
// whose cgroup v1 hierarchy nothing manages).
func cgroupDriver() string {
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		return "systemd"
	}
	return "cgroupfs"
}

// kubeletConfig is the node's KubeletConfiguration: everything under the
// node's directory, no QoS cgroups nor node allocatable enforcement (the
// machine's cgroups are not kubelet's to arrange), cgroup v1 allowed, swap
// tolerated, no iptables chains, a static resolv.conf, eviction and image
// garbage collection effectively off (a test's imported images are never
// pulled again), client certificates of the cluster's CA only, and every
// authenticated request allowed (the API server is the only client).
func (n *realNode) kubeletConfig(port, healthzPort int, certFile, keyFile string) map[string]any {
	cfg := map[string]any{
		"apiVersion":                  "kubelet.config.k8s.io/v1beta1",
		"kind":                        "KubeletConfiguration",
		"address":                     n.address(),
		"port":                        port,
		"readOnlyPort":                0,
		"healthzBindAddress":          "127.0.0.1",
		"healthzPort":                 healthzPort,
		"tlsCertFile":                 certFile,
		"tlsPrivateKeyFile":           keyFile,
		"authentication":              map[string]any{"x509": map[string]any{"clientCAFile": n.c.path("ca.crt")}, "webhook": map[string]any{"enabled": false}, "anonymous": map[string]any{"enabled": false}},
		"authorization":               map[string]any{"mode": "AlwaysAllow"},
		"containerRuntimeEndpoint":    "unix://" + n.socket(),
		"imageServiceEndpoint":        "unix://" + n.socket(),
		"cgroupDriver":                n.cgroupDriver,
		"cgroupsPerQOS":               false,
		"enforceNodeAllocatable":      []string{},
		"failCgroupV1":                false,
		"failSwapOn":                  false,
		"makeIPTablesUtilChains":      false,
		"resolvConf":                  n.path("resolv.conf"),
		"podLogsDir":                  n.path("pod-logs"),
		"volumePluginDir":             n.path("volume-plugins"),
		"imageGCHighThresholdPercent": 100,
		"imageGCLowThresholdPercent":  99,
		"evictionHard":                map[string]string{"memory.available": "1Mi", "nodefs.available": "1%", "imagefs.available": "1%"},
		"registerNode":                true,
		"rotateCertificates":          false,
		"serializeImagePulls":         false,
		"syncFrequency":               "10s",
		"nodeStatusUpdateFrequency":   "5s",
		"shutdownGracePeriod":         "0s",
	}
	if n.services != nil {
		// Pods ask the service network's CoreDNS, with the cluster's search path.
		cfg["clusterDNS"], cfg["clusterDomain"] = []string{n.dnsAddress()}, ClusterDomain
	}
	return cfg
}

// address is the node's address: the host's on the node's bridge (kubelet
// refuses a loopback node IP); kubelet serves there, and the API server
// reaches it there for port-forwards and logs.
func (n *realNode) address() string {
	_, gateway := n.lease.subnet()
	return gateway
}

// startKubelet starts kubelet v1.37.2 from the kube-assets directory as the
// node (a client certificate of the cluster's CA, in system:masters: the
// API server authorizes with RBAC only) and waits until the node is Ready.
func (n *realNode) startKubelet(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	healthzPort, err := freePort()
	if err != nil {
		return err
	}
	certFile, keyFile, err := n.c.servingCert("kubelet", []net.IP{net.ParseIP(n.address())})
	if err != nil {
		return err
	}
	cfg, err := json.MarshalIndent(n.kubeletConfig(port, healthzPort, certFile, keyFile), "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(n.path("kubelet.json"), cfg); err != nil {
		return err
	}
	// Pods get no DNS server (the cluster has none); asking loopback fails
	// at once rather than after a timeout.
	if err := writeFile(n.path("resolv.conf"), []byte("nameserver 127.0.0.1\noptions ndots:1\n")); err != nil {
		return err
	}
	kubeconfig, err := n.c.componentKubeconfig("kubelet", "system:node:"+n.name, "system:nodes", "system:masters")
	if err != nil {
		return err
	}
	p, err := n.c.runAs("kubelet", n.c.asset("kubelet"),
		"--config="+n.path("kubelet.json"),
		"--kubeconfig="+kubeconfig,
		"--root-dir="+n.path("kubelet"),
		"--cert-dir="+n.path("kubelet-pki"),
		"--hostname-override="+n.name,
		"--node-ip="+n.address(),
		"--v=2",
	)
	if err != nil {
		return err
	}
	n.kubelet = p
	client, err := n.c.client()
	if err != nil {
		return err
	}
	return p.waitFor(ctx, "reporting node "+n.name+" Ready", func(ctx context.Context) error {
		return nodeReady(ctx, client, n.name)
	})
}
