package docker

import (
	"context"
	"net/http"
	"net/url"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// harnessMessages replace the gateway wording for the harness's checks.
var harnessMessages = map[string]string{
	CodeUnavailable:            "The harness container of this revision is missing or did not answer.",
	CodeContainerFailed:        "The harness container of this revision exited or was restarted after its app-server exited.",
	compute.HarnessNotLoggedIn: "The harness's Codex home holds no login.",
	compute.CodeNotReady:       "The harness app-server does not answer its readiness probe.",
}

// diagnoseHarness checks a dedicated revision's harness (none for an
// embedded one): its container (CheckContainer), its login (the Codex
// home holds auth.json) and whether its app-server answers /readyz.
func (d *Driver) diagnoseHarness(ctx context.Context, rev compute.RevisionRef, gatewayFound bool, gw containerJSON) []compute.Check {
	h, found, err := d.harnessOf(ctx, rev.AgentRef)
	found = err == nil && found && h.Config.Labels[LabelRevision] == rev.RevisionID
	if !found && !(gatewayFound && gw.Config.Labels[LabelHarness] != "") {
		return nil
	}
	hc := func(name, status, code string) compute.Check {
		c := check(compute.HarnessComponent, name, status, code)
		if m, ok := harnessMessages[code]; ok {
			c.Message = m
		}
		return c
	}
	if !found {
		return []compute.Check{hc(CheckContainer, gateway.CheckUnknown, CodeUnavailable), hc(compute.HarnessCheckLogin, gateway.CheckUnknown, CodeUnavailable),
			hc(compute.HarnessCheckAppServe, gateway.CheckUnknown, CodeUnavailable)}
	}
	out := make([]compute.Check, 0, 3)
	switch phase := containerPhase(h); {
	case phase == containerFailed || phase == containerRunning && h.RestartCount > 0:
		out = append(out, hc(CheckContainer, gateway.CheckFailed, CodeContainerFailed))
	case phase == containerRunning:
		out = append(out, hc(CheckContainer, gateway.CheckSucceeded, CodeOK))
	default:
		out = append(out, hc(CheckContainer, gateway.CheckUnknown, CodeUnavailable))
	}
	switch exists, err := d.e.pathExists(ctx, h.ID, CodexHome+"/auth.json"); {
	case err != nil:
		out = append(out, hc(compute.HarnessCheckLogin, gateway.CheckUnknown, CodeUnavailable))
	case exists:
		out = append(out, hc(compute.HarnessCheckLogin, gateway.CheckSucceeded, CodeOK))
	default:
		out = append(out, hc(compute.HarnessCheckLogin, gateway.CheckFailed, compute.HarnessNotLoggedIn))
	}
	switch {
	case running(h) && appServerReady(ctx, h):
		out = append(out, hc(compute.HarnessCheckAppServe, gateway.CheckSucceeded, CodeOK))
	case running(h):
		out = append(out, hc(compute.HarnessCheckAppServe, gateway.CheckFailed, compute.CodeNotReady))
	default:
		out = append(out, hc(compute.HarnessCheckAppServe, gateway.CheckUnknown, CodeUnavailable))
	}
	return out
}

// pathExists asks whether a path exists in the container without reading
// it (HEAD of its archive: the engine answers its stat only).
func (e engine) pathExists(ctx context.Context, id, path string) (bool, error) {
	err := e.do(ctx, request{op: "stat in container " + id, method: http.MethodHead, path: "/containers/" + id + "/archive",
		query: url.Values{"path": {path}}})
	if isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}
