package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// Protocol facts (reference/openclaw-runtime.md §2).
const (
	// ProtocolVersion is the gateway WebSocket protocol version this client
	// speaks (minProtocol = maxProtocol = 4).
	ProtocolVersion = 4
	// ClientID and ClientMode identify occ as a trusted backend client: with
	// the shared token over direct loopback the gateway grants the requested
	// operator scopes without a device identity.
	ClientID   = "gateway-client"
	ClientMode = "backend"
	// Role is the connection role occ asks for.
	Role = "operator"

	// DefaultHandshakeTimeout bounds the WebSocket upgrade plus challenge and
	// connect exchange (the gateway's own handshake timeout is 15 s).
	DefaultHandshakeTimeout = 15 * time.Second
	// DefaultCallTimeout bounds a request whose context has no deadline (the
	// protocol's per-RPC timeout is 30 s).
	DefaultCallTimeout = 30 * time.Second
	// DefaultMaxFrameBytes is the largest frame the client sends or accepts.
	DefaultMaxFrameBytes = 16 << 20
	// defaultClientVersion is the client.version sent on connect.
	defaultClientVersion = "0.1.0"
	// writeTimeout bounds writing one frame once it has started.
	writeTimeout = 30 * time.Second
)

// DefaultScopes are the operator scopes occ asks for: agents.files.set and
// models.probe need operator.admin.
var DefaultScopes = []string{"operator.read", "operator.write", "operator.admin"}

// Options configures Dial.
type Options struct {
	// URL is the gateway's WebSocket URL, ws://127.0.0.1:PORT/ (http:// and
	// https:// are accepted and mean ws:// and wss://; an empty path is "/").
	URL string
	// Token is the shared gateway token (OPENCLAW_GATEWAY_TOKEN); Password the
	// gateway password (OPENCLAW_GATEWAY_PASSWORD, the backend path of a
	// trusted-proxy gateway). With neither, the gateway refuses the connect
	// (device identity required).
	Token    string
	Password string
	// Scopes to request; nil means DefaultScopes. Dial fails with
	// ErrUnauthorized when the gateway grants fewer than requested (it clears
	// the scopes of a connection it does not attribute to direct loopback).
	Scopes []string
	// ClientVersion and Platform fill client.version and client.platform;
	// defaults "0.1.0" and runtime.GOOS.
	ClientVersion string
	Platform      string
	// HandshakeTimeout, CallTimeout and MaxFrameBytes default to the Default*
	// constants. A request frame over MaxFrameBytes (or over the gateway's
	// policy.maxPayload, if smaller) is refused before it is sent; an
	// incoming frame over MaxFrameBytes closes the connection.
	HandshakeTimeout time.Duration
	CallTimeout      time.Duration
	MaxFrameBytes    int64
	// HTTPClient performs the upgrade; the default uses no proxy.
	HTTPClient *http.Client
	// OnEvent, if set, receives every event after the handshake (tick,
	// shutdown, …) on the connection's read goroutine; it must not block.
	OnEvent func(Event)
}

// Event is one event frame.
type Event struct {
	Name    string
	Payload json.RawMessage
	Seq     int64
}

// Hello is what the gateway said in hello-ok.
type Hello struct {
	Protocol int
	// ServerVersion is the OpenClaw version; BootID changes on every process
	// start (use it to detect restarts and to confirm which process answers).
	ServerVersion string
	BuildID       string
	BootID        string
	ConnID        string
	// Methods and Events are features.methods and features.events.
	Methods []string
	Events  []string
	// AuthMethod, Role and Scopes are what the gateway granted.
	AuthMethod string
	Role       string
	Scopes     []string
	// MaxPayload and TickInterval come from policy.
	MaxPayload   int64
	TickInterval time.Duration
	// Snapshot is the raw snapshot object (presence, health, configPath, …).
	Snapshot json.RawMessage
}

// Offers reports whether the gateway listed method in features.methods.
func (h Hello) Offers(method string) bool { return slices.Contains(h.Methods, method) }

