package audit

import (
	"encoding/json"

	"github.com/openclaw/occ/internal/occ"
)

// record is one audit event as exported: the AuditEvent object of the API
// (api/openapi.yaml), one per line of a JSON Lines export.
type record struct {
	ID          string         `json:"id"`
	OccurredAt  string         `json:"occurredAt"`
	Kind        string         `json:"kind"`
	Action      string         `json:"action"`
	Outcome     string         `json:"outcome"`
	ActorID     string         `json:"actorId"`
	NamespaceID string         `json:"namespaceId,omitempty"`
	RequestID   string         `json:"requestId,omitempty"`
	ReasonCode  string         `json:"reasonCode,omitempty"`
	Resource    resource       `json:"resource"`
	Details     map[string]any `json:"details"`
}

type resource struct {
	Kind        string `json:"kind"`
	ID          string `json:"id"`
	NamespaceID string `json:"namespaceId,omitempty"`
}

// Line encodes one event as a line of a JSON Lines export (ending in
// "\n"): the same object GET /audit-events lists. Both the retention
// export files and GET /audit-events/export write these lines.
func Line(e occ.AuditEvent) ([]byte, error) {
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	b, err := json.Marshal(record{ID: e.ID, OccurredAt: occ.FormatTime(e.OccurredAt), Kind: string(e.Kind), Action: e.Action,
		Outcome: string(e.Outcome), ActorID: e.ActorID, NamespaceID: e.NamespaceID, RequestID: e.RequestID, ReasonCode: e.ReasonCode,
		Resource: resource{Kind: string(e.Resource.Kind), ID: e.Resource.ID, NamespaceID: e.NamespaceID}, Details: details})
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
