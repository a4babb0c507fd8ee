package kubernetes

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestReplicaFailure: a ReplicaSet refused by a quota that forbids the Pod is
// a failure the Agent waits on (unschedulable); one refused only because the
// quota's usage is not computed yet (a Namespace made moments ago) is not.
func TestReplicaFailure(t *testing.T) {
	t.Parallel()
	withFailure := func(message string) *appsv1.Deployment {
		return &appsv1.Deployment{Status: appsv1.DeploymentStatus{Conditions: []appsv1.DeploymentCondition{{
			Type: appsv1.DeploymentReplicaFailure, Status: corev1.ConditionTrue, Reason: "FailedCreate", Message: message,
		}}}}
	}
	for _, c := range []struct {
		dep  *appsv1.Deployment
		want bool
	}{
		{&appsv1.Deployment{}, false},
		{withFailure(`pods "gw-1" is forbidden: exceeded quota: occ-quota, requested: pods=1, used: pods=1, limited: pods=1`), true},
		{withFailure(`pods "gw-1" is forbidden: status unknown for quota: occ-quota, resource: pods`), false},
	} {
		if got := replicaFailure(c.dep); got != c.want {
			t.Errorf("replicaFailure(%+v) = %v, want %v", c.dep.Status.Conditions, got, c.want)
		}
	}
}

// TestPodState: a Pod is starting until its gateway container runs, running
// (probed, not yet ready) until its Ready condition holds, and failed when
// its container exited.
func TestPodState(t *testing.T) {
	t.Parallel()
	running := corev1.ContainerStatus{Name: ContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	exited := corev1.ContainerStatus{Name: ContainerName, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	sidecar := corev1.ContainerStatus{Name: HarnessContainerName, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}}
	ready := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	notReady := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}
	for _, c := range []struct {
		name   string
		status corev1.PodStatus
		want   int
	}{
		{"created", corev1.PodStatus{Phase: corev1.PodPending}, podStarting},
		{"another container runs", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{sidecar}, Conditions: notReady}, podStarting},
		{"gateway runs, not Ready", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running}, Conditions: notReady}, podRunning},
		{"gateway runs, Ready", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{running}, Conditions: ready}, podReady},
		{"gateway exited", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{exited}, Conditions: notReady}, podExited},
	} {
		if got := podState(&corev1.Pod{Status: c.status}); got != c.want {
			t.Errorf("%s: podState = %d, want %d", c.name, got, c.want)
		}
	}
}