// Conn is one authenticated connection to a gateway. Its methods may be
// called concurrently; responses are matched to requests by ID.
type Conn struct {
	ws          *websocket.Conn
	hello       Hello
	maxOut      int64
	callTimeout time.Duration
	onEvent     func(Event)

	nextID   atomic.Uint64
	lastSeen atomic.Int64 // unix nanoseconds of the last frame received

	mu      sync.Mutex
	pending map[string]chan frame
	err     *Error // why the connection ended; nil while open

	done       chan struct{}
	readCancel context.CancelFunc
}

// frame is any frame the gateway sends.
type frame struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	OK      bool            `json:"ok"`
	Payload json.RawMessage `json:"payload"`
	Error   *errorShape     `json:"error"`
	Event   string          `json:"event"`
	Seq     int64           `json:"seq"`
}

// request is a request frame.
type request struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	Method string `json:"method"`
	Params any    `json:"params"`
}

// connectParams is the connect request (§2.2). The gateway validates it as a
// closed object: send nothing else.
type connectParams struct {
	MinProtocol int          `json:"minProtocol"`
	MaxProtocol int          `json:"maxProtocol"`
	Client      clientInfo   `json:"client"`
	Role        string       `json:"role"`
	Scopes      []string     `json:"scopes"`
	Auth        *connectAuth `json:"auth,omitempty"`
}

type clientInfo struct {
	ID       string `json:"id"`
	Version  string `json:"version"`
	Platform string `json:"platform"`
	Mode     string `json:"mode"`
}

type connectAuth struct {
	Token    string `json:"token,omitempty"`
	Password string `json:"password,omitempty"`
}

// helloOK is the hello-ok payload.
type helloOK struct {
	Type     string `json:"type"`
	Protocol int    `json:"protocol"`
	Server   struct {
		Version string `json:"version"`
		BuildID string `json:"buildId"`
		BootID  string `json:"bootId"`
		ConnID  string `json:"connId"`
	} `json:"server"`
	Features struct {
		Methods []string `json:"methods"`
		Events  []string `json:"events"`
	} `json:"features"`
	Snapshot json.RawMessage `json:"snapshot"`
	Auth     struct {
		Method string   `json:"method"`
		Role   string   `json:"role"`
		Scopes []string `json:"scopes"`
	} `json:"auth"`
	Policy struct {
		MaxPayload     int64 `json:"maxPayload"`
		TickIntervalMs int64 `json:"tickIntervalMs"`
	} `json:"policy"`
}

// dialClient performs upgrades without a proxy.
var dialClient = &http.Client{Transport: &http.Transport{
	Proxy:       nil,
	DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
}}

// Dial connects to a gateway and completes the handshake: it waits for the
// connect.challenge event, sends connect as a backend client (ClientID,
// ClientMode, Role, the scopes and the token or password) and checks
// hello-ok. Failures are *Error: ErrUnreachable (nothing answered),
// ErrNotReady (gateway starting: UNAVAILABLE / close 1013; retry after
// RetryAfter), ErrUnauthorized (token mismatch, device identity required,
// pairing required, scopes not granted), ErrProtocol (protocol mismatch or
// anything this client cannot understand).
func Dial(ctx context.Context, opts Options) (*Conn, error) {
	u, err := wsURL(opts.URL)
	if err != nil {
		return nil, &Error{Kind: ErrProtocol, Op: "dial", Err: err}
	}
	if opts.Scopes == nil {
		opts.Scopes = DefaultScopes
	}
	if opts.ClientVersion == "" {
		opts.ClientVersion = defaultClientVersion
	}
	if opts.Platform == "" {
		opts.Platform = runtime.GOOS
	}
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.MaxFrameBytes <= 0 {
		opts.MaxFrameBytes = DefaultMaxFrameBytes
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = dialClient
	}

	hctx, cancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer cancel()
	ws, resp, err := websocket.Dial(hctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		e := &Error{Kind: ErrUnreachable, Op: "dial", Err: err}
		if resp != nil {
			e.Status = resp.StatusCode
			switch {
			case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
				e.Kind = ErrUnauthorized
			case resp.StatusCode == http.StatusServiceUnavailable:
				e.Kind = ErrNotReady
			case resp.StatusCode != 0:
				e.Kind = ErrProtocol
			}
		}
		return nil, e
	}
	ws.SetReadLimit(opts.MaxFrameBytes)

	c := &Conn{
		ws:          ws,
		callTimeout: opts.CallTimeout,
		onEvent:     opts.OnEvent,
		pending:     map[string]chan frame{},
		done:        make(chan struct{}),
	}
	if err := c.handshake(hctx, opts); err != nil {
		ws.CloseNow()
		return nil, err
	}
	c.maxOut = opts.MaxFrameBytes
	if p := c.hello.MaxPayload; p > 0 && p < c.maxOut {
		c.maxOut = p
	}
	c.lastSeen.Store(time.Now().UnixNano())
	rctx, rcancel := context.WithCancel(context.Background())
	c.readCancel = rcancel
	go c.readLoop(rctx)
	if c.hello.TickInterval > 0 {
		go c.watchdog(rctx, 2*c.hello.TickInterval+5*time.Second)
	}
	return c, nil
}

