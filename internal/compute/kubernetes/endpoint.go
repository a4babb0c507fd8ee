package kubernetes

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/streaming/pkg/httpstream"

	"github.com/openclaw/occ/internal/compute"
)

// An Agent's endpoint out of the cluster is a listener on a loopback port of
// occ's host (its slot's, kept while the Agent runs) that carries each
// connection to the gateway Pod through a port-forward over the API server
// (a tunnel). The tunnel is dialled when needed and closed once no
// connection has used it for tunnelIdle: each holds a SPDY connection
// whose header compressor alone takes about 600 kB, so one kept open per
// running Agent made occ's memory grow with the fleet (docs/PERFORMANCE.md,
// "Agents on Kubernetes"). The port stays the same across tunnels and
// Pods, so an endpoint handed out earlier keeps working.
const tunnelIdle = 5 * time.Second

// tunnel is one port-forward connection to a gateway Pod: a SPDY
// connection (over a WebSocket, or plain where the API server has no
// WebSocket port-forward) on which each carried connection opens a pair of
// streams to the Pod's gateway port.
type tunnel struct {
	conn httpstream.Connection
	// port is the gateway's port in the Pod; ids numbers the stream pairs.
	port int
	ids  atomic.Int64
	// pod names the Pod and logger hears the failures the far side reports.
	pod    string
	logger *slog.Logger
}

func (t *tunnel) close() { t.conn.Close() }

// closed is closed once the tunnel's connection has ended.
func (t *tunnel) closed() <-chan bool { return t.conn.CloseChan() }

func (t *tunnel) alive() bool {
	select {
	case <-t.closed():
		return false
	default:
		return true
	}
}

// forwardKey names an Agent on an API server.
type forwardKey struct {
	host  string
	agent compute.AgentRef
}

// forwards are the Agents' endpoints in this process, shared by every
// driver instance on the same API server: a reopened driver (or a second
// one in the same occ) gives the same endpoint as the first. An endpoint
// ends when the Agent is stopped or deleted, or when the last driver that
// used it is closed. The map's lock is held only to find an Agent's slot;
// a slot's lock is held while its tunnel is dialled, so Agents never wait
// for each other.
var forwards = struct {
	sync.Mutex
	m map[forwardKey]*forwardSlot
}{m: map[forwardKey]*forwardSlot{}}

// forwardSlot is an Agent's endpoint.
type forwardSlot struct {
	mu sync.Mutex
	// ln is the endpoint's listener (nil: none) on port.
	ln   net.Listener
	port int
	// pod is the gateway Pod the tunnels reach and d the driver that last
	// asked for it (it dials them).
	pod *corev1.Pod
	d   *Driver
	// t is the tunnel, nil when none is open; active counts the
	// connections it carries, and idle closes it once unused (seq tells a
	// stale timer).
	t      *tunnel
	active int
	idle   *time.Timer
	seq    int
	// users are the driver instances that asked for the endpoint.
	users map[*Driver]bool
}

// slot returns the slot of key, making it the first time.
func slot(k forwardKey) *forwardSlot {
	forwards.Lock()
	defer forwards.Unlock()
	s := forwards.m[k]
	if s == nil {
		s = &forwardSlot{users: map[*Driver]bool{}}
		forwards.m[k] = s
	}
	return s
}

// shut closes the slot's tunnel and listener; s.mu is held.
func (s *forwardSlot) shut() {
	s.closeTunnel()
	if s.ln != nil {
		s.ln.Close()
		s.ln, s.port = nil, 0
	}
	s.pod, s.d = nil, nil
}

// closeTunnel closes the tunnel, if any; s.mu is held. Connections it
// carries end with it.
func (s *forwardSlot) closeTunnel() {
	if s.t != nil {
		s.t.close()
		s.t = nil
	}
	s.seq++
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
}

// tunnel returns a live tunnel to the slot's Pod, dialling one when none
// is open; s.mu is held.
func (s *forwardSlot) tunnel(ctx context.Context) (*tunnel, error) {
	if s.t != nil && s.t.alive() {
		return s.t, nil
	}
	s.closeTunnel()
	t, err := s.d.dialTunnel(ctx, s.pod)
	if err != nil {
		return nil, err
	}
	s.t = t
	s.armIdle()
	return t, nil
}

// armIdle (re)starts the idle timer of an unused tunnel; s.mu is held.
func (s *forwardSlot) armIdle() {
	if s.idle != nil {
		s.idle.Stop()
	}
	s.seq++
	seq := s.seq
	s.idle = time.AfterFunc(tunnelIdle, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.seq == seq && s.active == 0 {
			s.closeTunnel()
		}
	})
}

// serve accepts the endpoint's connections until ln is closed.
func (s *forwardSlot) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go s.carry(c)
	}
}

// tunnelDialTimeout bounds the dial of a tunnel for an accepted
// connection.
const tunnelDialTimeout = 30 * time.Second

// drainGrace bounds how long a connection stays open once one of its
// directions has ended: the other gets that long to deliver what it still
// has. Without a bound, a stream the far side never ends (a port-forward
// the kubelet refused after the client gave up, for one) would hold the
// tunnel open for good.
const drainGrace = 5 * time.Second

