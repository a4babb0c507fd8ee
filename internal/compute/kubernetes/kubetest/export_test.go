package kubetest

// LockServiceNetwork takes the machine-wide lock of WithServiceNetwork if
// no cluster holds it (ok false otherwise): while held, no kube-proxy of
// this package runs on the machine.
func LockServiceNetwork() (unlock func(), ok bool) {
	f, err := tryLockServiceNetwork()
	if f == nil || err != nil {
		return nil, false
	}
	return func() { f.Close() }, true
}

// AwaitBuild is awaitBuild, for the tests of the build beside the tests.
var AwaitBuild = awaitBuild
