package kubernetes

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// PrepareRevision applies the Agent's objects and the revision's, makes the
// gateway Deployment run the revision (Recreate: the Pod of another
// revision ends first) and reports readiness: the Pod's Ready condition,
// then the gateway's own probes through its endpoint and, once per Pod, the
// model credential.
func (d *Driver) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	if err := spec.RevisionRef.Validate(); err != nil {
		return compute.Readiness{}, err
	}
	if r := d.Capabilities().Refusal(d.Name(), occ.RevisionNeeds{ExecutionMode: spec.ExecutionMode, InitialFiles: len(spec.InitialFiles) > 0}); r != nil {
		return compute.Readiness{}, compute.Permanent(r.Code, errors.New(r.Message))
	}
	if spec.NativeAdminOrigin != "" {
		return compute.Readiness{}, compute.Permanent(occ.DeployInvalidConfiguration, errors.New("the kubernetes compute driver does not run the native admin UI"))
	}
	done, err := d.namespaceChecked(ctx, spec.NamespaceID)
	if err != nil || !done {
		return compute.Readiness{}, err
	}
	// Loopback only, whatever the endpoint access (endpoint_relay.go).
	in := gateway.RenderInput{Document: spec.Document, Port: d.o.GatewayPort, Bind: gateway.BindLoopback, WorkspaceDir: WorkspaceDir, LogFile: LogFile}
	a, rev, ns := spec.AgentRef, spec.RevisionRef, NamespaceName(spec.NamespaceID)
	var login []string
	var secret string
	if dedicated(spec) {
		var held *compute.Readiness
		if login, secret, held = compute.CodexLogin(spec.HarnessEnv); held != nil {
			return *held, nil
		}
	}
	token, err := d.transportToken(ctx, a, true)
	if err != nil {
		return compute.Readiness{}, err
	}
	var plan *HarnessPlan
	var harness map[string]string
	if dedicated(spec) {
		p := d.harnessPlan(spec, login)
		plan, harness = &p, harnessSecretData(secret, appServerToken(token, rev.RevisionID))
		codexRender(&in)
	}
	rendered, err := gateway.RenderConfig(in)
	if err != nil {
		return compute.Readiness{}, compute.Permanent(occ.DeployInvalidConfiguration, err)
	}
	core := d.cs.CoreV1()
	steps := []func() error{
		func() error {
			_, err := applyOwned(ctx, &d.marks, core.ServiceAccounts(ns), "serviceaccount", ns, GatewayName(a.AgentID), agentLabels(a, RoleGateway), serviceAccountObject(a), false)
			return err
		},
		func() error {
			_, err := applyOwned(ctx, &d.marks, core.PersistentVolumeClaims(ns), "persistentvolumeclaim", ns, StateClaimName(a.AgentID), agentLabels(a, RoleState), d.stateClaimObject(a), true)
			return err
		},
		func() error {
			_, err := applyOwned(ctx, &d.marks, core.ConfigMaps(ns), "configmap", ns, ConfigMapName(rev), revisionLabels(rev, RoleConfig), configMapObject(rev, rendered), true)
			return err
		},
		func() error {
			_, err := applyOwned(ctx, &d.marks, core.Secrets(ns), "secret", ns, EnvSecretName(rev), revisionLabels(rev, RoleEnv), envSecretObject(rev, spec.Env, harness), false)
			return err
		},
		func() error {
			_, err := applyOwned(ctx, &d.marks, core.Services(ns), "service", ns, GatewayName(a.AgentID), agentLabels(a, RoleGateway), d.serviceObject(a), false)
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return compute.Readiness{}, err
		}
	}
	dep, changed, err := d.applyDeployment(ctx, spec, plan)
	if err != nil {
		return compute.Readiness{}, err
	}
	if changed {
		pods, last, err := d.awaitPod(ctx, spec.RevisionRef)
		if err != nil {
			return compute.Readiness{}, err
		}
		if last != nil {
			dep = last // the ReplicaSet's failure, if any, is on it now
		}
		return d.readinessOf(ctx, spec, dep, token, pods)
	}
	return d.readiness(ctx, spec, dep, token)
}

