package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

var (
	crdResource         = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	portForwardResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "portforwards"}
)

// installCRDs creates the CustomResourceDefinitions of kwok-crds.yaml (kwok's
// PortForward) and waits until the API server serves them.
func (c *Cluster) installCRDs(ctx context.Context, apiserver *process) error {
	client, err := dynamic.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(c.asset("kwok-crds.yaml"))
	if err != nil {
		return err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		var obj unstructured.Unstructured
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("kubetest: %s: %w", c.asset("kwok-crds.yaml"), err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		crds := client.Resource(crdResource)
		if _, err := crds.Create(ctx, &obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("kubetest: create CRD %s: %w", obj.GetName(), err)
		}
		if err := apiserver.waitFor(ctx, "serving CRD "+obj.GetName(), func(ctx context.Context) error {
			got, err := crds.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return errNotReady
		}); err != nil {
			return err
		}
	}
}

// ForwardPodPort routes port-forwards to port of the fake Pod namespace/pod
// to target, an address such as a listener the test opened on 127.0.0.1: a
// client port-forwarding to that Pod through the API server (the
// pods/portforward subresource, as kubectl port-forward does) then talks to
// the test's process. kwok serves the nodes' kubelet API and follows a kwok
// PortForward object named like the Pod, which this creates (or extends) and
// deletes when the test ends. It needs a cluster started WithNodes.
//
// Reaching a fake Pod through the API server's pod proxy
// (/api/v1/namespaces/NS/pods/NAME:PORT/proxy) does not work: the API server
// dials the Pod's IP, which kwok invents and nothing answers.
func (c *Cluster) ForwardPodPort(t testing.TB, namespace, pod string, port int32, target string) {
	t.Helper()
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		t.Fatalf("kubetest: ForwardPodPort target %q: %v", target, err)
	}
	targetPort, err := strconv.ParseInt(portText, 10, 32)
	if err != nil {
		t.Fatalf("kubetest: ForwardPodPort target %q: %v", target, err)
	}
	if len(c.nodes) == 0 {
		t.Fatal("kubetest: ForwardPodPort needs a cluster started WithNodes")
	}
	client, err := dynamic.NewForConfig(c.admin)
	if err != nil {
		t.Fatal(err)
	}
	api := client.Resource(portForwardResource).Namespace(namespace)
	forward := map[string]any{
		"ports":  []any{int64(port)},
		"target": map[string]any{"address": host, "port": targetPort},
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
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
			t.Fatalf("kubetest: PortForward %s/%s: %v", namespace, pod, err)
		}
		break
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := api.Delete(ctx, pod, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("kubetest: delete PortForward %s/%s: %v", namespace, pod, err)
		}
	})
}
