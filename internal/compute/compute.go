// Package compute defines the Compute Driver contract: how occ asks a place
// that runs gateways (local processes, SSH hosts, Docker, Kubernetes) to
// converge toward persisted desired state. Every method is idempotent and
// keyed by IDs.
package compute

import (
	"context"
	"errors"
	"fmt"

	"github.com/openclaw/occ/internal/occ"
)

// NamespaceRef names a Namespace to a driver.
type NamespaceRef struct {
	ID   string
	Name string
}

// NamespaceObservation is what a driver saw after acting on a Namespace.
// Done false means "not yet; ask again later".
type NamespaceObservation struct {
	Done bool
}

// Capabilities is what a driver declares it can run; admission and the
// worker consult it through Capabilities.Refusal only (one place), so a
// revision the driver cannot honour fails with a fixed code instead of
// running without what it asked for.
type Capabilities = occ.ComputeCapabilities

// Driver is a Compute Driver: the whole contract a place that runs
// gateways implements. Every method is idempotent and keyed by IDs; errors
// are retryable unless marked Permanent, and those marked Unavailable (the
// place cannot answer now) are waited out without spending attempts. computetest.Run states every
// obligation as a test; a new driver runs it with one call.
type Driver interface {
	// Name is the driver's configuration name (local, ssh, docker, kubernetes).
	Name() string
	// Capabilities declares what the driver can run. It never changes
	// while the driver lives.
	Capabilities() Capabilities

	// EnsureNamespace prepares the place where a Namespace's Agents will run.
	EnsureNamespace(ctx context.Context, ns NamespaceRef) (NamespaceObservation, error)
	// DeleteNamespace removes everything the driver owns for a Namespace,
	// its Agents' workloads and data included.
	DeleteNamespace(ctx context.Context, ns NamespaceRef) (NamespaceObservation, error)

	// PrepareRevision creates or reuses the Agent's gateway for the
	// revision and reports readiness; not ready is not an error. The
	// worker calls it only for a spec its Capabilities accept.
	PrepareRevision(ctx context.Context, spec RevisionSpec) (Readiness, error)
	// ActivateRevision makes a ready revision the one that serves; it
	// fails for a revision that is not prepared and running.
	ActivateRevision(ctx context.Context, rev RevisionRef) error
	// RetireRevision stops a revision that is no longer wanted, never
	// touching a gateway that now belongs to another revision.
	RetireRevision(ctx context.Context, rev RevisionRef) error
	// StopAgent removes execution and routing of whatever runs for the
	// Agent; workspace, state and credentials stay.
	StopAgent(ctx context.Context, agent AgentRef) error
	// DeleteAgent removes everything the driver owns for the Agent,
	// workspace data included.
	DeleteAgent(ctx context.Context, agent AgentRef) error

	// GatewayEndpoint returns the private endpoint of the Agent's running
	// gateway, if any.
	GatewayEndpoint(ctx context.Context, agent AgentRef) (Endpoint, bool)
	// Diagnose runs fresh checks of a revision (at most MaxChecks); a
	// revision without a workload gives unknown checks, not an error.
	Diagnose(ctx context.Context, rev RevisionRef) (Diagnosis, error)
	// Logs reads the recent output of the revision's gateway, bounded by
	// opts and MaxLogBytes (TailLines), raw: the caller redacts secrets.
	// Found is false when the driver keeps no output of the revision; a
	// driver that cannot read output returns ErrLogsUnsupported.
	Logs(ctx context.Context, rev RevisionRef, opts LogOptions) (Logs, error)
}

// PermanentError is a failure that retrying cannot fix.
type PermanentError struct {
	Code string
	// Data, when set, is the deployment's error.data: closed, bounded,
	// credential-free facts that name the cause (for example the pluginId
	// of a plugin that failed to install).
	Data map[string]any
	Err  error
}

func (e *PermanentError) Error() string { return fmt.Sprintf("%s: %v", e.Code, e.Err) }
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as not worth retrying, with an allowlisted code.
func Permanent(code string, err error) error { return &PermanentError{Code: code, Err: err} }

// PermanentWith is Permanent with the error.data that names the cause.
func PermanentWith(code string, data map[string]any, err error) error {
	return &PermanentError{Code: code, Data: data, Err: err}
}

// PermanentData returns the data of a permanent error, or nil.
func PermanentData(err error) map[string]any {
	var p *PermanentError
	if errors.As(err, &p) {
		return p.Data
	}
	return nil
}

// PermanentCode returns the code of a permanent error, or "" for a
// retryable one.
func PermanentCode(err error) string {
	var p *PermanentError
	if errors.As(err, &p) {
		return p.Code
	}
	return ""
}

// ErrUnavailable is what errors.Is finds in a failure marked Unavailable:
// the driver's dependency (an API server, a host, a daemon) could not be
// reached or asked to back off (429, 5xx, a timeout, a refused or reset
// connection). The worker retries such a call with backoff until the
// deployment's convergence deadline without spending an attempt, and
// shows the deployment queued with DEPENDENCY_UNAVAILABLE meanwhile.
var ErrUnavailable = errors.New("compute dependency unavailable")

type unavailableError struct{ err error }

func (e *unavailableError) Error() string        { return e.err.Error() }
func (e *unavailableError) Unwrap() error        { return e.err }
func (e *unavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unavailable marks err as the driver's dependency being unavailable for
// now (see ErrUnavailable); nil stays nil.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return &unavailableError{err: err}
}
