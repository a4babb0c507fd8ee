package worker

import (
	"context"
	"errors"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/occ"
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
	}
	return "", nil
}
