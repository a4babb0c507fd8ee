package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Audit actions of Namespace reconciliation.
const (
	ActNamespaceEnsure = "namespaces.lifecycle.ensure"
	ActNamespaceDelete = "namespaces.lifecycle.delete"
)

type namespaceWorker struct {
	river.WorkerDefaults[jobs.NamespaceArgs]
	*deps
}

// Work converges one Namespace toward ready or deleted.
func (w *namespaceWorker) Work(ctx context.Context, job *river.Job[jobs.NamespaceArgs]) error {
	release, err := w.claim(ctx, job.Args.NamespaceID)
	if err != nil {
		return err
	}
	defer release()
	switch job.Args.Target {
	case jobs.TargetReady:
		return w.ensure(ctx, job)
	case jobs.TargetDeleted:
		return w.teardown(ctx, job)
	}
	return river.JobCancel(fmt.Errorf("unknown namespace target %q", job.Args.Target))
}

// ensure prepares a provisioning Namespace and marks it ready or failed.
func (w *namespaceWorker) ensure(ctx context.Context, job *river.Job[jobs.NamespaceArgs]) error {
	ns, err := w.st.GetNamespace(ctx, job.Args.NamespaceID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ns.Status != occ.NamespaceProvisioning) {
		return nil // superseded: deleted or already settled
	}
	if err != nil {
		return err
	}
	caller := occ.Caller{PrincipalID: job.Args.ActorID, Method: occ.AuthWorker}
	inst, err := w.st.GetInstallation(ctx)
	if err != nil {
		return err
	}
	d, err := w.authz.Decide(ctx, caller, occ.P(occ.KindNamespace, occ.ActionCreate), occ.ResourceRef{Kind: occ.KindInstallation, ID: inst.ID})
	if err != nil {
		return err
	}
	if !d.Allowed {
		return w.settleNamespace(ctx, job, ns, occ.NamespaceFailed, occ.ReasonAuthorizationDenied, d.Reason)
	}
	if w.now().After(ns.CreatedAt.Add(w.opts.ConvergenceTimeout)) {
		return w.settleNamespace(ctx, job, ns, occ.NamespaceFailed, occ.ReasonDeadline, "")
	}
	obs, err := w.driver.EnsureNamespace(ctx, compute.NamespaceRef{ID: ns.ID, Name: ns.Name})
	if err != nil {
		if code := compute.PermanentCode(err); code != "" {
			return w.settleNamespace(ctx, job, ns, occ.NamespaceFailed, code, "")
		}
		if job.Attempt >= job.MaxAttempts {
			return w.settleNamespace(ctx, job, ns, occ.NamespaceFailed, occ.ReasonExhausted, "")
		}
		return w.retry(ctx, job, occ.ResourceRef{Kind: occ.KindNamespace, ID: ns.ID, NamespaceID: ns.ID}, err)
	}
	if !obs.Done {
		return river.JobSnooze(Delay(job.Attempt + 1))
	}
	return w.settleNamespace(ctx, job, ns, occ.NamespaceReady, occ.ReasonNamespaceReconciled, "")
}

// settleNamespace moves a still-provisioning Namespace to ready or failed,
// with its audit event, in one transaction.
func (w *namespaceWorker) settleNamespace(ctx context.Context, job *river.Job[jobs.NamespaceArgs], ns occ.Namespace,
	to occ.NamespaceStatus, code, reason string) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	err := w.st.InTx(ctx, func(tx *store.Tx) error {
		cur, err := tx.GetNamespace(ctx, ns.ID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && cur.Status != occ.NamespaceProvisioning) {
			return nil
		}
		if err != nil {
			return err
		}
		cur.Status, cur.UpdatedAt = to, w.now()
		if _, err := tx.UpdateNamespace(ctx, cur); err != nil {
			return err
		}
		outcome := occ.OutcomeSuccess
		if to == occ.NamespaceFailed {
			outcome = occ.OutcomeFailure
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActNamespaceEnsure, Outcome: outcome,
			ActorID: job.Args.ActorID, Resource: cur.Ref(), ReasonCode: code,
			Details: map[string]any{"attemptCount": job.Attempt, "decisionReason": reason, "status": string(to)}})
	})
	if err != nil {
		return err
	}
	if to == occ.NamespaceFailed {
		return river.JobCancel(errors.New(code))
	}
	return nil
}