// awaitPod waits, within Options.PodStartWait, for the ReplicaSet to create
// the revision's Pod (or to report that it cannot), so that a
// PrepareRevision that started the gateway leaves a workload, as on every
// driver. Each look lists the revision's Pods and, while none is live,
// reads the Deployment; it returns the last Pods listed and, when it read
// one, the last Deployment. Without a watch (WatchWorkloads) it looks
// again after 100 ms, then twice as long each time up to a second. With
// one, it looks again when a Pod of the Agent changes, or after a second,
// then twice as long each time; and it waits up to podReadyWait more for
// the Pod to be Ready (or fail), even once its container runs: one list
// instead of another pass.
func (d *Driver) awaitPod(ctx context.Context, rev compute.RevisionRef) ([]corev1.Pod, *appsv1.Deployment, error) {
	changes, stop := d.podChanged(rev.AgentRef)
	defer stop()
	deadline := time.Now().Add(d.o.PodStartWait)
	wait, most := 100*time.Millisecond, time.Second
	if changes != nil {
		wait, most = time.Second, d.o.PodStartWait
	}
	var dep *appsv1.Deployment
	var readyBy time.Time
	for {
		pods, err := d.pods(ctx, rev.AgentRef, rev.RevisionID)
		if err != nil {
			return pods, dep, err
		}
		until := deadline
		if p := live(pods); p != nil {
			if s := podState(p); changes == nil || s != podStarting && s != podRunning {
				return pods, dep, nil
			}
			if readyBy.IsZero() {
				readyBy = time.Now().Add(min(podReadyWait, time.Until(deadline)))
			}
			if until = readyBy; !time.Now().Before(until) {
				return pods, dep, nil
			}
		} else if dep, err = d.deployment(ctx, rev.AgentRef); err != nil || (dep != nil && replicaFailure(dep)) || !time.Now().Before(deadline) {
			return pods, dep, err
		}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-changes:
		case <-time.After(min(wait, time.Until(until))):
		}
		wait = min(2*wait, most)
	}
}

// applyDeployment makes the gateway Deployment run spec with one replica,
// keeping the active mark only when it is this revision's; changed says
// whether its spec changed (a Pod is to be made). It returns the
// Deployment as the API server has it.
func (d *Driver) applyDeployment(ctx context.Context, spec compute.RevisionSpec, plan *HarnessPlan) (dep *appsv1.Deployment, changed bool, err error) {
	ns, name := NamespaceName(spec.NamespaceID), GatewayName(spec.AgentID)
	deps := d.cs.AppsV1().Deployments(ns)
	cur, found, err := getOwned(ctx, "deployment", ns, name, agentLabels(spec.AgentRef, RoleGateway), deps.Get)
	if err != nil {
		return nil, false, err
	}
	ac := d.deploymentObject(spec, plan, 1)
	if found && cur.Annotations[AnnotationActiveRevision] == spec.RevisionID {
		ac.WithAnnotations(map[string]string{AnnotationActiveRevision: spec.RevisionID})
	}
	applied, err := applyChanged(ctx, &d.marks, deps.Apply, "deployment", ns, name, cur, found, ac)
	if err != nil {
		return nil, false, err
	}
	return applied, !found || applied.Generation != cur.Generation, nil
}

