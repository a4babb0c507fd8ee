package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// ParseManifests returns the objects of a multi-document YAML stream (what
// `helm template` prints), leaving out empty documents.
func ParseManifests(manifests string) ([]*unstructured.Unstructured, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifests)))
	var objs []*unstructured.Unstructured
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		j, err := utilyaml.ToJSON(doc)
		if err != nil {
			return nil, err
		}
		if string(bytes.TrimSpace(j)) == "null" {
			continue
		}
		o := &unstructured.Unstructured{}
		if err := o.UnmarshalJSON(j); err != nil {
			return nil, fmt.Errorf("%w\n%s", err, doc)
		}
		objs = append(objs, o)
	}
}

// Apply applies every object of manifests as the admin, with server-side
// apply (field manager "kubetest") and strict field validation; namespaced
// objects without a namespace go to namespace.
func (c *Cluster) Apply(ctx context.Context, namespace, manifests string) error {
	objs, err := ParseManifests(manifests)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(c.admin)
	if err != nil {
		return err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(m.Resource)
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			ns := o.GetNamespace()
			if ns == "" {
				ns = namespace
			}
			ri = dyn.Resource(m.Resource).Namespace(ns)
		}
		body, err := o.MarshalJSON()
		if err != nil {
			return err
		}
		force := true
		if _, err := ri.Patch(ctx, o.GetName(), types.ApplyPatchType, body, metav1.PatchOptions{
			FieldManager: "kubetest", Force: &force, FieldValidation: metav1.FieldValidationStrict}); err != nil {
			return fmt.Errorf("kubetest: apply %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}
