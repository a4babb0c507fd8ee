package kubernetes

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// CodeHarnessFailed: the harness container exited or keeps restarting.
const CodeHarnessFailed = "CONTAINER_FAILED"

// harnessMessages replace the gateway wording for the harness's checks.
var harnessMessages = map[string]string{
	CodeUnavailable:            "The harness container of this revision's Pod is missing or has not started.",
	CodeHarnessFailed:          "The harness container of this revision exited or was restarted.",
	compute.HarnessNotLoggedIn: "The harness's Codex login failed when it last started.",
	compute.CodeNotReady:       "The harness app-server does not answer its readiness probe.",
}

func harnessCheck(name, status, code string) compute.Check {
	c := check(compute.HarnessComponent, name, status, code)
	if m, ok := harnessMessages[code]; ok {
		c.Message = m
	}
	return c
}

// diagnoseHarness checks a dedicated revision's harness from its Pod's
// status (pod nil: none runs): the container (process), its login (it
// serves only after one; a HarnessStop at the login stage says it failed)
// and its app-server (the container's readiness probe, its /readyz).
func diagnoseHarness(pod *corev1.Pod) []compute.Check {
	var st *corev1.ContainerStatus
	if pod != nil {
		for i := range pod.Status.InitContainerStatuses {
			if pod.Status.InitContainerStatuses[i].Name == HarnessContainerName {
				st = &pod.Status.InitContainerStatuses[i]
			}
		}
	}
	if st == nil {
		return []compute.Check{harnessCheck(compute.HarnessCheckProcess, gateway.CheckUnknown, CodeUnavailable),
			harnessCheck(compute.HarnessCheckLogin, gateway.CheckUnknown, CodeUnavailable),
			harnessCheck(compute.HarnessCheckAppServe, gateway.CheckUnknown, CodeUnavailable)}
	}
	running := st.State.Running != nil
	out := make([]compute.Check, 0, 3)
	switch _, stopped := harnessVerdict(pod); {
	case stopped || running && st.RestartCount > 0:
		out = append(out, harnessCheck(compute.HarnessCheckProcess, gateway.CheckFailed, CodeHarnessFailed))
	case running:
		out = append(out, harnessCheck(compute.HarnessCheckProcess, gateway.CheckSucceeded, CodeOK))
	default:
		out = append(out, harnessCheck(compute.HarnessCheckProcess, gateway.CheckUnknown, CodeUnavailable))
	}
	switch {
	case lastStop(st).Stage == StageLogin:
		out = append(out, harnessCheck(compute.HarnessCheckLogin, gateway.CheckFailed, compute.HarnessNotLoggedIn))
	case running && st.Started != nil && *st.Started:
		out = append(out, harnessCheck(compute.HarnessCheckLogin, gateway.CheckSucceeded, CodeOK))
	default:
		out = append(out, harnessCheck(compute.HarnessCheckLogin, gateway.CheckUnknown, CodeUnavailable))
	}
	switch {
	case running && st.Ready:
		out = append(out, harnessCheck(compute.HarnessCheckAppServe, gateway.CheckSucceeded, CodeOK))
	case running:
		out = append(out, harnessCheck(compute.HarnessCheckAppServe, gateway.CheckFailed, compute.CodeNotReady))
	default:
		out = append(out, harnessCheck(compute.HarnessCheckAppServe, gateway.CheckUnknown, CodeUnavailable))
	}
	return out
}
