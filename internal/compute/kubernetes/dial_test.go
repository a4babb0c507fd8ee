package kubernetes

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

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
