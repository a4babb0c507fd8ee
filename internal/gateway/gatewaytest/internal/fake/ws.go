package fake

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// rpcErr is the protocol's error shape.
type rpcErr struct {
	Code         string `json:"code"`
	Message      string `json:"message"`
	Details      any    `json:"details,omitempty"`
	Retryable    bool   `json:"retryable,omitempty"`
	RetryAfterMs int64  `json:"retryAfterMs,omitempty"`
}

func (e *rpcErr) Error() string { return e.Code + ": " + e.Message }

func invalid(format string, args ...any) *rpcErr {
	return &rpcErr{Code: "INVALID_REQUEST", Message: fmt.Sprintf(format, args...)}
}

// reqFrame is a request frame (closed object).
type reqFrame struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// session is one authenticated connection.
type session struct {
	s      *Server
	c      *websocket.Conn
	connID string
	method string // auth method: token, password, trusted-proxy, none
	scopes []string
	seq    atomic.Int64
}

// operatorScopes is the closed set of operator scopes.
var operatorScopes = []string{"operator.read", "operator.write", "operator.admin", "operator.approvals",
	"operator.questions", "operator.pairing", "operator.talk", "operator.talk.secrets"}

// methodScopes gives each implemented method its scope ("" = none).
var methodScopes = map[string]string{
	"health":            "",
	"agents.list":       "operator.read",
	"agents.files.list": "operator.read",
	"agents.files.get":  "operator.read",
	"agents.files.set":  "operator.admin",
	"config.get":        "operator.read",
	"channels.status":   "operator.read",
	"models.probe":      "operator.admin",
	"models.authStatus": "operator.read",
	"plugins.list":      "operator.read",
}

// serveWS runs one WebSocket connection: challenge, connect, then requests.
func (s *Server) serveWS(w http.ResponseWriter, r *http.Request, attr attribution) {
	fc := s.config()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: originPatterns(fc.allowedOrigins)})
	if err != nil {
		return
	}
	s.mu.Lock()
	if s.phase == "crashed" || s.phase == "draining" {
		s.mu.Unlock()
		c.Close(websocket.StatusServiceRestart, "gateway stopping")
		return
	}
	s.conns[c] = struct{}{}
	s.handlers.Add(1)
	s.mu.Unlock()
	defer s.handlers.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.CloseNow()
	}()

	ctx := r.Context()
	c.SetReadLimit(preConnectLimit)
	nonce := newUUID()
	if err := writeJSON(ctx, c, map[string]any{"type": "event", "event": "connect.challenge",
		"payload": map[string]any{"nonce": nonce, "ts": time.Now().UnixMilli(), "capabilities": []string{"model-catalog-snapshot"}}}); err != nil {
		return
	}

	// A read cancelled by its context drops the connection without a close
	// frame, so the handshake timeout closes the connection itself.
	// (The real gateway closes without a status code; this library cannot,
	// so the fake closes normally.)
	timer := time.AfterFunc(s.cfg.HandshakeTimeout, func() { c.Close(websocket.StatusNormalClosure, "") })
	typ, b, err := c.Read(ctx)
	if !timer.Stop() || err != nil {
		return
	}
	var f reqFrame
	if typ != websocket.MessageText || strictUnmarshal(b, &f) != nil || f.Type != "req" || f.ID == "" || f.Method == "" {
		c.Close(websocket.StatusPolicyViolation, "invalid request frame")
		return
	}
	s.requests.Add(1)
	if f.Method != "connect" {
		s.refuse(ctx, c, f.ID, invalid("invalid handshake: first request must be connect"), websocket.StatusPolicyViolation)
		return
	}
	sess, rerr, code := s.connect(f.Params, attr)
	if rerr != nil {
		s.refuse(ctx, c, f.ID, rerr, code)
		return
	}
	sess.c = c
	c.SetReadLimit(maxPayload)
	if err := writeJSON(ctx, c, map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": s.hello(sess, fc)}); err != nil {
		return
	}
	s.logf("INFO", "client connected (conn %s, scopes %v)", sess.connID, sess.scopes)

	tick := time.NewTicker(s.cfg.TickInterval)
	defer tick.Stop()
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case t := <-tick.C:
				if sess.event(ctx, "tick", map[string]any{"ts": t.UnixMilli()}) != nil {
					return
				}
			}
		}
	}()

	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			return
		}
		var f reqFrame
		if typ != websocket.MessageText || json.Unmarshal(b, &f) != nil {
			c.Close(websocket.StatusPolicyViolation, "invalid frame")
			return
		}
		if f.Type != "req" || f.ID == "" || f.Method == "" {
			// Anything but a request frame (a cancel frame too) is answered
			// with an error under its id; the connection stays open.
			id := f.ID
			if id == "" {
				id = "invalid"
			}
			_ = writeJSON(ctx, c, map[string]any{"type": "res", "id": id, "ok": false, "error": invalid("invalid request frame: must be a request")})
			continue
		}
		s.requests.Add(1)
		// Requests run concurrently; answers may come out of order.
		s.handlers.Add(1)
		go func() {
			defer s.handlers.Done()
			sess.handle(ctx, f)
		}()
	}
}

