package worker

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// The checks a revision passes before any effect, in order: its owner and
// admitted identity (load), that it is still wanted (preconditions), the
// deploy permission set again (reauthorize), what the driver can run
// (computeChecks), the credential sources it names (sourceChecks), then the
// spec it starts with (buildSpec). Each failure is a fixed deployment code.

// load reads the Agent and revision; a missing owner is permanent.
func (w *revisionWorker) load(ctx context.Context, p *pass) (string, error) {
	a := p.job.Args
	arow, err := w.st.GetAgent(ctx, a.NamespaceID, a.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return occ.DeployInvalidOwner, nil
	}
	if err != nil {
		return "", err
	}
	rrow, err := w.st.GetRevision(ctx, a.NamespaceID, a.AgentID, a.RevisionID)
	if errors.Is(err, store.ErrNotFound) {
		return occ.DeployInvalidOwner, nil
	}
	if err != nil {
		return "", err
	}
	p.ag, p.rev = store.DecodeAgent(arow), store.DecodeRevision(rrow)
	if !p.rev.Complete() || p.rev.Snapshot.ServicePrincipalID != p.ag.ServicePrincipalID {
		return occ.DeployInvalidAdmittedRevision, nil
	}
	return "", nil
}

// preconditions: the Namespace is ready; the Agent still wants to run and
// no newer revision replaced this one.
func (w *revisionWorker) preconditions(ctx context.Context, p *pass) string {
	ns, err := w.st.GetNamespace(ctx, p.ag.NamespaceID)
	if err != nil || ns.Status != occ.NamespaceReady {
		return occ.DeployNamespaceNotReady
	}
	if p.ag.Status == occ.AgentDeleting || p.ag.DesiredState != occ.DesiredRunning {
		return occ.DeployStopped
	}
	if newer, err := w.st.NewerRevisionExists(ctx, p.ag.ID, p.rev.Number); err == nil && newer {
		return occ.DeploySuperseded
	}
	return ""
}

// reauthorize checks, before any effect, the deploy permission set of the
// admitted revision (occ.SnapshotGrants, the one admission checked) for
// the original actor and the Agent's service principal. A denial is
// audited and fails the deployment.
func (w *deps) reauthorize(ctx context.Context, actorID string, ag occ.Agent, rev occ.Revision) (string, error) {
	actor := occ.Caller{PrincipalID: actorID, Method: occ.AuthWorker}
	if _, err := w.st.GetPrincipal(ctx, actor.PrincipalID); errors.Is(err, store.ErrNotFound) {
		return occ.DeployActorRevoked, nil
	}
	principal := occ.Caller{PrincipalID: ag.ServicePrincipalID, Method: occ.AuthWorker}
	for _, g := range occ.SnapshotGrants(ag.NamespaceID, ag.ID, rev.Snapshot) {
		who := actor
		if g.AgentPrincipal {
			who = principal
		}
		d, err := w.authz.Decide(ctx, who, g.Permission, g.Resource)
		if err != nil {
			return "", err
		}
		if d.Allowed {
			continue
		}
		err = audit.Append(ctx, w.st, audit.Denial("agents.deploy", who.PrincipalID, g.Resource, occ.ReasonAuthorizationDenied,
			map[string]any{"permission": g.Permission.String(), "decisionReason": d.Reason, "revisionId": rev.ID}))
		if err != nil {
			return "", err
		}
		return occ.DeployAuthorizationDenied, nil
	}
	return "", nil
}

// computeChecks: the revision was admitted for this driver, its plugins are
// in the installation's catalogs, and the driver's declared capabilities
// cover everything it asks for (occ.ComputeCapabilities.Refusal, the check
// admission made where it could).
func (w *deps) computeChecks(snap *occ.RevisionSnapshot, initialFiles bool) string {
	if snap.ComputeDriver != "" && snap.ComputeDriver != w.driver.Name() {
		return occ.DeployComputeDriverMismatch
	}
	if code := w.pluginCatalogCheck(snap); code != "" {
		return code
	}
	if r := w.driver.Capabilities().Refusal(w.driver.Name(), occ.NeedsOf(snap, initialFiles)); r != nil {
		return r.Code
	}
	return ""
}

// sourceChecks: the Backend the revision names is still configured, and a
// bound Service Account or Credential Source still belongs to the Agent's
// Namespace and can still serve (the account matches the Backend and holds
// an issued credential that has not expired; the source is registered).
func (w *deps) sourceChecks(ctx context.Context, nsID string, snap *occ.RevisionSnapshot) (string, error) {
	if snap.BackendID != "" {
		if _, ok := w.opts.Backends[snap.BackendID]; !ok {
			return occ.DeployBackendUnavailable, nil
		}
	}
	h := snap.HarnessAuth
	if h == nil {
		return "", nil
	}
	switch h.Method {
	case occ.HarnessChatGPTServiceAccount:
		acct, err := w.st.GetServiceAccount(ctx, nsID, h.ServiceAccountID)
		if errors.Is(err, store.ErrNotFound) {
			return occ.DeployServiceAccountUnavailable, nil
		}
		if err != nil {
			return "", err
		}
		if acct.BackendID != snap.BackendID || acct.Credential == nil {
			return occ.DeployServiceAccountUnavailable, nil
		}
		if exp := acct.Credential.ExpiresAt; exp != nil && !exp.After(w.now()) {
			// What the Backend issued no longer serves.
			return occ.DeployServiceAccountUnavailable, nil
		}
	case occ.HarnessCredentialSource:
		src, err := w.st.GetCredentialSource(ctx, nsID, h.SourceID)
		if errors.Is(err, store.ErrNotFound) {
			return occ.DeployCredentialSourceUnavailable, nil
		}
		if err != nil {
			return "", err
		}
		if src.State != occ.CredentialSourceReady {
			return occ.DeployCredentialSourceUnavailable, nil
		}
	}
	return "", nil
}

