package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/openclaw/occ/internal/compute"
)

// classify turns an API error into the contract's classes: 400 and 422
// (CodeRequestInvalid), 401 and 403 (CodeAccessDenied) and 409 conflicts of
// server-side apply (another manager owns the field: CodeOwnershipConflict)
// are permanent; 429, 5xx, timeouts and socket errors are retryable and
// marked compute.Unavailable (the API server cannot answer now: the worker
// waits for it without spending attempts); anything else (a namespace
// still terminating) is retryable. op names what was attempted.
func classify(op string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s: %w", op, err)
	switch {
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		return err
	case apierrors.IsUnauthorized(err), apierrors.IsForbidden(err):
		return compute.Permanent(CodeAccessDenied, err)
	case apierrors.IsBadRequest(err), apierrors.IsInvalid(err):
		return compute.Permanent(CodeRequestInvalid, err)
	case apierrors.IsConflict(err):
		return compute.Permanent(CodeOwnershipConflict, err)
	case unavailable(err):
		return compute.Unavailable(err)
	}
	return err
}

// unavailable reports whether err says the API server cannot answer now:
// a 429 or 5xx status (a 504 timeout included), or no answer at all (a
// refused, reset or timed-out connection, an unexpected EOF).
func unavailable(err error) bool {
	var st apierrors.APIStatus
	if errors.As(err, &st) {
		code := st.Status().Code
		return code == http.StatusTooManyRequests || code >= http.StatusInternalServerError
	}
	var ne net.Error
	return errors.As(err, &ne) || utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err)
}

// errNotOwned is the permanent error of an object occ did not create.
func errNotOwned(kind, namespace, name string) error {
	where := name
	if namespace != "" {
		where = namespace + "/" + name
	}
	return compute.Permanent(CodeOwnershipConflict,
		fmt.Errorf("%s %s exists without occ's ownership labels (%s=%s and the occ IDs); occ does not adopt it", kind, where, LabelManagedBy, ManagedBy))
}

// getOwned reads an object that occ would create under name: found false
// when it does not exist; an error when it exists without the labels want
// (never adopted) or cannot be read.
func getOwned[T metav1.Object](ctx context.Context, kind, namespace, name string, want map[string]string,
	get func(context.Context, string, metav1.GetOptions) (T, error)) (obj T, found bool, err error) {
	obj, err = get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		var zero T
		return zero, false, nil
	case err != nil:
		return obj, false, classify("read "+kind+" "+name, err)
	case !owns(obj.GetLabels(), want):
		return obj, true, errNotOwned(kind, namespace, name)
	}
	return obj, true, nil
}

// deleteOwned deletes an object if it exists and occ owns it (in the
// background: Kubernetes' garbage collector removes what it owns, and an
// object with finalizers, like a claim still protected, goes once they are
// done); an object without occ's labels is left alone and reported.
func deleteOwned[T metav1.Object](ctx context.Context, kind, namespace, name string, want map[string]string,
	get func(context.Context, string, metav1.GetOptions) (T, error),
	del func(context.Context, string, metav1.DeleteOptions) error) error {
	obj, found, err := getOwned(ctx, kind, namespace, name, want, get)
	if err != nil || !found || obj.GetDeletionTimestamp() != nil {
		return err
	}
	uid := obj.GetUID()
	bg := metav1.DeletePropagationBackground
	err = del(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg, Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// The UID precondition failed: the object was replaced meanwhile;
		// look again at the next call.
		return fmt.Errorf("delete %s %s: replaced meanwhile: %w", kind, name, err)
	}
	return classify("delete "+kind+" "+name, err)
}

// apply options: one field manager; Force is false, so a field another
// manager owns is a conflict (permanent), never taken over.
var applyOpts = metav1.ApplyOptions{FieldManager: FieldManager}
