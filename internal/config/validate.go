package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Problem is one thing wrong with the configuration.
type Problem struct {
	// Key is the dotted key, e.g. "worker.maxAttempts" or "backends[1].type";
	// for an environment variable that names no key it is the variable name.
	Key string
	// Reason says what is wrong, for a human.
	Reason string
}

// String formats p as "<key>: <reason>".
func (p Problem) String() string {
	if p.Key == "" {
		return p.Reason
	}
	return p.Key + ": " + p.Reason
}

// ValidationError lists every problem found in the configuration.
type ValidationError struct {
	// Problems are in the order found.
	Problems []Problem
}

// Error joins the problems: "config: <key>: <reason>; …".
func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return "config: " + strings.Join(parts, "; ")
}

const mib = 1 << 20

var (
	idPattern       = regexp.MustCompile(`^[a-z][a-z0-9-]{0,62}$`)
	apiKeyPattern   = regexp.MustCompile(`^occ_[A-Za-z0-9_]{32,}$`)
	pluginIDPattern = regexp.MustCompile(`^[A-Za-z0-9._~:@-]{1,253}$`)
	dnsLabel        = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	nodeMajor       = regexp.MustCompile(`^[1-9][0-9]{0,2}$`)
	npmVersion      = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)
)

// The closed enumerations.
var (
	roles           = []string{"all", "api", "worker"}
	computeDrivers  = []string{"local", "ssh", "docker", "kubernetes"}
	logLevels       = []string{"debug", "info", "warn", "error"}
	logFormats      = []string{"json", "text"}
	backendTypes    = []string{"chatgpt", "github", "openshell"}
	executionModes  = []string{"", "embedded", "dedicated"}
	approvalPolicys = []string{"", "provider_default", "all_actions", "write_actions", "none"}
)

// validator collects problems.
type validator struct{ problems []Problem }

func (v *validator) add(key, format string, args ...any) {
	v.problems = append(v.problems, Problem{Key: key, Reason: fmt.Sprintf(format, args...)})
}

func (v *validator) required(key, value string) bool {
	if strings.TrimSpace(value) == "" {
		v.add(key, "required")
		return false
	}
	return true
}

func (v *validator) oneOf(key, value string, allowed []string) {
	if !slices.Contains(allowed, value) {
		shown := slices.DeleteFunc(slices.Clone(allowed), func(s string) bool { return s == "" })
		v.add(key, "%q is not one of %s", value, strings.Join(shown, ", "))
	}
}

func (v *validator) intRange(key string, value, lo, hi int64) {
	if value < lo || value > hi {
		v.add(key, "%d is outside %d..%d", value, lo, hi)
	}
}

func (v *validator) durationRange(key string, value Duration, lo, hi time.Duration) {
	if value.D() < lo || value.D() > hi {
		v.add(key, "%s is outside %s..%s", value, lo, hi)
	}
}

