package kubetest

import (
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Proxy relays TCP connections to the cluster's API server from a port of
// its own, and can take the API server away and give it back (Down, Up):
// a client configured through it sees refused connections while it is
// down, as when the API server is unreachable, and the same server once it
// is up again. The cluster keeps running meanwhile (its controllers, kwok
// and other clients talk to the API server directly).
type Proxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]bool
}

// StartProxy starts a proxy, up, on a free 127.0.0.1 port; it stops when
// the test ends.
func (c *Cluster) StartProxy(t testing.TB) *Proxy {
	t.Helper()
	u, err := url.Parse(c.host)
	if err != nil {
		t.Fatal(err)
	}
	p, err := startRelay("127.0.0.1:0", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Down)
	return p
}

// startRelay starts a Proxy, up, listening on addr and relaying to target.
func startRelay(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]bool{}}
	p.serve(ln)
	return p, nil
}

// Config returns the admin's client configuration through the proxy.
func (p *Proxy) Config(c *Cluster) *rest.Config {
	cfg := c.Config()
	cfg.Host = "https://" + p.addr
	return cfg
}

// Kubeconfig writes the admin's kubeconfig through the proxy (context
// ContextName) into dir and returns its path.
func (p *Proxy) Kubeconfig(t testing.TB, c *Cluster, dir string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: "https://" + p.addr, CertificateAuthorityData: c.ca.certPEM}
	cfg.AuthInfos[adminUser] = &clientcmdapi.AuthInfo{ClientCertificateData: c.admin.CertData, ClientKeyData: c.admin.KeyData}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: adminUser}
	cfg.CurrentContext = ContextName
	path := filepath.Join(dir, "proxied.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// Down closes the proxy's port and every connection through it: new
// connections are refused until Up.
func (p *Proxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Up listens again on the same port. It fails the test if the port was
// taken meanwhile.
func (p *Proxy) Up(t testing.TB) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("kubetest: proxy up again on %s: %v", p.addr, err)
	}
	p.serve(ln)
}

func (p *Proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(in)
		}
	}()
}

// relay copies one connection both ways to the API server.
func (p *Proxy) relay(in net.Conn) {
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = in.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // went down meanwhile
		p.mu.Unlock()
		_, _ = in.Close(), out.Close()
		return
	}
	p.conns[in], p.conns[out] = true, true
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) { _, _ = io.Copy(dst, src); done <- struct{}{} }
	go pipe(out, in)
	go pipe(in, out)
	<-done
	_, _ = in.Close(), out.Close()
	p.mu.Lock()
	delete(p.conns, in)
	delete(p.conns, out)
	p.mu.Unlock()
}
