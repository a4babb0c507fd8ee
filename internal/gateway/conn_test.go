package gateway_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// wait bounds every wait in these tests; nothing asserts on timing.
const wait = 20 * time.Second

// dial connects to g with its token and closes the connection at the end.
func dial(t *testing.T, g *gatewaytest.Gateway, mutate ...func(*gateway.Options)) *gateway.Conn {
	t.Helper()
	o := gateway.Options{URL: g.WSURL, Token: g.Token}
	for _, m := range mutate {
		m(&o)
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	c, err := gateway.Dial(ctx, o)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// gwErr asserts err is an *gateway.Error of kind and returns it.
func gwErr(t *testing.T, err, kind error) *gateway.Error {
	t.Helper()
	var e *gateway.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *gateway.Error", err, err)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %v: kind %v, want %v", err, e.Kind, kind)
	}
	return e
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func TestHello(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g)
	h := c.Hello()
	if h.Protocol != gateway.ProtocolVersion || h.ServerVersion != gateway.Version || h.BootID != g.BootID() || h.BootID == "" || h.ConnID == "" {
		t.Errorf("hello = %+v", h)
	}
	if h.AuthMethod != "token" || h.Role != "operator" || strings.Join(h.Scopes, ",") != "operator.admin,operator.read,operator.write" {
		t.Errorf("auth = %s %s %v", h.AuthMethod, h.Role, h.Scopes)
	}
	if h.MaxPayload != 26214400 || h.TickInterval != 30*time.Second || !h.Offers("agents.files.set") || h.Offers("no.such.method") {
		t.Errorf("policy/features = %d %v %v", h.MaxPayload, h.TickInterval, h.Methods)
	}
	// A second connection sees the same process, another connection.
	if h2 := dial(t, g).Hello(); h2.BootID != h.BootID || h2.ConnID == h.ConnID {
		t.Errorf("second hello boot %s conn %s", h2.BootID, h2.ConnID)
	}
}

func TestDialFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		opts       gatewaytest.Options
		mutate     func(*gateway.Options, *gatewaytest.Gateway)
		kind       error
		code       string
		detail     string
		closeCode  int
		retryAfter time.Duration
	}{
		{name: "wrong token", mutate: func(o *gateway.Options, _ *gatewaytest.Gateway) { o.Token = "wrong" },
			kind: gateway.ErrUnauthorized, code: "INVALID_REQUEST", detail: "AUTH_TOKEN_MISMATCH", closeCode: 1008},
		{name: "no credentials", mutate: func(o *gateway.Options, _ *gatewaytest.Gateway) { o.Token = "" },
			kind: gateway.ErrUnauthorized, code: "NOT_PAIRED", detail: "DEVICE_IDENTITY_REQUIRED", closeCode: 1008},
		{name: "password on a token gateway", mutate: func(o *gateway.Options, _ *gatewaytest.Gateway) { o.Token, o.Password = "", "pw" },
			kind: gateway.ErrUnauthorized, code: "NOT_PAIRED", detail: "DEVICE_IDENTITY_REQUIRED", closeCode: 1008},
		{name: "protocol mismatch", opts: gatewaytest.Options{Protocol: 5},
			kind: gateway.ErrProtocol, code: "INVALID_REQUEST", detail: "PROTOCOL_MISMATCH", closeCode: 1002},
		{name: "gateway starting", opts: gatewaytest.Options{StartupDelay: time.Hour},
			kind: gateway.ErrNotReady, code: "UNAVAILABLE", closeCode: 1013, retryAfter: 500 * time.Millisecond},
		{name: "scopes not granted", opts: gatewaytest.Options{GrantedScopes: []string{}},
			kind: gateway.ErrUnauthorized, code: "SCOPES_NOT_GRANTED"},
		{name: "admin not granted", opts: gatewaytest.Options{GrantedScopes: []string{"operator.read", "operator.write"}},
			kind: gateway.ErrUnauthorized, code: "SCOPES_NOT_GRANTED"},
		{name: "nothing listening", mutate: func(o *gateway.Options, g *gatewaytest.Gateway) { g.Crash() },
			kind: gateway.ErrUnreachable},
		{name: "bad URL", mutate: func(o *gateway.Options, _ *gatewaytest.Gateway) { o.URL = "ftp://127.0.0.1:1/" },
			kind: gateway.ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := gatewaytest.Start(t, tt.opts)
			o := gateway.Options{URL: g.WSURL, Token: g.Token}
			if tt.mutate != nil {
				tt.mutate(&o, g)
			}
			c, err := gateway.Dial(ctxT(t), o)
			if err == nil {
				c.Close()
				t.Fatal("Dial succeeded")
			}
			e := gwErr(t, err, tt.kind)
			if e.Code != tt.code || e.DetailCode != tt.detail || e.CloseCode != tt.closeCode || e.RetryAfter != tt.retryAfter {
				t.Errorf("error %v: code %q detail %q close %d retryAfter %v; want %q %q %d %v",
					e, e.Code, e.DetailCode, e.CloseCode, e.RetryAfter, tt.code, tt.detail, tt.closeCode, tt.retryAfter)
			}
			if tt.kind == gateway.ErrNotReady && !e.Retryable {
				t.Errorf("starting refusal not retryable: %v", e)
			}
		})
	}
}

