package worker

import (
	"context"
	"errors"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// deliverHarness fills a dedicated revision's harness environment for the
// methods whose credential is not a Namespace Secret (the Secret-backed
// ones, api_key and codex_pat, are resolved by buildSpec):
//
//   - credential_source: the configured Credential Gateway delivers the
//     source (credgateway.Deliverer); the harness gets only its
//     placeholder, as an API key, and the gateway's base URL, never the
//     source's credential. No gateway configured, or one that does not know
//     the source (404) or refuses the request: CREDENTIAL_SOURCE_UNAVAILABLE;
//     one that refuses the source's credential (401/403):
//     RUNTIME_AUTHENTICATION_FAILED; an unreachable one: an error (the
//     attempt is retried).
//   - chatgpt_service_account: the credential the account's Backend
//     issued (sourceChecks checked, just before, that the account still
//     matches the revision's Backend and holds an unexpired one), in the
//     variable of its login by kind (access_token: Codex's access-token
//     login; api_key: its API-key login), and the Backend's ChatGPT
//     workspace when the installation names one. A kind the Codex CLI
//     cannot log in with (oauth_access_token): HARNESS_AUTH_UNSUPPORTED; an
//     unreadable credential: SERVICE_ACCOUNT_UNAVAILABLE.
//
// Anything else: nothing to do.
func (w *deps) deliverHarness(ctx context.Context, ag occ.Agent, ref compute.RevisionRef, s *occ.RevisionSnapshot, spec *compute.RevisionSpec) (string, error) {
	h := s.HarnessAuth
	if h == nil || s.ExecutionMode != occ.ExecutionDedicated {
		return "", nil
	}
	switch h.Method {
	case occ.HarnessCredentialSource:
		if w.opts.CredentialGateway == nil {
			return occ.DeployCredentialSourceUnavailable, nil
		}
		d, err := w.opts.CredentialGateway.Deliver(ctx, h.SourceID, credgateway.DeliveryRequest{
			NamespaceID: ag.NamespaceID, AgentID: ag.ID, RevisionID: ref.RevisionID})
		switch {
		case errors.Is(err, credgateway.ErrNotRegistered), errors.Is(err, credgateway.ErrRejected):
			w.log.Info("the Credential Gateway cannot deliver the harness's source", "namespace", ag.NamespaceID, "source", h.SourceID, "error", err)
			return occ.DeployCredentialSourceUnavailable, nil
		case errors.Is(err, credgateway.ErrCredentialRejected):
			w.log.Info("the Credential Gateway refused the source's credential", "namespace", ag.NamespaceID, "source", h.SourceID, "error", err)
			return occ.DeployRuntimeAuthFailed, nil
		case err != nil:
			return "", err
		}
		spec.HarnessEnv = map[string]string{compute.HarnessAPIKeyEnv: d.Placeholder, compute.HarnessBaseURLEnv: d.BaseURL}
	case occ.HarnessChatGPTServiceAccount:
		return w.deliverAccount(ctx, ag.NamespaceID, h.ServiceAccountID, s.BackendID, spec)
	}
	return "", nil
}

// accountLogins maps an issued credential's kind to the harness variable
// of its login.
var accountLogins = map[string]string{"access_token": compute.HarnessAccessTokenEnv, "api_key": compute.HarnessAPIKeyEnv}

// deliverAccount delivers a service account's issued credential (see
// deliverHarness).
func (w *deps) deliverAccount(ctx context.Context, nsID, accountID, backendID string, spec *compute.RevisionSpec) (string, error) {
	acct, err := w.st.GetServiceAccount(ctx, nsID, accountID)
	if errors.Is(err, store.ErrNotFound) || err == nil && acct.Credential == nil {
		return occ.DeployServiceAccountUnavailable, nil
	}
	if err != nil {
		return "", err
	}
	name, ok := accountLogins[acct.Credential.Kind]
	if !ok {
		w.log.Info("the Codex harness cannot log in with the service account's credential kind", "namespace", nsID, "serviceAccount", accountID, "kind", acct.Credential.Kind)
		return occ.DeployHarnessAuthUnsupported, nil
	}
	if w.opts.Secrets == nil {
		return occ.DeployServiceAccountUnavailable, nil
	}
	v, err := w.opts.Secrets.ServiceAccountCredential(ctx, nsID, accountID)
	if err != nil {
		w.log.Info("a service account's issued credential cannot be read", "namespace", nsID, "serviceAccount", accountID, "error", err)
		return occ.DeployServiceAccountUnavailable, nil
	}
	spec.HarnessEnv = map[string]string{name: string(v)}
	clear(v)
	if ws := w.opts.BackendWorkspaces[backendID]; ws != "" {
		spec.HarnessEnv[compute.HarnessWorkspaceEnv] = ws
	}
	return "", nil
}
