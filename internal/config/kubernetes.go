package config

import (
	"regexp"
	"strings"
	"time"
)

// The values of compute.kubernetes.endpointAccess.
const (
	KubernetesEndpointPortForward = "portForward"
	KubernetesEndpointService     = "service"
)

var (
	endpointAccesses = []string{KubernetesEndpointPortForward, KubernetesEndpointService}
	// quantity is the subset of Kubernetes quantities the settings accept:
	// a plain decimal with an optional binary or decimal suffix.
	quantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$`)
	// imageDigest ends an image reference pinned by digest.
	imageDigest = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)
	// labelKey and labelValue are Kubernetes label syntax (without the
	// optional DNS prefix of a key, which occ's peers do not need).
	labelKey   = regexp.MustCompile(`^([a-z0-9.-]{1,253}/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$`)
	labelValue = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?)?$`)
)

// PodLabelMap parses PodLabels (key=value items) into a map; Validate has
// checked every item.
func (p KubernetesPeer) PodLabelMap() map[string]string {
	m := map[string]string{}
	for _, item := range p.PodLabels {
		k, v, _ := strings.Cut(item, "=")
		m[k] = v
	}
	return m
}

// kubernetes checks compute.kubernetes; the connection settings are
// required only when the kubernetes driver is selected, every other value
// always (the defaults are valid).
func (v *validator) kubernetes(k KubernetesCompute, selected bool) {
	const p = "compute.kubernetes."
	if selected {
		switch {
		case k.InCluster && (k.Kubeconfig != "" || k.Context != ""):
			v.add(p+"inCluster", "set either inCluster or kubeconfig with context, not both")
		case !k.InCluster && k.Kubeconfig == "":
			v.add(p+"kubeconfig", "required (with compute.kubernetes.context) unless compute.kubernetes.inCluster is true; occ never falls back to an ambient kubeconfig")
		case !k.InCluster && k.Context == "":
			v.add(p+"context", "required with compute.kubernetes.kubeconfig")
		}
		if v.required(p+"images.gateway", k.Images.Gateway) && k.Images.RequireImmutableDigest && !imageDigest.MatchString(k.Images.Gateway) {
			v.add(p+"images.gateway", "%q is not pinned by a lowercase @sha256: digest (compute.kubernetes.images.requireImmutableDigest is true)", k.Images.Gateway)
		}
		if k.EndpointAccess == KubernetesEndpointService && k.GatewayClients.Namespace == "" {
			v.add(p+"gatewayClients.namespace", "required with endpointAccess service: the gateway-ingress NetworkPolicy admits only occ's Pods")
		}
	}
	if k.Images.Gateway != "" && strings.ContainsAny(k.Images.Gateway, " \t\n") {
		v.add(p+"images.gateway", "%q is not an image reference", k.Images.Gateway)
	}
	v.durationRange(p+"requestTimeout", k.RequestTimeout, time.Second, 2*time.Minute)
	v.oneOf(p+"endpointAccess", k.EndpointAccess, endpointAccesses)
	v.intRange(p+"gatewayPort", int64(k.GatewayPort), 1024, 65535)
	if k.GatewayStorageClassName != "" && !dnsSubdomain(k.GatewayStorageClassName) {
		v.add(p+"gatewayStorageClassName", "%q is not a StorageClass name", k.GatewayStorageClassName)
	}
	v.quantity(p+"gatewayStateSize", k.GatewayStateSize)
	v.resourceSpec(p+"resources.gateway.", k.Resources.Gateway)
	v.resourceSpec(p+"resources.harness.", k.Resources.Harness)
	v.resourceSpec(p+"resources.containerDefaults.", k.Resources.ContainerDefaults)
	v.intRange(p+"resources.quotaPods", int64(k.Resources.QuotaPods), 1, 10000)
	v.quantity(p+"resources.quotaCPU", k.Resources.QuotaCPU)
	v.quantity(p+"resources.quotaMemory", k.Resources.QuotaMemory)
	if n := k.GatewayClients.Namespace; n != "" && !dnsLabel.MatchString(n) {
		v.add(p+"gatewayClients.namespace", "%q is not a namespace name", n)
	}
	for _, item := range k.GatewayClients.PodLabels {
		key, val, ok := strings.Cut(item, "=")
		if !ok || !labelKey.MatchString(key) || !labelValue.MatchString(val) {
			v.add(p+"gatewayClients.podLabels", "%q is not a label key=value", item)
		}
	}
}

func (v *validator) resourceSpec(prefix string, r KubernetesResourceSpec) {
	v.quantity(prefix+"requestsCPU", r.RequestsCPU)
	v.quantity(prefix+"requestsMemory", r.RequestsMemory)
	v.quantity(prefix+"limitsCPU", r.LimitsCPU)
	v.quantity(prefix+"limitsMemory", r.LimitsMemory)
}

func (v *validator) quantity(key, s string) {
	if !quantity.MatchString(s) {
		v.add(key, "%q is not a Kubernetes quantity such as 500m, 2 or 3Gi", s)
	}
}

// dnsSubdomain reports whether s is a Kubernetes object name (RFC 1123
// subdomain).
func dnsSubdomain(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !dnsLabel.MatchString(l) {
			return false
		}
	}
	return true
}
