package app

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// Diagnoser runs fresh checks of one revision through the installation's
// compute driver; the server wires it (nil when the driver cannot diagnose).
type Diagnoser func(ctx context.Context, nsID, agentID, revisionID string) (Diagnosis, error)

// Diagnosis is the answer of POST …/deployments/:id/diagnostics: fresh,
// never stored.
type Diagnosis struct {
	RevisionID string
	ObservedAt time.Time
	Checks     []DiagnosticCheck
}

// DiagnosticCheck is one check with a fixed code and message.
type DiagnosticCheck struct {
	Component string
	Check     string
	Status    string // occ.CheckSucceeded | occ.CheckFailed | occ.CheckUnknown
	Code      string
	Message   string
}

// diagnoseBudget bounds one diagnostics call as a whole.
const diagnoseBudget = 10 * time.Second

const actDiagnose = "deployments.diagnose"

var errNoEvidence = occ.E(occ.CodeDependencyUnavailable, "Diagnostics are unavailable: the compute driver gave no usable evidence for this revision.")

// DiagnoseDeployment runs fresh checks of one revision (exact agent:read
// and agent:operate on the Agent, agent_revision:read on the revision).
// Nothing stored changes. A driver that cannot diagnose, fails, or answers
// something other than bounded checks of this revision gives 503 without
// its message.
func (a *App) DiagnoseDeployment(ctx context.Context, c occ.Caller, nsID, agentID, revID string) (Diagnosis, error) {
	// Reads first: a caller who cannot see the Agent or the revision gets
	// 404, whatever else it holds; then operate (403).
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionRead), agentRef(nsID, agentID), actDiagnose, a.seeAgent(nsID, agentID)); err != nil {
		return Diagnosis{}, err
	}
	load := func(ctx context.Context) error { _, err := a.st.GetRevision(ctx, nsID, agentID, revID); return err }
	if err := a.require(ctx, c, occ.P(occ.KindAgentRevision, occ.ActionRead), revisionRef(nsID, revID), actDiagnose,
		seeExact(revisionRef(nsID, revID), load)); err != nil {
		return Diagnosis{}, err
	}
	row, err := a.st.GetRevision(ctx, nsID, agentID, revID)
	if err != nil {
		return Diagnosis{}, notFoundOr(err)
	}
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionOperate), agentRef(nsID, agentID), actDiagnose, a.seeAgent(nsID, agentID)); err != nil {
		return Diagnosis{}, err
	}
	if a.opts.Diagnose == nil {
		return Diagnosis{}, occ.Wrap(errNoEvidence.Code, errNoEvidence.Message, errors.New("the compute driver has no diagnostics"))
	}
	// The revision names the driver that ran it; another one has no
	// evidence of it.
	if s := store.DecodeRevision(row).Snapshot; s != nil && s.ComputeDriver != "" && a.opts.ComputeDriver != "" && s.ComputeDriver != a.opts.ComputeDriver {
		return Diagnosis{}, occ.Wrap(errNoEvidence.Code, errNoEvidence.Message, fmt.Errorf("revision ran on compute driver %q", s.ComputeDriver))
	}
	ctx, cancel := context.WithTimeout(ctx, diagnoseBudget)
	defer cancel()
	d, err := a.opts.Diagnose(ctx, nsID, agentID, revID)
	if err == nil {
		err = checkDiagnosis(d, revID)
	}
	if err != nil {
		return Diagnosis{}, occ.Wrap(errNoEvidence.Code, errNoEvidence.Message, fmt.Errorf("diagnose %s: %w", revID, err))
	}
	d.ObservedAt = a.now().UTC()
	return d, nil
}

// Bounds of one check as the API publishes it (api/openapi.yaml
// DiagnosticCheck).
var (
	checkName = regexp.MustCompile(`^[a-z][a-z0-9_.-]{0,63}$`)
	checkCode = regexp.MustCompile(`^[A-Z][A-Z0-9_]{1,63}$`)
)

const maxCheckMessage = 256

// checkDiagnosis accepts only evidence of the revision asked for: 1 to
// occ.MaxDiagnosticChecks checks with known statuses, bounded names and
// codes, and short one-line messages.
func checkDiagnosis(d Diagnosis, revID string) error {
	switch {
	case d.RevisionID != revID:
		return fmt.Errorf("the driver answered for revision %q", d.RevisionID)
	case len(d.Checks) == 0:
		return errors.New("the driver answered no checks")
	case len(d.Checks) > occ.MaxDiagnosticChecks:
		return fmt.Errorf("the driver answered %d checks", len(d.Checks))
	}
	for i, c := range d.Checks {
		switch {
		case c.Status != occ.CheckSucceeded && c.Status != occ.CheckFailed && c.Status != occ.CheckUnknown:
			return fmt.Errorf("check %d: status %q", i, c.Status)
		case !checkName.MatchString(c.Component) || !checkName.MatchString(c.Check) || !checkCode.MatchString(c.Code):
			return fmt.Errorf("check %d: malformed component, check or code", i)
		case !plainMessage(c.Message):
			return fmt.Errorf("check %d: malformed message", i)
		}
	}
	return nil
}

// plainMessage is a nonempty one-line message of at most maxCheckMessage
// characters.
func plainMessage(s string) bool {
	n := 0
	for _, r := range s {
		if n++; n > maxCheckMessage || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return false
		}
	}
	return n > 0
}
