// Package gateway is occ's side of one OpenClaw gateway (npm package
// openclaw, pinned at Version): the HTTP probes, a client of the gateway's
// WebSocket protocol (version 4), the rendering of openclaw.json with the
// settings occ owns, the launch environment, and the workspace defaults
// identity. The facts it relies on are in
// shared/design/reference/openclaw-runtime.md; section numbers in comments
// refer to it.
//
// Talking to a gateway:
//
//	h, err := gateway.Probe(ctx, "http://127.0.0.1:19401")   // /healthz, /startupz, /readyz
//	c, err := gateway.Dial(ctx, gateway.Options{URL: "ws://127.0.0.1:19401/", Token: token})
//	defer c.Close()
//	f, err := c.GetAgentFile(ctx, "", "SOUL.md")
//	_, err = c.SetAgentFile(ctx, gateway.AgentFileWrite{Name: "SOUL.md", Content: s, ExpectedHash: f.Hash})
//
// Dial connects as a trusted backend client (client id "gateway-client",
// mode "backend", role operator, scopes read/write/admin) with the shared
// token. The gateway grants those scopes without a device identity only on a
// direct loopback connection: occ must run its client on the gateway's host
// (or in its pod); from elsewhere Dial fails with ErrUnauthorized because the
// scopes were not granted.
//
// Every error is an *Error whose Kind tells the caller what to do:
// ErrUnreachable (retry later), ErrNotReady (starting; retry), ErrUnauthorized
// (occ's own credentials or placement are wrong), ErrModelAuth (the model
// provider rejected the Agent's credential: RUNTIME_AUTHENTICATION_FAILED),
// ErrProtocol, ErrFileConflict, ErrRequest. OutcomeUnknown says whether a
// request may have taken effect without an answer.
//
// The package imports only the standard library, internal/occ and
// github.com/coder/websocket. Its tests run against gatewaytest, a fake
// gateway that speaks the same protocol subset.
package gateway
