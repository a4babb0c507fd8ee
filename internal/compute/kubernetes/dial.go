package kubernetes

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	pfconstants "k8s.io/apimachinery/pkg/util/portforward"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/transport/spdy"
	"k8s.io/client-go/transport/websocket"
	"k8s.io/streaming/pkg/httpstream"
	streamspdy "k8s.io/streaming/pkg/httpstream/spdy"
)

// dialer opens a driver's port-forward connections as kubectl does:
// WebSocket first, the port-forward's SPDY carried inside it, and plain SPDY
// where the API server refuses the upgrade. Unlike client-go's dialers,
// which build a TLS configuration for every dial, it builds one for the
// driver, with a session cache: a dial resumes an earlier TLS session with
// the API server rather than making a full handshake (no certificate chain
// to verify, no client certificate to sign for). The SPDY dialer is built
// only when it is needed.
type dialer struct {
	cfg          *rest.Config
	transportCfg *transport.Config
	// tls is nil for an API server reached over plain HTTP, or when the
	// client certificate is read from files: those may be rotated there,
	// so each dial reads them again (a full handshake, as client-go's
	// dialers make).
	tls   *tls.Config
	proxy func(*http.Request) (*url.URL, error)
	// resumed counts the dials that resumed a TLS session.
	resumed atomic.Int64
}

func newDialer(cfg *rest.Config) (*dialer, error) {
	tc, err := cfg.TransportConfig()
	if err != nil {
		return nil, err
	}
	tlsCfg, err := transport.TLSConfigFor(tc)
	if err != nil {
		return nil, err
	}
	d := &dialer{cfg: cfg, transportCfg: tc, proxy: cfg.Proxy}
	if tlsCfg != nil && tc.TLS.CertFile == "" && tc.TLS.KeyFile == "" {
		d.tls = tlsCfg
		d.tls.ClientSessionCache = tls.NewLRUClientSessionCache(0)
		verify := d.tls.VerifyConnection
		d.tls.VerifyConnection = func(cs tls.ConnectionState) error {
			if cs.DidResume {
				d.resumed.Add(1)
			}
			if verify != nil {
				return verify(cs)
			}
			return nil
		}
	}
	if d.proxy == nil {
		d.proxy = utilnet.NewProxierWithNoProxyCIDR(http.ProxyFromEnvironment)
	}
	return d, nil
}

// dial opens a port-forward connection to the Pod whose portforward
// subresource is at u, answering the protocol the API server chose.
func (d *dialer) dial(ctx context.Context, u *url.URL) (httpstream.Connection, string, error) {
	ws := dialFunc(func(protocols ...string) (httpstream.Connection, string, error) {
		return d.websocket(ctx, u, protocols...)
	})
	fallback := dialFunc(func(protocols ...string) (httpstream.Connection, string, error) {
		rt, upgrader, err := spdy.RoundTripperFor(d.cfg)
		if err != nil {
			return nil, "", err
		}
		return spdy.NewDialerForStreaming(upgrader, &http.Client{Transport: rt}, http.MethodPost, u).Dial(protocols...)
	})
	return portforward.NewFallbackDialerForStreaming(ws, fallback, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	}).Dial(portforward.PortForwardProtocolV1Name)
}

// websocket opens the WebSocket that carries the port-forward's SPDY.
func (d *dialer) websocket(ctx context.Context, u *url.URL, protocols ...string) (httpstream.Connection, string, error) {
	rt := &websocket.RoundTripper{Proxier: d.proxy}
	tc := d.transportCfg
	if d.tls != nil {
		rt.TLSConfig = d.tls.Clone()
	} else {
		// A fresh transport configuration: TLSConfigFor keeps the files'
		// contents in the one it is given.
		var err error
		if tc, err = d.cfg.TransportConfig(); err != nil {
			return nil, "", err
		}
		if rt.TLSConfig, err = transport.TLSConfigFor(tc); err != nil {
			return nil, "", err
		}
	}
	wrapped, err := transport.HTTPWrappersForConfig(tc, rt)
	if err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", err
	}
	tunnelled := make([]string, len(protocols))
	for i, p := range protocols {
		tunnelled[i] = pfconstants.WebsocketsSPDYTunnelingPrefix + p
	}
	conn, err := websocket.Negotiate(wrapped, rt, req, tunnelled...)
	if err != nil {
		return nil, "", err
	}
	protocol := strings.TrimPrefix(conn.Subprotocol(), pfconstants.WebsocketsSPDYTunnelingPrefix)
	c, err := streamspdy.NewClientConnectionWithPings(portforward.NewTunnelingConnection("client", conn), portforward.PingPeriod)
	if err != nil {
		conn.Close()
		return nil, "", err
	}
	return c, protocol, nil
}

// dialFunc is a function as an httpstream.Dialer.
type dialFunc func(protocols ...string) (httpstream.Connection, string, error)

func (f dialFunc) Dial(protocols ...string) (httpstream.Connection, string, error) {
	return f(protocols...)
}
