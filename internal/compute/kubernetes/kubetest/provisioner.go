package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// LocalStorageClass is the StorageClass of a real node's volumes: a
// PersistentVolumeClaim of this class gets a hostPath PersistentVolume, a
// directory of the node's own (mode 0777: hostPath volumes ignore fsGroup),
// and the volume and its directory go once the claim is deleted.
const LocalStorageClass = "kubetest-local"

const (
	localProvisioner = "kubetest.local/hostpath"
	// volumeLabel marks the PersistentVolumes the provisioner made.
	volumeLabel = "kubetest.local/volume"
)

// provisioner is the real node's local-volume provisioner, a loop in the
// test process.
type provisioner struct {
	client kubernetes.Interface
	dir    string // the volumes' directories
}

// startProvisioner creates the StorageClass and runs the provisioner until
// ctx ends; done is closed when it has.
func (n *realNode) startProvisioner(ctx context.Context) (done chan struct{}, err error) {
	client, err := n.c.client()
	if err != nil {
		return nil, err
	}
	reclaim := corev1.PersistentVolumeReclaimDelete
	binding := storagev1.VolumeBindingImmediate
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: LocalStorageClass},
		Provisioner:       localProvisioner,
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &binding,
	}
	if _, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("kubetest: create StorageClass %s: %w", LocalStorageClass, err)
	}
	p := &provisioner{client: client, dir: n.path("volumes")}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	done = make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			p.pass(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return done, nil
}

// pass makes a volume for each pending claim of the class and removes the
// volumes whose claim is gone. Errors wait for the next pass.
func (p *provisioner) pass(ctx context.Context) {
	claims, err := p.client.CoreV1().PersistentVolumeClaims(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for _, pvc := range claims.Items {
		if pvc.Spec.StorageClassName != nil && *pvc.Spec.StorageClassName == LocalStorageClass &&
			pvc.Spec.VolumeName == "" && pvc.DeletionTimestamp == nil {
			p.provision(ctx, &pvc)
		}
	}
	volumes, err := p.client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: volumeLabel})
	if err != nil {
		return
	}
	for _, pv := range volumes.Items {
		if pv.Status.Phase == corev1.VolumeReleased || pv.Status.Phase == corev1.VolumeFailed {
			if err := p.client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err == nil || apierrors.IsNotFound(err) {
				_ = os.RemoveAll(filepath.Join(p.dir, pv.Name))
			}
		}
	}
}

// provision creates the claim's directory and a volume bound to the claim.
func (p *provisioner) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim) {
	name := "kubetest-" + string(pvc.UID)
	dir := filepath.Join(p.dir, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		return
	}
	size := pvc.Spec.Resources.Requests[corev1.ResourceStorage]
	if size.IsZero() {
		size = resource.MustParse("1Gi")
	}
	hostPathType := corev1.HostPathDirectory
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      map[string]string{volumeLabel: "hostpath"},
			Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": localProvisioner},
		},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              LocalStorageClass,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef: &corev1.ObjectReference{
				Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID,
			},
			PersistentVolumeSource: corev1.PersistentVolumeSource{
				HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: &hostPathType},
			},
		},
	}
	_, _ = p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
}
