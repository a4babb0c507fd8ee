package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// adminUser is the admin's user name; its group is system:masters.
const adminUser = "kubetest-admin"

func writeFile(path string, data []byte) error {
	return os.WriteFile(path, data, 0o600)
}

// restConfig is the client configuration of a certificate's holder.
func (c *Cluster) restConfig(kp keyPair) *rest.Config {
	return &rest.Config{
		Host: c.host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   c.ca.certPEM,
			CertData: kp.certPEM,
			KeyData:  kp.keyPEM,
		},
		QPS:   50,
		Burst: 100,
	}
}

// writeKubeconfig writes a kubeconfig for the holder of kp, with the context
// ContextName, to path.
func (c *Cluster) writeKubeconfig(path, user string, kp keyPair) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: c.host, CertificateAuthorityData: c.ca.certPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.certPEM, ClientKeyData: kp.keyPEM}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: user}
	cfg.CurrentContext = ContextName
	return clientcmd.WriteToFile(*cfg, path)
}

// writeAdmin creates the admin's certificate, client configuration and
// kubeconfig file.
func (c *Cluster) writeAdmin() error {
	kp, err := c.clientCert(adminUser, "system:masters")
	if err != nil {
		return err
	}
	c.admin = c.restConfig(kp)
	c.kubeconfig = c.path("admin.kubeconfig")
	return c.writeKubeconfig(c.kubeconfig, adminUser, kp)
}

// componentKubeconfig writes dir/<name>.kubeconfig for user in groups.
func (c *Cluster) componentKubeconfig(name, user string, groups ...string) (string, error) {
	kp, err := c.clientCert(user, groups...)
	if err != nil {
		return "", err
	}
	path := c.path(name + ".kubeconfig")
	return path, c.writeKubeconfig(path, user, kp)
}

// UserKubeconfig returns the path of a kubeconfig (context ContextName) for a
// user named name holding exactly rules, cluster-wide: a ClusterRole and a
// ClusterRoleBinding named "kubetest:<name>", deleted when the test ends.
// With no rules the user may do nothing beyond what every authenticated user
// may. It returns once the API server's authorizer grants the rules.
func (c *Cluster) UserKubeconfig(t testing.TB, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	return c.userKubeconfig(t, "", name, rules)
}

// NamespacedUserKubeconfig is UserKubeconfig with the rules granted only in
// namespace (a Role and a RoleBinding there).
func (c *Cluster) NamespacedUserKubeconfig(t testing.TB, namespace, name string, rules ...rbacv1.PolicyRule) string {
	t.Helper()
	if namespace == "" {
		t.Fatal("kubetest: NamespacedUserKubeconfig needs a namespace")
	}
	return c.userKubeconfig(t, namespace, name, rules)
}

func (c *Cluster) userKubeconfig(t testing.TB, namespace, name string, rules []rbacv1.PolicyRule) string {
	t.Helper()
	kp, err := c.clientCert(name)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name+".kubeconfig")
	if err := c.writeKubeconfig(path, name, kp); err != nil {
		t.Fatal(err)
	}
	if len(rules) == 0 {
		return path
	}
	client, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := grant(ctx, client, namespace, name, rules); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := revoke(ctx, client, namespace, name); err != nil {
			t.Error(err)
		}
	})
	if err := waitGranted(ctx, client, namespace, name, rules); err != nil {
		t.Fatal(err)
	}
	return path
}

func roleName(user string) string { return "kubetest:" + user }

// grant creates (or replaces) the role and binding giving user the rules.
func grant(ctx context.Context, client kubernetes.Interface, namespace, user string, rules []rbacv1.PolicyRule) error {
	meta := metav1.ObjectMeta{Name: roleName(user), Namespace: namespace}
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}}
	var err error
	if namespace == "" {
		err = upsert(ctx, client.RbacV1().ClusterRoles(), &rbacv1.ClusterRole{ObjectMeta: meta, Rules: rules})
		if err == nil {
			err = upsert(ctx, client.RbacV1().ClusterRoleBindings(), &rbacv1.ClusterRoleBinding{ObjectMeta: meta, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: meta.Name}})
		}
	} else {
		err = upsert(ctx, client.RbacV1().Roles(namespace), &rbacv1.Role{ObjectMeta: meta, Rules: rules})
		if err == nil {
			err = upsert(ctx, client.RbacV1().RoleBindings(namespace), &rbacv1.RoleBinding{ObjectMeta: meta, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: meta.Name}})
		}
	}
	if err != nil {
		return fmt.Errorf("kubetest: grant %s to %s: %w", meta.Name, user, err)
	}
	return nil
}

// createUpdater is the part of a typed client upsert needs.
type createUpdater[T any] interface {
	Create(context.Context, T, metav1.CreateOptions) (T, error)
	Update(context.Context, T, metav1.UpdateOptions) (T, error)
}

// upsert creates obj, or replaces it when it exists.
func upsert[T any](ctx context.Context, api createUpdater[T], obj T) error {
	_, err := api.Create(ctx, obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = api.Update(ctx, obj, metav1.UpdateOptions{})
	}
	return err
}

// revoke deletes the role and binding grant created.
func revoke(ctx context.Context, client kubernetes.Interface, namespace, user string) error {
	name := roleName(user)
	var errs [2]error
	if namespace == "" {
		errs[0] = client.RbacV1().ClusterRoleBindings().Delete(ctx, name, metav1.DeleteOptions{})
		errs[1] = client.RbacV1().ClusterRoles().Delete(ctx, name, metav1.DeleteOptions{})
	} else {
		errs[0] = client.RbacV1().RoleBindings(namespace).Delete(ctx, name, metav1.DeleteOptions{})
		errs[1] = client.RbacV1().Roles(namespace).Delete(ctx, name, metav1.DeleteOptions{})
	}
	for _, err := range errs {
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("kubetest: revoke %s: %w", name, err)
		}
	}
	return nil
}

// waitGranted waits until a SubjectAccessReview allows user the first verb
// and resource of every rule: RBAC changes reach the authorizer through a
// watch, so a check made right after grant could still be denied.
func waitGranted(ctx context.Context, client kubernetes.Interface, namespace, user string, rules []rbacv1.PolicyRule) error {
	for _, rule := range rules {
		spec := authorizationv1.SubjectAccessReviewSpec{User: user}
		verb := first(rule.Verbs)
		if verb == rbacv1.VerbAll {
			verb = "get"
		}
		if len(rule.NonResourceURLs) > 0 {
			spec.NonResourceAttributes = &authorizationv1.NonResourceAttributes{Path: first(rule.NonResourceURLs), Verb: verb}
		} else {
			spec.ResourceAttributes = &authorizationv1.ResourceAttributes{
				Namespace: namespace, Verb: verb, Group: first(rule.APIGroups),
				Resource: first(rule.Resources), Name: first(rule.ResourceNames),
			}
		}
		for {
			sar, err := client.AuthorizationV1().SubjectAccessReviews().Create(ctx,
				&authorizationv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
			if err == nil && sar.Status.Allowed {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kubetest: %s was not granted %+v in time (last answer: %v %+v)", user, rule, err, sar)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	return nil
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
