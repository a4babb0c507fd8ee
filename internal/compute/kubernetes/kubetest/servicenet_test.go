package kubetest_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
)

// TestServiceNetwork: with WithServiceNetwork a Pod reaches another Pod
// through its Service's DNS name (CoreDNS given to it by kubelet, the
// cluster IP routed by kube-proxy); the host resolves Service names at
// DNSAddress and reaches the API server at the "kubernetes" Service's
// cluster IP; Stop removes kube-proxy's rules from the host.
func TestServiceNetwork(t *testing.T) {
	kubeRules := func(save string) map[string]bool {
		out, err := exec.Command(save).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v %s", save, err, out)
		}
		rules := map[string]bool{}
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "KUBE-") {
				rules[line] = true
			}
		}
		return rules
	}
	saves := []string{"iptables-save", "ip6tables-save"}
	// The host's rules before, read while no other service network runs.
	var hostBefore map[string]map[string]bool
	if unlock, ok := kubetest.LockServiceNetwork(); ok {
		hostBefore = map[string]map[string]bool{}
		for _, save := range saves {
			hostBefore[save] = kubeRules(save)
		}
		unlock()
	}
	c := kubetest.Start(t, kubetest.WithServiceNetwork())
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	resolver := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, c.DNSAddress())
	}}

	// The host: the API server through the "kubernetes" Service.
	var apiIP string
	poll(t, ctx, "resolving the kubernetes Service", func() error {
		ips, err := resolver.LookupHost(ctx, "kubernetes.default.svc."+kubetest.ClusterDomain)
		if err != nil || len(ips) != 1 {
			return fmt.Errorf("%v %v", ips, err)
		}
		apiIP = ips[0]
		return nil
	})
	svc, err := client.CoreV1().Services(metav1.NamespaceDefault).Get(ctx, "kubernetes", metav1.GetOptions{})
	if err != nil || svc.Spec.ClusterIP != apiIP {
		t.Fatalf("kubernetes.default.svc resolves to %s; the Service: %v %v", apiIP, svc.Spec.ClusterIP, err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.Config().CAData)
	cert, err := tls.X509KeyPair(c.Config().CertData, c.Config().KeyData)
	if err != nil {
		t.Fatal(err)
	}
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "kubernetes.default.svc"}}}
	poll(t, ctx, "the API server at the kubernetes Service's cluster IP", func() error {
		resp, err := https.Get("https://" + net.JoinHostPort(apiIP, "443") + "/version")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), `"gitVersion"`) {
			return fmt.Errorf("%s %s", resp.Status, b)
		}
		return nil
	})

	// Pods: one asks for the other by its Service's name.
	const ns = "net"
	namespace(t, client, ns, nil)
	probe := func(name string, args ...string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
			Spec: corev1.PodSpec{
				AutomountServiceAccountToken: new(bool),
				RestartPolicy:                corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: name, Image: kubetest.PauseImage, ImagePullPolicy: corev1.PullNever,
					Command: append([]string{"/pause"}, args...)}},
			},
		}
	}
	server := probe("server", "serve", "8080")
	server.Spec.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
		HTTPGet: &corev1.HTTPGetAction{Path: "/", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1}
	service := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "pong"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "server"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if _, err := client.CoreV1().Services(ns).Create(ctx, service, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []*corev1.Pod{server, probe("client", "get", "http://pong."+ns+".svc/")} {
		poll(t, ctx, "creating Pod "+p.Name, func() error {
			_, err := client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
			return err
		})
	}
	poll(t, ctx, "the client Pod's GET through the Service's name", func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, "client", metav1.GetOptions{})
		if err != nil {
			return err
		}
		switch p.Status.Phase {
		case corev1.PodSucceeded:
			return nil
		case corev1.PodFailed:
			logs, _ := client.CoreV1().Pods(ns).GetLogs("client", &corev1.PodLogOptions{}).DoRaw(ctx)
			t.Fatalf("the client Pod failed; its log:\n%s", logs)
		}
		return fmt.Errorf("phase %s", p.Status.Phase)
	})

	out, err := exec.Command("iptables-save", "-t", "nat").CombinedOutput()
	if err != nil || !strings.Contains(string(out), ns+"/pong") {
		t.Errorf("while the cluster runs, kube-proxy has no rule for Service %s/pong (%v):\n%s", ns, err, out)
	}
	c.Stop()
	// Another test's service network may run by now, with rules of its
	// own: the host is compared only while none does.
	if unlock, ok := kubetest.LockServiceNetwork(); ok && hostBefore != nil {
		defer unlock()
		for _, save := range saves {
			for rule := range kubeRules(save) {
				if !hostBefore[save][rule] {
					t.Errorf("after Stop the host still has kube-proxy's %q (%s)", rule, save)
				}
			}
		}
	}
}