func TestDialContext(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := gateway.Dial(ctx, gateway.Options{URL: g.WSURL, Token: g.Token})
	gwErr(t, err, gateway.ErrUnreachable)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
}

func TestDialAfterStartup(t *testing.T) {
	t.Parallel()
	// Connect is refused while the gateway starts, then accepted: the
	// caller retries after RetryAfter.
	g := gatewaytest.Start(t, gatewaytest.Options{StartupDelay: 300 * time.Millisecond})
	deadline := time.Now().Add(wait)
	for {
		c, err := gateway.Dial(ctxT(t), gateway.Options{URL: g.WSURL, Token: g.Token})
		if err == nil {
			c.Close()
			return
		}
		e := gwErr(t, err, gateway.ErrNotReady)
		if time.Now().After(deadline) {
			t.Fatalf("still not ready: %v", err)
		}
		time.Sleep(e.RetryAfter / 5)
	}
}

func TestHealth(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{PluginWarnings: []gatewaytest.PluginWarning{
		{PluginID: "zeta", Kind: gatewaytest.PluginAuthRequired},
		{PluginID: "github", Kind: gatewaytest.PluginInstallFailed},
	}})
	c := dial(t, g)
	h, err := c.Health(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if !h.OK || h.DefaultAgentID != gateway.DefaultAgentID || len(h.Raw) == 0 || len(h.Agents) != 1 || !h.Agents[0].IsDefault {
		t.Errorf("health = %+v", h)
	}
	got := fmt.Sprint(h.PluginWarnings())
	if want := "[{PLUGIN_INSTALL_FAILED github} {PLUGIN_AUTH_REQUIRED zeta}]"; got != want {
		t.Errorf("warnings = %s, want %s", got, want)
	}
	g.SetPluginWarnings(nil)
	if h, err = c.Health(ctxT(t)); err != nil || len(h.PluginWarnings()) != 0 {
		t.Errorf("after clearing: %v %v", h.PluginWarnings(), err)
	}
}

