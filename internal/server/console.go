package server

import (
	"errors"
	"net/http"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/console"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/iam"
)

// console puts the web console in front of the API handler h: it answers
// / and /console/…, paths no API route uses.
func (m *Main) console(h http.Handler) (http.Handler, error) {
	cfg := m.Config
	ui, err := console.New(console.Options{App: m.app, Authn: iam.NewAuthenticator(m.st), PublicOrigin: cfg.PublicOrigin,
		SessionLifetime: cfg.Auth.SessionLifetime.D(), NativeAdminCookieDomain: nativeAdminCookieDomain(cfg),
		BodyLimit: cfg.Limits.AgentCreateBodyBytes, WorkspaceDefaults: m.workspaceDefaults,
		Logger: m.Logger.With("component", "console")})
	if err != nil {
		return nil, err
	}
	return ui.Route(h), nil
}

var errNoRuntime = errors.New("the pinned OpenClaw runtime is not installed in runtimeDir")

// workspaceDefaults are the four rendered default workspace files of the
// pinned runtime installed in runtimeDir, with their identity: what the
// console's Create Agent form starts from. Only the pinned defaults are
// offered (their identity is the one Agent creation accepts).
func (m *Main) workspaceDefaults() (map[string]string, string, error) {
	rt, ok := agentruntime.Find(m.Config.RuntimeDir, agentruntime.Pinned())
	if !ok {
		return nil, "", errNoRuntime
	}
	files, err := agentruntime.WorkspaceTemplates(rt)
	if err != nil {
		return nil, "", err
	}
	if err := gateway.CheckPinnedDefaults(files); err != nil {
		return nil, "", err
	}
	out := make(map[string]string, len(files))
	for name, b := range files {
		out[name] = string(b)
	}
	return out, gateway.PinnedDefaultsID, nil
}
