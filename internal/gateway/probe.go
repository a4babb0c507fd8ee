package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultProbeTimeout bounds a Probe whose context has no deadline.
const DefaultProbeTimeout = 10 * time.Second

// maxProbeBody caps the bytes read from a probe answer.
const maxProbeBody = 64 << 10

// newProbeClient makes the client of one Probe: its three routes share
// one connection (through a Kubernetes port-forward each connection is a
// stream pair set up over the API server), closed when the probe ends, so
// none is kept between probes. It never uses a proxy (a gateway refuses
// any X-Forwarded-* header unless it trusts the sender).
func newProbeClient() (*http.Client, func()) {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 1,
	}
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return c, tr.CloseIdleConnections
}

// Health is what the three unauthenticated probe routes said.
type Health struct {
	// Live is true when /healthz answered 200 {"ok":true,...}.
	Live bool
	// Started is true when /startupz answered 200; StartupStatus is its
	// status field ("started"; on 503 whatever the gateway said, e.g.
	// "starting" or "draining").
	Started       bool
	StartupStatus string
	// Version and Uptime come from /startupz.
	Version string
	Uptime  time.Duration
	// Ready is true when /readyz answered 200 {"ready":true}; Failing lists
	// what it reported as failing (e.g. ["slack"]).
	Ready   bool
	Failing []string
}

// Probe asks the gateway at baseURL (http://127.0.0.1:PORT) for /healthz,
// /startupz and /readyz, in that order, and stops at the first that is not
// satisfied. It returns nil when the gateway is started and ready; an
// ErrNotReady *Error (with the Health so far) when it answered 503; an
// ErrUnreachable one when nothing answered; an ErrUnauthorized one on 403
// (proxy_attribution_required: a request the gateway attributes to an
// untrusted proxy); and an ErrProtocol one for any other answer. A context
// without a deadline gets DefaultProbeTimeout.
func Probe(ctx context.Context, baseURL string) (Health, error) {
	var h Health
	base, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return h, &Error{Kind: ErrProtocol, Op: "probe", Err: fmt.Errorf("bad base URL %q", baseURL)}
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultProbeTimeout)
		defer cancel()
	}
	client, closeClient := newProbeClient()
	defer closeClient()

	// /healthz: {"ok":true,"status":"live"}
	var live struct {
		OK     bool   `json:"ok"`
		Status string `json:"status"`
	}
	status, err := getJSON(ctx, client, base, "/healthz", &live)
	if err != nil {
		return h, err
	}
	if status != http.StatusOK || !live.OK {
		return h, &Error{Kind: ErrNotReady, Op: "probe /healthz", Status: status, Message: live.Status}
	}
	h.Live = true

	// /startupz: 200 {"ok":true,"status":"started","version","uptimeMs"}, 503 while starting or draining.
	var started struct {
		OK       bool   `json:"ok"`
		Status   string `json:"status"`
		Version  string `json:"version"`
		UptimeMs int64  `json:"uptimeMs"`
	}
	status, err = getJSON(ctx, client, base, "/startupz", &started)
	if err != nil {
		return h, err
	}
	h.StartupStatus, h.Version = started.Status, started.Version
	h.Uptime = time.Duration(started.UptimeMs) * time.Millisecond
	if status != http.StatusOK || !started.OK {
		return h, &Error{Kind: ErrNotReady, Op: "probe /startupz", Status: status, Message: started.Status}
	}
	h.Started = true

	// /readyz: 200 {"ready":true,"failing":[]}, 503 {"ready":false,"failing":["slack"]}.
	var ready struct {
		Ready   bool     `json:"ready"`
		Failing []string `json:"failing"`
	}
	status, err = getJSON(ctx, client, base, "/readyz", &ready)
	if err != nil {
		return h, err
	}
	h.Failing = ready.Failing
	if status != http.StatusOK || !ready.Ready {
		return h, &Error{Kind: ErrNotReady, Op: "probe /readyz", Status: status, Message: "failing: " + strings.Join(ready.Failing, ",")}
	}
	h.Ready = true
	return h, nil
}

// getJSON GETs one probe route and decodes its body into v when the status is
// 200 or 503 (the two answers a probe route gives). 403 and any other status
// are errors; so is a body that is not JSON.
func getJSON(ctx context.Context, client *http.Client, base *url.URL, path string, v any) (int, error) {
	op := "probe " + path
	u := *base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, &Error{Kind: ErrProtocol, Op: op, Err: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, &Error{Kind: ErrUnreachable, Op: op, Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxProbeBody))
	if err != nil {
		return resp.StatusCode, &Error{Kind: ErrUnreachable, Op: op, Status: resp.StatusCode, Err: err}
	}
	switch resp.StatusCode {
	case http.StatusOK, http.StatusServiceUnavailable:
		if err := json.Unmarshal(body, v); err != nil {
			if resp.StatusCode == http.StatusServiceUnavailable {
				// A 503 without a JSON body is still "not ready".
				return resp.StatusCode, nil
			}
			return resp.StatusCode, &Error{Kind: ErrProtocol, Op: op, Status: resp.StatusCode, Err: fmt.Errorf("body is not JSON: %w", err)}
		}
		return resp.StatusCode, nil
	case http.StatusForbidden:
		// {"error":{"type":"proxy_attribution_required",...}}
		var f struct {
			Error struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"error"`
		}
		_ = json.Unmarshal(body, &f)
		return resp.StatusCode, &Error{Kind: ErrUnauthorized, Op: op, Status: resp.StatusCode, Code: f.Error.Type, Message: f.Error.Message}
	default:
		return resp.StatusCode, &Error{Kind: ErrProtocol, Op: op, Status: resp.StatusCode, Err: errors.New("unexpected status")}
	}
}
