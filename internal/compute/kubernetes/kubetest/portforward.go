package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

var portForwardResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}

// ForwardPodPort routes port-forwards to port of the fake Pod namespace/pod
// to target, an address such as a listener the test opened on 127.0.0.1: a
// client port-forwarding to that Pod through the API server (the
// pods/portforward subresource, as kubectl port-forward does) then talks to
// the test's process. It needs a cluster started WithNodes, and returns once
// a port-forward through the API server reaches target's relay.
//
// kwok serves the nodes' kubelet API and follows a kwok PortForward object
// named like the Pod, which this creates (or extends) and deletes when the
// test ends. The object points at a relay this package runs on loopback,
// which passes each connection on to target; the relay lets ForwardPodPort
// see kwok use the object without sending target a connection of its own.
//
// Reaching a fake Pod through the API server's pod proxy
// (/api/v1/namespaces/NS/pods/NAME:PORT/proxy) does not work: the API server
// dials the Pod's IP, which kwok invents and nothing answers.
func (c *Cluster) ForwardPodPort(t testing.TB, namespace, pod string, port int32, target string) {
	t.Helper()
	if err := c.forwardPodPort(t, namespace, pod, port, target); err != nil {
		t.Fatal(err)
	}
}

// errPodGone: the Pod was deleted before its port-forward worked (the
// stand-in kubelet's Pods come and go with rollouts).
var errPodGone = errors.New("kubetest: the Pod is gone")

// forwardPodPort is ForwardPodPort with its failure returned; a Pod deleted
// meanwhile is errPodGone.
func (c *Cluster) forwardPodPort(t testing.TB, namespace, pod string, port int32, target string) error {
	if len(c.nodes) == 0 {
		return errors.New("kubetest: ForwardPodPort needs a cluster started WithNodes")
	}
	if _, _, err := net.SplitHostPort(target); err != nil {
		return fmt.Errorf("kubetest: ForwardPodPort target %q: %w", target, err)
	}
	r, err := newRelay(target)
	if err != nil {
		return err
	}
	t.Cleanup(r.close)
	client, err := dynamic.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	api := client.Resource(portForwardResource).Namespace(namespace)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := addForward(ctx, api, namespace, pod, port, r.port()); err != nil {
		return err
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := api.Delete(ctx, pod, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubetest: delete PortForward %s/%s: %v", namespace, pod, err)
		}
	})
	// kwok learns of the object through a watch: until it has, a
	// port-forward finds no forward for the port.
	for {
		err := c.probePortForward(ctx, namespace, pod, port, r)
		if err == nil {
			r.relaying()
			return nil
		}
		if strings.Contains(err.Error(), fmt.Sprintf("pods %q not found", pod)) {
			return fmt.Errorf("%w: port-forward to %s/%s:%d: %v", errPodGone, namespace, pod, port, err)
		}
		if !strings.Contains(err.Error(), "no forward found") && !strings.Contains(err.Error(), "not found for port") {
			return fmt.Errorf("kubetest: port-forward to %s/%s:%d: %w", namespace, pod, port, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubetest: kwok did not use the PortForward for %s/%s:%d in time: %w", namespace, pod, port, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// addForward adds port -> 127.0.0.1:relayPort to the PortForward named like
// the Pod, creating it when there is none.
func addForward(ctx context.Context, api dynamic.ResourceInterface, namespace, pod string, port int32, relayPort int) error {
	forward := map[string]any{
		"ports":  []any{int64(port)},
		"target": map[string]any{"address": "127.0.0.1", "port": int64(relayPort)},
	}
	for {
		pf, err := api.Get(ctx, pod, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			pf = &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": portForwardResource.GroupVersion().String(),
				"kind":       "PortForward",
				"metadata":   map[string]any{"name": pod, "namespace": namespace},
				"spec":       map[string]any{"forwards": []any{forward}},
			}}
			_, err = api.Create(ctx, pf, metav1.CreateOptions{})
		case err == nil:
			forwards, _, _ := unstructured.NestedSlice(pf.Object, "spec", "forwards")
			if err = unstructured.SetNestedSlice(pf.Object, append(forwards, forward), "spec", "forwards"); err == nil {
				_, err = api.Update(ctx, pf, metav1.UpdateOptions{})
			}
		}
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("kubetest: PortForward %s/%s: %w", namespace, pod, err)
		}
		return nil
	}
}

