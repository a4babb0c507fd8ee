package kubetest_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
)

const gatewayPort = 18789

func deployment(name string) *appsv1.Deployment {
	replicas := int32(1)
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "agent",
					Image: "example.invalid/agent:1",
					Ports: []corev1.ContainerPort{{Name: "gateway", ContainerPort: gatewayPort}},
				}}},
			},
		},
	}
}

func ready(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// eventually polls check until it returns nil; the bound only keeps a broken
// cluster from hanging the test.
func eventually(t *testing.T, what string, check func(context.Context) error) {
	t.Helper()
	c := ctx(t)
	var last error
	for {
		if last = check(c); last == nil {
			return
		}
		select {
		case <-c.Done():
			t.Fatalf("%s: %v", what, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// readyPod waits until the Deployment's only Pod is Running and Ready (kwok
// reports it) and returns it.
func readyPod(t *testing.T, client kubernetes.Interface, ns, app string, not string) *corev1.Pod {
	t.Helper()
	var pod *corev1.Pod
	eventually(t, "waiting for a Ready Pod of "+app, func(c context.Context) error {
		pods, err := client.CoreV1().Pods(ns).List(c, metav1.ListOptions{LabelSelector: "app=" + app})
		if err != nil {
			return err
		}
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Name != not && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && ready(p) {
				pod = p
				return nil
			}
		}
		return fmt.Errorf("no Ready Pod yet among %d", len(pods.Items))
	})
	return pod
}

// startWithAgent starts a cluster with one fake node, creates the Deployment
// "agent" in namespace ns and returns its Ready Pod.
func startWithAgent(t *testing.T, ns string) (*kubetest.Cluster, kubernetes.Interface, *corev1.Pod) {
	t.Helper()
	c := kubetest.Start(t, kubetest.WithNodes(1))
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	namespace(t, client, ns, nil)
	if _, err := client.AppsV1().Deployments(ns).Create(ctx(t), deployment("agent"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return c, client, readyPod(t, client, ns, "agent", "")
}

func TestDeploymentPodRunsOnAFakeNode(t *testing.T) {
	c, client, pod := startWithAgent(t, "apps")
	if pod.Spec.NodeName != c.Nodes()[0] {
		t.Fatalf("Pod %s is on node %q, want the fake node %q", pod.Name, pod.Spec.NodeName, c.Nodes()[0])
	}
	if pod.Status.PodIP == "" {
		t.Fatalf("Pod %s has no IP", pod.Name)
	}
	eventually(t, "waiting for the Deployment to report 1 available replica", func(c context.Context) error {
		d, err := client.AppsV1().Deployments("apps").Get(c, "agent", metav1.GetOptions{})
		if err != nil {
			return err
		}
		if d.Status.AvailableReplicas != 1 {
			return fmt.Errorf("available replicas %d", d.Status.AvailableReplicas)
		}
		return nil
	})

	// Deleting the Pod terminates it, and the ReplicaSet replaces it.
	if err := client.CoreV1().Pods("apps").Delete(ctx(t), pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "waiting for the deleted Pod to be gone", func(c context.Context) error {
		_, err := client.CoreV1().Pods("apps").Get(c, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("still there (%v)", err)
	})
	replacement := readyPod(t, client, "apps", "agent", pod.Name)

	// Deleting the Deployment removes its Pods (kube-controller-manager's
	// garbage collector, then kwok).
	fg := metav1.DeletePropagationForeground
	if err := client.AppsV1().Deployments("apps").Delete(ctx(t), "agent", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "waiting for the Deployment's Pods to be gone", func(c context.Context) error {
		_, err := client.CoreV1().Pods("apps").Get(c, replacement.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("Pod %s still there (%v)", replacement.Name, err)
	})
}
