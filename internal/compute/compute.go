// Package compute defines the Compute Driver contract: how occ asks a place
// that runs gateways (local processes, SSH hosts, Docker, Kubernetes) to
// converge toward persisted desired state. Every method is idempotent and
// keyed by IDs.
package compute

import (
	"context"
	"errors"
	"fmt"
)

// NamespaceRef names a Namespace to a driver.
type NamespaceRef struct {
	ID   string
	Name string
}

// NamespaceObservation is what a driver saw after acting on a Namespace.
// Done false with a PendingReason means "not yet; ask again later".
type NamespaceObservation struct {
	Done          bool
	PendingReason string
}

// Driver is a Compute Driver.
type Driver interface {
	// Name is the driver's configuration name (local, ssh, docker, kubernetes).
	Name() string
	// EnsureNamespace prepares the place where a Namespace's Agents will run.
	EnsureNamespace(ctx context.Context, ns NamespaceRef) (NamespaceObservation, error)
	// DeleteNamespace removes everything the driver owns for a Namespace.
	DeleteNamespace(ctx context.Context, ns NamespaceRef) (NamespaceObservation, error)
}

// PermanentError is a failure that retrying cannot fix.
type PermanentError struct {
	Code string
	Err  error
}

func (e *PermanentError) Error() string { return fmt.Sprintf("%s: %v", e.Code, e.Err) }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as not worth retrying, with an allowlisted code.
func Permanent(code string, err error) error { return &PermanentError{Code: code, Err: err} }

// PermanentCode returns the code of a permanent error, or "" for a
// retryable one.
func PermanentCode(err error) string {
	var p *PermanentError
	if errors.As(err, &p) {
		return p.Code
	}
	return ""
}
