package config

import (
	"fmt"
	"net"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	// dockerMemory is a byte count with an optional binary suffix.
	dockerMemory = regexp.MustCompile(`^([0-9]{1,15})(Ki|Mi|Gi|Ti)?$`)
	// dockerCPUs is a decimal count of CPUs, up to three decimals.
	dockerCPUs = regexp.MustCompile(`^[0-9]{1,4}(\.[0-9]{1,3})?$`)
)

// MemoryBytes is the memory limit in bytes.
func (r DockerResources) MemoryBytes() (int64, error) {
	m := dockerMemory.FindStringSubmatch(r.Memory)
	if m == nil {
		return 0, fmt.Errorf("%q is not a byte count such as 3Gi, 512Mi or 1073741824", r.Memory)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40}[m[2]]
	if n > (1<<62)>>shift {
		return 0, fmt.Errorf("%q is too large", r.Memory)
	}
	return n << shift, nil
}

// NanoCPUs is the CPU limit in billionths of a CPU (the engine's unit).
func (r DockerResources) NanoCPUs() (int64, error) {
	if !dockerCPUs.MatchString(r.CPUs) {
		return 0, fmt.Errorf("%q is not a number of CPUs such as 4 or 0.5", r.CPUs)
	}
	whole, frac, _ := strings.Cut(r.CPUs, ".")
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
	return w*1e9 + f*1e6, nil
}

// docker checks compute.docker; the image is required only when the
// docker driver is selected, every other value always (the defaults are
// valid).
func (v *validator) docker(d DockerCompute, selected bool) {
	const p = "compute.docker."
	if selected {
		v.required(p+"images.gateway", d.Images.Gateway)
	}
	if d.Images.Gateway != "" && strings.ContainsAny(d.Images.Gateway, " \t\n") {
		v.add(p+"images.gateway", "%q is not an image reference", d.Images.Gateway)
	}
	if v.required(p+"host", d.Host) && !dockerHost(d.Host) {
		v.add(p+"host", "%q is not unix:///absolute/path or tcp://host:port", d.Host)
	}
	v.durationRange(p+"requestTimeout", d.RequestTimeout, time.Second, 2*time.Minute)
	v.intRange(p+"gatewayPort", int64(d.GatewayPort), 1024, 65534)
	if n, err := d.Resources.MemoryBytes(); err != nil {
		v.add(p+"resources.memory", "%v", err)
	} else if n < 64<<20 {
		v.add(p+"resources.memory", "%q is below 64Mi", d.Resources.Memory)
	}
	v.intRange(p+"resources.openFiles", d.Resources.OpenFiles, 0, 1<<20)
	v.intRange(p+"resources.processes", d.Resources.Processes, 0, 1<<20)
	if n, err := d.Resources.NanoCPUs(); err != nil {
		v.add(p+"resources.cpus", "%v", err)
	} else if n < 1e7 || n > 1024e9 {
		v.add(p+"resources.cpus", "%q is outside 0.01..1024", d.Resources.CPUs)
	}
}

// dockerHost reports whether s is unix:///absolute/path or tcp://host:port.
func dockerHost(s string) bool {
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "unix":
		return u.Host == "" && u.Path != "" && path.IsAbs(u.Path) && u.RawQuery == ""
	case "tcp":
		_, port, err := net.SplitHostPort(u.Host)
		return err == nil && port != "" && (u.Path == "" || u.Path == "/") && u.RawQuery == ""
	}
	return false
}
