// Package kubernetes is the Kubernetes Compute Driver: it runs each Agent's
// OpenClaw gateway as a Deployment in a Kubernetes namespace of its own occ
// Namespace, through client-go's typed clients with server-side apply under
// one field manager (FieldManager).
//
// Per occ Namespace (namespaces.go): namespace oce-<h15(nsID)> with Pod
// Security "restricted" (enforce, audit, warn), a ResourceQuota and a
// LimitRange from the settings, a default-deny NetworkPolicy for ingress and
// egress, DNS and the gateways' HTTPS egress allowed, and gateway ingress
// only from occ's own Pods (when occ reaches gateways through their Service).
//
// Per Agent (agents.go): a ServiceAccount without token automount, a PVC for
// the gateway's state (kept across stops and revisions, removed with the
// Agent), a transport Secret with the gateway token (created once), a
// ClusterIP Service and a one-replica Recreate Deployment; per revision an
// immutable ConfigMap with the rendered openclaw.json (never a secret) and a
// Secret with the revision's secret environment, which reaches the gateway
// only through secretKeyRef environment variables.
//
// Every object carries occ's ownership labels (LabelManagedBy and the raw
// IDs); an object that exists under one of occ's names without them is
// refused with CodeOwnershipConflict, never adopted, and deletion removes only
// objects that carry them.
package kubernetes

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// How occ reaches a gateway (Options.EndpointAccess).
const (
	// EndpointPortForward: a port-forward through the API server to the
	// gateway Pod, on a loopback port of occ's host; occ may run anywhere.
	EndpointPortForward = "portForward"
	// EndpointService: the gateway Service's cluster DNS name; occ runs in
	// the cluster, admitted by the gateway-ingress NetworkPolicy.
	EndpointService = "service"
)

// Defaults of the options the settings do not carry.
const (
	// DefaultTerminationTimeout bounds the wait for owned Pods to end
	// (reference §2.2: 120 s, polled every 100 ms... here every 250 ms).
	DefaultTerminationTimeout = 120 * time.Second
	// DefaultModelProbeTimeout bounds the startup model probe.
	DefaultModelProbeTimeout = 60 * time.Second
	// DefaultPodStartWait bounds the wait for a new revision's Pod.
	DefaultPodStartWait = 10 * time.Second
	// podReadyWait bounds how long, within the Pod start wait, a watching
	// driver waits for a new revision's Pod to be Ready (or fail) before
	// it reports the gateway starting.
	podReadyWait    = 3 * time.Second
	terminationPoll = 250 * time.Millisecond
)

// ClientQPS and ClientBurst bound the driver's request rate on the client
// side.
const (
	ClientQPS   = 50
	ClientBurst = 100
)

// Resources are one container's requests and limits (Kubernetes
// quantities).
type Resources struct {
	RequestsCPU, RequestsMemory, LimitsCPU, LimitsMemory string
}

// Peer names the Pods occ's gateway clients run in: Namespace by name, and
// PodLabels (nil: every Pod of it).
type Peer struct {
	Namespace string
	PodLabels map[string]string
}

