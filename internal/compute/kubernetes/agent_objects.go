package kubernetes

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Where things are in the gateway container. The state volume is mounted
// whole at DataDir; the configuration ConfigMap read-only at ConfigDir.
const (
	DataDir      = "/var/lib/openclaw"
	ConfigDir    = "/etc/openclaw"
	StateDir     = DataDir + "/state"
	WorkspaceDir = DataDir + "/workspace"
	LogFile      = DataDir + "/logs/gateway.log"
	HomeDir      = DataDir + "/home"
	ConfigPath   = ConfigDir + "/" + gateway.ConfigFileName
	// GatewayUID is the user and group the gateway runs as (the image's
	// non-root "node" user).
	GatewayUID = 1000
	// TokenKey is the transport Secret's key holding the gateway token.
	TokenKey = "gateway-token"
	// ContainerName is the gateway container's name.
	ContainerName = "gateway"
)

// withIDs returns the labels and ID annotations of an object.
func withIDs(labels map[string]string) (map[string]string, map[string]string) {
	return labels, idAnnotations(labels)
}

// serviceAccountObject is the gateway's ServiceAccount: no API token is
// mounted into its Pods.
func serviceAccountObject(a compute.AgentRef) *corev1ac.ServiceAccountApplyConfiguration {
	l, an := withIDs(agentLabels(a, RoleGateway))
	return corev1ac.ServiceAccount(GatewayName(a.AgentID), NamespaceName(a.NamespaceID)).
		WithLabels(l).WithAnnotations(an).WithAutomountServiceAccountToken(false)
}

// stateClaimObject is the gateway state volume.
func (d *Driver) stateClaimObject(a compute.AgentRef) *corev1ac.PersistentVolumeClaimApplyConfiguration {
	l, an := withIDs(agentLabels(a, RoleState))
	spec := corev1ac.PersistentVolumeClaimSpec().WithAccessModes(corev1.ReadWriteOnce).
		WithResources(corev1ac.VolumeResourceRequirements().WithRequests(corev1.ResourceList{corev1.ResourceStorage: d.q.stateSize}))
	if d.o.StorageClassName != "" {
		spec = spec.WithStorageClassName(d.o.StorageClassName)
	}
	return corev1ac.PersistentVolumeClaim(StateClaimName(a.AgentID), NamespaceName(a.NamespaceID)).
		WithLabels(l).WithAnnotations(an).WithSpec(spec)
}

// transportSecretObject holds the gateway token, created once.
func transportSecretObject(a compute.AgentRef, token string) *corev1ac.SecretApplyConfiguration {
	l, an := withIDs(agentLabels(a, RoleTransport))
	return corev1ac.Secret(TransportSecretName(a.AgentID), NamespaceName(a.NamespaceID)).
		WithLabels(l).WithAnnotations(an).WithType(corev1.SecretTypeOpaque).
		WithData(map[string][]byte{TokenKey: []byte(token)})
}

// configMapObject is a revision's immutable openclaw.json.
func configMapObject(rev compute.RevisionRef, rendered []byte) *corev1ac.ConfigMapApplyConfiguration {
	l, an := withIDs(revisionLabels(rev, RoleConfig))
	return corev1ac.ConfigMap(ConfigMapName(rev), NamespaceName(rev.NamespaceID)).
		WithLabels(l).WithAnnotations(an).WithImmutable(true).
		WithData(map[string]string{gateway.ConfigFileName: string(rendered)})
}

// envSecretObject holds a revision's secret environment, and a dedicated
// revision's harness credential and app-server token (harnessSecretData).
func envSecretObject(rev compute.RevisionRef, env, harness map[string]string) *corev1ac.SecretApplyConfiguration {
	l, an := withIDs(revisionLabels(rev, RoleEnv))
	data := map[string][]byte{}
	for _, m := range []map[string]string{env, harness} {
		for k, v := range m {
			data[k] = []byte(v)
		}
	}
	return corev1ac.Secret(EnvSecretName(rev), NamespaceName(rev.NamespaceID)).
		WithLabels(l).WithAnnotations(an).WithType(corev1.SecretTypeOpaque).WithData(data)
}

