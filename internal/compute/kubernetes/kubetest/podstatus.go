package kubetest

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
)

// statusManager is the field manager of the Pod status the stand-in kubelet
// writes.
const statusManager = "kubetest-kubelet"

// firstProbeEvery is how often a started gateway's readiness is asked
// until it first passes (a kubelet waits the probe's period; the lane's
// tests would wait for nothing). Once it passed, the probe's own period
// applies.
const firstProbeEvery = 500 * time.Millisecond

// podIPs hands each fake gateway Pod an address of its own, outside the
// range kwok gives other Pods (podCIDR).
var podIPs atomic.Uint32

// status is what the stand-in kubelet reports of a fake gateway Pod: its
// containers started (the init containers done, a restartable one such as
// the Codex harness running and ready) and the gateway running, Ready as
// its last readiness probe answered; or, once the gateway exited, its
// container terminated with the exit code.
type status struct {
	p       *corev1.Pod
	ip      string
	started metav1.Time
}

func newStatus(p *corev1.Pod) *status {
	n := podIPs.Add(1)
	return &status{p: p, ip: fmt.Sprintf("10.245.%d.%d", n/250%250, n%250+1), started: metav1.Now()}
}

// write reports the Pod Running with its gateway ready or not; exit, when
// not nil, is the gateway's exit code.
func (s *status) write(ctx context.Context, k *Kubelet, ready bool, exit *int32) error {
	now := metav1.Now()
	cond := func(t corev1.PodConditionType, ok bool) *corev1ac.PodConditionApplyConfiguration {
		st := corev1.ConditionFalse
		if ok {
			st = corev1.ConditionTrue
		}
		return corev1ac.PodCondition().WithType(t).WithStatus(st).WithLastTransitionTime(now)
	}
	st := corev1ac.PodStatus().WithPhase(corev1.PodRunning).
		WithHostIP("127.0.0.1").WithHostIPs(corev1ac.HostIP().WithIP("127.0.0.1")).
		WithPodIP(s.ip).WithPodIPs(corev1ac.PodIP().WithIP(s.ip)).
		WithStartTime(s.started).
		WithConditions(cond(corev1.PodInitialized, true), cond(corev1.ContainersReady, ready), cond(corev1.PodReady, ready))
	for _, c := range s.p.Spec.InitContainers {
		cs := corev1ac.ContainerStatus().WithName(c.Name).WithImage(c.Image).WithRestartCount(0)
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			cs.WithReady(true).WithStarted(true).WithState(corev1ac.ContainerState().
				WithRunning(corev1ac.ContainerStateRunning().WithStartedAt(s.started)))
		} else {
			cs.WithReady(true).WithState(corev1ac.ContainerState().WithTerminated(corev1ac.ContainerStateTerminated().
				WithExitCode(0).WithReason("Completed").WithStartedAt(s.started).WithFinishedAt(s.started)))
		}
		st.WithInitContainerStatuses(cs)
	}
	for i, c := range s.p.Spec.Containers {
		cs := corev1ac.ContainerStatus().WithName(c.Name).WithImage(c.Image).WithRestartCount(0)
		switch {
		case i == 0 && exit != nil:
			cs.WithReady(false).WithStarted(false).WithState(corev1ac.ContainerState().WithTerminated(corev1ac.ContainerStateTerminated().
				WithExitCode(*exit).WithReason("Error").WithStartedAt(s.started).WithFinishedAt(now)))
		default:
			cs.WithReady(ready).WithStarted(true).WithState(corev1ac.ContainerState().
				WithRunning(corev1ac.ContainerStateRunning().WithStartedAt(s.started)))
		}
		st.WithContainerStatuses(cs)
	}
	_, err := k.cs.CoreV1().Pods(s.p.Namespace).ApplyStatus(ctx, corev1ac.Pod(s.p.Name, s.p.Namespace).WithStatus(st),
		metav1.ApplyOptions{FieldManager: statusManager, Force: true})
	return err
}

// report keeps the Pod's status as a kubelet would while fp runs: Running
// and not Ready at once, Ready while the gateway's /readyz on port answers
// 200 (asked every firstProbeEvery until it first does, then every
// period), the gateway's container terminated when it exits by itself.
func (k *Kubelet) report(fp *fakePod, s *status, port int, period time.Duration) {
	write := func(ready bool, exit *int32) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A Pod deleted meanwhile has no status to write: the next sync
		// stops its gateway.
		_ = s.write(ctx, k, ready, exit)
	}
	write(false, nil)
	client := &http.Client{Timeout: 5 * time.Second}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
	ready, every := false, firstProbeEvery
	for {
		select {
		case <-fp.exited:
			select {
			case <-fp.killed:
			default:
				code := int32(fp.cmd.ProcessState.ExitCode())
				write(false, &code)
			}
			return
		case <-time.After(every):
		}
		ok := false
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			ok = resp.StatusCode == http.StatusOK
		}
		if ok != ready {
			ready = ok
			write(ready, nil)
		}
		if ready {
			every = period
		}
	}
}
