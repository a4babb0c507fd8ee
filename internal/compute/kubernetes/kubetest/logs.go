package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var logsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

// ServePodLogs makes the Pod's container logs (the pods/log subresource,
// as kubectl logs reads them) answer from file, a container log in the
// kubelet's CRI format (CRILog writes one). kwok serves the nodes' logs
// and follows a kwok Logs object named like the Pod, which this creates
// and deletes when the test ends. It needs a cluster started WithNodes.
func (c *Cluster) ServePodLogs(t testing.TB, namespace, pod, container, file string) error {
	client, err := dynamic.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	api := client.Resource(logsResource).Namespace(namespace)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Logs",
		"metadata":   map[string]any{"name": pod, "namespace": namespace},
		"spec": map[string]any{"logs": []any{
			map[string]any{"containers": []any{container}, "logsFile": file},
		}},
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := api.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("kubetest: create Logs %s/%s: %w", namespace, pod, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := api.Delete(ctx, pod, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubetest: delete Logs %s/%s: %v", namespace, pod, err)
		}
	})
	return nil
}

// CRILog returns writers for a process's stdout and stderr that write
// each whole line to w as a kubelet's container log does ("<time> <stream>
// F <line>"), the format kwok reads back (ServePodLogs).
func CRILog(w io.Writer) (stdout, stderr io.Writer) {
	mu := new(sync.Mutex)
	return &criStream{mu: mu, w: w, stream: "stdout"}, &criStream{mu: mu, w: w, stream: "stderr"}
}

type criStream struct {
	mu      *sync.Mutex
	w       io.Writer
	stream  string
	partial []byte
}

func (s *criStream) Write(p []byte) (int, error) {
	s.partial = append(s.partial, p...)
	for {
		i := bytes.IndexByte(s.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		s.mu.Lock()
		_, err := fmt.Fprintf(s.w, "%s %s F %s\n", time.Now().UTC().Format(time.RFC3339Nano), s.stream, s.partial[:i])
		s.mu.Unlock()
		s.partial = s.partial[i+1:]
		if err != nil {
			return len(p), err
		}
	}
}
