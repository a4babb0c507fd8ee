package kubetest_test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"

	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// TestPortForwardReachesTheTestsProcess shows a client port-forwarding to a
// fake Pod through the API server (as the driver does when occ runs outside
// the cluster) reaching a server the test runs.
func TestPortForwardReachesTheTestsProcess(t *testing.T) {
	c, _, pod := startWithAgent(t, "gw")

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "gateway of %s", r.URL.Path)
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	c.ForwardPodPort(t, "gw", pod.Name, gatewayPort, l.Addr().String())

	// Port-forward through the API server, as kubectl port-forward does.
	transport, upgrader, err := spdy.RoundTripperFor(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(c.Host() + fmt.Sprintf("/api/v1/namespaces/gw/pods/%s/portforward", pod.Name))
	if err != nil {
		t.Fatal(err)
	}
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	stop, readyCh := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", gatewayPort)}, stop, readyCh, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- fw.ForwardPorts() }()
	t.Cleanup(func() { close(stop); <-done })
	select {
	case <-readyCh:
	case err := <-done:
		t.Fatalf("port-forward ended: %v", err)
	}
	ports, err := fw.GetPorts()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", ports[0].Local))
	if err != nil {
		t.Fatalf("GET through the port-forward: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || string(body) != "gateway of /healthz" {
		t.Fatalf("GET through the port-forward answered %d %q, want 200 from the test's server", resp.StatusCode, body)
	}
}
