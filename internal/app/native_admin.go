package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// NativeAdmin configures the native admin UI (CONTRACT.md §6): an
// installation toggle, the parent domain of the per-Agent browser hosts and
// the shared cookie parent domain. config.Validate has checked the names.
type NativeAdmin struct {
	Enabled      bool
	Domain       string // agent-<32 hex>.<Domain>
	CookieDomain string // the shared cookie's Domain
	PublicOrigin string // its scheme and port are the Agent origins'
}

// The availability statuses of GET …/agents/:agt/native-admin-ui.
const (
	NativeAdminDisabled    = "disabled"    // the installation does not enable it
	NativeAdminStopped     = "stopped"     // the Agent is not desired running
	NativeAdminUnavailable = "unavailable" // desired running, but no active revision serves yet
	NativeAdminUnsupported = "unsupported" // the compute driver or the running gateway cannot serve it
	NativeAdminAvailable   = "available"   // open URL
)

// NativeAdminStatus is the availability of one Agent's native admin UI; URL
// is set only when available.
type NativeAdminStatus struct {
	Status string
	URL    string
}

// Audit actions of the native admin UI.
const (
	actNativeAdminRead    = "agents.native_admin.read"
	actNativeAdminOpen    = "agents.native_admin.open"
	actNativeAdminConnect = "agents.native_admin.websocket.connect"
	actNativeAdminClose   = "agents.native_admin.websocket.close"
)

// nativeAdminLabel is the first DNS label of an Agent's browser host. It is
// derived from the installation, Namespace and Agent IDs and cannot be
// reversed: a host is resolved against live state (resolveNativeAdminHost).
func (a *App) nativeAdminLabel(nsID, agentID string) string {
	sum := sha256.Sum256([]byte(a.instID + "\x00" + nsID + "\x00" + agentID))
	return "agent-" + hex.EncodeToString(sum[:])[:32]
}

// labelPattern is the form of a derived label.
var labelPattern = regexp.MustCompile(`^agent-[0-9a-f]{32}$`)

// NativeAdminHost is the Agent's browser host: agent-<first 32 hex of
// sha256(installationId \0 namespaceId \0 agentId)>.<domain>.
func (a *App) NativeAdminHost(nsID, agentID string) string {
	return a.nativeAdminLabel(nsID, agentID) + "." + a.opts.NativeAdmin.Domain
}

// NativeAdminOrigin is the Agent's browser origin: the public origin's
// scheme and port with the Agent's host. It is what the gateway allows as
// the Control UI origin and what the proxy requires of unsafe requests and
// WebSocket upgrades.
func (a *App) NativeAdminOrigin(nsID, agentID string) string {
	u, err := url.Parse(a.opts.NativeAdmin.PublicOrigin)
	if err != nil {
		return ""
	}
	host := a.NativeAdminHost(nsID, agentID)
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	return u.Scheme + "://" + host
}

// NativeAdminEnabled reports whether the installation enables the native
// admin UI.
func (a *App) NativeAdminEnabled() bool { return a.opts.NativeAdmin.Enabled }

// NativeAdminGatewayOrigin is what the worker hands the compute driver for
// a revision: the browser origin the gateway must trust occ's proxy for, or
// "" when the installation does not enable the native admin UI (token
// mode, nothing changes).
func (a *App) NativeAdminGatewayOrigin(nsID, agentID string) string {
	if !a.opts.NativeAdmin.Enabled {
		return ""
	}
	return a.NativeAdminOrigin(nsID, agentID)
}

// NativeAdminAvailability answers GET …/agents/:agt/native-admin-ui: exact
// agent:administer (read and operate are not enough; even "disabled"
// needs it), then the status. Reads never change anything.
func (a *App) NativeAdminAvailability(ctx context.Context, c occ.Caller, nsID, id string) (NativeAdminStatus, error) {
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionAdminister), agentRef(nsID, id), actNativeAdminRead, a.seeAgent(nsID, id)); err != nil {
		return NativeAdminStatus{}, err
	}
	row, err := a.st.GetAgent(ctx, nsID, id)
	if err != nil {
		return NativeAdminStatus{}, notFoundOr(err)
	}
	if !a.opts.NativeAdmin.Enabled {
		return NativeAdminStatus{Status: NativeAdminDisabled}, nil
	}
	st, _ := a.nativeAdminState(ctx, store.DecodeAgent(row))
	if st != NativeAdminAvailable {
		return NativeAdminStatus{Status: st}, nil
	}
	return NativeAdminStatus{Status: st, URL: a.NativeAdminOrigin(nsID, id) + "/"}, nil
}

// nativeAdminState decides the status of an Agent whose installation
// enables the native admin UI, and returns, when available, the gateway's
// private HTTP base URL and the identity it trusts from occ's proxy.
func (a *App) nativeAdminState(ctx context.Context, g occ.Agent) (string, nativeAdminUpstream) {
	none := nativeAdminUpstream{}
	switch {
	case g.Status != occ.AgentActive || g.DesiredState != occ.DesiredRunning:
		return NativeAdminStopped, none
	case g.ActiveRevisionID == "":
		return NativeAdminUnavailable, none
	case a.opts.Gateways == nil:
		return NativeAdminUnsupported, none // this process has no compute driver that exposes gateways
	}
	ep, ok := a.opts.Gateways(ctx, g.NamespaceID, g.ID)
	switch {
	case !ok:
		return NativeAdminUnavailable, none // not running right now (starting, restarting)
	case ep.RevisionID != "" && ep.RevisionID != g.ActiveRevisionID:
		return NativeAdminUnavailable, none // a newer revision is replacing the active one
	case ep.NativeAdminOrigin != a.NativeAdminOrigin(g.NamespaceID, g.ID), ep.ProxyIdentity == "":
		return NativeAdminUnsupported, none // the gateway was not started for the native admin UI (redeploy)
	}
	base, ok := privateHTTPBase(ep.URL)
	if !ok {
		return NativeAdminUnsupported, none
	}
	return NativeAdminAvailable, nativeAdminUpstream{base: base, identity: ep.ProxyIdentity}
}

