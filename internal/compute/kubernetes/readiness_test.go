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