// Options configure the driver (the server fills them from
// compute.kubernetes).
type Options struct {
	// Config reaches the API server (see Connect).
	Config *rest.Config
	// GatewayImage is the gateway image; its entry point is the OpenClaw
	// CLI (the container runs `<entrypoint> gateway run --port N`).
	GatewayImage string
	GatewayPort  int
	// EndpointAccess is EndpointPortForward or EndpointService.
	EndpointAccess string
	// StorageClassName is the state volume's class ("" = the default);
	// StateSize its size.
	StorageClassName string
	StateSize        string
	// GatewayResources are the gateway container's; ContainerDefaults the
	// LimitRange defaults of each tenant namespace.
	GatewayResources  Resources
	ContainerDefaults Resources
	// DedicatedCodex: the gateway image carries Codex (occ runtime image
	// build), so dedicated revisions run, their harness with
	// HarnessResources.
	DedicatedCodex   bool
	HarnessResources Resources
	// QuotaPods, QuotaCPU and QuotaMemory are each tenant namespace's
	// ResourceQuota (pods, limits.cpu, limits.memory).
	QuotaPods   int
	QuotaCPU    string
	QuotaMemory string
	// GatewayClients, when Namespace is set, are the only Pods the gateway
	// ingress NetworkPolicy admits.
	GatewayClients Peer
	// TerminationTimeout bounds the wait for owned Pods to end; 0 is
	// DefaultTerminationTimeout.
	TerminationTimeout time.Duration
	// ModelProbeTimeout bounds the startup model probe; 0 is
	// DefaultModelProbeTimeout.
	ModelProbeTimeout time.Duration
	// PodStartWait bounds how long a PrepareRevision that changed the
	// Deployment waits for its ReplicaSet to create the Pod; 0 is
	// DefaultPodStartWait, negative does not wait (a cluster without
	// kube-controller-manager, as in the API lane's tests).
	PodStartWait time.Duration
	Logger       *slog.Logger
}

// Driver is the Kubernetes Compute Driver.
type Driver struct {
	o  Options
	cs k8s.Interface
	// dialer opens the port-forward connections.
	dialer *dialer
	// quantities parsed once from the options.
	q quantities
	// marks are what the driver last applied, so that an unchanged object
	// is not applied again.
	marks marks

	mu sync.Mutex
	// verified maps an Agent to the UID of the Pod whose model credential
	// was probed once (the probe is not repeated for the same Pod).
	verified map[compute.AgentRef]string
	// checked maps a Namespace ID to when PrepareRevision last found its
	// tenant namespace's objects as occ wants them.
	checked map[string]time.Time
	// watchStop ends the Pod watch of WatchWorkloads (nil: none), and
	// watched is that watch's Pods (indexed by agentIndex).
	watchStop chan struct{}
	watched   cache.SharedIndexInformer
	// added holds, per Agent, the channels of podChanged.
	added map[compute.AgentRef][]chan struct{}
}

var _ compute.Driver = (*Driver)(nil)

// Code of the permanent errors of the driver.
const (
	// CodeOwnershipConflict: an object exists under a name occ uses but
	// without occ's ownership labels (or for another occ ID).
	CodeOwnershipConflict = occ.KubernetesOwnershipConflict
	// CodeAccessDenied: the API server refused occ's credentials (401/403).
	CodeAccessDenied = occ.KubernetesAccessDenied
	// CodeRequestInvalid: the API server refused a request as invalid
	// (400/422).
	CodeRequestInvalid = occ.KubernetesRequestInvalid
	// CodeForeignObjects: a tenant namespace holds objects occ did not
	// create, so occ does not delete it.
	CodeForeignObjects = occ.KubernetesForeignObjects
)

// New returns a driver; it does not contact the API server (Preflight
// does).
func New(o Options) (*Driver, error) {
	if o.Config == nil {
		return nil, errors.New("kubernetes compute driver: no API server configuration")
	}
	if o.GatewayImage == "" {
		return nil, errors.New("kubernetes compute driver: compute.kubernetes.images.gateway is required")
	}
	if o.EndpointAccess != EndpointPortForward && o.EndpointAccess != EndpointService {
		return nil, fmt.Errorf("kubernetes compute driver: endpoint access %q is not %s or %s", o.EndpointAccess, EndpointPortForward, EndpointService)
	}
	if o.TerminationTimeout <= 0 {
		o.TerminationTimeout = DefaultTerminationTimeout
	}
	if o.ModelProbeTimeout <= 0 {
		o.ModelProbeTimeout = DefaultModelProbeTimeout
	}
	if o.PodStartWait == 0 {
		o.PodStartWait = DefaultPodStartWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	q, err := parseQuantities(o)
	if err != nil {
		return nil, fmt.Errorf("kubernetes compute driver: %w", err)
	}
	cfg := rest.CopyConfig(o.Config)
	cfg.UserAgent = "occ-compute-kubernetes"
	if cfg.QPS == 0 {
		// client-go's default (5 per second, bursts of 10) would make the
		// client, not the API server, the bottleneck of a fleet; the API
		// server's priority and fairness protects itself.
		cfg.QPS, cfg.Burst = ClientQPS, ClientBurst
	}
	cs, err := k8s.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes compute driver: %w", err)
	}
	dl, err := newDialer(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes compute driver: %w", err)
	}
	o.Config = cfg
	return &Driver{o: o, cs: cs, dialer: dl, q: q, verified: map[compute.AgentRef]string{}, checked: map[string]time.Time{},
		added: map[compute.AgentRef][]chan struct{}{}}, nil
}