// probePortForward opens one port-forward stream to namespace/pod:port
// through the API server and waits until kwok either reports an error (no
// forward for the port yet, or the relay refused) or connects to the relay.
func (c *Cluster) probePortForward(ctx context.Context, namespace, pod string, port int32, r *relay) error {
	transport, upgrader, err := spdy.RoundTripperFor(c.admin)
	if err != nil {
		return err
	}
	u, err := url.Parse(fmt.Sprintf("%s/api/v1/namespaces/%s/pods/%s/portforward", c.host, namespace, pod))
	if err != nil {
		return err
	}
	conn, _, err := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u).
		Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return err
	}
	defer conn.Close()
	headers := http.Header{}
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	headers.Set(corev1.PortHeader, strconv.Itoa(int(port)))
	headers.Set(corev1.PortForwardRequestIDHeader, "0")
	errorStream, err := conn.CreateStream(headers)
	if err != nil {
		return err
	}
	errorStream.Close() // the client never writes on it
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	if _, err := conn.CreateStream(headers); err != nil {
		return err
	}
	message := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(errorStream)
		message <- b
	}()
	select {
	case <-r.reached:
		return nil
	case b := <-message:
		if len(b) == 0 {
			return errors.New("the port-forward ended without reaching the relay")
		}
		return errors.New(string(b))
	case <-ctx.Done():
		return ctx.Err()
	}
}

// relay passes connections on loopback to target. Until relaying is called it
// is probing: it closes each connection at once and signals reached, so
// ForwardPodPort learns that kwok routes the port without target seeing it.
type relay struct {
	l       net.Listener
	target  string
	reached chan struct{} // receives one value per probe connection
	mu      sync.Mutex
	probing bool
	conns   map[net.Conn]struct{}
	done    sync.WaitGroup
}

func newRelay(target string) (*relay, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{l: l, target: target, reached: make(chan struct{}, 1), probing: true, conns: map[net.Conn]struct{}{}}
	r.done.Add(1)
	go r.serve()
	return r, nil
}

func (r *relay) port() int { return r.l.Addr().(*net.TCPAddr).Port }

func (r *relay) relaying() {
	r.mu.Lock()
	r.probing = false
	r.mu.Unlock()
}

func (r *relay) serve() {
	defer r.done.Done()
	for {
		conn, err := r.l.Accept()
		if err != nil {
			return
		}
		r.mu.Lock()
		probing := r.probing
		if !probing {
			r.conns[conn] = struct{}{}
		}
		r.mu.Unlock()
		if probing {
			conn.Close()
			select {
			case r.reached <- struct{}{}:
			default:
			}
			continue
		}
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			r.pipe(conn)
		}()
	}
}

// pipe copies between conn and a new connection to target until both ends close.
func (r *relay) pipe(conn net.Conn) {
	defer func() {
		r.mu.Lock()
		delete(r.conns, conn)
		r.mu.Unlock()
		conn.Close()
	}()
	up, err := net.Dial("tcp", r.target)
	if err != nil {
		return
	}
	r.mu.Lock()
	r.conns[up] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, up)
		r.mu.Unlock()
		up.Close()
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(up, conn)
		_ = up.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(conn, up)
	_ = conn.(*net.TCPConn).CloseWrite()
	wg.Wait()
}

// close stops accepting, ends the open connections and waits for them.
func (r *relay) close() {
	r.l.Close()
	r.mu.Lock()
	for conn := range r.conns {
		conn.Close()
	}
	r.mu.Unlock()
	r.done.Wait()
}
