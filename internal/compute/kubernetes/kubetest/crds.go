package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

var crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

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