// nativeAdminUpstream is where the proxy forwards to and what it asserts.
type nativeAdminUpstream struct {
	base     string
	identity string
}

// privateHTTPBase turns a clean ws:// or wss:// gateway URL (no user,
// query, fragment or path beyond "/") into its http:// or https:// base.
func privateHTTPBase(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") || u.Host == "" {
		return "", false
	}
	switch u.Scheme {
	case "ws":
		return "http://" + u.Host, true
	case "wss":
		return "https://" + u.Host, true
	}
	return "", false
}

// NativeAdminTarget is what the proxy forwards one request to.
type NativeAdminTarget struct {
	NamespaceID string
	AgentID     string
	RevisionID  string // the active revision the gateway runs
	Origin      string // the Agent's browser origin
	Upstream    string // the gateway's private HTTP base (http://127.0.0.1:PORT)
	// Identity is what the proxy asserts to the gateway (secret: never
	// shown or logged).
	Identity string
}

var (
	// errNativeAdminUnknownHost is the plain 404 a hidden Agent's host
	// gets too: whether a host names an Agent never shows.
	errNativeAdminUnknownHost = occ.ErrNotFound
	// ErrNativeAdminNotServing: the caller may open the Agent's native admin
	// UI, but it does not serve now (not running, no active revision, a
	// gateway not started for it).
	ErrNativeAdminNotServing = occ.E(occ.CodeDependencyUnavailable, "The Agent's native admin UI is not available now; check its status in occ.")
)

// NativeAdminTarget resolves a browser host under the admin domain to its
// Agent and authorizes the caller for it, on every request and on every
// WebSocket recheck: exact agent:administer (404 when the caller may not
// see the Agent, 403 when they may), an Agent desired running with an active
// revision, and a gateway started for the native admin UI (503 otherwise).
// An unknown host is 404.
func (a *App) NativeAdminTarget(ctx context.Context, c occ.Caller, host string) (NativeAdminTarget, error) {
	if !a.opts.NativeAdmin.Enabled {
		return NativeAdminTarget{}, errNativeAdminUnknownHost
	}
	label, ok := strings.CutSuffix(strings.ToLower(host), "."+a.opts.NativeAdmin.Domain)
	if !ok || !labelPattern.MatchString(label) {
		return NativeAdminTarget{}, errNativeAdminUnknownHost
	}
	ref, found, err := a.hosts.resolve(ctx, a, label)
	if err != nil {
		return NativeAdminTarget{}, occ.Unavailable(err)
	}
	if !found {
		return NativeAdminTarget{}, errNativeAdminUnknownHost
	}
	if err := a.require(ctx, c, occ.P(occ.KindAgent, occ.ActionAdminister), agentRef(ref.NamespaceID, ref.ID), actNativeAdminOpen, a.seeAgent(ref.NamespaceID, ref.ID)); err != nil {
		return NativeAdminTarget{}, err
	}
	row, err := a.st.GetAgent(ctx, ref.NamespaceID, ref.ID)
	if err != nil {
		return NativeAdminTarget{}, notFoundOr(err)
	}
	g := store.DecodeAgent(row)
	st, up := a.nativeAdminState(ctx, g)
	if st != NativeAdminAvailable {
		return NativeAdminTarget{}, ErrNativeAdminNotServing
	}
	return NativeAdminTarget{NamespaceID: g.NamespaceID, AgentID: g.ID, RevisionID: g.ActiveRevisionID,
		Origin: a.NativeAdminOrigin(g.NamespaceID, g.ID), Upstream: up.base, Identity: up.identity}, nil
}

// Close reasons of a native admin WebSocket.
const (
	NativeAdminCloseClient     = "client"     // the browser closed it
	NativeAdminCloseUpstream   = "upstream"   // the gateway closed it
	NativeAdminCloseRevocation = "revocation" // a recheck denied the caller (signed out, grant removed)
	NativeAdminCloseLifecycle  = "lifecycle"  // the Agent stopped serving or its active revision changed
	NativeAdminCloseDependency = "dependency" // a recheck could not decide (database outage)
	NativeAdminCloseShutdown   = "shutdown"   // occ is stopping
)

// RecordNativeAdminSocket audits a WebSocket of the native admin UI being
// connected (reason "") or closed.
func (a *App) RecordNativeAdminSocket(ctx context.Context, c occ.Caller, t NativeAdminTarget, connectionID, reason string) error {
	ev := occ.AuditEvent{Kind: occ.AuditAccess, Action: actNativeAdminConnect, ActorID: c.PrincipalID, NamespaceID: t.NamespaceID,
		Resource: agentRef(t.NamespaceID, t.AgentID), Details: map[string]any{"connectionId": connectionID, "revisionId": t.RevisionID}}
	if reason != "" {
		ev.Action = actNativeAdminClose
		ev.Details["closeReason"] = reason
	}
	ctx = context.WithoutCancel(ctx)
	return a.tx(ctx, func(tx *store.Tx) error { return a.record(ctx, tx, ev) })
}