// serviceObject is the gateway's ClusterIP Service.
func (d *Driver) serviceObject(a compute.AgentRef) *corev1ac.ServiceApplyConfiguration {
	l, an := withIDs(agentLabels(a, RoleGateway))
	return corev1ac.Service(GatewayName(a.AgentID), NamespaceName(a.NamespaceID)).
		WithLabels(l).WithAnnotations(an).
		WithSpec(corev1ac.ServiceSpec().WithType(corev1.ServiceTypeClusterIP).WithSelector(gatewaySelector(a)).
			WithPorts(corev1ac.ServicePort().WithName("gateway").WithProtocol(corev1.ProtocolTCP).
				WithPort(int32(d.o.GatewayPort)).WithTargetPort(intstr.FromInt32(int32(d.o.GatewayPort)))))
}

// gatewaySelector selects an Agent's gateway Pods, whatever their
// revision.
func gatewaySelector(a compute.AgentRef) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelAgent: a.AgentID, LabelRole: RoleGateway}
}

// readyProbe is a container's readiness probe: its /readyz on loopback,
// asked by a new Node.js process. Starting one takes seconds on a busy
// node, so it is asked every 10 s with 10 s to answer, and three failures
// in a row make the Pod not ready (with 5 s and 3 s, a loaded node's
// gateway flapped between ready and not ready, and its live workspace
// files answered 503 meanwhile).
func readyProbe(port int) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().WithPeriodSeconds(10).WithTimeoutSeconds(10).WithFailureThreshold(3).
		WithExec(corev1ac.ExecAction().WithCommand("node", "-e", readyProbeScript(port)))
}

// readyProbeScript asks the gateway's own /readyz on loopback (the gateway
// may listen on loopback only, where a kubelet HTTP probe cannot reach).
func readyProbeScript(port int) string {
	return "fetch('http://127.0.0.1:" + strconv.Itoa(port) + "/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
}

