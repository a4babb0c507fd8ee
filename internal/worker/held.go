package worker

import (
	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// heldCodes maps the code of a runtime failure the runtime holds to the
// deployment's terminal code (reference/flows.md §6); any other held code
// is a startup failure.
var heldCodes = map[string]string{
	compute.HeldAuthenticationFailed: occ.DeployRuntimeAuthFailed,
	compute.HeldModelProbeTimeout:    occ.DeployModelProbeTimeout,
	compute.HeldModelProbeFailed:     occ.DeployModelProbeFailed,
}

// heldFailure is the terminal code, and error data, of a held runtime
// failure. Only a failed model probe carries data: its evidence, with the
// cause when the driver gave one.
func heldFailure(rf *compute.RuntimeFailure) (string, map[string]any) {
	if rf == nil {
		return occ.DeployRuntimeStartup, nil
	}
	code, ok := heldCodes[rf.Code]
	if !ok {
		return occ.DeployRuntimeStartup, nil
	}
	if code != occ.DeployModelProbeFailed {
		return code, nil
	}
	return code, map[string]any{"runtimeFailure": runtimeFailureData(rf, true)}
}

// runtimeFailureData is the wire form of runtime failure evidence; the
// cause only when asked for (a deadline's evidence never carries one).
func runtimeFailureData(rf *compute.RuntimeFailure, withCause bool) map[string]any {
	m := map[string]any{"component": rf.Component, "check": rf.Check, "checkedAt": occ.FormatTime(rf.CheckedAt), "code": rf.Code}
	if withCause && rf.Cause != nil {
		cause := map[string]any{"kind": rf.Cause.Kind}
		if rf.Cause.Detail != "" {
			cause["detail"] = rf.Cause.Detail
		}
		m["cause"] = cause
	}
	return m
}
