package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KwokNodeAnnotation marks the nodes kwok manages (and fakes).
const KwokNodeAnnotation = "kwok.x-k8s.io/node"

// podCIDR is the range kwok gives fake Pods their addresses from.
const podCIDR = "10.244.0.1/16"

// startNodes starts kube-controller-manager, kube-scheduler and kwok, then
// registers n nodes and waits until kwok reports each Ready.
func (c *Cluster) startNodes(ctx context.Context, n int) error {
	if err := c.startControllers(ctx); err != nil {
		return err
	}
	if err := c.installCRDs(ctx, c.apiserver); err != nil {
		return err
	}
	// kwok acts for the nodes (their status, leases, Pod status) and serves
	// the kubelet API (port-forward, logs, exec) on the nodes' kubelet port.
	kwokPort, err := freePort()
	if err != nil {
		return err
	}
	if err := c.startSecure(ctx, "kwok", kwokPort,
		"--kubeconfig="+c.kubeconfig,
		"--config="+c.asset("kwok-stages.yaml"),
		"--manage-nodes-with-annotation-selector="+KwokNodeAnnotation+"=fake",
		"--node-ip=127.0.0.1",
		fmt.Sprintf("--node-port=%d", kwokPort),
		"--server-address="+hostPort(kwokPort),
		"--cidr="+podCIDR,
		"--node-lease-duration-seconds=40",
		"--enable-crds=PortForward,Logs",
	); err != nil {
		return err
	}
	return c.registerNodes(ctx, n)
}

// startControllers starts kube-controller-manager and kube-scheduler.
func (c *Cluster) startControllers(ctx context.Context) error {
	if err := c.startController(ctx, "kube-controller-manager", "system:kube-controller-manager",
		"--cluster-name=kubetest",
		"--service-account-private-key-file="+c.path("service-account.key"),
		"--root-ca-file="+c.path("ca.crt"),
		"--use-service-account-credentials=true",
	); err != nil {
		return err
	}
	return c.startController(ctx, "kube-scheduler", "system:kube-scheduler")
}

// startSecure starts a component that serves HTTPS on 127.0.0.1:port (args
// say so in the component's own flags) with a certificate of the cluster's
// CA, and waits until its /healthz answers ok.
func (c *Cluster) startSecure(ctx context.Context, name string, port int, args ...string) error {
	certFile, keyFile, err := c.servingCert(name, nil)
	if err != nil {
		return err
	}
	p, err := c.run(name, append(args, "--tls-cert-file="+certFile, "--tls-private-key-file="+keyFile)...)
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	pool.AddCert(c.ca.cert)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	url := "https://" + hostPort(port) + "/healthz"
	return p.waitFor(ctx, "healthy", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%w: %s answered %d", errNotReady, url, resp.StatusCode)
		}
		return nil
	})
}

// startController starts kube-controller-manager or kube-scheduler (they
// share these flags) as user, serving on a free loopback port.
func (c *Cluster) startController(ctx context.Context, name, user string, args ...string) error {
	kubeconfig, err := c.componentKubeconfig(name, user)
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	return c.startSecure(ctx, name, port, append([]string{
		"--kubeconfig=" + kubeconfig,
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=false",
	}, args...)...)
}

// registerNodes creates n Node objects kwok manages and waits until each is
// Ready (kwok's node-initialize stage sets that; the test does not).
func (c *Cluster) registerNodes(ctx context.Context, n int) error {
	client, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	for i := range n {
		name := fmt.Sprintf("kwok-node-%d", i)
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{KwokNodeAnnotation: "fake"},
			Labels: map[string]string{
				"kubernetes.io/hostname": name,
				"kubernetes.io/os":       "linux",
				"kubernetes.io/arch":     "amd64",
				"type":                   "kwok",
			},
		}}
		if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("kubetest: register node %s: %w", name, err)
		}
		c.nodes = append(c.nodes, name)
	}
	kwok := c.procs[len(c.procs)-1]
	for _, name := range c.nodes {
		if err := kwok.waitFor(ctx, "reporting node "+name+" Ready", func(ctx context.Context) error {
			return nodeReady(ctx, client, name)
		}); err != nil {
			return err
		}
	}
	return c.awaitScheduling(ctx, client)
}

// nodeReady reports, as an error, why the node is not Ready yet.
func nodeReady(ctx context.Context, client kubernetes.Interface, name string) error {
	node, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("%w: %v", errNotReady, err)
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("%w: node %s has conditions %v", errNotReady, name, node.Status.Conditions)
}

// awaitScheduling waits until the scheduler places a probe Pod on a node:
// a node Ready in the API server may not be in the scheduler's cache yet,
// and a Pod it sees before then is Unschedulable for a while.
func (c *Cluster) awaitScheduling(ctx context.Context, client kubernetes.Interface) error {
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "kubetest-scheduling-probe"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: new(bool),
			Containers:                   []corev1.Container{{Name: "probe", Image: "kubetest.invalid/probe"}},
		},
	}
	sched := c.procs[len(c.procs)-2]
	if err := sched.waitFor(ctx, "placing a Pod on a node", func(ctx context.Context) error {
		p, err := pods.Get(ctx, probe.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			// The default ServiceAccount may not exist yet: try again.
			p, err = pods.Create(ctx, probe, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errNotReady, err)
		}
		if p.Spec.NodeName == "" {
			return fmt.Errorf("%w: probe Pod not placed yet (conditions %v)", errNotReady, p.Status.Conditions)
		}
		return nil
	}); err != nil {
		return err
	}
	zero := int64(0)
	return pods.Delete(ctx, probe.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
}