// deploymentObject is the Agent's gateway Deployment running the revision:
// one replica (none when stopped), Recreate, restricted security context,
// the configuration from the revision's ConfigMap and every secret from a
// Secret through secretKeyRef. A dedicated revision (plan set) adds the
// codex plugin's install and the Codex harness as init containers
// (harness.go) and gives the gateway the app-server's token. The gateway
// listens on loopback only; with endpointAccess service its Pod also runs
// the endpoint relay (endpoint_relay.go), which the Service targets.
func (d *Driver) deploymentObject(spec compute.RevisionSpec, plan *HarnessPlan, replicas int32) *appsv1ac.DeploymentApplyConfiguration {
	rev := spec.RevisionRef
	l, an := withIDs(agentLabels(rev.AgentRef, RoleGateway))
	an[AnnotationRevisionID] = rev.RevisionID
	pl, pan := withIDs(revisionLabels(rev, RoleGateway))

	var env []*corev1ac.EnvVarApplyConfiguration
	for _, kv := range gateway.LaunchEnv(gateway.LaunchInput{Home: HomeDir, ConfigPath: ConfigPath, StateDir: StateDir,
		SkipChannels: !compute.WantsChannels(spec.Document), ConfigReadOnly: true}) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, corev1ac.EnvVar().WithName(k).WithValue(v))
	}
	env = append(env, secretRef("OPENCLAW_GATEWAY_TOKEN", TransportSecretName(rev.AgentID), TokenKey))
	for _, k := range compute.SecretEnvNames(spec.Env) {
		env = append(env, secretRef(k, EnvSecretName(rev), k))
	}
	if plan != nil {
		env = append(env, secretRef(gateway.CodexTokenEnv, EnvSecretName(rev), appServerTokenKey))
	}
	container := corev1ac.Container().WithName(ContainerName).WithImage(d.o.GatewayImage).
		WithImagePullPolicy(corev1.PullIfNotPresent).
		WithArgs(gateway.LaunchArgs(d.o.GatewayPort)...).
		WithEnv(env...).
		WithResources(d.resources(d.q.gateway)).
		WithVolumeMounts(
			corev1ac.VolumeMount().WithName("config").WithMountPath(ConfigDir).WithReadOnly(true),
			corev1ac.VolumeMount().WithName("state").WithMountPath(DataDir),
			corev1ac.VolumeMount().WithName("tmp").WithMountPath("/tmp")).
		WithReadinessProbe(readyProbe(d.o.GatewayPort)).
		WithSecurityContext(restricted())
	volumes := []*corev1ac.VolumeApplyConfiguration{
		corev1ac.Volume().WithName("config").WithConfigMap(corev1ac.ConfigMapVolumeSource().WithName(ConfigMapName(rev))),
		corev1ac.Volume().WithName("state").WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(StateClaimName(rev.AgentID))),
		corev1ac.Volume().WithName("tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
	}
	pod := corev1ac.PodSpec()
	if plan != nil {
		pod = pod.WithInitContainers(d.pluginContainer(), d.harnessContainer(spec, *plan))
		volumes = append(volumes,
			corev1ac.Volume().WithName("codex").WithEmptyDir(corev1ac.EmptyDirVolumeSource()),
			corev1ac.Volume().WithName("harness-tmp").WithEmptyDir(corev1ac.EmptyDirVolumeSource()))
	}
	pod = pod.
		WithServiceAccountName(GatewayName(rev.AgentID)).
		WithAutomountServiceAccountToken(false).
		WithEnableServiceLinks(false).
		WithTerminationGracePeriodSeconds(30).
		WithSecurityContext(corev1ac.PodSecurityContext().
			WithRunAsNonRoot(true).WithRunAsUser(GatewayUID).WithRunAsGroup(GatewayUID).WithFSGroup(GatewayUID).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(container).
		WithVolumes(volumes...)
	if d.o.EndpointAccess == EndpointService {
		pod = pod.WithContainers(d.endpointRelayContainer())
	}
	return appsv1ac.Deployment(GatewayName(rev.AgentID), NamespaceName(rev.NamespaceID)).
		WithLabels(l).WithAnnotations(an).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(replicas).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType(appsv1.RecreateDeploymentStrategyType)).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(gatewaySelector(rev.AgentRef))).
			WithTemplate(corev1ac.PodTemplateSpec().WithLabels(pl).WithAnnotations(pan).WithSpec(pod)))
}

// secretRef is an environment variable from a Secret's key.
func secretRef(name, secret, key string) *corev1ac.EnvVarApplyConfiguration {
	return corev1ac.EnvVar().WithName(name).WithValueFrom(corev1ac.EnvVarSource().
		WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(secret).WithKey(key)))
}

// restricted is every container's security context: Pod Security
// "restricted" (non-root as the image's user, no privilege escalation, no
// capability, read-only root file system, RuntimeDefault seccomp).
func restricted() *corev1ac.SecurityContextApplyConfiguration {
	return corev1ac.SecurityContext().
		WithRunAsNonRoot(true).WithRunAsUser(GatewayUID).WithRunAsGroup(GatewayUID).
		WithAllowPrivilegeEscalation(false).WithPrivileged(false).WithReadOnlyRootFilesystem(true).
		WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")).
		WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))
}

// resources are a container's requests and limits.
func (d *Driver) resources(r parsedResources) *corev1ac.ResourceRequirementsApplyConfiguration {
	return corev1ac.ResourceRequirements().
		WithRequests(corev1.ResourceList{corev1.ResourceCPU: r.reqCPU, corev1.ResourceMemory: r.reqMem}).
		WithLimits(corev1.ResourceList{corev1.ResourceCPU: r.limCPU, corev1.ResourceMemory: r.limMem})
}
