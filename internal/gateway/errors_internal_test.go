package gateway

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestRPCErrorKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		op        string
		code      string
		details   string
		message   string
		retryable bool
		kind      error
	}{
		{"connect", "INVALID_REQUEST", `{"code":"AUTH_TOKEN_MISMATCH"}`, "unauthorized: gateway token mismatch", false, ErrUnauthorized},
		{"connect", "INVALID_REQUEST", `{"code":"AUTH_PASSWORD_MISMATCH"}`, "unauthorized: gateway password mismatch", false, ErrUnauthorized},
		{"connect", "INVALID_REQUEST", `{"code":"AUTH_RATE_LIMITED"}`, "unauthorized: too many failed attempts", false, ErrNotReady},
		{"connect", "NOT_PAIRED", `{"code":"PAIRING_REQUIRED","requestId":"r"}`, "pairing required", false, ErrUnauthorized},
		{"connect", "NOT_PAIRED", `{"code":"DEVICE_IDENTITY_REQUIRED"}`, "device identity required", false, ErrUnauthorized},
		{"connect", "INVALID_REQUEST", `{"code":"PROTOCOL_MISMATCH","expectedProtocol":5}`, "protocol mismatch", false, ErrProtocol},
		{"connect", "UNAVAILABLE", `{"reason":"startup-sidecars"}`, "gateway starting; retry shortly", true, ErrNotReady},
		{"connect", "UNAVAILABLE", `{"code":"PROTOCOL_MISMATCH"}`, "Control UI updated; reload", false, ErrProtocol},
		{"connect", "INVALID_REQUEST", ``, "invalid connect params: x", false, ErrProtocol},
		{"agents.files.set", "INVALID_REQUEST", `{"type":"agent_file_conflict","name":"SOUL.md","currentHash":"ab"}`, "changed", false, ErrFileConflict},
		{"agents.files.get", "INVALID_REQUEST", ``, `agent "x" not found`, false, ErrRequest},
		{"agents.files.get", "INVALID_REQUEST", ``, `unsafe workspace file "SOUL.md"`, false, ErrRequest},
		{"config.get", "FORBIDDEN", `{"code":"MISSING_SCOPE","missingScope":"operator.read","requiredScopes":["operator.read"]}`, "missing scope: operator.read", false, ErrUnauthorized},
		{"health", "UNAVAILABLE", ``, "queue full", true, ErrNotReady},
		{"health", "INVALID_REQUEST", ``, "busy", true, ErrNotReady},
	}
	for _, tt := range tests {
		s := &errorShape{Code: tt.code, Message: tt.message, Retryable: tt.retryable}
		if tt.details != "" {
			s.Details = json.RawMessage(tt.details)
		}
		e := rpcError(tt.op, s)
		if !errors.Is(e, tt.kind) {
			t.Errorf("%s %s %s: kind %v, want %v", tt.op, tt.code, tt.details, e.Kind, tt.kind)
		}
	}
	if e := rpcError("agents.files.set", &errorShape{Code: "INVALID_REQUEST", Details: json.RawMessage(`{"type":"agent_file_conflict","currentHash":"ab"}`)}); e.CurrentHash() != "ab" || e.DetailCode != "agent_file_conflict" {
		t.Errorf("conflict %+v", e)
	}
}