// refuse answers a failed handshake and closes with code.
func (s *Server) refuse(ctx context.Context, c *websocket.Conn, id string, e *rpcErr, code websocket.StatusCode) {
	_ = writeJSON(ctx, c, map[string]any{"type": "res", "id": id, "ok": false, "error": e})
	reason := e.Message
	if len(reason) > 120 {
		reason = reason[:120]
	}
	c.Close(code, reason)
}

// connectParams is the connect request (closed at both levels).
type connectParams struct {
	MinProtocol *int `json:"minProtocol"`
	MaxProtocol *int `json:"maxProtocol"`
	Client      *struct {
		ID              string `json:"id"`
		DisplayName     string `json:"displayName,omitempty"`
		Version         string `json:"version"`
		Platform        string `json:"platform"`
		DeviceFamily    string `json:"deviceFamily,omitempty"`
		ModelIdentifier string `json:"modelIdentifier,omitempty"`
		Mode            string `json:"mode"`
		InstanceID      string `json:"instanceId,omitempty"`
	} `json:"client"`
	Caps        []string        `json:"caps,omitempty"`
	Commands    []string        `json:"commands,omitempty"`
	Permissions map[string]bool `json:"permissions,omitempty"`
	PathEnv     string          `json:"pathEnv,omitempty"`
	Role        string          `json:"role,omitempty"`
	Scopes      []string        `json:"scopes,omitempty"`
	Device      *struct {
		ID        string `json:"id"`
		PublicKey string `json:"publicKey"`
		Signature string `json:"signature"`
		SignedAt  int64  `json:"signedAt"`
		Nonce     string `json:"nonce"`
	} `json:"device,omitempty"`
	Auth *struct {
		Token                     *string `json:"token,omitempty"`
		BootstrapToken            *string `json:"bootstrapToken,omitempty"`
		DeviceToken               *string `json:"deviceToken,omitempty"`
		Password                  *string `json:"password,omitempty"`
		ApprovalRuntimeToken      *string `json:"approvalRuntimeToken,omitempty"`
		AgentRuntimeIdentityToken *string `json:"agentRuntimeIdentityToken,omitempty"`
	} `json:"auth,omitempty"`
	Locale    string `json:"locale,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
}

// connect checks a connect request (§2.2-§2.3) and returns the session, or
// the refusal and the close code.
func (s *Server) connect(raw json.RawMessage, attr attribution) (*session, *rpcErr, websocket.StatusCode) {
	if s.phaseNow() != "started" {
		return nil, &rpcErr{Code: "UNAVAILABLE", Message: "gateway starting; retry shortly", Retryable: true, RetryAfterMs: 500,
			Details: map[string]any{"reason": "startup-sidecars"}}, websocket.StatusTryAgainLater
	}
	var p connectParams
	if err := strictUnmarshal(raw, &p); err != nil || p.MinProtocol == nil || p.MaxProtocol == nil || p.Client == nil ||
		p.Client.ID == "" || p.Client.Version == "" || p.Client.Platform == "" || p.Client.Mode == "" {
		msg := "missing required fields"
		if err != nil {
			msg = err.Error()
		}
		return nil, invalid("invalid connect params: %s", msg), websocket.StatusPolicyViolation
	}
	proto := s.cfg.Protocol
	if *p.MaxProtocol < proto || *p.MinProtocol > proto {
		return nil, &rpcErr{Code: "INVALID_REQUEST", Message: "protocol mismatch",
			Details: map[string]any{"code": "PROTOCOL_MISMATCH", "expectedProtocol": proto, "minimumProbeProtocol": 3}}, websocket.StatusProtocolError
	}
	fc := s.config()
	token := firstNonEmpty(s.cfg.Token, fc.authToken)
	password := firstNonEmpty(s.cfg.Password, fc.authPassword)
	backend := p.Client.ID == "gateway-client" && p.Client.Mode == "backend"

	method := ""
	switch {
	case fc.authMode == "trusted-proxy" && attr.proxied && attr.user != "":
		method = "trusted-proxy"
	case p.Auth != nil && p.Auth.Password != nil && (fc.authMode == "password" || fc.authMode == "trusted-proxy"):
		if password == "" || !secretEqual(*p.Auth.Password, password) {
			return nil, &rpcErr{Code: "INVALID_REQUEST", Message: "unauthorized: gateway password mismatch (provide gateway auth password)",
				Details: map[string]any{"code": "AUTH_PASSWORD_MISMATCH", "authReason": "password_mismatch", "canRetryWithDeviceToken": false,
					"recommendedNextStep": "update_auth_credentials"}}, websocket.StatusPolicyViolation
		}
		method = "password"
	case p.Auth != nil && p.Auth.Token != nil:
		if fc.authMode != "token" || token == "" || !secretEqual(*p.Auth.Token, token) {
			return nil, &rpcErr{Code: "INVALID_REQUEST", Message: "unauthorized: gateway token mismatch (provide gateway auth token)",
				Details: map[string]any{"code": "AUTH_TOKEN_MISMATCH", "authReason": "token_mismatch", "canRetryWithDeviceToken": false,
					"recommendedNextStep": "update_auth_credentials"}}, websocket.StatusPolicyViolation
		}
		method = "token"
	case fc.authMode == "none":
		method = "none"
	default:
		return nil, &rpcErr{Code: "NOT_PAIRED", Message: "device identity required",
			Details: map[string]any{"code": "DEVICE_IDENTITY_REQUIRED"}}, websocket.StatusPolicyViolation
	}

	// Shared-secret connections get their scopes without a device only as a
	// backend client on direct loopback; a remote one keeps the connection
	// with no scopes; a device-bearing remote one needs pairing.
	var scopes []string
	switch {
	case method == "trusted-proxy":
		scopes = []string{"operator.approvals", "operator.questions", "operator.read", "operator.write"}
		for _, extra := range fc.identityScopes[attr.user] {
			if !slices.Contains(scopes, extra) {
				scopes = append(scopes, extra)
			}
		}
	case attr.loopback && backend:
		for _, sc := range p.Scopes {
			if slices.Contains(operatorScopes, sc) && !slices.Contains(scopes, sc) {
				scopes = append(scopes, sc)
			}
		}
	case p.Device != nil && !attr.loopback:
		return nil, &rpcErr{Code: "NOT_PAIRED", Message: "pairing required",
			Details: map[string]any{"code": "PAIRING_REQUIRED", "requestId": newUUID()}}, websocket.StatusPolicyViolation
	case attr.loopback && p.Device == nil:
		return nil, &rpcErr{Code: "NOT_PAIRED", Message: "device identity required",
			Details: map[string]any{"code": "DEVICE_IDENTITY_REQUIRED"}}, websocket.StatusPolicyViolation
	default:
		scopes = []string{}
	}
	if s.cfg.GrantedScopes != nil {
		scopes = slices.Clone(s.cfg.GrantedScopes)
	}
	sort.Strings(scopes)
	return &session{s: s, connID: newUUID(), method: method, scopes: scopes}, nil, 0
}

// hello builds the hello-ok payload.
func (s *Server) hello(sess *session, fc *fileConfig) map[string]any {
	methods := make([]string, 0, len(methodScopes))
	for m := range methodScopes {
		methods = append(methods, m)
	}
	sort.Strings(methods)
	return map[string]any{
		"type":     "hello-ok",
		"protocol": s.cfg.Protocol,
		"server": map[string]any{"version": s.cfg.Version, "buildId": "fake-" + s.cfg.Version, "bootId": s.bootID,
			"connId": sess.connID, "controlUiBuildSource": "fake"},
		"features": map[string]any{"methods": methods, "events": []string{"connect.challenge", "tick", "shutdown"}},
		"snapshot": map[string]any{
			"presence": []any{}, "health": map[string]any{}, "stateVersion": map[string]any{"presence": 0, "health": 0},
			"uptimeMs": time.Since(s.started).Milliseconds(), "appliedConfigHash": hashHex(fc.raw),
			"sessionDefaults": map[string]any{"defaultAgentId": "main"},
			"configPath":      s.cfg.ConfigPath, "stateDir": s.cfg.StateDir, "authMode": fc.authMode,
		},
		"auth":   map[string]any{"method": sess.method, "role": "operator", "scopes": sess.scopes},
		"policy": map[string]any{"maxPayload": maxPayload, "maxBufferedBytes": maxBufferedBytes, "tickIntervalMs": s.cfg.TickInterval.Milliseconds()},
	}
}

// event sends one event frame.
func (sess *session) event(ctx context.Context, name string, payload any) error {
	return writeJSON(ctx, sess.c, map[string]any{"type": "event", "event": name, "payload": payload, "seq": sess.seq.Add(1)})
}

// has reports whether the session holds scope (admin implies every scope,
// write implies read).
func (sess *session) has(scope string) bool {
	switch {
	case scope == "":
		return true
	case slices.Contains(sess.scopes, scope), slices.Contains(sess.scopes, "operator.admin"):
		return true
	case scope == "operator.read" && slices.Contains(sess.scopes, "operator.write"):
		return true
	}
	return false
}

// handle answers one request.
func (sess *session) handle(ctx context.Context, f reqFrame) {
	if hook := sess.s.cfg.OnRequest; hook != nil {
		hook(f.Method)
		if ctx.Err() != nil {
			return // the connection is gone: nothing to answer, nothing to do
		}
	}
	payload, err := sess.dispatch(f)
	var frame map[string]any
	if err != nil {
		frame = map[string]any{"type": "res", "id": f.ID, "ok": false, "error": err}
	} else {
		frame = map[string]any{"type": "res", "id": f.ID, "ok": true, "payload": payload}
	}
	_ = writeJSON(ctx, sess.c, frame)
}

func (sess *session) dispatch(f reqFrame) (any, *rpcErr) {
	if f.Method == "connect" {
		return nil, invalid("connect is only valid as the first request")
	}
	scope, ok := methodScopes[f.Method]
	if !ok {
		return nil, invalid("unknown method: %s", f.Method)
	}
	if !sess.has(scope) {
		return nil, &rpcErr{Code: "FORBIDDEN", Message: "missing scope: " + scope,
			Details: map[string]any{"code": "MISSING_SCOPE", "missingScope": scope, "requiredScopes": []string{scope}}}
	}
	params := f.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	return sess.s.call(f.Method, params)
}