func TestAgentFiles(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g)
	ctx := ctxT(t)

	// Missing: reported, not created.
	f, err := c.GetAgentFile(ctx, "", "SOUL.md")
	if err != nil || !f.Missing || f.Content != "" || f.Hash != "" || f.AgentID != "main" || f.Workspace != g.WorkspaceDir {
		t.Fatalf("get missing = %+v, %v", f, err)
	}
	if _, err := os.Stat(filepath.Join(g.WorkspaceDir, "SOUL.md")); !os.IsNotExist(err) {
		t.Fatalf("get created the file: %v", err)
	}

	// Write without a precondition; trailing whitespace and newlines kept.
	content := "# Soul\n\nbe kind  \n\t\n<>&\"é — ✓\n\n\n   "
	f, err = c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "SOUL.md", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	if f.Hash != gateway.HashContent([]byte(content)) || f.Size != int64(len(content)) || f.Path != filepath.Join(g.WorkspaceDir, "SOUL.md") {
		t.Errorf("set = %+v", f)
	}
	disk, err := os.ReadFile(filepath.Join(g.WorkspaceDir, "SOUL.md"))
	if err != nil || !bytes.Equal(disk, []byte(content)) {
		t.Fatalf("on disk %q, %v", disk, err)
	}
	if st, _ := os.Stat(filepath.Join(g.WorkspaceDir, "SOUL.md")); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	got, err := c.GetAgentFile(ctx, gateway.DefaultAgentID, "SOUL.md")
	if err != nil || got.Content != content || got.Hash != f.Hash || got.Missing {
		t.Fatalf("get = %+v, %v", got, err)
	}

	// Write based on what was read.
	next := "second\n"
	if _, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "SOUL.md", Content: next, ExpectedHash: strings.ToUpper(got.Hash)}); err != nil {
		t.Fatalf("set with expected hash: %v", err)
	}
	// A stale hash is a conflict naming the current hash; nothing written.
	_, err = c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "SOUL.md", Content: "third\n", ExpectedHash: got.Hash})
	e := gwErr(t, err, gateway.ErrFileConflict)
	if e.CurrentHash() != gateway.HashContent([]byte(next)) || e.Code != "INVALID_REQUEST" || e.DetailCode != "agent_file_conflict" {
		t.Errorf("conflict %v: current %q", e, e.CurrentHash())
	}
	if disk, _ := os.ReadFile(filepath.Join(g.WorkspaceDir, "SOUL.md")); string(disk) != next {
		t.Errorf("conflicting write landed: %q", disk)
	}
	// An expected hash on a missing file is a conflict too.
	_, err = c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "USER.md", Content: "x", ExpectedHash: got.Hash})
	if e := gwErr(t, err, gateway.ErrFileConflict); e.CurrentHash() != "" {
		t.Errorf("missing-file conflict has current hash %q", e.CurrentHash())
	}
	// An empty file is a file.
	if f, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "IDENTITY.md", Content: ""}); err != nil || f.Missing || f.Size != 0 {
		t.Errorf("empty file = %+v, %v", f, err)
	}
	if f, err := c.GetAgentFile(ctx, "", "IDENTITY.md"); err != nil || f.Missing || f.Content != "" || f.Hash != gateway.HashContent(nil) {
		t.Errorf("get empty file = %+v, %v", f, err)
	}
}

func TestAgentFileRefusals(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g)
	tests := []struct {
		name      string
		call      func(ctx context.Context) error
		kind      error
		roundTrip bool // whether the gateway saw the request
	}{
		{"unsupported name", func(ctx context.Context) error { _, err := c.GetAgentFile(ctx, "", "TOOLS.md"); return err }, gateway.ErrRequest, false},
		{"path trick", func(ctx context.Context) error { _, err := c.GetAgentFile(ctx, "", "../AGENTS.md"); return err }, gateway.ErrRequest, false},
		{"case variant", func(ctx context.Context) error {
			_, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "agents.md", Content: "x"})
			return err
		}, gateway.ErrRequest, false},
		{"short expected hash", func(ctx context.Context) error {
			_, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "AGENTS.md", Content: "x", ExpectedHash: "abc"})
			return err
		}, gateway.ErrRequest, false},
		{"invalid UTF-8", func(ctx context.Context) error {
			_, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "AGENTS.md", Content: "a\xffb"})
			return err
		}, gateway.ErrRequest, false},
		{"unknown agent", func(ctx context.Context) error { _, err := c.GetAgentFile(ctx, "nobody", "AGENTS.md"); return err }, gateway.ErrRequest, true},
		{"unknown agent on set", func(ctx context.Context) error {
			_, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{AgentID: "nobody", Name: "AGENTS.md", Content: "x"})
			return err
		}, gateway.ErrRequest, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Not parallel: each case counts the gateway's requests.
			before := g.Requests()
			e := gwErr(t, tt.call(ctxT(t)), tt.kind)
			if seen := g.Requests() > before; seen != tt.roundTrip {
				t.Errorf("%v: request reached the gateway = %v, want %v", e, seen, tt.roundTrip)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(g.WorkspaceDir, "AGENTS.md")); !os.IsNotExist(err) {
		t.Errorf("a refused write created AGENTS.md: %v", err)
	}
}