// Validate checks c and returns a *ValidationError listing every problem, or
// nil. Load calls it after deriving the dependent defaults; a Config built by
// hand must set those itself.
func (c *Config) Validate() error {
	v := &validator{}
	v.required("dataDir", c.DataDir)
	if v.required("listen", c.Listen) {
		v.hostPort("listen", c.Listen)
	}
	if v.required("publicOrigin", c.PublicOrigin) {
		v.origin("publicOrigin", c.PublicOrigin)
	}
	if v.required("databaseURL", c.DatabaseURL) {
		v.databaseURL("databaseURL", c.DatabaseURL)
	}
	if c.DatabaseConnections != 0 {
		v.intRange("databaseConnections", int64(c.DatabaseConnections), 1, 1000)
		if strings.HasPrefix(c.DatabaseURL, "sqlite://") {
			v.add("databaseConnections", "applies to PostgreSQL only: SQLite has one connection")
		}
	}
	v.oneOf("role", c.Role, roles)
	v.required("runtimeDir", c.RuntimeDir)
	v.oneOf("compute.driver", c.Compute.Driver, computeDrivers)
	if _, _, err := c.Compute.Local.UIDs(); err != nil {
		v.add("compute.local.uidRange", "%v", err)
	}
	if c.Compute.HarnessCommand != "" && c.Compute.GatewayCommand == "" {
		v.add("compute.harnessCommand", "needs compute.gatewayCommand: the pinned runtime runs its own Codex")
	}
	v.kubernetes(c.Compute.Kubernetes, c.Compute.Driver == "kubernetes")
	v.docker(c.Compute.Docker, c.Compute.Driver == "docker")
	v.ssh(c.Compute.SSH, c.Compute.Driver == "ssh")
	if (c.Compute.Driver == "kubernetes" || c.Compute.Driver == "docker" || c.Compute.Driver == "ssh") && c.NativeAdminUI.Enabled {
		v.add("nativeAdminUI.enabled", "the %s compute driver does not run the native admin UI yet", c.Compute.Driver)
	}
	v.required("secrets.keysetFile", c.Secrets.KeysetFile)

	v.intRange("limits.defaultBodyBytes", c.Limits.DefaultBodyBytes, 1024, 16*mib)
	v.intRange("limits.agentCreateBodyBytes", c.Limits.AgentCreateBodyBytes, 1024, 16*mib)
	v.intRange("limits.workspaceFileBodyBytes", c.Limits.WorkspaceFileBodyBytes, 1024, 16*mib)
	v.intRange("limits.maxConnections", int64(c.Limits.MaxConnections), 1, 1_000_000)
	v.intRange("limits.maxInFlight", int64(c.Limits.MaxInFlight), 1, 100_000)
	v.intRange("limits.requestsPerSecondPerPrincipal", int64(c.Limits.RequestsPerSecondPerPrincipal), 1, 100_000)
	v.intRange("limits.burstPerPrincipal", int64(c.Limits.BurstPerPrincipal), 1, 1_000_000)
	v.intRange("limits.requestsPerSecondPerClient", int64(c.Limits.RequestsPerSecondPerClient), 1, 100_000)
	v.intRange("limits.burstPerClient", int64(c.Limits.BurstPerClient), 1, 1_000_000)

	v.durationRange("http.readHeaderTimeout", c.HTTP.ReadHeaderTimeout, 10*time.Millisecond, 10*time.Minute)
	v.durationRange("http.readTimeout", c.HTTP.ReadTimeout, 10*time.Millisecond, time.Hour)
	if c.HTTP.ReadHeaderTimeout > c.HTTP.ReadTimeout {
		v.add("http.readHeaderTimeout", "%s must be at most http.readTimeout (%s)", c.HTTP.ReadHeaderTimeout, c.HTTP.ReadTimeout)
	}
	v.durationRange("http.writeTimeout", c.HTTP.WriteTimeout, 10*time.Millisecond, time.Hour)
	v.durationRange("http.idleTimeout", c.HTTP.IdleTimeout, 10*time.Millisecond, time.Hour)
	v.intRange("http.maxHeaderBytes", int64(c.HTTP.MaxHeaderBytes), 4096, mib)
	for _, entry := range c.HTTP.TrustedProxies {
		if _, err := parseTrustedProxy(entry); err != nil {
			v.add("http.trustedProxies", "%v", err)
		}
	}

	v.durationRange("worker.convergenceTimeout", c.Worker.ConvergenceTimeout, time.Second, 24*time.Hour)
	v.intRange("worker.maxAttempts", int64(c.Worker.MaxAttempts), 1, 100)
	v.durationRange("worker.pollInterval", c.Worker.PollInterval, 10*time.Millisecond, 10*time.Second)
	if c.Worker.Concurrency != 0 { // 0: the compute driver's default
		v.intRange("worker.concurrency", int64(c.Worker.Concurrency), 1, 256)
	}
	v.durationRange("worker.jobTimeout", c.Worker.JobTimeout, time.Second, time.Hour)
	if r := c.Worker.RescueAfter; r != 0 && (r.D() <= c.Worker.JobTimeout.D() || r.D() > 2*time.Hour) {
		v.add("worker.rescueAfter", "must be more than worker.jobTimeout (%s) and at most 2h, or 0 for the default", c.Worker.JobTimeout)
	}
	v.durationRange("worker.straySweepInterval", c.Worker.StraySweepInterval, time.Second, time.Hour)

	v.durationRange("auth.sessionLifetime", c.Auth.SessionLifetime, 5*time.Minute, 720*time.Hour)
	v.intRange("auth.signInFailuresPerAccount", int64(c.Auth.SignInFailuresPerAccount), 1, 1000)
	v.intRange("auth.signInFailuresPerClient", int64(c.Auth.SignInFailuresPerClient), 1, 1000)
	v.intRange("auth.signInConcurrency", int64(c.Auth.SignInConcurrency), 1, 64)
	if c.Auth.BootstrapAPIKey != "" && !apiKeyPattern.MatchString(c.Auth.BootstrapAPIKey) {
		// Never echo the key itself.
		v.add("auth.bootstrapAPIKey", "%s must match %s", envBootstrapAPIKey, apiKeyPattern)
	}

	if c.Metrics.Listen != "" && v.hostPort("metrics.listen", c.Metrics.Listen) {
		host, _, _ := net.SplitHostPort(c.Metrics.Listen)
		if !isLoopback(host) {
			v.add("metrics.listen", "%q must be a loopback address (127.0.0.1, ::1 or localhost)", c.Metrics.Listen)
		}
	}

	v.oneOf("logging.level", c.Logging.Level, logLevels)
	v.oneOf("logging.format", c.Logging.Format, logFormats)

	v.nativeAdminUI(c.NativeAdminUI, c.PublicOrigin)
	backendIDs := v.backends(c.Backends)
	if c.CredentialGateway.URL != "" {
		v.serviceURL("credentialGateway.url", c.CredentialGateway.URL)
	}
	v.presets(c.Presets, backendIDs)
	v.pluginCatalogs(c.PluginCatalogs)

	if v.required("runtime.openclawVersion", c.Runtime.OpenClawVersion) && !npmVersion.MatchString(c.Runtime.OpenClawVersion) {
		v.add("runtime.openclawVersion", "%q is not an exact version such as 2026.9.6", c.Runtime.OpenClawVersion)
	}
	if v.required("runtime.nodeVersion", c.Runtime.NodeVersion) && !nodeMajor.MatchString(c.Runtime.NodeVersion) {
		v.add("runtime.nodeVersion", "%q is not a major version such as 24", c.Runtime.NodeVersion)
	}

	if r := c.Audit.Retention; r != 0 && (r.D() < 24*time.Hour || r.D() > 87600*time.Hour) {
		v.add("audit.retention", "%s is outside 24h0m0s..87600h0m0s (0 keeps events forever)", r)
	}
	v.required("audit.exportDir", c.Audit.ExportDir)
	v.intRange("streams.maxPerPrincipal", int64(c.Streams.MaxPerPrincipal), 1, 1024)
	v.durationRange("streams.recheckInterval", c.Streams.RecheckInterval, 10*time.Millisecond, 5*time.Minute)
	v.durationRange("streams.pollInterval", c.Streams.PollInterval, 10*time.Millisecond, 5*time.Minute)

	if len(v.problems) > 0 {
		return &ValidationError{Problems: v.problems}
	}
	return nil
}