// wsURL normalizes a gateway URL to ws:// or wss://.
func wsURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("bad gateway URL: %w", err)
	}
	switch u.Scheme {
	case "ws", "wss":
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("bad gateway URL %q: scheme must be ws, wss, http or https", raw)
	}
	if u.Host == "" {
		return "", fmt.Errorf("bad gateway URL %q: no host", raw)
	}
	if u.Path == "" {
		u.Path = "/"
	}
	return u.String(), nil
}

// handshake reads the challenge, sends connect and reads hello-ok.
func (c *Conn) handshake(ctx context.Context, opts Options) error {
	// 1. The server speaks first: connect.challenge {nonce, ts}.
	f, err := c.readFrame(ctx, "connect")
	if err != nil {
		return err
	}
	if f.Type != "event" || f.Event != "connect.challenge" {
		return &Error{Kind: ErrProtocol, Op: "connect", Err: fmt.Errorf("first frame is %s %q, want the connect.challenge event", f.Type, f.Event+f.ID)}
	}
	var ch struct {
		Nonce string           `json:"nonce"`
		TS    *json.RawMessage `json:"ts"`
	}
	if err := json.Unmarshal(f.Payload, &ch); err != nil || ch.Nonce == "" || ch.TS == nil {
		return &Error{Kind: ErrProtocol, Op: "connect", Err: errors.New("malformed connect.challenge")}
	}
	if ts, err := strconv.ParseInt(string(*ch.TS), 10, 64); err != nil || ts < 0 {
		return &Error{Kind: ErrProtocol, Op: "connect", Err: errors.New("connect.challenge ts is not a non-negative integer")}
	}

	// 2. connect.
	p := connectParams{
		MinProtocol: ProtocolVersion,
		MaxProtocol: ProtocolVersion,
		Client:      clientInfo{ID: ClientID, Version: opts.ClientVersion, Platform: opts.Platform, Mode: ClientMode},
		Role:        Role,
		Scopes:      opts.Scopes,
	}
	if opts.Token != "" || opts.Password != "" {
		p.Auth = &connectAuth{Token: opts.Token, Password: opts.Password}
	}
	id := c.newID()
	b, err := json.Marshal(request{Type: "req", ID: id, Method: "connect", Params: p})
	if err != nil {
		return &Error{Kind: ErrProtocol, Op: "connect", Err: err}
	}
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		return closeError("connect", err, false)
	}

	// 3. hello-ok (events before it are ignored).
	for {
		f, err := c.readFrame(ctx, "connect")
		if err != nil {
			return err
		}
		if f.Type != "res" || f.ID != id {
			continue
		}
		if !f.OK {
			if f.Error == nil {
				return &Error{Kind: ErrProtocol, Op: "connect", Err: errors.New("refused without an error object")}
			}
			e := rpcError("connect", f.Error)
			// The gateway closes right after a refusal; record the code.
			cctx, ccancel := context.WithTimeout(ctx, 2*time.Second)
			_, _, rerr := c.ws.Read(cctx)
			ccancel()
			if code := websocket.CloseStatus(rerr); code != -1 {
				e.CloseCode = int(code)
			}
			return e
		}
		var h helloOK
		if err := json.Unmarshal(f.Payload, &h); err != nil || h.Type != "hello-ok" {
			return &Error{Kind: ErrProtocol, Op: "connect", Err: errors.New("answer is not hello-ok")}
		}
		if h.Protocol != ProtocolVersion {
			return &Error{Kind: ErrProtocol, Op: "connect", Err: fmt.Errorf("gateway chose protocol %d, want %d", h.Protocol, ProtocolVersion)}
		}
		c.hello = Hello{
			Protocol:      h.Protocol,
			ServerVersion: h.Server.Version,
			BuildID:       h.Server.BuildID,
			BootID:        h.Server.BootID,
			ConnID:        h.Server.ConnID,
			Methods:       h.Features.Methods,
			Events:        h.Features.Events,
			AuthMethod:    h.Auth.Method,
			Role:          h.Auth.Role,
			Scopes:        h.Auth.Scopes,
			MaxPayload:    h.Policy.MaxPayload,
			TickInterval:  time.Duration(h.Policy.TickIntervalMs) * time.Millisecond,
			Snapshot:      h.Snapshot,
		}
		for _, s := range opts.Scopes {
			if !slices.Contains(h.Auth.Scopes, s) {
				return &Error{Kind: ErrUnauthorized, Op: "connect", Code: "SCOPES_NOT_GRANTED",
					Message: fmt.Sprintf("granted scopes [%s], requested [%s]; the gateway grants the backend path only to direct loopback connections",
						strings.Join(h.Auth.Scopes, ","), strings.Join(opts.Scopes, ","))}
			}
		}
		return nil
	}
}

