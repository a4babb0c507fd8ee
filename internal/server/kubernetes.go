package server

import (
	"context"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/kubernetes"
	"github.com/openclaw/occ/internal/config"
)

// preflightTimeout bounds the kubernetes driver's preflight at start.
const preflightTimeout = 2 * time.Minute

// kubernetesDriver builds the kubernetes driver from compute.kubernetes and
// runs its preflight: occ does not start against an API server it cannot
// reach, that refuses its credentials, or that denies it a permission the
// driver needs (every message names the setting or the permission).
func (m *Main) kubernetesDriver() (compute.Driver, error) {
	k := m.Config.Compute.Kubernetes
	rc, err := kubernetes.Connect(kubernetes.Connection{Kubeconfig: k.Kubeconfig, Context: k.Context, InCluster: k.InCluster,
		Timeout: k.RequestTimeout.D()})
	if err != nil {
		return nil, err
	}
	d, err := kubernetes.New(kubernetesOptions(k, rc, m))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), preflightTimeout)
	defer cancel()
	if err := d.Preflight(ctx); err != nil {
		d.Close()
		return nil, fmt.Errorf("kubernetes compute driver preflight: %w", err)
	}
	m.closers = append(m.closers, d.Close)
	return d, nil
}

// kubernetesOptions translates the settings into the driver's options.
func kubernetesOptions(k config.KubernetesCompute, rc *kubernetes.RESTConfig, m *Main) kubernetes.Options {
	res := func(r config.KubernetesResourceSpec) kubernetes.Resources {
		return kubernetes.Resources{RequestsCPU: r.RequestsCPU, RequestsMemory: r.RequestsMemory, LimitsCPU: r.LimitsCPU, LimitsMemory: r.LimitsMemory}
	}
	var clients kubernetes.Peer
	if k.GatewayClients.Namespace != "" {
		clients = kubernetes.Peer{Namespace: k.GatewayClients.Namespace, PodLabels: k.GatewayClients.PodLabelMap()}
	}
	return kubernetes.Options{Config: rc, GatewayImage: k.Images.Gateway, GatewayPort: k.GatewayPort, EndpointAccess: k.EndpointAccess,
		StorageClassName: k.GatewayStorageClassName, StateSize: k.GatewayStateSize,
		GatewayResources: res(k.Resources.Gateway), HarnessResources: res(k.Resources.Harness), ContainerDefaults: res(k.Resources.ContainerDefaults),
		DedicatedCodex: k.Images.DedicatedCodex,
		QuotaPods:      k.Resources.QuotaPods, QuotaCPU: k.Resources.QuotaCPU, QuotaMemory: k.Resources.QuotaMemory,
		GatewayClients: clients, Logger: m.Logger.With("component", "compute")}
}
