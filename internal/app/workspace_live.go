package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// GatewayEndpoint finds the private endpoint of an Agent's running gateway;
// the server wires it to the compute driver.
type GatewayEndpoint func(ctx context.Context, nsID, agentID string) (GatewayTarget, bool)

// GatewayTarget is how occ reaches a running gateway: its private
// WebSocket URL and occ's backend credential (the token, or in
// trusted-proxy mode the password), the revision it runs, and the browser
// origin it trusts occ's native admin proxy for ("" when it was not started
// for the native admin UI).
type GatewayTarget struct {
	URL               string
	Token             string
	Password          string
	RevisionID        string
	NativeAdminOrigin string
	ProxyIdentity     string // what occ's native admin proxy asserts to it
}

// workspaceCallTimeout bounds one workspace-file request to the gateway.
const workspaceCallTimeout = 30 * time.Second

const actWorkspaceWrite = "agents.workspace.files.write"

var (
	errWorkspaceUnavailable = occ.E(occ.CodeDependencyUnavailable, "Workspace access is unavailable: the Agent needs an active revision and a reachable gateway.")
	errUnknownOutcome       = occ.E(occ.CodeUnknownOutcome, "occ could not confirm the write or its audit record; read the file before writing again.")
)

// WorkspaceFile is one live workspace file.
type WorkspaceFile struct {
	Name    string
	Content string
	Size    int
}

// liveGateway checks an Agent can serve workspace access and dials its gateway.
func (a *App) liveGateway(ctx context.Context, nsID, id string, write bool) (*gateway.Conn, occ.Agent, error) {
	row, err := a.st.GetAgent(ctx, nsID, id)
	if err != nil {
		return nil, occ.Agent{}, notFoundOr(err)
	}
	g := store.DecodeAgent(row)
	switch {
	case write && g.Status == occ.AgentDeleting:
		return nil, g, occ.E(occ.CodeAgentDeleting, "The Agent is being deleted.")
	case write && g.DesiredState == occ.DesiredStopped && g.ActiveRevisionID != "":
		return nil, g, occ.E(occ.CodeResourceConflict, "The Agent is stopping.")
	case g.ActiveRevisionID == "" || a.opts.Gateways == nil:
		return nil, g, errWorkspaceUnavailable
	}
	ep, ok := a.opts.Gateways(ctx, nsID, id)
	if !ok {
		return nil, g, errWorkspaceUnavailable
	}
	conn, err := gateway.Dial(ctx, gateway.Options{URL: ep.URL, Token: ep.Token, Password: ep.Password})
	if err != nil {
		return nil, g, occ.Wrap(occ.CodeDependencyUnavailable, errWorkspaceUnavailable.Message, err)
	}
	return conn, g, nil
}

// ReadWorkspaceFile reads one of the four files from the Agent's live
// workspace (agent:read).
func (a *App) ReadWorkspaceFile(ctx context.Context, c occ.Caller, nsID, id, name string) (WorkspaceFile, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionRead), agentRef(nsID, id), "agents.workspace.files.read", a.seeAgent(nsID, id)); err != nil {
		return WorkspaceFile{}, err
	}
	if !ValidWorkspaceFileName(name) {
		return WorkspaceFile{}, invalidAt("/name", "The file name must be AGENTS.md, SOUL.md, IDENTITY.md or USER.md.")
	}
	ctx, cancel := context.WithTimeout(ctx, workspaceCallTimeout)
	defer cancel()
	conn, _, err := a.liveGateway(ctx, nsID, id, false)
	if err != nil {
		return WorkspaceFile{}, err
	}
	defer conn.Close()
	f, err := conn.GetAgentFile(ctx, "", name)
	if err != nil {
		return WorkspaceFile{}, occ.Wrap(occ.CodeDependencyUnavailable, errWorkspaceUnavailable.Message, err)
	}
	if f.Missing {
		return WorkspaceFile{}, occ.E(occ.CodeNotFound, "The workspace file does not exist yet.")
	}
	return WorkspaceFile{Name: name, Content: f.Content, Size: len(f.Content)}, nil
}