// transportToken returns the Agent's gateway token; with create, its
// Secret is created the first time (never overwritten afterwards).
func (d *Driver) transportToken(ctx context.Context, a compute.AgentRef, create bool) (string, error) {
	ns, name := NamespaceName(a.NamespaceID), TransportSecretName(a.AgentID)
	secrets := d.cs.CoreV1().Secrets(ns)
	k := markKey{"secret", ns, name}
	// A Secret this process has not seen is most likely new (a first
	// deploy): it is created before it is read.
	read := !create || d.marks.seen(k)
	for range 2 {
		if read {
			cur, found, err := getOwned(ctx, "secret", ns, name, agentLabels(a, RoleTransport), secrets.Get)
			if err != nil {
				return "", err
			}
			if found {
				if t := string(cur.Data[TokenKey]); t != "" {
					d.marks.note(k, cur)
					return t, nil
				}
				return "", compute.Permanent(CodeOwnershipConflict, fmt.Errorf("secret %s/%s has no %s", ns, name, TokenKey))
			}
			if !create {
				return "", fmt.Errorf("secret %s/%s does not exist", ns, name)
			}
		}
		read = true
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			return "", err
		}
		obj := transportSecretObject(a, hex.EncodeToString(b))
		// Create, not apply: two occ processes racing make one token (the
		// one that loses reads the winner's).
		made, err := secrets.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: obj.Labels, Annotations: obj.Annotations},
			Type: corev1.SecretTypeOpaque, Data: obj.Data}, metav1.CreateOptions{FieldManager: FieldManager})
		if err == nil {
			d.marks.note(k, made)
			return string(made.Data[TokenKey]), nil
		}
		if !apierrors.IsAlreadyExists(err) {
			return "", classify("create secret "+name, err)
		}
	}
	return "", fmt.Errorf("secret %s/%s: created and not found", ns, name)
}

// deployment returns the Agent's gateway Deployment, nil when none.
func (d *Driver) deployment(ctx context.Context, a compute.AgentRef) (*appsv1.Deployment, error) {
	ns := NamespaceName(a.NamespaceID)
	cur, found, err := getOwned(ctx, "deployment", ns, GatewayName(a.AgentID), agentLabels(a, RoleGateway), d.cs.AppsV1().Deployments(ns).Get)
	if err != nil || !found {
		return nil, err
	}
	return cur, nil
}

// runs reports whether the Deployment runs the revision (one replica).
func runs(dep *appsv1.Deployment, revisionID string) bool {
	return dep != nil && dep.Annotations[AnnotationRevisionID] == revisionID && dep.Spec.Replicas != nil && *dep.Spec.Replicas > 0
}

// reapply applies what occ's field manager set on dep, changed by edit.
// What it set is this process's last apply when dep is what that apply
// answered (marks.lastApplied); otherwise it is read back from dep's
// managed fields, which costs more CPU than the rest of the call
// (structured-merge-diff).
func (d *Driver) reapply(ctx context.Context, dep *appsv1.Deployment, edit func(ac *appsv1ac.DeploymentApplyConfiguration)) error {
	k := markKey{"deployment", dep.Namespace, dep.Name}
	ac, err := d.ownedDeployment(k, dep)
	if err != nil {
		return fmt.Errorf("read back deployment %s: %w", dep.Name, err)
	}
	edit(ac)
	sum, err := hashOf(ac)
	if err != nil {
		return fmt.Errorf("apply deployment %s: %w", dep.Name, err)
	}
	applied, err := d.cs.AppsV1().Deployments(dep.Namespace).Apply(ctx, ac, applyOpts)
	if err != nil {
		d.marks.drop(k.kind, k.ns, k.name)
		return classify("apply deployment "+dep.Name, err)
	}
	d.marks.record(k, sum, applied, ac)
	return nil
}

// ownedDeployment returns a copy of what occ's field manager set on dep.
func (d *Driver) ownedDeployment(k markKey, dep *appsv1.Deployment) (*appsv1ac.DeploymentApplyConfiguration, error) {
	last, ok := d.marks.lastApplied(k, dep)
	if !ok {
		return appsv1ac.ExtractDeployment(dep, FieldManager)
	}
	b, err := json.Marshal(last)
	if err != nil {
		return nil, err
	}
	ac := &appsv1ac.DeploymentApplyConfiguration{}
	return ac, json.Unmarshal(b, ac)
}