// buildSpec checks what the driver will be asked to run and resolves it;
// secret values live only in memory. The Configuration snapshot must set no
// key occ owns or forbids (gateway.RefusedKey, the check admission made; a
// revision admitted before a rule existed fails here), and staged initial
// files must have been prepared for this runtime's workspace defaults, both
// checked before any Secret is read.
func (w *deps) buildSpec(ctx context.Context, ag occ.Agent, rev occ.Revision, ref compute.RevisionRef) (compute.RevisionSpec, string, error) {
	s := rev.Snapshot
	spec := compute.RevisionSpec{RevisionRef: ref, Number: rev.Number, ServicePrincipalID: s.ServicePrincipalID,
		ExecutionMode: s.ExecutionMode, Document: s.Configuration.Document, Env: map[string]string{}}
	if s.HarnessAuth != nil {
		spec.HarnessAuthMethod = s.HarnessAuth.Method
	}
	if r := gateway.RefusedKey(s.Configuration.Document); r != nil {
		w.log.Info("the revision's Configuration sets a key occ owns or forbids", "revision", rev.ID, "key", r.Pointer)
		return spec, occ.DeployInvalidConfiguration, nil
	}
	files, defaultsID, err := w.st.StagedWorkspaceFiles(ctx, ag.ID)
	switch {
	case err == nil && defaultsID != "" && w.opts.WorkspaceDefaultsID != "" && defaultsID != w.opts.WorkspaceDefaultsID:
		return spec, occ.DeployWorkspaceSetupFailed, nil
	case err == nil:
		if json.Unmarshal([]byte(files), &spec.InitialFiles) != nil {
			spec.InitialFiles = nil
		}
	case !errors.Is(err, store.ErrNotFound):
		return spec, "", err
	}
	if code := w.computeChecks(s, spec.InitialFiles != nil); code != "" {
		return spec, code, nil
	}
	if code, err := w.sourceChecks(ctx, ag.NamespaceID, s); err != nil || code != "" {
		return spec, code, err
	}
	if w.driver.Capabilities().NativeAdmin && w.opts.NativeAdminOrigin != nil {
		spec.NativeAdminOrigin = w.opts.NativeAdminOrigin(ag.NamespaceID, ag.ID)
	}
	for id := range s.Plugins {
		spec.Plugins = append(spec.Plugins, id)
	}
	for name, b := range s.SecretBindings {
		if !w.resolveInto(ctx, spec.Env, name, ag.NamespaceID, b.Source.ID) {
			clearEnv(spec.Env)
			return spec, occ.DeploySecretUnavailable, nil
		}
	}
	if code, err := w.deliverHarness(ctx, ag, ref, s, &spec); err != nil || code != "" {
		clearEnv(spec.Env)
		clearEnv(spec.HarnessEnv)
		return spec, code, err
	}
	if h := s.HarnessAuth; h != nil && h.Source != nil {
		env, name := spec.Env, modelKeyEnv(s.Configuration.Document)
		if s.ExecutionMode == occ.ExecutionDedicated {
			// Only the harness gets the model credential, under the
			// variable its login reads.
			spec.HarnessEnv = map[string]string{}
			env, name = spec.HarnessEnv, harnessKeyEnv(h.Method)
		}
		if !w.resolveInto(ctx, env, name, ag.NamespaceID, h.Source.ID) {
			clearEnv(spec.Env)
			clearEnv(spec.HarnessEnv)
			return spec, occ.DeploySecretUnavailable, nil
		}
	}
	return spec, "", nil
}

// harnessKeyEnv is the variable a dedicated harness's credential is
// delivered in: CODEX_ACCESS_TOKEN for codex_pat (Codex's access-token
// login), OPENAI_API_KEY for api_key.
func harnessKeyEnv(method string) string {
	if method == occ.HarnessCodexPAT {
		return compute.HarnessAccessTokenEnv
	}
	return compute.HarnessAPIKeyEnv
}

// resolveInto reads a Secret of the Namespace into env[name]; false when it
// cannot be read (gone, another Namespace's, or undecryptable).
func (w *deps) resolveInto(ctx context.Context, env map[string]string, name, nsID, secretID string) bool {
	if w.opts.Secrets == nil {
		return false
	}
	v, err := w.opts.Secrets.ResolveSecret(ctx, nsID, secretID)
	if err != nil {
		w.log.Info("a bound Secret cannot be read", "namespace", nsID, "secret", secretID, "error", err)
		return false
	}
	env[name] = string(v)
	clear(v)
	return true
}

// modelKeyEnv picks the provider variable an api_key binding fills, from
// the document's default model ("anthropic/…" → ANTHROPIC_API_KEY,
// anything else → OPENAI_API_KEY).
func modelKeyEnv(doc map[string]any) string {
	model, _ := dig(doc, "agents", "defaults", "model").(string)
	if m, ok := dig(doc, "agents", "defaults", "model").(map[string]any); ok {
		model, _ = m["primary"].(string)
	}
	if strings.HasPrefix(model, "anthropic/") {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

func dig(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func clearEnv(env map[string]string) {
	for k := range env {
		delete(env, k)
	}
}
