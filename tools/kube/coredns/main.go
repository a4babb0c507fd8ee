// Command coredns is CoreDNS with the few plugins the Kubernetes node lane's
// cluster DNS uses (kubetest.WithServiceNetwork): it answers the cluster's
// Service names from the API server and nothing else. CoreDNS's own main
// package links every plugin it has (cloud DNS providers among them), so
// scripts/kube-assets builds this one.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
)

// The plugins' order in a server block, as CoreDNS's plugin.cfg has them.
func init() {
	dnsserver.Directives = []string{"bind", "ready", "errors", "kubernetes"}
}

func main() {
	coremain.Run()
}
