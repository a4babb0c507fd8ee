package kubernetes

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// EndpointContainerName is the gateway Pod's endpoint relay container
// (endpointAccess service).
const EndpointContainerName = "gateway-endpoint"

// podIPEnv is the endpoint relay's environment variable holding the Pod's
// address (the downward API's status.podIP).
const podIPEnv = "POD_IP"

// The OpenClaw gateway grants occ's backend path (operator scopes with the
// shared token, no paired device) only to a client that connects to it
// directly on loopback (reference/openclaw-runtime.md §2.1): a connection
// from another Pod gets no scope at all. So the gateway always listens on
// loopback, and with endpointAccess service a second container of its Pod
// relays TCP from the Pod's own address, on the gateway port, to the
// gateway on loopback, byte for byte. The gateway then sees occ as the
// direct loopback client it sees through a port-forward. Who may reach
// the relay is what the gateway-ingress NetworkPolicy admits (occ's
// Pods), and every connection still needs the gateway's token.

// endpointRelayScript is the relay, run by the gateway image's Node.js:
// it listens on the Pod's address (the gateway holds the port on
// loopback) and joins each connection to the gateway's.
func endpointRelayScript(port int) string {
	p := strconv.Itoa(port)
	return "const net=require('net');" +
		"net.createServer(c=>{const g=net.connect(" + p + ",'127.0.0.1');" +
		"const end=()=>{c.destroy();g.destroy()};" +
		"c.on('error',end).on('close',end);g.on('error',end).on('close',end);" +
		"c.pipe(g).pipe(c)}).listen(" + p + ",process.env." + podIPEnv + ")"
}

// endpointRelayContainer is the relay's container: the gateway image's
// Node.js, restricted like the gateway, with small fixed resources.
func (d *Driver) endpointRelayContainer() *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().WithName(EndpointContainerName).WithImage(d.o.GatewayImage).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithCommand("node", "-e", endpointRelayScript(d.o.GatewayPort)).
		WithEnv(corev1ac.EnvVar().WithName(podIPEnv).WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("status.podIP")))).
		WithPorts(corev1ac.ContainerPort().WithName("gateway").WithContainerPort(int32(d.o.GatewayPort)).WithProtocol(corev1.ProtocolTCP)).
		WithResources(corev1ac.ResourceRequirements().
			WithRequests(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")}).
			WithLimits(corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")})).
		WithSecurityContext(restricted())
}
