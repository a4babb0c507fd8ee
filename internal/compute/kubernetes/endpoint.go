package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/openclaw/occ/internal/compute"
)

// forward is one port-forward to an Agent's gateway Pod, on a loopback port
// of occ's host.
type forward struct {
	podUID string
	port   int
	stop   chan struct{}
	done   chan struct{}
	// users are the driver instances that asked for it.
	users map[*Driver]bool
}

// forwardKey names an Agent on an API server.
type forwardKey struct {
	host  string
	agent compute.AgentRef
}

// forwards are the port-forwards of this process, shared by every driver
// instance on the same API server: a reopened driver (or a second one in
// the same occ) gives the same endpoint as the first, and one Pod gets one
// forward. A forward ends when its Pod is replaced, when the Agent is
// stopped or deleted, or when the last driver that used it is closed. The
// map's lock is held only to find an Agent's slot; a slot's lock is held
// while its forward is dialled, so Agents never wait for each other.
var forwards = struct {
	sync.Mutex
	m map[forwardKey]*forwardSlot
}{m: map[forwardKey]*forwardSlot{}}

// forwardSlot holds an Agent's forward, if any.
type forwardSlot struct {
	mu sync.Mutex
	f  *forward
}

// slot returns the slot of key, making it the first time.
func slot(k forwardKey) *forwardSlot {
	forwards.Lock()
	defer forwards.Unlock()
	s := forwards.m[k]
	if s == nil {
		s = &forwardSlot{}
		forwards.m[k] = s
	}
	return s
}

func (f *forward) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
}

func (f *forward) alive() bool {
	select {
	case <-f.done:
		return false
	default:
		return true
	}
}

// forget ends the Agent's port-forward.
func (d *Driver) forget(a compute.AgentRef) {
	s := slot(forwardKey{d.o.Config.Host, a})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		s.f.close()
		s.f = nil
	}
}

// Close ends the port-forwards only this driver used. Gateways keep
// running.
func (d *Driver) Close() error {
	forwards.Lock()
	slots := make([]*forwardSlot, 0, len(forwards.m))
	for k, s := range forwards.m {
		if k.host == d.o.Config.Host {
			slots = append(slots, s)
		}
	}
	forwards.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		if f := s.f; f != nil {
			delete(f.users, d)
			if len(f.users) == 0 {
				f.close()
				s.f = nil
			}
		}
		s.mu.Unlock()
	}
	return nil
}

// httpURL turns the gateway's ws:// URL into its http:// base.
func httpURL(ws string) string { return "http://" + strings.TrimPrefix(ws, "ws://") }

// GatewayEndpoint returns the endpoint of the Agent's running gateway: a
// Ready Pod of the revision its Deployment runs, reached through a
// port-forward or the Service, with the Agent's token.
func (d *Driver) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	if a.Validate() != nil {
		return compute.Endpoint{}, false
	}
	dep, err := d.deployment(ctx, a)
	if err != nil || dep == nil {
		return compute.Endpoint{}, false
	}
	rev := dep.Annotations[AnnotationRevisionID]
	if !runs(dep, rev) {
		return compute.Endpoint{}, false
	}
	pods, err := d.pods(ctx, a, rev)
	if err != nil {
		return compute.Endpoint{}, false
	}
	pod := live(pods)
	if pod == nil || podState(pod) != podReady {
		return compute.Endpoint{}, false
	}
	ep, err := d.reach(ctx, a, pod)
	if err != nil {
		return compute.Endpoint{}, false
	}
	ep.RevisionID = rev
	return ep, true
}

// reach returns the URL and token of a Ready gateway Pod of the Agent.
func (d *Driver) reach(ctx context.Context, a compute.AgentRef, pod *corev1.Pod) (compute.Endpoint, error) {
	token, err := d.transportToken(ctx, a, false)
	if err != nil {
		return compute.Endpoint{}, err
	}
	if d.o.EndpointAccess == EndpointService {
		host := GatewayName(a.AgentID) + "." + NamespaceName(a.NamespaceID) + ".svc:" + strconv.Itoa(d.o.GatewayPort)
		return compute.Endpoint{URL: "ws://" + host, Token: token}, nil
	}
	port, err := d.portForward(ctx, a, pod)
	if err != nil {
		return compute.Endpoint{}, err
	}
	return compute.Endpoint{URL: "ws://127.0.0.1:" + strconv.Itoa(port), Token: token}, nil
}

// portForward returns the loopback port of a port-forward to the Pod's
// gateway port, starting one (WebSocket, or SPDY where the API server has
// no WebSocket port-forward) when none runs to this Pod.
func (d *Driver) portForward(ctx context.Context, a compute.AgentRef, pod *corev1.Pod) (int, error) {
	s := slot(forwardKey{d.o.Config.Host, a})
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.f; f != nil {
		if f.podUID == string(pod.UID) && f.alive() {
			f.users[d] = true
			return f.port, nil
		}
		f.close()
		s.f = nil
	}
	f, err := d.dialForward(ctx, pod)
	if err != nil {
		return 0, err
	}
	s.f = f
	return f.port, nil
}

// dialForward starts a port-forward to the Pod's gateway port on a free
// loopback port.
func (d *Driver) dialForward(ctx context.Context, pod *corev1.Pod) (*forward, error) {
	url := d.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	rt, upgrader, err := spdy.RoundTripperFor(d.o.Config)
	if err != nil {
		return nil, err
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: rt}, http.MethodPost, url)
	wsDialer, err := portforward.NewSPDYOverWebsocketDialer(url, d.o.Config)
	if err != nil {
		return nil, err
	}
	dialer := portforward.NewFallbackDialer(wsDialer, spdyDialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	f := &forward{podUID: string(pod.UID), stop: make(chan struct{}), done: make(chan struct{}), users: map[*Driver]bool{d: true}}
	ready := make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{"0:" + strconv.Itoa(d.o.GatewayPort)}, f.stop, ready, io.Discard, io.Discard)
	if err != nil {
		return nil, err
	}
	errc := make(chan error, 1)
	go func() {
		defer close(f.done)
		errc <- pf.ForwardPorts()
	}()
	select {
	case <-ready:
	case err := <-errc:
		if err == nil {
			err = errors.New("port-forward ended")
		}
		return nil, fmt.Errorf("port-forward to pod %s/%s: %w", pod.Namespace, pod.Name, err)
	case <-ctx.Done():
		f.close()
		return nil, ctx.Err()
	}
	ports, err := pf.GetPorts()
	if err != nil || len(ports) != 1 {
		f.close()
		return nil, fmt.Errorf("port-forward to pod %s/%s: no local port: %v", pod.Namespace, pod.Name, err)
	}
	f.port = int(ports[0].Local)
	return f, nil
}
