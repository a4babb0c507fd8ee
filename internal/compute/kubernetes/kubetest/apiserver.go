package kubetest

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// serviceCIDR is the cluster's Service IP range; the first address is the
// "kubernetes" Service, which the API server's certificate names too.
const serviceCIDR = "10.96.0.0/16"

var kubernetesServiceIP = net.IPv4(10, 96, 0, 1)

func (c *Cluster) startEtcd(ctx context.Context) error {
	clientPort, err := freePort()
	if err != nil {
		return err
	}
	peerPort, err := freePort()
	if err != nil {
		return err
	}
	clientURL := "http://" + hostPort(clientPort)
	peerURL := "http://" + hostPort(peerPort)
	p, err := c.run("etcd",
		"--name=kubetest",
		"--data-dir="+c.path("etcd"),
		"--listen-client-urls="+clientURL,
		"--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL,
		"--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=kubetest="+peerURL,
		"--unsafe-no-fsync=true",
	)
	if err != nil {
		return err
	}
	c.etcdURL = clientURL
	return p.waitFor(ctx, "healthy", func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, clientURL+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"health":"true"`) {
			return fmt.Errorf("%w: /health answered %d %s", errNotReady, resp.StatusCode, body)
		}
		return nil
	})
}

func (c *Cluster) startAPIServer(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	c.host = "https://" + hostPort(port)
	certFile, keyFile, err := c.servingCert("kube-apiserver", []net.IP{kubernetesServiceIP},
		"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local")
	if err != nil {
		return err
	}
	// The service-account signing key; kube-controller-manager signs tokens with it too.
	saKey, err := newKey()
	if err != nil {
		return err
	}
	saPEM, err := privateKeyPEM(saKey)
	if err != nil {
		return err
	}
	if err := writeFile(c.path("service-account.key"), saPEM); err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	if err := writeFile(c.path("service-account.pub"), pemBlock("PUBLIC KEY", saPub)); err != nil {
		return err
	}
	// The API server's client certificate towards kubelets (kwok's server).
	kubeletClient, err := c.clientCert("kube-apiserver-kubelet-client", "system:masters")
	if err != nil {
		return err
	}
	kubeletCert, kubeletKey, err := kubeletClient.write(c.dir, "kubelet-client")
	if err != nil {
		return err
	}
	if err := c.writeAdmin(); err != nil {
		return err
	}
	p, err := c.run("kube-apiserver",
		"--etcd-servers="+c.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		// The reconciler refuses a loopback address for the "kubernetes"
		// Service's endpoints; nothing inside this cluster calls that Service.
		"--endpoint-reconciler-type=none",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir="+c.path("kube-apiserver-certs"),
		"--tls-cert-file="+certFile,
		"--tls-private-key-file="+keyFile,
		"--client-ca-file="+c.path("ca.crt"),
		"--authorization-mode=RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+c.path("service-account.pub"),
		"--service-account-signing-key-file="+c.path("service-account.key"),
		"--service-cluster-ip-range="+serviceCIDR,
		"--allow-privileged=true",
		"--kubelet-client-certificate="+kubeletCert,
		"--kubelet-client-key="+kubeletKey,
		"--kubelet-preferred-address-types=InternalIP,Hostname",
	)
	if err != nil {
		return err
	}
	c.apiserver = p
	client, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	return p.waitFor(ctx, "ready", func(ctx context.Context) error {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("%w: /readyz: %v %s", errNotReady, err, body)
		}
		return nil
	})
}
