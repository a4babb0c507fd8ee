package kubernetes

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// Readiness codes of the kubernetes driver.
const (
	// CodeStartupFailed is the RuntimeFailure code of a gateway container
	// that exited or cannot start (component "gateway", check "process"
	// or "image").
	CodeStartupFailed = occ.DeployRuntimeStartup
)

// probeTimeout bounds the HTTP probes and healthTimeout the health call
// of one PrepareRevision.
const (
	probeTimeout  = 5 * time.Second
	healthTimeout = 15 * time.Second
)

// imageFailures are the waiting reasons of a container whose image cannot
// be had.
var imageFailures = map[string]bool{"ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true, "ErrImageNeverPull": true}

// readiness reads the revision's Pods for readinessOf.
func (d *Driver) readiness(ctx context.Context, spec compute.RevisionSpec, dep *appsv1.Deployment, token string) (compute.Readiness, error) {
	pods, err := d.pods(ctx, spec.AgentRef, spec.RevisionID)
	if err != nil {
		return compute.Readiness{}, err
	}
	return d.readinessOf(ctx, spec, dep, token, pods)
}

// readinessOf reads the revision's Pod and, once it is Ready, probes the
// gateway through its endpoint; dep is the Agent's Deployment, token its
// gateway token and pods the revision's Pods, as PrepareRevision just read
// them.
func (d *Driver) readinessOf(ctx context.Context, spec compute.RevisionSpec, dep *appsv1.Deployment, token string, pods []corev1.Pod) (compute.Readiness, error) {
	failure := func(check string) compute.Readiness {
		return compute.Readiness{RuntimeFailure: &compute.RuntimeFailure{Component: "gateway", Check: check, CheckedAt: time.Now().UTC(), Code: CodeStartupFailed}}
	}
	starting := compute.Readiness{PendingReason: occ.PendingGatewayStarting}
	unschedulable := compute.Readiness{PendingReason: occ.PendingWorkloadUnschedulable}
	pod := live(pods)
	if pod == nil {
		if dep != nil && replicaFailure(dep) {
			return unschedulable, nil
		}
		return starting, nil
	}
	if dedicated(spec) {
		if r, held := harnessVerdict(pod); held {
			return r, nil
		}
	}
	state := podState(pod)
	switch state {
	case podUnschedulable:
		return unschedulable, nil
	case podImageFailed:
		return failure("image"), nil
	case podExited:
		return failure("process"), nil
	case podReady, podRunning:
	default:
		return starting, nil
	}
	ep, err := d.reachWith(ctx, spec.AgentRef, pod, token)
	if err != nil {
		d.o.Logger.Debug("gateway endpoint not reachable yet", "agent", spec.AgentID, "error", err)
		return starting, nil
	}
	// A running Pod that is not Ready is probed too: what its gateway
	// answers (Slack down, a sidecar still starting) is the reason it is
	// held. Its gateway ready is not enough: the kubelet's readiness probe
	// has yet to pass, and the Pod's Service sends it nothing until then.
	r, err := d.probe(ctx, spec, ep, dep, string(pod.UID))
	if err == nil && r.Ready && state == podRunning {
		return starting, nil
	}
	return r, err
}

// probe asks a running Pod's gateway (compute.ProbeEndpoint), probing the
// model credential once per Pod: not again when this process or, before a
// restart, another one (AnnotationModelProbedPod on dep) probed this Pod.
func (d *Driver) probe(ctx context.Context, spec compute.RevisionSpec, ep compute.Endpoint, dep *appsv1.Deployment, podUID string) (compute.Readiness, error) {
	recorded := dep != nil && dep.Annotations[AnnotationModelProbedPod] == podUID
	d.mu.Lock()
	verified := recorded || d.verified[spec.AgentRef] == podUID
	d.mu.Unlock()
	// A dedicated gateway holds no model credential: its harness probed
	// the model before it served.
	r, err := compute.ProbeEndpoint(ctx, compute.Probe{Endpoint: ep, Document: spec.Document, ProbeModel: !verified && !dedicated(spec), Report: spec.Report,
		ModelProbeTimeout: d.o.ModelProbeTimeout, ProbeTimeout: probeTimeout, HealthTimeout: healthTimeout})
	if err != nil || !r.Ready {
		return r, err
	}
	d.mu.Lock()
	d.verified[spec.AgentRef] = podUID
	d.mu.Unlock()
	if dep != nil && !recorded {
		d.recordProbed(ctx, dep, podUID)
	}
	return r, nil
}

// recordProbed marks the Deployment with the Pod whose model credential
// was probed (AnnotationModelProbedPod). A failure costs one more probe
// after a restart, nothing else: it is logged, not returned.
func (d *Driver) recordProbed(ctx context.Context, dep *appsv1.Deployment, podUID string) {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{
		"annotations": map[string]string{AnnotationModelProbedPod: podUID},
	}})
	_, err := d.cs.AppsV1().Deployments(dep.Namespace).Patch(ctx, dep.Name, types.MergePatchType, patch,
		metav1.PatchOptions{FieldManager: ProbeFieldManager})
	if err != nil {
		d.o.Logger.Debug("could not record the model probe on the gateway Deployment", "deployment", dep.Namespace+"/"+dep.Name, "error", err)
	}
}

// live returns the first Pod that is not being deleted, or nil.
func live(pods []corev1.Pod) *corev1.Pod {
	for i := range pods {
		if pods[i].DeletionTimestamp == nil {
			return &pods[i]
		}
	}
	return nil
}

// The states of a gateway Pod that readiness tells apart.
const (
	podStarting = iota
	// podRunning: the gateway container runs, the Pod is not Ready (its
	// readiness probe has not passed yet, or no longer does).
	podRunning
	podReady
	podUnschedulable
	podImageFailed
	podExited
)

// podState reads a Pod's conditions and its gateway container's status.
func podState(p *corev1.Pod) int {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return podUnschedulable
		}
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return podExited
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name != ContainerName {
			continue
		}
		switch {
		case cs.State.Waiting != nil && imageFailures[cs.State.Waiting.Reason]:
			return podImageFailed
		case cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff", cs.State.Terminated != nil:
			return podExited
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return podReady
		}
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Name == ContainerName && cs.State.Running != nil {
			return podRunning
		}
	}
	return podStarting
}

// replicaFailure reports whether the Deployment's ReplicaSet could not
// create its Pod (a ResourceQuota forbids it, for example). A quota whose
// usage the quota controller has not computed yet (a Namespace made moments
// ago) refuses Pods with "status unknown for quota" until it has: that is
// transient, the ReplicaSet retries, and the Agent is still starting.
func replicaFailure(dep *appsv1.Deployment) bool {
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentReplicaFailure && c.Status == corev1.ConditionTrue {
			return !strings.Contains(c.Message, quotaStatusUnknown)
		}
	}
	return false
}

// quotaStatusUnknown is the ResourceQuota admission's refusal while a
// quota's usage is not yet computed (k8s.io/apiserver's quota evaluator).
const quotaStatusUnknown = "status unknown for quota"
