// Command files writes the kwok files the Kubernetes test lane uses into the
// directory named by its argument, taken from the pinned kwok module so they
// always match the kwok binary:
//
//   - kwok-stages.yaml: kwok's --config, its default Stages (the ones kwokctl
//     uses): nodes become Ready and keep a lease; Pods become Running and
//     Ready, complete, and go away when deleted. occ's own Pods (labelled
//     managed-by openclaw-enterprise) are left out of the Ready stage: the
//     test lane's stand-in kubelet runs their gateways and reports their
//     status itself, Ready only once the gateway answers its readiness
//     probe, as a kubelet does.
//   - kwok-crds.yaml: the PortForward and Logs CustomResourceDefinitions, so
//     tests can route a fake Pod's port-forward to a process of their own and
//     serve its logs from a file.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kwok/kustomize/crd"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

// occsPods matches the Pods occ's Kubernetes driver makes (its
// LabelManagedBy and ManagedBy).
const occsPods = `    - key: '.metadata.labels["app.kubernetes.io/managed-by"]'
      operator: 'NotIn'
      values:
      - 'openclaw-enterprise'
`

// notOccs is a Stage whose selector also leaves occ's Pods out.
func notOccs(stage string) string {
	const at = "  selector:\n    matchExpressions:\n"
	if strings.Count(stage, at) != 1 {
		fmt.Fprintln(os.Stderr, "files: the pinned kwok's pod-ready Stage has no single selector to extend")
		os.Exit(1)
	}
	return strings.Replace(stage, at, at+occsPods, 1)
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: files DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	files := map[string][]string{
		"kwok-stages.yaml": {
			nodefast.DefaultNodeInit,
			nodeheartbeat.DefaultNodeHeartbeatWithLease,
			notOccs(podfast.DefaultPodReady),
			podfast.DefaultPodComplete,
			podfast.DefaultPodDelete,
		},
		"kwok-crds.yaml": {string(crd.PortForward), string(crd.Logs)},
	}
	for name, docs := range files {
		for i := range docs {
			docs[i] = strings.TrimSpace(docs[i]) + "\n"
		}
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
