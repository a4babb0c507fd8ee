package kubernetes

import (
	"context"
	"io"

	corev1 "k8s.io/api/core/v1"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Logs reads the last lines of the gateway container of the revision's
// live Pod (pods/log, as kubectl logs does); none when no Pod of the
// revision runs (another revision's replaced it, or it never started).
func (d *Driver) Logs(ctx context.Context, rev compute.RevisionRef, opts compute.LogOptions) (compute.Logs, error) {
	if err := rev.Validate(); err != nil {
		return compute.Logs{}, err
	}
	pods, err := d.listPods(ctx, rev.AgentRef, rev.RevisionID)
	if err != nil {
		return compute.Logs{}, err
	}
	pod := live(pods)
	if pod == nil {
		return compute.Logs{}, nil
	}
	n := opts.TailLines
	if n <= 0 || n > compute.MaxLogLines {
		n = compute.MaxLogLines
	}
	// One line more than asked: whether older output exists. The tail is
	// counted in lines; TailBuffer keeps the newest bytes of long ones.
	tail := int64(n + 1)
	stream, err := d.cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: ContainerName, TailLines: &tail}).Stream(ctx)
	if err != nil {
		return compute.Logs{}, classify("read the logs of pod "+pod.Name, err)
	}
	defer stream.Close()
	var out compute.TailBuffer
	if _, err := io.Copy(&out, stream); err != nil {
		return compute.Logs{}, classify("read the logs of pod "+pod.Name, err)
	}
	// The gateway's token is handed back for redaction: without it the
	// output is not shown (fail closed).
	token, err := d.transportToken(ctx, rev.AgentRef, false)
	if err != nil {
		return compute.Logs{}, err
	}
	lines, truncated := compute.TailLines(out.Bytes(), n, out.Cut())
	return compute.Logs{Found: true, Lines: lines, Truncated: truncated,
		Credentials: []string{token, gateway.NativeAdminIdentity(token)}}, nil
}