// carry copies one connection to the gateway through the tunnel (dialled
// again if it was closed for idleness) and back.
func (s *forwardSlot) carry(c net.Conn) {
	defer c.Close()
	s.mu.Lock()
	if s.pod == nil {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tunnelDialTimeout)
	t, err := s.tunnel(ctx)
	cancel()
	if err != nil {
		s.mu.Unlock()
		return
	}
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		if s.active == 0 && s.t == t {
			s.armIdle()
		}
		s.mu.Unlock()
	}()
	t.forward(c)
}

// forward carries c to the gateway port through a data stream of the
// tunnel, and back, as the port-forward protocol has it: the far side
// reports a failure on the pair's error stream, and such a failure ends the
// whole tunnel (as kubectl's port-forward does), to be dialled again.
func (t *tunnel) forward(c net.Conn) {
	h := http.Header{}
	h.Set(corev1.StreamType, corev1.StreamTypeError)
	h.Set(corev1.PortHeader, strconv.Itoa(t.port))
	h.Set(corev1.PortForwardRequestIDHeader, strconv.FormatInt(t.ids.Add(1), 10))
	failure, err := t.conn.CreateStream(h)
	if err != nil {
		return
	}
	failure.Close() // occ writes nothing on it
	h.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := t.conn.CreateStream(h)
	if err != nil {
		failure.Reset()
		t.conn.RemoveStreams(failure)
		return
	}
	defer t.conn.RemoveStreams(failure, data)
	reported := make(chan []byte, 1)
	go func() {
		msg, _ := io.ReadAll(failure)
		reported <- msg
	}()
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(data, c)
		data.Close() // no more from the client
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, data)
		if cw, ok := c.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	select {
	case <-done:
	case <-t.closed():
	}
	// One side finished: the other gets drainGrace to deliver what it
	// still has, then the far side as long to report a failure.
	grace := time.NewTimer(drainGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-t.closed():
	case <-grace.C:
	}
	data.Reset()
	grace.Reset(drainGrace)
	select {
	case msg := <-reported:
		if len(msg) > 0 {
			t.logger.Warn("gateway port-forward failed; it is dialled again for the next connection", "pod", t.pod, "error", string(msg))
			t.close()
		}
	case <-t.closed():
	case <-grace.C:
	}
	failure.Reset()
}

// forget ends the Agent's endpoint.
func (d *Driver) forget(a compute.AgentRef) {
	s := slot(forwardKey{d.o.Config.Host, a})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shut()
	clear(s.users)
}

// Close ends the endpoints only this driver used and its watch.
// Gateways keep running.
func (d *Driver) Close() error {
	d.stopWatch()
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
		if s.users[d] {
			delete(s.users, d)
			if len(s.users) == 0 {
				s.shut()
			} else if s.d == d {
				for u := range s.users {
					s.d = u
					break
				}
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
	return d.reachWith(ctx, a, pod, token)
}

// reachWith is reach with the Agent's token already read.
func (d *Driver) reachWith(ctx context.Context, a compute.AgentRef, pod *corev1.Pod, token string) (compute.Endpoint, error) {
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

// portForward returns the loopback port of the Agent's endpoint to the
// Pod's gateway port, opening the endpoint the first time and making sure
// a tunnel to this Pod is open (so that one that cannot be had is an error
// here, not a closed connection later).
func (d *Driver) portForward(ctx context.Context, a compute.AgentRef, pod *corev1.Pod) (int, error) {
	s := slot(forwardKey{d.o.Config.Host, a})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pod == nil || s.pod.UID != pod.UID {
		s.closeTunnel()
	}
	s.pod, s.d = pod, d
	if _, err := s.tunnel(ctx); err != nil {
		return 0, err
	}
	if s.t != nil && s.active == 0 {
		s.armIdle()
	}
	s.users[d] = true
	if s.ln == nil {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		s.ln, s.port = ln, ln.Addr().(*net.TCPAddr).Port
		go s.serve(ln)
	}
	return s.port, nil
}

// dialTunnel opens a port-forward connection to the Pod (dialer).
func (d *Driver) dialTunnel(ctx context.Context, pod *corev1.Pod) (*tunnel, error) {
	url := d.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	type dialed struct {
		conn     httpstream.Connection
		protocol string
		err      error
	}
	answer := make(chan dialed, 1)
	go func() {
		conn, protocol, err := d.dialer.dial(ctx, url)
		answer <- dialed{conn, protocol, err}
	}()
	select {
	case a := <-answer:
		if a.err != nil {
			return nil, fmt.Errorf("port-forward to pod %s/%s: %w", pod.Namespace, pod.Name, a.err)
		}
		if a.protocol != portforward.PortForwardProtocolV1Name {
			a.conn.Close()
			return nil, fmt.Errorf("port-forward to pod %s/%s: the API server answered protocol %q", pod.Namespace, pod.Name, a.protocol)
		}
		return &tunnel{conn: a.conn, port: d.o.GatewayPort, pod: pod.Namespace + "/" + pod.Name, logger: d.o.Logger}, nil
	case <-ctx.Done():
		go func() {
			if a := <-answer; a.conn != nil {
				a.conn.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
