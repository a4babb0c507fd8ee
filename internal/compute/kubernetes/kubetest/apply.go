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
	"k8s.io/client-go/rest"
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

// Resources returns, for the client configuration cfg, the dynamic client
// of an object's resource (found through the API server's discovery);
// namespaced objects without a namespace are namespace's.
func Resources(cfg *rest.Config, namespace string) (func(o *unstructured.Unstructured) (dynamic.ResourceInterface, error), error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	return func(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			return nil, err
		}
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			return dyn.Resource(m.Resource), nil
		}
		ns := o.GetNamespace()
		if ns == "" {
			ns = namespace
		}
		return dyn.Resource(m.Resource).Namespace(ns), nil
	}, nil
}

// Apply applies every object of manifests as the admin, with server-side
// apply (field manager "kubetest") and strict field validation; namespaced
// objects without a namespace go to namespace.
func (c *Cluster) Apply(ctx context.Context, namespace, manifests string) error {
	objs, err := ParseManifests(manifests)
	if err != nil {
		return err
	}
	resource, err := Resources(c.admin, namespace)
	if err != nil {
		return err
	}
	for _, o := range objs {
		ri, err := resource(o)
		if err != nil {
			return err
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
