// Command fakegateway is the fake OpenClaw gateway as a process: it takes
// the real gateway's command line and environment
//
//	OPENCLAW_CONFIG_PATH=… OPENCLAW_STATE_DIR=… OPENCLAW_GATEWAY_TOKEN=… HOME=… \
//	  fakegateway gateway run --port N
//
// and reads the rendered openclaw.json (workspace, auth, logging.file,
// channels, models). Its FAKEGATEWAY_* switches, probes, protocol subset and
// exit codes are documented in package gatewaytest.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openclaw/occ/internal/gateway/gatewaytest/internal/fake"
)

// Exit codes of the real gateway.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
	exitConfig = 78
)

// defaultPort is used when neither --port nor gateway.port is given.
const defaultPort = 18789

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	os.Exit(run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr, sig))
}

// switches are the FAKEGATEWAY_* settings.
type switches struct {
	listenDelay time.Duration
	crashCode   int
	cfg         fake.Config
}

// run is the whole program; it returns the exit code.
func run(args []string, getenv func(string) string, stdout, stderr io.Writer, sig <-chan os.Signal) int {
	if len(args) >= 2 && args[0] == "plugins" && args[1] == "install" {
		return pluginsInstall(args[2:], getenv, stdout, stderr)
	}
	if len(args) < 2 || args[0] != "gateway" || args[1] != "run" {
		fmt.Fprintln(stderr, "usage: fakegateway gateway run --port N [--bind loopback] [--auth MODE] [--token T] [--password-file F] [--allow-unconfigured]")
		return exitUsage
	}
	fs := flag.NewFlagSet("gateway run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	port := fs.Int("port", 0, "port")
	fs.String("bind", "", "bind (the fake always binds loopback)")
	authMode := fs.String("auth", "", "auth mode")
	token := fs.String("token", "", "gateway token")
	passwordFile := fs.String("password-file", "", "file holding the gateway password")
	allowUnconfigured := fs.Bool("allow-unconfigured", false, "skip the gateway.mode=local guard")
	fs.Bool("force", false, "ignored")
	if err := fs.Parse(args[2:]); err != nil {
		return exitUsage
	}
	if *authMode != "" && *authMode != "token" && *authMode != "password" && *authMode != "none" && *authMode != "trusted-proxy" {
		fmt.Fprintf(stderr, "invalid --auth %q\n", *authMode)
		return exitUsage
	}

	sw, err := readSwitches(getenv)
	if err != nil {
		fmt.Fprintf(stderr, "fakegateway: %v\n", err)
		return exitUsage
	}
	home := getenv("HOME")
	stateDir := getenv("OPENCLAW_STATE_DIR")
	if stateDir == "" && home != "" {
		stateDir = filepath.Join(home, ".openclaw")
	}
	configPath := getenv("OPENCLAW_CONFIG_PATH")
	if configPath == "" && stateDir != "" {
		configPath = filepath.Join(stateDir, "openclaw.json")
	}
	if err := checkCodex(configPath, stateDir, getenv); err != nil {
		fmt.Fprintf(stderr, "Gateway failed to start: %v\n", err)
		return exitFailed
	}
	cfg := sw.cfg
	cfg.ConfigPath, cfg.StateDir, cfg.HomeDir = configPath, stateDir, home
	cfg.Token = firstNonEmpty(*token, getenv("OPENCLAW_GATEWAY_TOKEN"))
	cfg.Password = getenv("OPENCLAW_GATEWAY_PASSWORD")
	if *passwordFile != "" {
		b, err := os.ReadFile(*passwordFile)
		if err != nil {
			fmt.Fprintf(stderr, "Gateway failed to start: %v\n", err)
			return exitConfig
		}
		cfg.Password = strings.TrimSpace(string(b))
	}
	cfg.AllowUnconfigured = *allowUnconfigured
	cfg.Env = getenv
	cfg.Console = stdout
	// FAKEGATEWAY_ECHO: a careless gateway that prints variables of its
	// environment (secrets included), for tests of redacted output.
	for _, name := range strings.Split(getenv("FAKEGATEWAY_ECHO"), ",") {
		if name = strings.TrimSpace(name); name != "" {
			fmt.Fprintf(stdout, "%s [gateway] environment %s=%s\n", time.Now().Format(time.RFC3339), name, getenv(name))
		}
	}

	if sw.listenDelay > 0 {
		select {
		case <-time.After(sw.listenDelay):
		case <-sig:
			return exitOK
		}
	}
	srv, err := fake.New(cfg)
	if err != nil {
		var ce *fake.ConfigError
		if errors.As(err, &ce) {
			fmt.Fprintf(stderr, "Gateway failed to start: %v\n", ce)
			return exitConfig
		}
		fmt.Fprintf(stderr, "Gateway failed to start: %v\n", err)
		return exitFailed
	}

	p := *port
	if p == 0 {
		p = configPort(configPath)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			fmt.Fprintf(stderr, "Gateway failed to start: another gateway instance is already listening on ws://127.0.0.1:%d | listen EADDRINUSE: address already in use 127.0.0.1:%d\n", p, p)
		} else {
			fmt.Fprintf(stderr, "Gateway failed to start: %v\n", err)
		}
		return exitFailed
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case <-sig:
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
		return exitOK
	case <-srv.Crashed():
		fmt.Fprintln(stderr, "fakegateway: crashing (FAKEGATEWAY_CRASH_AFTER)")
		return sw.crashCode
	case err := <-served:
		select {
		case <-srv.Crashed():
			fmt.Fprintln(stderr, "fakegateway: crashing (FAKEGATEWAY_CRASH_AFTER)")
			return sw.crashCode
		default:
		}
		if err != nil {
			fmt.Fprintf(stderr, "Gateway failed: %v\n", err)
			return exitFailed
		}
		return exitOK
	}
}