func TestAgentFileReadOnlyScope(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g, func(o *gateway.Options) { o.Scopes = []string{"operator.read"} })
	if _, err := c.GetAgentFile(ctxT(t), "", "AGENTS.md"); err != nil {
		t.Fatalf("get with read scope: %v", err)
	}
	_, err := c.SetAgentFile(ctxT(t), gateway.AgentFileWrite{Name: "AGENTS.md", Content: "x"})
	e := gwErr(t, err, gateway.ErrUnauthorized)
	if e.Code != "FORBIDDEN" || e.DetailCode != "MISSING_SCOPE" || !strings.Contains(e.Message, "operator.admin") {
		t.Errorf("error %v", e)
	}
	_, err = c.ProbeModel(ctxT(t), "openai")
	gwErr(t, err, gateway.ErrUnauthorized)
}

func TestConfigGet(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g)
	s, err := c.ConfigGet(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(g.ConfigPath)
	if s.Path != g.ConfigPath || !s.Exists || s.Raw != string(raw) || s.Hash != gateway.HashContent(raw) || len(s.Payload) == 0 {
		t.Errorf("config.get = %+v", s)
	}
}

func TestProbeModel(t *testing.T) {
	t.Parallel()
	doc := map[string]any{
		"models": map[string]any{"providers": map[string]any{"fakeprov": map[string]any{"baseUrl": "http://127.0.0.1:1/v1", "apiKey": "${FAKE_KEY}"}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1"}}},
	}
	tests := []struct {
		name     string
		auth     string
		provider string
		status   string
		kind     error
	}{
		{"accepted", "", "fakeprov", gateway.ModelProbeOK, nil},
		{"rejected", "rejected", "fakeprov", gateway.ModelProbeAuth, gateway.ErrModelAuth},
		{"unconfigured provider", "rejected", "other", "no_model", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := gatewaytest.Start(t, gatewaytest.Options{Config: doc, ModelAuth: tt.auth})
			p, err := dial(t, g).ProbeModel(ctxT(t), tt.provider)
			if tt.kind == nil && err != nil {
				t.Fatal(err)
			}
			if tt.kind != nil {
				gwErr(t, err, tt.kind)
			}
			if p.Provider != tt.provider || p.Status != tt.status {
				t.Errorf("probe = %+v", p)
			}
		})
	}
	g := gatewaytest.Start(t, gatewaytest.Options{Config: doc})
	c := dial(t, g)
	g.SetModelAuthRejected(true)
	if _, err := c.ProbeModel(ctxT(t), gateway.ModelProvider(doc)); !errors.Is(err, gateway.ErrModelAuth) {
		t.Errorf("after rejecting: %v", err)
	}
}

func TestChannelsStatusSlack(t *testing.T) {
	t.Parallel()
	slackDoc := map[string]any{"channels": map[string]any{"slack": map[string]any{
		"enabled": true, "mode": "socket", "botToken": "${SLACK_BOT_TOKEN}", "appToken": "xapp-literal"}}}
	tests := []struct {
		name                 string
		doc                  map[string]any
		mode                 string
		probe                bool
		present              bool
		config, auth, conn   string
		failing, readyFailed bool
	}{
		{name: "no slack", config: gateway.CheckFailed, auth: gateway.CheckUnknown, conn: gateway.CheckUnknown},
		{name: "ok", doc: slackDoc, present: true, config: gateway.CheckSucceeded, auth: gateway.CheckUnknown, conn: gateway.CheckSucceeded},
		{name: "ok probed", doc: slackDoc, probe: true, present: true, config: gateway.CheckSucceeded, auth: gateway.CheckSucceeded, conn: gateway.CheckSucceeded},
		{name: "invalid auth", doc: slackDoc, mode: gatewaytest.SlackInvalidAuth, present: true, config: gateway.CheckSucceeded,
			auth: gateway.CheckFailed, conn: gateway.CheckFailed, readyFailed: true},
		{name: "invalid auth probed", doc: slackDoc, mode: gatewaytest.SlackInvalidAuth, probe: true, present: true,
			config: gateway.CheckSucceeded, auth: gateway.CheckFailed, conn: gateway.CheckFailed, readyFailed: true},
		{name: "offline probed", doc: slackDoc, mode: gatewaytest.SlackOffline, probe: true, present: true,
			config: gateway.CheckSucceeded, auth: gateway.CheckUnknown, conn: gateway.CheckUnknown},
		{name: "disconnected probed", doc: slackDoc, mode: gatewaytest.SlackDisconnected, probe: true, present: true,
			config: gateway.CheckSucceeded, auth: gateway.CheckSucceeded, conn: gateway.CheckFailed, readyFailed: true},
		{name: "no app token probed", doc: map[string]any{"channels": map[string]any{"slack": map[string]any{"enabled": true, "botToken": "${SLACK_BOT_TOKEN}"}}},
			mode: gatewaytest.SlackDisconnected, probe: true, present: true, config: gateway.CheckFailed, auth: gateway.CheckUnknown, conn: gateway.CheckUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := gatewaytest.Start(t, gatewaytest.Options{Config: tt.doc, Slack: tt.mode})
			health, perr := gateway.Probe(ctxT(t), g.URL)
			if tt.readyFailed != (perr != nil) {
				t.Fatalf("probe error %v, want failure %v", perr, tt.readyFailed)
			}
			st, err := dial(t, g).ChannelsStatus(ctxT(t), gateway.ChannelsStatusOptions{Probe: tt.probe, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			s := st.Slack(health.Failing)
			if s.Present != tt.present || s.Configuration != tt.config || s.Authentication != tt.auth || s.Connectivity != tt.conn {
				t.Errorf("slack checks = %+v", s)
			}
			if tt.present && tt.config == gateway.CheckSucceeded && (s.BotTokenSource != "env" || s.AppTokenSource != "config") {
				t.Errorf("token sources %q %q", s.BotTokenSource, s.AppTokenSource)
			}
			if tt.auth == gateway.CheckFailed && !strings.Contains(s.Detail, "invalid_auth") {
				t.Errorf("detail %q", s.Detail)
			}
		})
	}
}

func TestConcurrentRequests(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g)
	ctx := ctxT(t)
	names := []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"}
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := names[i%len(names)]
			switch i % 3 {
			case 0:
				if _, err := c.ConfigGet(ctx); err != nil {
					errs <- err
				}
			case 1:
				if _, err := c.Health(ctx); err != nil {
					errs <- err
				}
			default:
				// Each writer reads its own write back on the same connection.
				content := fmt.Sprintf("writer %d of %s\n", i, name)
				f, err := c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: name, Content: content})
				if err != nil {
					errs <- err
					return
				}
				if f.Content != content {
					errs <- fmt.Errorf("writer %d got back %q", i, f.Content)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestFrameLimits(t *testing.T) {
	t.Parallel()
	g := gatewaytest.Start(t, gatewaytest.Options{})
	c := dial(t, g)
	big := strings.Repeat("a", gateway.DefaultMaxFrameBytes+1)

	// Outgoing: refused before sending; the connection stays usable.
	before := g.Requests()
	_, err := c.SetAgentFile(ctxT(t), gateway.AgentFileWrite{Name: "AGENTS.md", Content: big})
	gwErr(t, err, gateway.ErrProtocol)
	if !errors.Is(err, gateway.ErrFrameTooLarge) || gateway.OutcomeUnknown(err) || g.Requests() != before {
		t.Fatalf("oversized request: %v (sent to gateway: %v)", err, g.Requests() != before)
	}
	if _, err := c.Health(ctxT(t)); err != nil {
		t.Fatalf("connection unusable after a refused request: %v", err)
	}
	// Under the limit passes.
	if _, err := c.SetAgentFile(ctxT(t), gateway.AgentFileWrite{Name: "USER.md", Content: big[:1<<20]}); err != nil {
		t.Fatalf("1 MiB write: %v", err)
	}

	// Incoming: a 16 MiB+ file makes the answer oversized; the client
	// refuses the frame and the connection ends.
	if err := os.WriteFile(filepath.Join(g.WorkspaceDir, "AGENTS.md"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetAgentFile(ctxT(t), "", "AGENTS.md")
	gwErr(t, err, gateway.ErrProtocol)
	if !errors.Is(err, gateway.ErrFrameTooLarge) {
		t.Fatalf("oversized answer: %v", err)
	}
	select {
	case <-c.Done():
	case <-time.After(wait):
		t.Fatal("connection still open after an oversized frame")
	}
	if !errors.Is(c.Err(), gateway.ErrFrameTooLarge) {
		t.Errorf("Err() = %v", c.Err())
	}
	_, err = c.Health(ctxT(t))
	if gwErr(t, err, gateway.ErrProtocol); gateway.OutcomeUnknown(err) {
		t.Errorf("a call on an ended connection is not unknown: %v", err)
	}
}

func TestCallContext(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	g := gatewaytest.Start(t, gatewaytest.Options{OnRequest: func(method string) {
		if method == "config.get" {
			arrived <- struct{}{}
			<-release
		}
	}})
	defer close(release)
	c := dial(t, g)

	// Cancelled while waiting for the answer: the outcome is unknown; the
	// connection stays usable and the late answer is dropped.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-arrived
		cancel()
	}()
	_, err := c.ConfigGet(ctx)
	gwErr(t, err, gateway.ErrUnreachable)
	if !errors.Is(err, context.Canceled) || !gateway.OutcomeUnknown(err) {
		t.Fatalf("cancelled call: %v (unknown outcome %v)", err, gateway.OutcomeUnknown(err))
	}
	if _, err := c.Health(ctxT(t)); err != nil {
		t.Fatalf("connection unusable after a cancelled call: %v", err)
	}

	// Cancelled before sending: not sent, so not unknown.
	before := g.Requests()
	dead, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, err = c.GetAgentFile(dead, "", "AGENTS.md")
	if !errors.Is(err, context.Canceled) || gateway.OutcomeUnknown(err) || g.Requests() != before {
		t.Errorf("pre-cancelled call: %v", err)
	}

	// A deadline, with the gateway holding the answer.
	dctx, cancel3 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel3()
	go func() { <-arrived }()
	_, err = c.ConfigGet(dctx)
	if !errors.Is(err, context.DeadlineExceeded) || !gateway.OutcomeUnknown(err) {
		t.Errorf("deadline: %v", err)
	}
}

func TestConnectionLost(t *testing.T) {
	t.Parallel()
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	g := gatewaytest.Start(t, gatewaytest.Options{OnRequest: func(method string) {
		if method == "agents.files.set" {
			arrived <- struct{}{}
			<-release
		}
	}})
	defer close(release)
	c := dial(t, g)
	go func() {
		<-arrived
		g.Crash()
	}()
	_, err := c.SetAgentFile(ctxT(t), gateway.AgentFileWrite{Name: "AGENTS.md", Content: "x"})
	gwErr(t, err, gateway.ErrUnreachable)
	if !gateway.OutcomeUnknown(err) {
		t.Errorf("write lost with the connection is not an unknown outcome: %v", err)
	}
	<-c.Done()
	if c.Err() == nil {
		t.Error("Err() nil after the connection ended")
	}
	if _, err := gateway.Probe(ctxT(t), g.URL); !errors.Is(err, gateway.ErrUnreachable) {
		t.Errorf("probe after crash: %v", err)
	}
}

func TestEvents(t *testing.T) {
	t.Parallel()
	events := make(chan gateway.Event, 16)
	g := gatewaytest.Start(t, gatewaytest.Options{TickInterval: 20 * time.Millisecond})
	c := dial(t, g, func(o *gateway.Options) {
		o.OnEvent = func(e gateway.Event) {
			select {
			case events <- e:
			default:
			}
		}
	})
	if c.Hello().TickInterval != 20*time.Millisecond {
		t.Fatalf("tick interval %v", c.Hello().TickInterval)
	}
	var e gateway.Event
	select {
	case e = <-events:
	case <-time.After(wait):
		t.Fatal("no tick")
	}
	if e.Name != "tick" || e.Seq < 1 || !bytes.Contains(e.Payload, []byte(`"ts"`)) {
		t.Errorf("event %+v", e)
	}

	// A graceful stop: a shutdown event, then the connection ends.
	g.Stop()
	for e.Name != "shutdown" {
		select {
		case e = <-events:
		case <-time.After(wait):
			t.Fatal("no shutdown event")
		}
	}
	<-c.Done()
	if !errors.Is(c.Err(), gateway.ErrUnreachable) {
		t.Errorf("Err() after shutdown = %v", c.Err())
	}
}
