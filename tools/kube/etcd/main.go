// Command etcd is etcd's server entry point. go.etcd.io/etcd/server/v3 has no main
// package of its own, so scripts/kube-assets builds this one for the Kubernetes test lane.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
