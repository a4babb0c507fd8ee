package kubetest_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/openclaw/occ/internal/compute/kubernetes/kubetest"
)

// TestRealNode: on WithRealNode's node (containerd, runc, the CNI bridge,
// kubelet) a Pod of the locally built pause image runs with a claim of the
// local StorageClass mounted, becomes Ready with an address on the node's
// bridge, and terminates when deleted; the claim binds to a volume and the
// volume goes with the claim. Stop leaves no bridge and no mount behind.
func TestRealNode(t *testing.T) {
	began := time.Now()
	c := kubetest.Start(t, kubetest.WithRealNode())
	t.Logf("cluster with node %s up in %s", c.RealNode(), time.Since(began).Round(time.Second))
	client, err := kubernetes.NewForConfig(c.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	const ns = "real"
	namespace(t, client, ns, nil)
	class := kubetest.LocalStorageClass
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "state"},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "pause"},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: new(bool),
			Containers: []corev1.Container{{
				Name: "pause", Image: kubetest.PauseImage, ImagePullPolicy: corev1.PullNever,
				VolumeMounts: []corev1.VolumeMount{{Name: "state", MountPath: "/state"}},
			}},
			Volumes: []corev1.Volume{{Name: "state", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "state"},
			}}},
		},
	}
	// The namespace's default ServiceAccount appears shortly after it.
	poll(t, ctx, "creating the Pod", func() error {
		_, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		return err
	})
	var running *corev1.Pod
	poll(t, ctx, "the Pod Ready on the real node", func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !ready(p) {
			return fmt.Errorf("phase %s, conditions %v, containers %v", p.Status.Phase, p.Status.Conditions, p.Status.ContainerStatuses)
		}
		running = p
		return nil
	})
	t.Logf("Pod Ready %s after the start, address %s", time.Since(began).Round(time.Second), running.Status.PodIP)
	if running.Spec.NodeName != c.RealNode() {
		t.Errorf("the Pod runs on %q, want the real node %q", running.Spec.NodeName, c.RealNode())
	}
	_, bridgeNet, _ := net.ParseCIDR(c.BridgeAddress() + "/24")
	if ip := net.ParseIP(running.Status.PodIP); ip == nil || !bridgeNet.Contains(ip) {
		t.Errorf("the Pod's address %q is not on the node's bridge (%s)", running.Status.PodIP, bridgeNet)
	}
	claim, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "state", metav1.GetOptions{})
	if err != nil || claim.Status.Phase != corev1.ClaimBound || claim.Spec.VolumeName == "" {
		t.Fatalf("claim after the Pod started: %v %+v", err, claim.Status)
	}
	bridge := linkWithAddress(t, c.BridgeAddress())

	if err := client.CoreV1().Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the Pod terminated and gone", func() error {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("still there: phase %s", p.Status.Phase)
	})
	if err := client.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "state", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, ctx, "the claim's volume gone", func() error {
		_, err := client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("volume %s: %v", claim.Spec.VolumeName, err)
	})

	dir := filepath.Dir(c.KubeconfigPath())
	c.Stop()
	if _, err := os.Stat(filepath.Join("/sys/class/net", bridge)); !os.IsNotExist(err) {
		t.Errorf("after Stop the bridge %s is still there (%v)", bridge, err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), dir+"/") {
		t.Errorf("after Stop something is still mounted under %s", dir)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Stop %s: %v, want it removed", dir, err)
	}
}

// poll calls check until it returns nil, failing the test with the last
// error when ctx ends.
func poll(t *testing.T, ctx context.Context, what string, check func() error) {
	t.Helper()
	for {
		err := check()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %v", what, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// linkWithAddress returns the name of the host's link holding addr.
func linkWithAddress(t *testing.T, addr string) string {
	t.Helper()
	links, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		addrs, _ := l.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.String() == addr {
				return l.Name
			}
		}
	}
	t.Fatalf("no link of the host holds the bridge address %s", addr)
	return ""
}