// teardown removes a deleting Namespace: driver first, then, in one
// transaction, its IAM policy, service principals, tombstone and audit.
func (w *namespaceWorker) teardown(ctx context.Context, job *river.Job[jobs.NamespaceArgs]) error {
	ns, err := w.st.GetNamespace(ctx, job.Args.NamespaceID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && ns.Status != occ.NamespaceDeleting) {
		return nil
	}
	if err != nil {
		return err
	}
	td, err := w.st.GetTeardown(ctx, ns.ID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && td.State != occ.TeardownQueued) {
		return nil // a stale job: the teardown failed or was replaced
	}
	if err != nil {
		return err
	}
	td.Attempts = job.Attempt
	caller := occ.Caller{PrincipalID: td.ActorID, Method: occ.AuthWorker}
	d, err := w.authz.Decide(ctx, caller, occ.P(occ.KindNamespace, occ.ActionDelete), ns.Ref())
	if err != nil {
		return err
	}
	if !d.Allowed {
		return w.failTeardown(ctx, td, ActNamespaceDelete, occ.ReasonAuthorizationDenied)
	}
	obs, err := w.driver.DeleteNamespace(ctx, compute.NamespaceRef{ID: ns.ID, Name: ns.Name})
	if err != nil {
		if code := compute.PermanentCode(err); code != "" {
			return w.failTeardown(ctx, td, ActNamespaceDelete, code)
		}
		if job.Attempt >= job.MaxAttempts {
			return w.failTeardown(ctx, td, ActNamespaceDelete, occ.ReasonExhausted)
		}
		return w.retry(ctx, job, ns.Ref(), err)
	}
	if !obs.Done {
		return river.JobSnooze(Delay(job.Attempt + 1))
	}
	return w.st.InTx(ctx, func(tx *store.Tx) error {
		policy, err := tx.DeleteNamespacePolicy(ctx, ns.ID)
		if err != nil {
			return err
		}
		principals, err := tx.DeleteNamespacePrincipals(ctx, ns.ID)
		if err != nil {
			return err
		}
		if err := tx.DeleteSeededPresets(ctx, ns.ID); err != nil {
			return err
		}
		if err := tx.TombstoneNamespace(ctx, ns.ID, occ.Millis(w.now())); err != nil {
			return err
		}
		if err := tx.DeleteTeardown(ctx, ns.ID); err != nil {
			return err
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: ActNamespaceDelete, Outcome: occ.OutcomeSuccess,
			ActorID: td.ActorID, Resource: ns.Ref(), ReasonCode: occ.ReasonNamespaceDeleted,
			Details: map[string]any{"attemptCount": job.Attempt, "removedBindingCount": policy["bindings"],
				"removedRestrictionCount": policy["restrictions"], "removedRoleCount": policy["roles"],
				"removedServicePrincipalIds": principals}})
	})
}

// failTeardown records a teardown that stopped: the Namespace or Agent
// stays deleting until its initiator (or a taker-over) repeats DELETE.
func (w *deps) failTeardown(ctx context.Context, td occ.Teardown, action, code string) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	err := w.st.InTx(ctx, func(tx *store.Tx) error {
		td.State, td.LastCode, td.UpdatedAt = occ.TeardownFailed, code, w.now()
		if err := tx.UpsertTeardown(ctx, td); err != nil {
			return err
		}
		return audit.Append(ctx, tx, occ.AuditEvent{Kind: occ.AuditReconcile, Action: action, Outcome: occ.OutcomeFailure,
			ActorID: td.ActorID, Resource: occ.ResourceRef{Kind: td.ResourceKind, ID: td.ResourceID, NamespaceID: td.NamespaceID},
			ReasonCode: code, Details: map[string]any{"attemptCount": td.Attempts, "final": true}})
	})
	if err != nil {
		return err
	}
	return river.JobCancel(errors.New(code))
}

// retry records a retryable failure and hands the error back to River,
// which schedules the next attempt with backoff.
func (w *namespaceWorker) retry(ctx context.Context, job *river.Job[jobs.NamespaceArgs], res occ.ResourceRef, cause error) error {
	ctx, cancel := recordContext(ctx)
	defer cancel()
	w.log.Warn("namespace reconcile failed; will retry", "namespace", res.ID, "target", job.Args.Target,
		"attempt", job.Attempt, "error", cause)
	err := audit.Append(ctx, w.st, occ.AuditEvent{Kind: occ.AuditReconcile, Action: "namespaces.lifecycle." + job.Args.Target,
		Outcome: occ.OutcomeFailure, ActorID: job.Args.ActorID, Resource: res, ReasonCode: occ.ReasonDependencyUnavailable,
		Details: map[string]any{"attemptCount": job.Attempt}})
	if err != nil {
		return fmt.Errorf("%w (and audit failed: %v)", cause, err)
	}
	return cause
}