// ActivateRevision marks the revision the one that serves; the Agent's
// Deployment must run it.
func (d *Driver) ActivateRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	dep, err := d.deployment(ctx, rev.AgentRef)
	if err != nil {
		return err
	}
	if !runs(dep, rev.RevisionID) {
		return fmt.Errorf("activate revision %s: the Agent's gateway does not run it", rev.RevisionID)
	}
	if dep.Annotations[AnnotationActiveRevision] == rev.RevisionID {
		return nil
	}
	return d.reapply(ctx, dep, func(ac *appsv1ac.DeploymentApplyConfiguration) {
		ac.WithAnnotations(map[string]string{AnnotationActiveRevision: rev.RevisionID})
	})
}

// RetireRevision stops the Agent's gateway if it still runs the revision
// (waiting for its Pods to end) and removes the revision's ConfigMap and
// secret environment; a gateway that runs another revision is left alone.
func (d *Driver) RetireRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	dep, err := d.deployment(ctx, rev.AgentRef)
	if err != nil {
		return err
	}
	if dep != nil && dep.Annotations[AnnotationRevisionID] == rev.RevisionID {
		if err := d.stop(ctx, dep, rev.AgentRef); err != nil {
			return err
		}
	} else if err := d.waitPodsGone(ctx, rev.AgentRef, rev.RevisionID); err != nil {
		return err
	}
	return d.deleteRevisionObjects(ctx, rev)
}

// StopAgent scales the gateway to no replica and waits for its Pods to
// end; state, credentials and configuration stay.
func (d *Driver) StopAgent(ctx context.Context, a compute.AgentRef) error {
	if err := a.Validate(); err != nil {
		return err
	}
	dep, err := d.deployment(ctx, a)
	if err != nil || dep == nil {
		return err
	}
	return d.stop(ctx, dep, a)
}

// stop scales dep to zero, drops the active mark and waits for the
// Agent's Pods to end.
func (d *Driver) stop(ctx context.Context, dep *appsv1.Deployment, a compute.AgentRef) error {
	if (dep.Spec.Replicas == nil || *dep.Spec.Replicas > 0) || dep.Annotations[AnnotationActiveRevision] != "" {
		err := d.reapply(ctx, dep, func(ac *appsv1ac.DeploymentApplyConfiguration) {
			delete(ac.Annotations, AnnotationActiveRevision)
			if ac.Spec != nil {
				ac.Spec.WithReplicas(0)
			}
		})
		if err != nil {
			return err
		}
	}
	d.forget(a)
	return d.waitPodsGone(ctx, a, "")
}

// DeleteAgent removes every object occ owns for the Agent, its state volume
// included, after its Pods have ended.
func (d *Driver) DeleteAgent(ctx context.Context, a compute.AgentRef) error {
	if err := a.Validate(); err != nil {
		return err
	}
	ns, name := NamespaceName(a.NamespaceID), GatewayName(a.AgentID)
	core, gw := d.cs.CoreV1(), agentLabels(a, RoleGateway)
	if err := deleteOwned(ctx, "deployment", ns, name, gw, d.cs.AppsV1().Deployments(ns).Get, d.cs.AppsV1().Deployments(ns).Delete); err != nil {
		return err
	}
	d.forget(a)
	if err := d.waitPodsGone(ctx, a, ""); err != nil {
		return err
	}
	dels := []func() error{
		func() error {
			return deleteOwned(ctx, "service", ns, name, gw, core.Services(ns).Get, core.Services(ns).Delete)
		},
		func() error {
			return deleteOwned(ctx, "serviceaccount", ns, name, gw, core.ServiceAccounts(ns).Get, core.ServiceAccounts(ns).Delete)
		},
		func() error {
			return deleteOwned(ctx, "persistentvolumeclaim", ns, StateClaimName(a.AgentID), agentLabels(a, RoleState),
				core.PersistentVolumeClaims(ns).Get, core.PersistentVolumeClaims(ns).Delete)
		},
		func() error {
			return deleteOwned(ctx, "secret", ns, TransportSecretName(a.AgentID), agentLabels(a, RoleTransport), core.Secrets(ns).Get, core.Secrets(ns).Delete)
		},
		func() error { return d.deleteLabelled(ctx, a, "") },
	}
	for _, del := range dels {
		if err := del(); err != nil {
			return err
		}
	}
	for _, k := range []string{"deployment", "service", "serviceaccount"} {
		d.marks.drop(k, ns, name)
	}
	d.marks.drop("persistentvolumeclaim", ns, StateClaimName(a.AgentID))
	d.marks.drop("secret", ns, TransportSecretName(a.AgentID))
	d.mu.Lock()
	delete(d.verified, a)
	d.mu.Unlock()
	return nil
}

