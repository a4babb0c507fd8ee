package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// RuntimeLogReader reads the recent output of a revision's gateway through
// the installation's compute driver, raw (at most tailLines whole lines);
// the server wires it (nil: the route answers 501). It returns
// ErrRuntimeLogsUnsupported when the driver cannot read output.
type RuntimeLogReader func(ctx context.Context, nsID, agentID, revisionID string, tailLines int) (RuntimeLogs, error)

// ErrRuntimeLogsUnsupported is a RuntimeLogReader's answer when the compute
// driver cannot read its gateways' output.
var ErrRuntimeLogsUnsupported = errors.New("the compute driver cannot read gateway output")

// RuntimeLogs is the answer of GET …/deployments/:id/runtime/logs: whole
// lines, oldest first, every secret value replaced by occ.Redacted.
type RuntimeLogs struct {
	RevisionID string
	// Found is false when the driver keeps no output of the revision.
	Found     bool
	Lines     []string
	Truncated bool
	// Credentials are the gateway's own secrets, redacted from Lines
	// (from the RuntimeLogReader; never returned).
	Credentials []string
}

const actRuntimeLogsView = "agents.runtime_logs.view"

var (
	errLogsUnsupported  = occ.E(occ.CodeNotImplemented, "The installation's compute driver cannot read gateway output.")
	errLogsNotAudited   = occ.E(occ.CodeDependencyUnavailable, "The log read could not be audited, so no output was read.")
	errLogsUnreadable   = occ.E(occ.CodeDependencyUnavailable, "The compute driver could not read the gateway output.")
	errLogsUnredactable = occ.E(occ.CodeDependencyUnavailable,
		"A Secret bound to this revision, or the revision itself, could not be read (deleted since?), so the output cannot be redacted and none is shown.")
)

// ReadRuntimeLogs returns the last tailLines (1 to occ.MaxRuntimeLogLines;
// 0: occ.DefaultRuntimeLogLines) lines of a revision's gateway output. It
// needs agent:read (404 without it, as for another Namespace's Agent), and
// agent:read_logs or agent:administer on the Agent, unless a Restriction
// of agent:read_logs applies (it blocks administer too). Each read is
// audited (access) before any output is read; if the audit fails, nothing
// is read (fail closed). The values of the revision's bound Secrets and the
// gateway's own credential are replaced by occ.Redacted.
func (a *App) ReadRuntimeLogs(ctx context.Context, c occ.Caller, nsID, agentID, revID string, tailLines int) (RuntimeLogs, error) {
	if tailLines == 0 {
		tailLines = occ.DefaultRuntimeLogLines
	}
	if tailLines < 1 || tailLines > occ.MaxRuntimeLogLines {
		return RuntimeLogs{}, occ.Invalid(fmt.Sprintf("tailLines must be 1 to %d.", occ.MaxRuntimeLogLines),
			occ.Detail{Path: "/tailLines", Code: occ.DetailInvalidValue})
	}
	ref := agentRef(nsID, agentID)
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionRead), ref, actRuntimeLogsView, a.seeAgent(nsID, agentID)); err != nil {
		return RuntimeLogs{}, err
	}
	row, err := a.st.GetRevision(ctx, nsID, agentID, revID)
	if err != nil {
		return RuntimeLogs{}, notFoundOr(err)
	}
	if err := a.requireReadLogs(ctx, c, ref); err != nil {
		return RuntimeLogs{}, err
	}
	if a.opts.RuntimeLogs == nil {
		return RuntimeLogs{}, errLogsUnsupported
	}
	ev := occ.AuditEvent{Kind: occ.AuditAccess, Action: actRuntimeLogsView, ActorID: c.PrincipalID, NamespaceID: nsID,
		Resource: revisionRef(nsID, revID), Details: map[string]any{"agentId": agentID, "tailLines": tailLines}}
	if err := a.tx(ctx, func(tx *store.Tx) error { return a.record(ctx, tx, ev) }); err != nil {
		return RuntimeLogs{}, occ.Wrap(errLogsNotAudited.Code, errLogsNotAudited.Message, err)
	}
	logs, err := a.opts.RuntimeLogs(ctx, nsID, agentID, revID, tailLines)
	switch {
	case errors.Is(err, ErrRuntimeLogsUnsupported):
		return RuntimeLogs{}, errLogsUnsupported
	case err != nil:
		return RuntimeLogs{}, occ.Wrap(errLogsUnreadable.Code, errLogsUnreadable.Message, err)
	case !logs.Found:
		return RuntimeLogs{RevisionID: revID}, nil
	}
	secrets, err := a.boundSecrets(ctx, nsID, store.DecodeRevision(row))
	if err != nil {
		return RuntimeLogs{}, err
	}
	secrets = append(secrets, logs.Credentials...)
	for i, l := range logs.Lines {
		logs.Lines[i] = redact(l, secrets)
	}
	clear(secrets)
	clear(logs.Credentials)
	logs.RevisionID, logs.Credentials = revID, nil
	return logs, nil
}

// requireReadLogs allows agent:read_logs, or agent:administer (which
// covers it) unless a Restriction of agent:read_logs applies; a refusal is
// audited as a denial of agent:read_logs.
func (a *App) requireReadLogs(ctx context.Context, c occ.Caller, ref occ.ResourceRef) error {
	readLogs := occ.P(occ.KindAgent, occ.ActionReadLogs)
	d, err := a.authz.Decide(ctx, c, readLogs, ref)
	if err != nil {
		return err
	}
	if d.Allowed {
		return nil
	}
	if d.Reason != iam.ReasonRestricted {
		restricted, err := a.authz.Restricted(ctx, c, readLogs, ref)
		if err != nil {
			return err
		}
		if !restricted {
			if d, err := a.authz.Decide(ctx, c, occ.P(occ.KindAgent, occ.ActionAdminister), ref); err != nil || d.Allowed {
				return err
			}
		}
	}
	// Denied: Authorize decides again and audits the denial.
	return a.require(ctx, c, readLogs, ref, actRuntimeLogsView, nil)
}

// boundSecrets are the values of a revision's bound Secrets
// (secretBindings and the harness credential), to redact from its
// gateway's output. One that cannot be read (deleted since), or a snapshot
// that cannot be read, may leave a value in the output unknown: the read
// fails closed.
func (a *App) boundSecrets(ctx context.Context, nsID string, rev occ.Revision) ([]string, error) {
	s := rev.Snapshot
	if !rev.Complete() {
		// Unreadable: which Secrets it binds is unknown.
		return nil, occ.Wrap(errLogsUnredactable.Code, errLogsUnredactable.Message, fmt.Errorf("revision %s: %v", rev.ID, rev.ReadError))
	}
	var ids []string
	for _, b := range s.SecretBindings {
		ids = append(ids, b.Source.ID)
	}
	if h := s.HarnessAuth; h != nil && h.Source != nil {
		ids = append(ids, h.Source.ID)
	}
	var out []string
	for _, id := range ids {
		v, err := a.ResolveSecret(ctx, nsID, id)
		if err != nil {
			clear(out)
			return nil, occ.Wrap(errLogsUnredactable.Code, errLogsUnredactable.Message, err)
		}
		out = append(out, string(v))
		clear(v)
	}
	return out, nil
}

// redact replaces every non-empty secret value in line, longest first (a
// value that contains another is replaced whole).
func redact(line string, secrets []string) string {
	sorted := slices.Clone(secrets)
	slices.SortFunc(sorted, func(x, y string) int { return len(y) - len(x) })
	for _, s := range sorted {
		if s != "" {
			line = strings.ReplaceAll(line, s, occ.Redacted)
		}
	}
	return line
}
