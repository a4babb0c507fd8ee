package occ

// Refusals of an IAM change that would reach beyond the caller's own
// grants (403 FORBIDDEN): the reason recorded on the denial audit event.
const (
	// ReasonGrantsNotCovered: a role, binding or restriction names a
	// permission the caller does not hold at its scope.
	ReasonGrantsNotCovered = "GRANTS_NOT_COVERED"
	// ReasonPrincipalNotCovered: a binding or restriction names a principal
	// holding a grant the change touches that the caller does not hold.
	ReasonPrincipalNotCovered = "PRINCIPAL_GRANTS_NOT_COVERED"
	// ReasonServicePrincipalNotCovered: a service key for a principal
	// holding grants the caller does not hold.
	ReasonServicePrincipalNotCovered = "SERVICE_PRINCIPAL_GRANTS_NOT_COVERED"
	// ReasonAccountNotCovered: an account change for a principal holding
	// grants the caller does not hold.
	ReasonAccountNotCovered = "ACCOUNT_PRINCIPAL_GRANTS_NOT_COVERED"
)

// The fixed messages of those refusals.
const (
	MsgGrantsNotCovered    = "The caller would grant permissions it does not hold itself."
	MsgPrincipalNotCovered = "The principal holds grants the caller does not hold itself, so the caller cannot change its access."
)

// EscalationMessage is the fixed message of a refusal with that reason.
func EscalationMessage(reason string) string {
	if reason == ReasonPrincipalNotCovered {
		return MsgPrincipalNotCovered
	}
	return MsgGrantsNotCovered
}
