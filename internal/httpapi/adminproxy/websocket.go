package adminproxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/contract"
	"github.com/openclaw/occ/internal/occ"
)

// maxMessage bounds one relayed message (the gateway's own maxPayload is
// 25 MiB).
const maxMessage = 32 << 20

// socket is one relayed WebSocket: the browser's and the gateway's.
type socket struct {
	browser, gateway *websocket.Conn

	once   sync.Once
	reason string // why it ended
}

// end closes both sides once, remembering why: each gets a close frame
// (the relays then see the close and return).
func (s *socket) end(reason string) {
	s.once.Do(func() {
		s.reason = reason
		code, text := websocket.StatusNormalClosure, ""
		switch reason {
		case app.NativeAdminCloseRevocation:
			code, text = websocket.StatusPolicyViolation, "occ: access to this Agent ended"
		case app.NativeAdminCloseDependency:
			code, text = websocket.StatusTryAgainLater, "occ: cannot check access now"
		case app.NativeAdminCloseShutdown:
			code, text = websocket.StatusGoingAway, "occ is stopping"
		}
		go s.browser.Close(code, text)
		go s.gateway.Close(code, text)
	})
}

// serveWebSocket connects to the gateway first and accepts the browser only
// once the gateway accepted, then relays until either side closes or a
// recheck fails.
func (p *Proxy) serveWebSocket(w http.ResponseWriter, r *http.Request, c occ.Caller, t app.NativeAdminTarget, token string) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	h := http.Header{}
	for k, v := range r.Header {
		switch strings.ToLower(k) {
		case "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions", "sec-websocket-protocol":
		default:
			h[k] = v
		}
	}
	p.stripRequest(h, r, t.Identity)
	var protocols []string
	for _, v := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, sp := range strings.Split(v, ",") {
			if sp = strings.TrimSpace(sp); sp != "" {
				protocols = append(protocols, sp)
			}
		}
	}
	dctx, dcancel := context.WithTimeout(ctx, 15*time.Second)
	up, res, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(t.Upstream, "http")+r.URL.RequestURI(), &websocket.DialOptions{
		HTTPHeader: h, Host: r.Host, Subprotocols: protocols, CompressionMode: websocket.CompressionDisabled})
	dcancel()
	if err != nil {
		cancel()
		if res != nil && res.StatusCode >= 400 && res.StatusCode < 500 {
			contract.WriteError(w, r, occ.E(occ.CodeForbidden, "The Agent's gateway refused the connection."))
			return
		}
		contract.WriteError(w, r, occ.Wrap(occ.CodeDependencyUnavailable, "The Agent's gateway did not answer.", err))
		return
	}
	var accepted []string
	if sp := up.Subprotocol(); sp != "" {
		accepted = []string{sp}
	}
	// The Origin was checked to be exactly the Agent's (ServeHTTP).
	br, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: accepted, InsecureSkipVerify: true,
		CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		cancel()
		up.CloseNow()
		return
	}
	br.SetReadLimit(maxMessage)
	up.SetReadLimit(maxMessage)
	defer cancel()
	s := &socket{browser: br, gateway: up}
	if !p.track(s) {
		s.end(app.NativeAdminCloseShutdown)
		return
	}
	defer p.untrack(s)
	connID := occ.NewUUID()
	if err := p.o.App.RecordNativeAdminSocket(ctx, c, t, connID, ""); err != nil {
		s.end(app.NativeAdminCloseDependency) // an unaudited connection does not stay open
		return
	}
	done := make(chan struct{}, 2)
	go func() { s.relay(ctx, br, up, app.NativeAdminCloseClient); done <- struct{}{} }()
	go func() { s.relay(ctx, up, br, app.NativeAdminCloseUpstream); done <- struct{}{} }()
	go p.recheck(ctx, s, c, t, token, r.Host)
	<-done
	<-done
	if err := p.o.App.RecordNativeAdminSocket(context.WithoutCancel(ctx), c, t, connID, s.reason); err != nil {
		p.o.Logger.Warn("native admin WebSocket close not audited", "connectionId", connID, "error", err)
	}
}

// relay copies messages from src to dst until src ends, then ends the
// socket (reason names the side that ended first), passing a close code on.
func (s *socket) relay(ctx context.Context, src, dst *websocket.Conn, reason string) {
	for {
		typ, rd, err := src.Reader(ctx)
		if err != nil {
			s.pass(err, dst, reason)
			return
		}
		wr, err := dst.Writer(ctx, typ)
		if err != nil {
			s.end(reason)
			return
		}
		if _, err := io.Copy(wr, rd); err != nil {
			wr.Close()
			s.end(reason)
			return
		}
		if err := wr.Close(); err != nil {
			s.end(reason)
			return
		}
	}
}

// pass ends the socket after src closed, giving dst src's close code when
// it is one a peer may send.
func (s *socket) pass(err error, dst *websocket.Conn, reason string) {
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code != websocket.StatusNoStatusRcvd && ce.Code != websocket.StatusAbnormalClosure && ce.Code != websocket.StatusTLSHandshake {
		s.once.Do(func() {
			s.reason = reason
			go dst.Close(ce.Code, ce.Reason)
		})
	}
	s.end(reason)
}

// recheck authorizes the connection again every RecheckInterval and ends
// it when the session, the grant or the Agent's serving state is gone, or
// the active revision changed.
func (p *Proxy) recheck(ctx context.Context, s *socket, c occ.Caller, t app.NativeAdminTarget, token, host string) {
	tick := time.NewTicker(p.o.RecheckInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		cctx, cancel := context.WithTimeout(ctx, checkTimeout)
		again, err := p.o.App.NativeAdminSession(cctx, token)
		var now app.NativeAdminTarget
		if err == nil {
			now, err = p.o.App.NativeAdminTarget(cctx, again, hostname(host))
		}
		cancel()
		switch {
		case ctx.Err() != nil:
			return
		case err == nil && now.RevisionID == t.RevisionID:
			continue
		case err == nil, errors.Is(err, app.ErrNativeAdminNotServing):
			s.end(app.NativeAdminCloseLifecycle)
		case occ.AsError(err) != nil && occ.AsError(err).Code == occ.CodeDependencyUnavailable:
			s.end(app.NativeAdminCloseDependency)
		default:
			s.end(app.NativeAdminCloseRevocation)
		}
		return
	}
}

func (p *Proxy) track(s *socket) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.sockets[s] = struct{}{}
	return true
}

func (p *Proxy) untrack(s *socket) {
	p.mu.Lock()
	delete(p.sockets, s)
	p.mu.Unlock()
}
