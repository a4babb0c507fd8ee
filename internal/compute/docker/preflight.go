package docker

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// Engine is what Preflight learnt of the engine.
type Engine struct {
	// Version is the engine's version, APIVersion the API version occ
	// speaks to it.
	Version    string
	APIVersion string
	// Podman is true for Podman's Docker-compatible service.
	Podman bool
	// CPUs is the engine's number of CPUs; CPULimit the containers' limit
	// in nano-CPUs: the configured one, or all the engine's CPUs when the
	// setting asks for more (the engine refuses a limit above its CPUs,
	// and the two limits are the same to a container).
	CPUs     int
	CPULimit int64
	// Dedicated is true when the gateway image says it runs dedicated
	// Codex (LabelDedicatedCodex): the driver then declares it.
	Dedicated bool
}

// Preflight checks the engine before occ serves: it answers GET /_ping
// with OK, its API range overlaps occ's (MinAPIVersion..MaxAPIVersion; occ
// speaks the highest common version from then on), and the gateway image is
// already in it (occ never pulls or builds at deploy time). Every error
// names the setting at fault.
func (d *Driver) Preflight(ctx context.Context) (Engine, error) {
	info, err := d.e.hello(ctx, SettingHost, d.o.Host)
	if err != nil {
		return Engine{}, err
	}
	d.podman = info.Podman
	var sys struct{ NCPU int }
	if err := d.e.do(ctx, request{op: "info", method: http.MethodGet, path: "/info", out: &sys}); err != nil {
		return Engine{}, fmt.Errorf("%s: the Docker engine at %s: %w", SettingHost, d.o.Host, err)
	}
	info.CPUs = sys.NCPU
	if all := int64(sys.NCPU) * 1e9; sys.NCPU > 0 && d.o.NanoCPUs > all {
		d.o.NanoCPUs = all
	}
	info.CPULimit = d.o.NanoCPUs
	img, err := d.e.inspectImage(ctx, d.o.GatewayImage)
	if isNotFound(err) {
		return Engine{}, fmt.Errorf("%s: the engine at %s has no image %q; occ never pulls: load it first (occ runtime image build --load %s, or docker load -i <tarball>)",
			SettingGatewayImage, d.o.Host, d.o.GatewayImage, d.o.Host)
	}
	if err != nil {
		return Engine{}, fmt.Errorf("%s: reading image %q: %w", SettingGatewayImage, d.o.GatewayImage, err)
	}
	// Before serving, once: what the driver declares never changes after.
	d.dedicated = img.Config.Labels[LabelDedicatedCodex] == CodexPluginSpec
	d.npmCache = img.Config.Labels[LabelNPMCache]
	info.Dedicated = d.dedicated
	return info, nil
}

// hello checks that host is a Docker engine (GET /_ping answers OK) whose
// API range overlaps occ's, and speaks the highest common version from
// then on. Errors name setting, where host comes from.
func (a *api) hello(ctx context.Context, setting, host string) (Engine, error) {
	var pong bytes.Buffer
	if err := a.do(ctx, request{op: "ping", method: http.MethodGet, path: "/_ping", rawOut: &pong}); err != nil {
		return Engine{}, fmt.Errorf("%s: the Docker engine at %s does not answer: %w", setting, host, err)
	}
	if strings.TrimSpace(pong.String()) != "OK" {
		return Engine{}, fmt.Errorf("%s: %s answered the ping with %q, not OK: not a Docker engine", setting, host, pong.String())
	}
	var v struct {
		Version       string
		APIVersion    string `json:"ApiVersion"`
		MinAPIVersion string `json:"MinAPIVersion"`
		Components    []struct{ Name string }
	}
	if err := a.do(ctx, request{op: "version", method: http.MethodGet, path: "/version", out: &v}); err != nil {
		return Engine{}, fmt.Errorf("%s: the Docker engine at %s: %w", setting, host, err)
	}
	use, err := negotiate(v.APIVersion, v.MinAPIVersion)
	if err != nil {
		return Engine{}, fmt.Errorf("%s: the engine at %s (version %s): %w", setting, host, v.Version, err)
	}
	a.version = use
	info := Engine{Version: v.Version, APIVersion: use}
	for _, c := range v.Components {
		if strings.Contains(strings.ToLower(c.Name), "podman") {
			info.Podman = true
		}
	}
	return info, nil
}

// negotiate picks the API version occ speaks to an engine serving
// min..max: the highest both know.
func negotiate(max, min string) (string, error) {
	if max == "" {
		return "", fmt.Errorf("no API version reported")
	}
	use := max
	if apiLess(MaxAPIVersion, use) {
		use = MaxAPIVersion
	}
	if apiLess(use, MinAPIVersion) {
		return "", fmt.Errorf("API version %s is older than %s (Docker 20.10, Podman 4), the oldest occ speaks", max, MinAPIVersion)
	}
	if min != "" && apiLess(use, min) {
		return "", fmt.Errorf("the engine speaks API %s..%s, newer than %s, the newest occ speaks", min, max, MaxAPIVersion)
	}
	return use, nil
}

// apiLess compares API versions "major.minor".
func apiLess(a, b string) bool {
	pa, pb := apiParts(a), apiParts(b)
	if pa[0] != pb[0] {
		return pa[0] < pb[0]
	}
	return pa[1] < pb[1]
}

func apiParts(v string) [2]int {
	maj, min, _ := strings.Cut(v, ".")
	a, _ := strconv.Atoi(maj)
	b, _ := strconv.Atoi(min)
	return [2]int{a, b}
}