// hostPort checks a host:port listen address (the host may be empty for all
// interfaces; port 0 picks a free port).
func (v *validator) hostPort(key, addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		v.add(key, "%q is not host:port", addr)
		return false
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		v.add(key, "%q has a bad port", addr)
		return false
	}
	return true
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// origin checks scheme://host[:port] with http or https and nothing else.
func (v *validator) origin(key, s string) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		v.add(key, "%q is not a URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		v.add(key, "%q must use http or https", s)
	case u.Host == "" || u.Hostname() == "":
		v.add(key, "%q has no host", s)
	case u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery || strings.HasSuffix(s, "#"):
		v.add(key, "%q must be an origin (scheme://host[:port]) without user, path, query or fragment", s)
	default:
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				v.add(key, "%q has a bad port", s)
			}
		} else if strings.HasSuffix(u.Host, ":") {
			v.add(key, "%q has an empty port", s)
		}
	}
}

// databaseURL checks the scheme and, for SQLite, that a path is given.
func (v *validator) databaseURL(key, s string) {
	switch {
	case strings.HasPrefix(s, "sqlite://"):
		path, _, _ := strings.Cut(strings.TrimPrefix(s, "sqlite://"), "?")
		if path == "" {
			v.add(key, "%q names no file (want sqlite://PATH)", s)
		}
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		if _, err := url.Parse(s); err != nil {
			// url errors quote the URL, which may hold a password.
			v.add(key, "not a valid PostgreSQL URL")
		}
	default:
		v.add(key, "must start with sqlite://, postgres:// or postgresql://")
	}
}

// dnsName reports whether s is a lower-case DNS name of at least two labels.
func dnsName(s string) bool {
	if len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !dnsLabel.MatchString(l) {
			return false
		}
	}
	return true
}

func (v *validator) nativeAdminUI(n NativeAdminUI, publicOrigin string) {
	const key = "nativeAdminUI"
	v.durationRange(key+".recheckInterval", n.RecheckInterval, 10*time.Millisecond, 5*time.Minute)
	domainOK, cookieOK := true, true
	if n.Domain != "" && !dnsName(n.Domain) {
		v.add(key+".domain", "%q is not a lower-case DNS name such as admin.example.com", n.Domain)
		domainOK = false
	}
	if n.CookieDomain != "" && !dnsName(n.CookieDomain) {
		v.add(key+".cookieDomain", "%q is not a lower-case DNS name such as example.com", n.CookieDomain)
		cookieOK = false
	}
	if !n.Enabled {
		return
	}
	if n.Domain == "" {
		v.add(key+".domain", "required when nativeAdminUI.enabled is true")
		domainOK = false
	}
	if n.CookieDomain == "" {
		v.add(key+".cookieDomain", "required when nativeAdminUI.enabled is true")
		cookieOK = false
	}
	if domainOK && cookieOK && !withinDomain(n.Domain, n.CookieDomain) {
		v.add(key+".domain", "%q must equal cookieDomain %q or be a subdomain of it", n.Domain, n.CookieDomain)
	}
	u, err := url.Parse(publicOrigin)
	if err != nil || u.Hostname() == "" {
		return // publicOrigin reports its own problem
	}
	host := strings.ToLower(u.Hostname())
	if cookieOK && !withinDomain(host, n.CookieDomain) {
		v.add(key+".cookieDomain", "the console host %q (publicOrigin) must equal cookieDomain %q or be a subdomain of it, so that the shared cookie reaches it", host, n.CookieDomain)
	}
	if domainOK && host != n.Domain && withinDomain(host, n.Domain) {
		v.add(key+".domain", "the console host %q (publicOrigin) must not be below %q, where every host is an Agent's", host, n.Domain)
	}
}

