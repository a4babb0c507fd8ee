package kubernetes

import (
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	netv1ac "k8s.io/client-go/applyconfigurations/networking/v1"
)

// Pod Security Admission labels: restricted, enforced, audited and warned.
var psaLabels = map[string]string{
	"pod-security.kubernetes.io/enforce":         "restricted",
	"pod-security.kubernetes.io/enforce-version": "latest",
	"pod-security.kubernetes.io/audit":           "restricted",
	"pod-security.kubernetes.io/audit-version":   "latest",
	"pod-security.kubernetes.io/warn":            "restricted",
	"pod-security.kubernetes.io/warn-version":    "latest",
}

// privateRanges are the destinations the gateways' HTTPS egress excludes:
// the cluster, the nodes and link-local metadata services.
var privateRanges = []string{"10.0.0.0/8", "100.64.0.0/10", "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16"}

// privateRanges6 are their IPv6 counterparts.
var privateRanges6 = []string{"fc00::/7", "fe80::/10"}

// namespaceObject is the tenant namespace of an occ Namespace.
func namespaceObject(nsID string) *corev1ac.NamespaceApplyConfiguration {
	labels := namespaceLabels(nsID)
	for k, v := range psaLabels {
		labels[k] = v
	}
	return corev1ac.Namespace(NamespaceName(nsID)).WithLabels(labels).WithAnnotations(idAnnotations(labels))
}

// objectLabels are the labels and annotations of a namespace-level object.
func objectLabels(nsID string) (map[string]string, map[string]string) {
	l := namespaceLabels(nsID)
	l[LabelRole] = RoleNamespace
	return l, idAnnotations(l)
}

// quotaObject is the namespace's ResourceQuota.
func (d *Driver) quotaObject(nsID string) *corev1ac.ResourceQuotaApplyConfiguration {
	l, a := objectLabels(nsID)
	return corev1ac.ResourceQuota(QuotaName, NamespaceName(nsID)).WithLabels(l).WithAnnotations(a).
		WithSpec(corev1ac.ResourceQuotaSpec().WithHard(corev1.ResourceList{
			corev1.ResourcePods:         *resourceInt(int64(d.o.QuotaPods)),
			corev1.ResourceLimitsCPU:    d.q.quotaCPU,
			corev1.ResourceLimitsMemory: d.q.quotaMemory,
		}))
}

// limitRangeObject gives every container of the namespace default
// requests and limits.
func (d *Driver) limitRangeObject(nsID string) *corev1ac.LimitRangeApplyConfiguration {
	l, a := objectLabels(nsID)
	q := d.q.defaults
	return corev1ac.LimitRange(LimitRangeName, NamespaceName(nsID)).WithLabels(l).WithAnnotations(a).
		WithSpec(corev1ac.LimitRangeSpec().WithLimits(corev1ac.LimitRangeItem().
			WithType(corev1.LimitTypeContainer).
			WithDefaultRequest(corev1.ResourceList{corev1.ResourceCPU: q.reqCPU, corev1.ResourceMemory: q.reqMem}).
			WithDefault(corev1.ResourceList{corev1.ResourceCPU: q.limCPU, corev1.ResourceMemory: q.limMem})))
}

// policyObjects are the namespace's NetworkPolicies: deny all ingress and
// egress; allow DNS (UDP and TCP 53 and 5353) to anywhere; allow the
// gateways HTTPS (TCP 443) to anything outside the private ranges (the model
// providers); and, when gateway clients are configured, ingress to the
// gateways on the gateway port only from them.
func (d *Driver) policyObjects(nsID string) []*netv1ac.NetworkPolicyApplyConfiguration {
	l, a := objectLabels(nsID)
	ns := NamespaceName(nsID)
	policy := func(name string) *netv1ac.NetworkPolicyApplyConfiguration {
		return netv1ac.NetworkPolicy(name, ns).WithLabels(l).WithAnnotations(a)
	}
	gateways := metav1ac.LabelSelector().WithMatchLabels(map[string]string{LabelManagedBy: ManagedBy, LabelRole: RoleGateway})
	port := func(proto corev1.Protocol, n int) *netv1ac.NetworkPolicyPortApplyConfiguration {
		return netv1ac.NetworkPolicyPort().WithProtocol(proto).WithPort(intstr.FromInt32(int32(n)))
	}
	out := []*netv1ac.NetworkPolicyApplyConfiguration{
		policy(PolicyDenyAll).WithSpec(netv1ac.NetworkPolicySpec().WithPodSelector(metav1ac.LabelSelector()).
			WithPolicyTypes(networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress)),
		policy(PolicyAllowDNS).WithSpec(netv1ac.NetworkPolicySpec().WithPodSelector(metav1ac.LabelSelector()).
			WithPolicyTypes(networkingv1.PolicyTypeEgress).
			WithEgress(netv1ac.NetworkPolicyEgressRule().WithPorts(
				port(corev1.ProtocolUDP, 53), port(corev1.ProtocolTCP, 53), port(corev1.ProtocolUDP, 5353), port(corev1.ProtocolTCP, 5353)))),
		policy(PolicyGatewayEgress).WithSpec(netv1ac.NetworkPolicySpec().WithPodSelector(gateways).
			WithPolicyTypes(networkingv1.PolicyTypeEgress).
			WithEgress(netv1ac.NetworkPolicyEgressRule().WithPorts(port(corev1.ProtocolTCP, 443)).WithTo(
				netv1ac.NetworkPolicyPeer().WithIPBlock(netv1ac.IPBlock().WithCIDR("0.0.0.0/0").WithExcept(privateRanges...)),
				netv1ac.NetworkPolicyPeer().WithIPBlock(netv1ac.IPBlock().WithCIDR("::/0").WithExcept(privateRanges6...))))),
	}
	if c := d.o.GatewayClients; c.Namespace != "" {
		from := netv1ac.NetworkPolicyPeer().WithNamespaceSelector(metav1ac.LabelSelector().
			WithMatchLabels(map[string]string{corev1.LabelMetadataName: c.Namespace}))
		if len(c.PodLabels) > 0 {
			from = from.WithPodSelector(metav1ac.LabelSelector().WithMatchLabels(c.PodLabels))
		}
		out = append(out, policy(PolicyGatewayInput).WithSpec(netv1ac.NetworkPolicySpec().WithPodSelector(gateways).
			WithPolicyTypes(networkingv1.PolicyTypeIngress).
			WithIngress(netv1ac.NetworkPolicyIngressRule().WithFrom(from).WithPorts(port(corev1.ProtocolTCP, d.o.GatewayPort)))))
	}
	return out
}