// Name implements compute.Driver.
func (d *Driver) Name() string { return "kubernetes" }

// Capabilities implements compute.Driver: embedded OpenClaw with an API key
// delivered as secretKeyRef environment, gateway state on a volume that
// survives stops and revisions, and, when the image carries Codex
// (Options.DedicatedCodex), dedicated Codex with every harness method but
// runtime. The runtime harness method (the seed: Kubernetes rejects it),
// plugins, initial workspace files and the native admin UI are not run
// here and are refused at admission.
func (d *Driver) Capabilities() compute.Capabilities {
	c := compute.Capabilities{
		ExecutionModes:     []string{occ.ExecutionEmbedded},
		HarnessAuthMethods: []string{occ.HarnessAPIKey},
		PersistentState:    true,
		SecretEnvironment:  true,
		// Any process with the cluster's credentials reaches a gateway
		// (a port-forward through the API server, or its Service).
		SharedEndpoints: true,
	}
	if d.o.DedicatedCodex {
		c.ExecutionModes = append(c.ExecutionModes, occ.ExecutionDedicated)
		c.HarnessAuthMethods = append(c.HarnessAuthMethods, occ.HarnessCodexPAT, occ.HarnessChatGPTServiceAccount, occ.HarnessCredentialSource)
	}
	return c
}

// quantities are the parsed resource options.
type quantities struct {
	stateSize             resource.Quantity
	gateway, harness      parsedResources
	defaults              parsedResources
	quotaCPU, quotaMemory resource.Quantity
}

type parsedResources struct{ reqCPU, reqMem, limCPU, limMem resource.Quantity }

func parseQuantities(o Options) (quantities, error) {
	var q quantities
	var errs []error
	parse := func(name, s string) resource.Quantity {
		v, err := resource.ParseQuantity(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a quantity", name, s))
		}
		return v
	}
	res := func(name string, r Resources) parsedResources {
		return parsedResources{parse(name+".requestsCPU", r.RequestsCPU), parse(name+".requestsMemory", r.RequestsMemory),
			parse(name+".limitsCPU", r.LimitsCPU), parse(name+".limitsMemory", r.LimitsMemory)}
	}
	q.stateSize = parse("gatewayStateSize", o.StateSize)
	q.gateway = res("resources.gateway", o.GatewayResources)
	if o.DedicatedCodex {
		q.harness = res("resources.harness", o.HarnessResources)
	}
	q.defaults = res("resources.containerDefaults", o.ContainerDefaults)
	q.quotaCPU = parse("resources.quotaCPU", o.QuotaCPU)
	q.quotaMemory = parse("resources.quotaMemory", o.QuotaMemory)
	if o.QuotaPods < 1 {
		errs = append(errs, fmt.Errorf("resources.quotaPods: %d is not positive", o.QuotaPods))
	}
	if o.GatewayPort < 1 || o.GatewayPort > 65535 {
		errs = append(errs, fmt.Errorf("gatewayPort: %d is out of range", o.GatewayPort))
	}
	return q, errors.Join(errs...)
}

// RESTConfig is client-go's API server configuration (Connect makes one).
type RESTConfig = rest.Config
