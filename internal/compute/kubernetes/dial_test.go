package kubernetes

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"
)

// TestDialFallsBackToSPDY: an API server that refuses the WebSocket
// upgrade gets the port-forward as SPDY (an upgraded POST), with the
// port-forward protocol; the driver's credentials go with both attempts.
func TestDialFallsBackToSPDY(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Upgrade")+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Upgrade") == "websocket" {
			http.Error(w, "no WebSocket here", http.StatusBadRequest)
			return
		}
		if _, err := httpstream.Handshake(r, w, []string{portforward.PortForwardProtocolV1Name}); err != nil {
			return
		}
		if c := spdy.NewResponseUpgrader().UpgradeResponse(w, r, httpstream.NoOpNewStreamHandler); c != nil {
			<-c.CloseChan()
		}
	}))
	t.Cleanup(srv.Close)
	cfg := &rest.Config{Host: srv.URL, BearerToken: "token-1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	d, err := newDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL + "/api/v1/namespaces/ns/pods/gw/portforward")
	conn, protocol, err := d.dial(context.Background(), u)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	if protocol != portforward.PortForwardProtocolV1Name {
		t.Errorf("protocol %q, want %q", protocol, portforward.PortForwardProtocolV1Name)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GET websocket Bearer token-1", "POST SPDY/3.1 Bearer token-1"}
	if len(seen) != 2 || seen[0] != want[0] || seen[1] != want[1] {
		t.Errorf("the API server saw %q, want %q", seen, want)
	}
}

// TestDialReadsRotatedClientCertificates: a client certificate configured
// as files is read again for each dial, so one rotated there is the one
// the next port-forward presents (no TLS session of the old one resumed).
func TestDialReadsRotatedClientCertificates(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var names []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") == "websocket" && len(r.TLS.PeerCertificates) > 0 {
			mu.Lock()
			names = append(names, r.TLS.PeerCertificates[0].Subject.CommonName)
			mu.Unlock()
		}
		http.Error(w, "no port-forward here", http.StatusBadRequest)
	}))
	srv.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	cfg := &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true, CertFile: certFile, KeyFile: keyFile}}
	u, _ := url.Parse(srv.URL + "/api/v1/namespaces/ns/pods/gw/portforward")
	var d *dialer
	for _, name := range []string{"first", "rotated"} {
		writeClientCert(t, name, certFile, keyFile)
		if d == nil {
			var err error
			if d, err = newDialer(cfg); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := d.dial(context.Background(), u); err == nil {
			t.Fatal("a server without port-forward accepted the dial")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"first", "rotated"}; !slices.Equal(names, want) {
		t.Errorf("the WebSocket dials presented %q, want %q", names, want)
	}
}

// writeClientCert writes a self-signed client certificate named cn and its
// key to the two files.
func writeClientCert(t *testing.T, cn, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
}