// deleteRevisionObjects removes a revision's ConfigMap and secret
// environment.
func (d *Driver) deleteRevisionObjects(ctx context.Context, rev compute.RevisionRef) error {
	d.marks.drop("secret", NamespaceName(rev.NamespaceID), EnvSecretName(rev))
	d.marks.drop("configmap", NamespaceName(rev.NamespaceID), ConfigMapName(rev))
	return d.deleteLabelled(ctx, rev.AgentRef, rev.RevisionID)
}

// deleteLabelled deletes the per-revision ConfigMaps and Secrets of the
// Agent (of one revision when revisionID is set) that carry occ's labels.
func (d *Driver) deleteLabelled(ctx context.Context, a compute.AgentRef, revisionID string) error {
	ns := NamespaceName(a.NamespaceID)
	sel := labels.SelectorFromSet(agentLabels(a, RoleConfig)).String()
	envSel := labels.SelectorFromSet(agentLabels(a, RoleEnv)).String()
	if revisionID != "" {
		sel += "," + LabelRevision + "=" + revisionID
		envSel += "," + LabelRevision + "=" + revisionID
	}
	opts := metav1.DeleteOptions{}
	if err := d.cs.CoreV1().ConfigMaps(ns).DeleteCollection(ctx, opts, metav1.ListOptions{LabelSelector: sel}); err != nil && !apierrors.IsNotFound(err) {
		return classify("delete configmaps", err)
	}
	if err := d.cs.CoreV1().Secrets(ns).DeleteCollection(ctx, opts, metav1.ListOptions{LabelSelector: envSel}); err != nil && !apierrors.IsNotFound(err) {
		return classify("delete secrets", err)
	}
	return nil
}

// pods returns the Agent's gateway Pods (of one revision when revisionID
// is set) as the driver's watch has them (watchedPods: their identity,
// labels and status), or as listed when it has no watch.
func (d *Driver) pods(ctx context.Context, a compute.AgentRef, revisionID string) ([]corev1.Pod, error) {
	if pods, ok := d.watchedPods(a, revisionID); ok {
		return pods, nil
	}
	return d.listPods(ctx, a, revisionID)
}

// listPods lists the Agent's gateway Pods (of one revision when
// revisionID is set) from the API server, whole.
func (d *Driver) listPods(ctx context.Context, a compute.AgentRef, revisionID string) ([]corev1.Pod, error) {
	set := gatewaySelector(a)
	if revisionID != "" {
		set[LabelRevision] = revisionID
	}
	l, err := d.cs.CoreV1().Pods(NamespaceName(a.NamespaceID)).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(set).String()})
	if err != nil {
		return nil, classify("list pods", err)
	}
	return l.Items, nil
}

// waitPodsGone waits until none of the Agent's gateway Pods (of the
// revision, when set) exists any more, within the termination timeout.
// While the watch holds some it waits on the watch; that none is left is
// always the API server's answer, since the watch may not have seen a Pod
// made moments ago.
func (d *Driver) waitPodsGone(ctx context.Context, a compute.AgentRef, revisionID string) error {
	deadline := time.Now().Add(d.o.TerminationTimeout)
	for {
		ps, watched := d.watchedPods(a, revisionID)
		if !watched || len(ps) == 0 {
			var err error
			if ps, err = d.listPods(ctx, a, revisionID); err != nil {
				return err
			}
		}
		if len(ps) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d gateway Pod(s) of Agent %s still present after %s", len(ps), a.AgentID, d.o.TerminationTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(terminationPoll):
		}
	}
}
