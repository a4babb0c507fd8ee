package config

import (
	"regexp"
	"sort"
	"strings"
	"time"
)

var (
	// sshPath is what an ssh driver path may hold: absolute, letters,
	// digits and _./:@+- only (it is written into units and scripts).
	sshPath = regexp.MustCompile(`^/[A-Za-z0-9_./:@+-]*$`)
	// sshUserPrefix is an account name prefix (19 characters leave room
	// for "-" and 12 hex digits in Linux's 32).
	sshUserPrefix = regexp.MustCompile(`^[a-z_][a-z0-9_-]{0,18}$`)
	// sshAddress is a host name or IP address.
	sshAddress = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9.:-]{0,252}[A-Za-z0-9])?$`)
)

// ssh checks compute.ssh; the key files, hosts and runtime paths are
// required only when the ssh driver is selected, every other value always
// (the defaults are valid).
func (v *validator) ssh(s SSHCompute, selected bool) {
	const p = "compute.ssh."
	if selected {
		v.required(p+"identityFile", s.IdentityFile)
		v.required(p+"knownHostsFile", s.KnownHostsFile)
		v.required(p+"runtime.nodePath", s.Runtime.NodePath)
		v.required(p+"runtime.openclawPath", s.Runtime.OpenClawPath)
		if len(s.Hosts) == 0 {
			v.add(p+"hosts", "required: at least one Namespace name and its host")
		}
	}
	for _, k := range []struct{ key, value string }{{"identityFile", s.IdentityFile}, {"knownHostsFile", s.KnownHostsFile}} {
		if k.value != "" && !strings.HasPrefix(k.value, "/") {
			v.add(p+k.key, "%q is not an absolute path", k.value)
		}
	}
	v.durationRange(p+"connectTimeout", s.ConnectTimeout, time.Second, 2*time.Minute)
	v.durationRange(p+"operationTimeout", s.OperationTimeout, 10*time.Second, 10*time.Minute)
	names := make([]string, 0, len(s.Hosts))
	for n := range s.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h, key := s.Hosts[n].Resolved(), p+"hosts."+n
		if !dnsLabel.MatchString(n) {
			v.add(p+"hosts", "%q is not a Namespace name", n)
		}
		if !sshAddress.MatchString(h.Address) {
			v.add(key+".address", "%q is not a host name or IP address", h.Address)
		}
		v.intRange(key+".port", int64(h.Port), 1, 65535)
		if h.User != DefaultSSHUser {
			v.add(key+".user", "%q: occ logs in as root only (it makes accounts and units, without sudo)", h.User)
		}
	}
	for _, k := range []struct{ key, value string }{{"runtime.nodePath", s.Runtime.NodePath}, {"runtime.openclawPath", s.Runtime.OpenClawPath},
		{"runtime.stateRoot", s.Runtime.StateRoot}, {"runtime.unitDirectory", s.Runtime.UnitDirectory}} {
		if k.value != "" && (!sshPath.MatchString(k.value) || k.value == "/" || strings.Contains(k.value, "..")) {
			v.add(p+k.key, "%q is not an absolute path of letters, digits and _./:@+-", k.value)
		}
	}
	v.required(p+"runtime.stateRoot", s.Runtime.StateRoot)
	v.required(p+"runtime.unitDirectory", s.Runtime.UnitDirectory)
	if r := s.Runtime.StateRoot; r == "/tmp" || strings.HasPrefix(r, "/tmp/") || r == "/var/tmp" || strings.HasPrefix(r, "/var/tmp/") {
		v.add(p+"runtime.stateRoot", "%q is under a temporary directory", r)
	}
	if !sshUserPrefix.MatchString(s.Runtime.User) || s.Runtime.User == "root" {
		v.add(p+"runtime.user", "%q is not a lowercase account name prefix of at most 19 characters (and not root)", s.Runtime.User)
	}
	v.intRange(p+"portRange.start", int64(s.PortRange.Start), 1024, 65535)
	v.intRange(p+"portRange.end", int64(s.PortRange.End), 1024, 65535)
	if s.PortRange.Start > s.PortRange.End {
		v.add(p+"portRange.start", "%d is above portRange.end %d", s.PortRange.Start, s.PortRange.End)
	}
}
