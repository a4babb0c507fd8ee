package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Connection names how occ reaches the API server: exactly one of
// InCluster, or Kubeconfig with Context. There is no ambient fallback
// (KUBECONFIG, ~/.kube/config, the in-cluster account) to anything not
// named here.
type Connection struct {
	Kubeconfig string
	Context    string
	InCluster  bool
	// Timeout bounds every request.
	Timeout time.Duration
}

// Connect builds the API server configuration of c. Its errors name the
// setting at fault.
func Connect(c Connection) (*rest.Config, error) {
	var cfg *rest.Config
	switch {
	case c.InCluster && (c.Kubeconfig != "" || c.Context != ""):
		return nil, errors.New("compute.kubernetes.inCluster: set either inCluster or kubeconfig with context, not both")
	case c.InCluster:
		var err error
		if cfg, err = rest.InClusterConfig(); err != nil {
			return nil, fmt.Errorf("compute.kubernetes.inCluster: occ does not run in a Pod with a service account: %w", err)
		}
	case c.Kubeconfig == "":
		return nil, errors.New("compute.kubernetes.kubeconfig: required unless compute.kubernetes.inCluster is true")
	case c.Context == "":
		return nil, errors.New("compute.kubernetes.context: required with compute.kubernetes.kubeconfig")
	default:
		file, err := clientcmd.LoadFromFile(c.Kubeconfig)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("compute.kubernetes.kubeconfig: %s does not exist", c.Kubeconfig)
			}
			return nil, fmt.Errorf("compute.kubernetes.kubeconfig: %s: %w", c.Kubeconfig, err)
		}
		if _, ok := file.Contexts[c.Context]; !ok {
			return nil, fmt.Errorf("compute.kubernetes.context: %s has no context %q", c.Kubeconfig, c.Context)
		}
		cfg, err = clientcmd.NewNonInteractiveClientConfig(*file, c.Context, &clientcmd.ConfigOverrides{}, nil).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("compute.kubernetes.context: context %q of %s: %w", c.Context, c.Kubeconfig, err)
		}
	}
	cfg.Timeout = c.Timeout
	return cfg, nil
}

// permission is one thing the driver does through the API.
type permission struct {
	verb, group, resource, subresource string
}

func (p permission) String() string {
	r := p.resource
	if p.subresource != "" {
		r += "/" + p.subresource
	}
	if p.group != "" {
		r += "." + p.group
	}
	return p.verb + " " + r
}

// Rules are the RBAC rules the driver needs, cluster wide (tenant
// namespaces are made on demand, so namespaced grants are not enough):
// what Preflight checks and what an installation grants occ's account.
// endpointAccess is Options.EndpointAccess (a port-forward needs
// pods/portforward).
func Rules(endpointAccess string) []rbacv1.PolicyRule {
	crud := []string{"get", "list", "create", "patch", "delete"}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get", "create", "patch", "delete"}},
		{APIGroups: []string{""}, Resources: []string{"resourcequotas", "limitranges", "serviceaccounts", "services", "persistentvolumeclaims"}, Verbs: crud},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "secrets"}, Verbs: append(slices.Clone(crud), "deletecollection")},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"networkpolicies"}, Verbs: crud},
		{APIGroups: []string{"apps"}, Resources: []string{"deployments"}, Verbs: crud},
		// watch: WatchWorkloads follows the gateway Pods' changes.
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	}
	if endpointAccess == EndpointPortForward {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/portforward"}, Verbs: []string{"get", "create"}})
	}
	return rules
}

// permissions are the rules, one verb and resource each.
func (d *Driver) permissions() []permission {
	var out []permission
	for _, r := range Rules(d.o.EndpointAccess) {
		for _, res := range r.Resources {
			resource, sub, _ := strings.Cut(res, "/")
			for _, v := range r.Verbs {
				out = append(out, permission{verb: v, group: r.APIGroups[0], resource: resource, subresource: sub})
			}
		}
	}
	return out
}

// MinMinor is the oldest Kubernetes 1.x minor the driver is tested with;
// an older server is accepted with a warning (reference §2.2).
const MinMinor = 35

// Preflight checks, before occ serves, that the API server answers
// GET /version with occ's credentials and that occ may do everything the
// driver does (SelfSubjectAccessReview of each verb and resource). Its
// errors name the setting or every missing permission.
func (d *Driver) Preflight(ctx context.Context) error {
	host := d.o.Config.Host
	v, err := d.cs.Discovery().ServerVersion()
	switch {
	case apierrors.IsUnauthorized(err):
		return fmt.Errorf("compute.kubernetes: the API server %s refused occ's credentials (check compute.kubernetes.kubeconfig and compute.kubernetes.context, or inCluster's service account): %w", host, err)
	case apierrors.IsForbidden(err):
		return fmt.Errorf("compute.kubernetes: occ may not read GET /version of %s; grant it (system:discovery or equivalent): %w", host, err)
	case err != nil:
		return fmt.Errorf("compute.kubernetes: cannot reach the API server %s (compute.kubernetes.kubeconfig / compute.kubernetes.inCluster): %w", host, err)
	}
	if minor, err := strconv.Atoi(strings.TrimRight(v.Minor, "+")); v.Major != "1" || err != nil || minor < MinMinor {
		d.o.Logger.Warn("the Kubernetes API server is older than the driver is tested with", "version", v.GitVersion, "want", "1."+strconv.Itoa(MinMinor)+"+")
	}
	var missing []string
	for _, p := range d.permissions() {
		r, err := d.cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authv1.SelfSubjectAccessReview{
			Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authv1.ResourceAttributes{
				Verb: p.verb, Group: p.group, Resource: p.resource, Subresource: p.subresource}}}, metav1.CreateOptions{})
		if err != nil {
			return fmt.Errorf("compute.kubernetes: cannot check occ's permissions on %s: %w", host, err)
		}
		if !r.Status.Allowed {
			missing = append(missing, p.String())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("compute.kubernetes: occ's account on %s lacks cluster-wide permissions the driver needs: %s", host, strings.Join(missing, ", "))
	}
	return nil
}
