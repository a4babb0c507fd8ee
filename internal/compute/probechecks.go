package compute

import (
	"errors"

	"github.com/openclaw/occ/internal/gateway"
)

// The checks of a gateway's own probe routes and their codes, the same for
// every driver (each driver gives the messages).
const (
	CheckHealthz  = "healthz"
	CheckStartupz = "startupz"
	CheckReadyz   = "readyz"

	// CodeOK goes with every succeeded check.
	CodeOK = "OK"
	// CodeUnavailable: the check could not be made (no workload, no
	// answer).
	CodeUnavailable = "UNAVAILABLE"
	// CodeNotLive, CodeNotStarted, CodeNotReady: a probe route answered,
	// but not 200.
	CodeNotLive    = "NOT_LIVE"
	CodeNotStarted = "NOT_STARTED"
	CodeNotReady   = "NOT_READY"
)

// ProbeChecks turns one gateway.Probe answer (h, err) into the healthz,
// startupz and readyz checks, made by check(name, status, code). Probe stops
// at the first route that is not satisfied: a later route was reached only
// if the earlier ones passed; one not reached, or no answer at all, is
// unknown.
func ProbeChecks(h gateway.Health, err error, check func(name, status, code string) Check) []Check {
	answered := err == nil || errors.Is(err, gateway.ErrNotReady)
	probe := func(name string, ok, reached bool, failCode string) Check {
		switch {
		case ok:
			return check(name, gateway.CheckSucceeded, CodeOK)
		case answered && reached:
			return check(name, gateway.CheckFailed, failCode)
		default:
			return check(name, gateway.CheckUnknown, CodeUnavailable)
		}
	}
	return []Check{
		probe(CheckHealthz, h.Live, true, CodeNotLive),
		probe(CheckStartupz, h.Started, h.Live, CodeNotStarted),
		probe(CheckReadyz, h.Ready, h.Started, CodeNotReady),
	}
}