// readFrame reads and decodes one text frame during the handshake.
func (c *Conn) readFrame(ctx context.Context, op string) (frame, error) {
	typ, b, err := c.ws.Read(ctx)
	if err != nil {
		return frame{}, closeError(op, err, false)
	}
	var f frame
	if typ != websocket.MessageText {
		return f, &Error{Kind: ErrProtocol, Op: op, Err: errors.New("binary frame")}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, &Error{Kind: ErrProtocol, Op: op, Err: fmt.Errorf("frame is not JSON: %w", err)}
	}
	return f, nil
}

// closeError classifies a read or write error of the WebSocket.
func closeError(op string, err error, sent bool) *Error {
	e := &Error{Kind: ErrUnreachable, Op: op, Err: err, Sent: sent}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		e.Kind, e.Err = ErrProtocol, fmt.Errorf("%w: %v", ErrFrameTooLarge, err)
		return e
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		e.CloseCode, e.Message = int(ce.Code), ce.Reason
		switch ce.Code {
		case websocket.StatusTryAgainLater:
			e.Kind = ErrNotReady
		case websocket.StatusPolicyViolation:
			e.Kind = ErrUnauthorized
		case websocket.StatusProtocolError, websocket.StatusUnsupportedData, websocket.StatusInvalidFramePayloadData, websocket.StatusMessageTooBig:
			e.Kind = ErrProtocol
		}
	}
	return e
}

// Hello returns the gateway's hello-ok.
func (c *Conn) Hello() Hello { return c.hello }

// Done is closed when the connection has ended; Err then says why.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended, or nil while it is open.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		return nil
	}
	return c.err
}

// Close ends the connection with a normal closure.
func (c *Conn) Close() error {
	c.end(&Error{Kind: ErrUnreachable, Op: "close", Err: errors.New("connection closed by the client")})
	err := c.ws.Close(websocket.StatusNormalClosure, "")
	c.readCancel()
	if errors.Is(err, net.ErrClosed) || websocket.CloseStatus(err) != -1 {
		return nil
	}
	return err
}

// end records why the connection ended (first reason wins) and fails every
// outstanding request.
func (c *Conn) end(e *Error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = e
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, ch := range pending {
		close(ch)
	}
	close(c.done)
}

func (c *Conn) newID() string { return strconv.FormatUint(c.nextID.Add(1), 10) }