// withinDomain reports whether host equals domain or lies below it on a
// DNS-label boundary.
func withinDomain(host, domain string) bool {
	return host == domain || strings.HasSuffix(host, "."+domain)
}

// workspacePattern is a ChatGPT workspace ID.
var workspacePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// backends checks each Backend and returns the set of valid IDs.
func (v *validator) backends(bs []Backend) map[string]bool {
	ids := map[string]bool{}
	for i, b := range bs {
		key := fmt.Sprintf("backends[%d]", i)
		if v.required(key+".id", b.ID) {
			switch {
			case !idPattern.MatchString(b.ID):
				v.add(key+".id", "%q must match %s", b.ID, idPattern)
			case ids[b.ID]:
				v.add(key+".id", "duplicate backend id %q", b.ID)
			}
			ids[b.ID] = true
		}
		if v.required(key+".type", b.Type) {
			v.oneOf(key+".type", b.Type, backendTypes)
		}
		if b.URL != "" {
			v.serviceURL(key+".url", b.URL)
		}
		switch {
		case b.WorkspaceID == "":
		case b.Type != "chatgpt":
			v.add(key+".workspaceId", "only a chatgpt backend names a ChatGPT workspace")
		case !workspacePattern.MatchString(b.WorkspaceID):
			v.add(key+".workspaceId", "%q must match %s", b.WorkspaceID, workspacePattern)
		}
	}
	return ids
}

// serviceURL checks the base URL of a service occ calls: absolute http or
// https, with a host and without credentials.
func (v *validator) serviceURL(key, s string) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		v.add(key, "%q is not an absolute http or https URL without credentials", s)
	}
}

func (v *validator) presets(ps []Preset, backendIDs map[string]bool) {
	names := map[string]bool{}
	for i, p := range ps {
		key := fmt.Sprintf("presets[%d]", i)
		if v.required(key+".name", p.Name) {
			switch {
			case len(p.Name) > 128 || strings.IndexFunc(p.Name, unicode.IsControl) >= 0:
				v.add(key+".name", "must be at most 128 characters without control characters")
			case names[p.Name]:
				v.add(key+".name", "duplicate preset name %q", p.Name)
			}
			names[p.Name] = true
		}
		v.oneOf(key+".executionMode", p.ExecutionMode, executionModes)
		if p.BackendID != "" && !backendIDs[p.BackendID] {
			v.add(key+".backendId", "%q names no configured backend", p.BackendID)
		}
		for _, id := range sortedKeys(p.Plugins) {
			pkey := key + ".plugins." + id
			if !pluginIDPattern.MatchString(id) {
				v.add(pkey, "plugin id %q must match %s", id, pluginIDPattern)
			}
			v.oneOf(pkey+".approvalPolicy", p.Plugins[id].ApprovalPolicy, approvalPolicys)
		}
	}
}

func (v *validator) pluginCatalogs(cs []PluginCatalog) {
	ids := map[string]bool{}
	for i, c := range cs {
		key := fmt.Sprintf("pluginCatalogs[%d]", i)
		if v.required(key+".id", c.ID) {
			switch {
			case !idPattern.MatchString(c.ID):
				v.add(key+".id", "%q must match %s", c.ID, idPattern)
			case ids[c.ID]:
				v.add(key+".id", "duplicate plugin catalog id %q", c.ID)
			}
			ids[c.ID] = true
		}
		seen := map[string]bool{}
		for j, p := range c.Plugins {
			pkey := fmt.Sprintf("%s.plugins[%d]", key, j)
			switch {
			case !pluginIDPattern.MatchString(p):
				v.add(pkey, "plugin id %q must match %s", p, pluginIDPattern)
			case seen[p]:
				v.add(pkey, "duplicate plugin id %q", p)
			}
			seen[p] = true
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