// WriteWorkspaceFile creates or replaces one file in the Agent's live
// workspace (agent:operate), replacing the version it read (expected
// hash). No change is ever unaudited: the intent (outcome pending, with the
// file's name, size and digest, never its content) is committed before the
// gateway is asked, and when it cannot be the file is not written (503
// DEPENDENCY_UNAVAILABLE); the outcome follows, naming the intent. A write
// or outcome record that cannot be confirmed answers UNKNOWN_OUTCOME and is
// never retried behind the caller's back.
func (a *App) WriteWorkspaceFile(ctx context.Context, c occ.Caller, nsID, id, name, content string) (WorkspaceFile, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionOperate), agentRef(nsID, id), actWorkspaceWrite, a.seeAgent(nsID, id)); err != nil {
		return WorkspaceFile{}, err
	}
	if !ValidWorkspaceFileName(name) {
		return WorkspaceFile{}, invalidAt("/name", "The file name must be AGENTS.md, SOUL.md, IDENTITY.md or USER.md.")
	}
	if err := ValidateWorkspaceContent(content, "/content"); err != nil {
		return WorkspaceFile{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, workspaceCallTimeout)
	defer cancel()
	conn, g, err := a.liveGateway(ctx, nsID, id, true)
	if err != nil {
		return WorkspaceFile{}, err
	}
	defer conn.Close()
	cur, err := conn.GetAgentFile(ctx, "", name)
	if err != nil {
		return WorkspaceFile{}, occ.Wrap(occ.CodeDependencyUnavailable, errWorkspaceUnavailable.Message, err)
	}
	w := gateway.AgentFileWrite{Name: name, Content: content}
	if !cur.Missing {
		w.ExpectedHash = cur.Hash
	}
	intent := occ.AuditEvent{ID: occ.NewID(occ.PrefixAudit), Action: actWorkspaceWrite, Outcome: occ.OutcomePending, ActorID: c.PrincipalID,
		Resource: g.Ref(), Details: writeIntentDetails(name, content, cur)}
	if err := a.recordAlone(ctx, intent); err != nil {
		return WorkspaceFile{}, err
	}
	_, werr := conn.SetAgentFile(ctx, w)
	outcome, reason := occ.OutcomeSuccess, ""
	switch {
	case werr == nil:
	case gateway.OutcomeUnknown(werr):
		outcome, reason = occ.OutcomeFailure, "OUTCOME_UNKNOWN"
	case errors.Is(werr, gateway.ErrFileConflict):
		outcome, reason = occ.OutcomeFailure, "FILE_CHANGED"
	default:
		outcome, reason = occ.OutcomeFailure, "GATEWAY_REFUSED"
	}
	ev := occ.AuditEvent{Action: actWorkspaceWrite, Outcome: outcome, ActorID: c.PrincipalID, Resource: g.Ref(), ReasonCode: reason,
		Details: map[string]any{"fileName": name, "size": len(content), "intentId": intent.ID}}
	aerr := a.st.InTx(context.WithoutCancel(ctx), func(tx *store.Tx) error { return audit.Append(ctx, tx, ev) })
	switch {
	case werr != nil && reason == "OUTCOME_UNKNOWN":
		return WorkspaceFile{}, errUnknownOutcome
	case werr != nil && reason == "FILE_CHANGED":
		return WorkspaceFile{}, occ.E(occ.CodeResourceConflict, "The file changed while it was being written; read it and try again.")
	case werr != nil:
		return WorkspaceFile{}, occ.Wrap(occ.CodeDependencyUnavailable, errWorkspaceUnavailable.Message, werr)
	case aerr != nil:
		return WorkspaceFile{}, &occ.Error{Code: occ.CodeUnknownOutcome, Message: errUnknownOutcome.Message, Cause: fmt.Errorf("audit workspace write: %w", aerr)}
	}
	return WorkspaceFile{Name: name, Size: len(content)}, nil
}

// writeIntentDetails describe a workspace write before it happens: the
// file, the size and SHA-256 of the new content and, when the file exists,
// the digest of the version it replaces; never content.
func writeIntentDetails(name, content string, cur gateway.AgentFile) map[string]any {
	sum := sha256.Sum256([]byte(content))
	d := map[string]any{"fileName": name, "size": len(content), "sha256": hex.EncodeToString(sum[:])}
	if !cur.Missing {
		d["previousSha256"] = cur.Hash
	}
	return d
}