// readLoop reads frames until the connection ends, delivering responses to
// their callers and events to OnEvent.
func (c *Conn) readLoop(ctx context.Context) {
	defer c.ws.CloseNow()
	for {
		typ, b, err := c.ws.Read(ctx)
		if err != nil {
			c.end(closeError("read", err, true))
			return
		}
		c.lastSeen.Store(time.Now().UnixNano())
		var f frame
		if typ != websocket.MessageText {
			c.end(&Error{Kind: ErrProtocol, Op: "read", Sent: true, Err: errors.New("binary frame")})
			return
		}
		if err := json.Unmarshal(b, &f); err != nil {
			c.end(&Error{Kind: ErrProtocol, Op: "read", Sent: true, Err: fmt.Errorf("frame is not JSON: %w", err)})
			return
		}
		switch f.Type {
		case "res":
			c.mu.Lock()
			ch := c.pending[f.ID]
			delete(c.pending, f.ID)
			c.mu.Unlock()
			if ch != nil {
				ch <- f // buffered; a caller that gave up is gone from pending
			}
		case "event":
			if c.onEvent != nil {
				c.onEvent(Event{Name: f.Event, Payload: f.Payload, Seq: f.Seq})
			}
		}
	}
}

// watchdog ends a connection that has received nothing for longer than
// silence (the protocol treats more than two ticks of silence as dead).
func (c *Conn) watchdog(ctx context.Context, silence time.Duration) {
	t := time.NewTicker(silence / 4)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.done:
			return
		case now := <-t.C:
			if now.Sub(time.Unix(0, c.lastSeen.Load())) > silence {
				c.end(&Error{Kind: ErrUnreachable, Op: "read", Sent: true, Err: fmt.Errorf("no frame for more than %v", silence)})
				c.ws.CloseNow()
				return
			}
		}
	}
}

// Call sends one request and decodes the response payload into result (which
// may be nil). params nil is sent as {}. A context without a deadline gets
// the connection's call timeout. Errors are *Error: a gateway error is
// classified by its code (see the Err* kinds); a request over the frame limit
// is ErrProtocol wrapping ErrFrameTooLarge and is never sent; when the
// context ends or the connection is lost after the request was written, the
// error has Sent set (OutcomeUnknown).
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.callTimeout)
		defer cancel()
	}
	if params == nil {
		params = struct{}{}
	}
	id := c.newID()
	b, err := json.Marshal(request{Type: "req", ID: id, Method: method, Params: params})
	if err != nil {
		return &Error{Kind: ErrProtocol, Op: method, Err: fmt.Errorf("encode params: %w", err)}
	}
	if int64(len(b)) > c.maxOut {
		return &Error{Kind: ErrProtocol, Op: method, Err: fmt.Errorf("%w: request is %d bytes, limit %d", ErrFrameTooLarge, len(b), c.maxOut)}
	}
	if err := ctx.Err(); err != nil {
		return &Error{Kind: ErrUnreachable, Op: method, Err: err}
	}

	ch := make(chan frame, 1)
	c.mu.Lock()
	if c.err != nil {
		e := *c.err
		c.mu.Unlock()
		e.Op, e.Sent = method, false
		return &e
	}
	c.pending[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, id)
		}
		c.mu.Unlock()
	}()

	// The write gets its own bound: cancelling a write half-way would close
	// the whole connection (and every other caller's request with it).
	wctx, wcancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	err = c.ws.Write(wctx, websocket.MessageText, b)
	wcancel()
	if err != nil {
		return closeError(method, err, true)
	}

	select {
	case f, ok := <-ch:
		if !ok {
			e := *c.errOrLost()
			e.Op, e.Sent = method, true
			return &e
		}
		if !f.OK {
			if f.Error == nil {
				return &Error{Kind: ErrProtocol, Op: method, Err: errors.New("error response without an error object")}
			}
			return rpcError(method, f.Error)
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(f.Payload, result); err != nil {
			return &Error{Kind: ErrProtocol, Op: method, Err: fmt.Errorf("decode payload: %w", err)}
		}
		return nil
	case <-ctx.Done():
		return &Error{Kind: ErrUnreachable, Op: method, Sent: true, Err: ctx.Err()}
	}
}

// errOrLost returns the recorded end of the connection.
func (c *Conn) errOrLost() *Error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return &Error{Kind: ErrUnreachable, Err: errors.New("connection lost")}
}