// readSwitches parses the FAKEGATEWAY_* variables.
func readSwitches(getenv func(string) string) (switches, error) {
	sw := switches{crashCode: 1}
	dur := func(name string, dst *time.Duration) error {
		if v := getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return fmt.Errorf("%s=%q: want a duration such as 2s", name, v)
			}
			*dst = d
		}
		return nil
	}
	for name, dst := range map[string]*time.Duration{
		"FAKEGATEWAY_LISTEN_DELAY":      &sw.listenDelay,
		"FAKEGATEWAY_STARTUP_DELAY":     &sw.cfg.StartupDelay,
		"FAKEGATEWAY_CRASH_AFTER":       &sw.cfg.CrashAfter,
		"FAKEGATEWAY_TICK_INTERVAL":     &sw.cfg.TickInterval,
		"FAKEGATEWAY_MODEL_PROBE_DELAY": &sw.cfg.ModelProbeDelay,
	} {
		if err := dur(name, dst); err != nil {
			return sw, err
		}
	}
	if v := getenv("FAKEGATEWAY_CRASH_EXIT_CODE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 255 {
			return sw, fmt.Errorf("FAKEGATEWAY_CRASH_EXIT_CODE=%q: want 1-255", v)
		}
		sw.crashCode = n
	}
	sw.cfg.ModelAuth = getenv("FAKEGATEWAY_MODEL_AUTH")
	if v := sw.cfg.ModelAuth; v != "" && v != fake.ModelAuthOK && v != fake.ModelAuthRejected {
		return sw, fmt.Errorf("FAKEGATEWAY_MODEL_AUTH=%q: want ok or rejected", v)
	}
	sw.cfg.ModelProbe = getenv("FAKEGATEWAY_MODEL_PROBE")
	if v := sw.cfg.ModelProbe; v != "" && !slices.Contains(fake.ModelProbeStatuses, v) {
		return sw, fmt.Errorf("FAKEGATEWAY_MODEL_PROBE=%q: want one of %v", v, fake.ModelProbeStatuses)
	}
	sw.cfg.Slack = getenv("FAKEGATEWAY_SLACK")
	if v := sw.cfg.Slack; v != "" && v != fake.SlackOK && v != fake.SlackInvalidAuth && v != fake.SlackOffline && v != fake.SlackDisconnected {
		return sw, fmt.Errorf("FAKEGATEWAY_SLACK=%q: want ok, invalid_auth, offline or disconnected", v)
	}
	sw.cfg.Version = getenv("FAKEGATEWAY_VERSION")
	if v := getenv("FAKEGATEWAY_PROTOCOL"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return sw, fmt.Errorf("FAKEGATEWAY_PROTOCOL=%q: want a positive integer", v)
		}
		sw.cfg.Protocol = n
	}
	if v := getenv("FAKEGATEWAY_SCOPES"); v != "" {
		sw.cfg.GrantedScopes = []string{}
		if v != "none" {
			sw.cfg.GrantedScopes = strings.Split(v, ",")
		}
	}
	if v := getenv("FAKEGATEWAY_PLUGIN_WARNINGS"); v != "" {
		for _, item := range strings.Split(v, ",") {
			id, k, ok := strings.Cut(strings.TrimSpace(item), ":")
			if !ok || id == "" || (k != fake.PluginInstallFailed && k != fake.PluginAuthRequired) {
				return sw, fmt.Errorf("FAKEGATEWAY_PLUGIN_WARNINGS item %q: want pluginId:install_failed or pluginId:auth_required", item)
			}
			sw.cfg.PluginWarnings = append(sw.cfg.PluginWarnings, fake.PluginWarning{PluginID: id, Kind: k})
		}
	}
	return sw, nil
}

// configPort reads gateway.port, or returns the default port.
func configPort(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return defaultPort
	}
	var doc struct {
		Gateway struct {
			Port int `json:"port"`
		} `json:"gateway"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || doc.Gateway.Port == 0 {
		return defaultPort
	}
	return doc.Gateway.Port
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
