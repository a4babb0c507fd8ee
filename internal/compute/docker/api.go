package docker

import (
	"bytes"
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

	"github.com/openclaw/occ/internal/compute"
)

// The Engine API versions occ speaks: MinAPIVersion is Docker 20.10's and
// Podman 4's; a newer engine is spoken to at its own version up to
// MaxAPIVersion (the fields occ uses are the same throughout).
const (
	MinAPIVersion = "1.41"
	MaxAPIVersion = "1.51"
)

// api is a small client of the Docker Engine API over its socket: every
// request is bounded by timeout and, once Preflight negotiated it, sent to
// the versioned path /v<version>.
type api struct {
	base    string // http://docker or http://host:port
	http    *http.Client
	timeout time.Duration
	version string
	// dial opens a connection of its own to the engine (exec's
	// hijacked stream).
	dial func(ctx context.Context) (net.Conn, error)
}

// newAPI reaches the engine at host: unix:///path or tcp://host:port
// (plain HTTP; a TLS endpoint is not supported). Errors name the setting.
func newAPI(host string, timeout time.Duration) (*api, error) {
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not unix:///path or tcp://host:port", SettingHost, host)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second, DisableCompression: true}
	base := ""
	switch {
	case u.Scheme == "unix" && u.Path != "" && u.Host == "":
		path := u.Path
		tr.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", path)
		}
		base = "http://docker"
	case u.Scheme == "tcp" && u.Host != "" && (u.Path == "" || u.Path == "/"):
		base = "http://" + u.Host
	default:
		return nil, fmt.Errorf("%s: %q is not unix:///path or tcp://host:port", SettingHost, host)
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		if u.Scheme == "unix" {
			return d.DialContext(ctx, "unix", u.Path)
		}
		return d.DialContext(ctx, "tcp", u.Host)
	}
	return &api{base: base, http: &http.Client{Transport: tr}, timeout: timeout, dial: dial}, nil
}

// APIError is an answer of the engine with an error status; Message is
// the engine's own text (logged, never shown through occ's API).
type APIError struct {
	Op      string
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: docker engine answered %d: %s", e.Op, e.Status, e.Message)
}

// statusOf returns the HTTP status of an engine error, 0 for another
// error.
func statusOf(err error) int {
	var e *APIError
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func isNotFound(err error) bool { return statusOf(err) == http.StatusNotFound }
func isConflict(err error) bool { return statusOf(err) == http.StatusConflict }

// request is one call: method, path (below the version), query, a JSON
// body (or raw, with its content type) and where the JSON answer goes.
type request struct {
	op          string
	method      string
	path        string
	query       url.Values
	body        any
	raw         io.Reader
	contentType string
	out         any
	// rawOut receives the answer's body as it is.
	rawOut io.Writer
	// timeout overrides the API's bound (image load).
	timeout time.Duration
}

// do sends r and decodes the answer; a status of 300 or more is an
// *APIError (304 Not Modified, the engine's "already so", is not).
func (a *api) do(ctx context.Context, r request) error {
	t := a.timeout
	if r.timeout > 0 {
		t = r.timeout
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	u := a.base
	if a.version != "" {
		u += "/v" + a.version
	}
	u += r.path
	if len(r.query) > 0 {
		u += "?" + r.query.Encode()
	}
	var body io.Reader
	ct := ""
	switch {
	case r.raw != nil:
		body, ct = r.raw, r.contentType
	case r.body != nil:
		b, err := json.Marshal(r.body)
		if err != nil {
			return err
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u, body)
	if err != nil {
		return err
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		// No answer (a refused or reset connection, a missing socket, a
		// timeout): the engine is unavailable for now.
		return compute.Unavailable(fmt.Errorf("%s: %w", r.op, err))
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusNotModified {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var m struct {
			Message string `json:"message"`
		}
		msg := strings.TrimSpace(string(b))
		if json.Unmarshal(b, &m) == nil && m.Message != "" {
			msg = m.Message
		}
		err := error(&APIError{Op: r.op, Status: resp.StatusCode, Message: msg})
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= http.StatusInternalServerError {
			err = compute.Unavailable(err)
		}
		return err
	}
	switch {
	case r.rawOut != nil:
		if _, err := io.Copy(r.rawOut, resp.Body); err != nil {
			return fmt.Errorf("%s: %w", r.op, err)
		}
	case r.out != nil && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified:
		if err := json.NewDecoder(resp.Body).Decode(r.out); err != nil {
			return fmt.Errorf("%s: decode the answer: %w", r.op, err)
		}
	default:
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	return nil
}

// classify turns an engine error into the contract's classes: 400 (the
// engine refused the request as invalid) is permanent
// (CodeRequestInvalid); no answer, 429 and 5xx are retryable and marked
// compute.Unavailable where the request is made (api.do: the worker waits
// for the engine without spending attempts); everything else (404 of a
// thing that vanished meanwhile, 409 races) is retryable.
func classify(err error) error {
	if statusOf(err) == http.StatusBadRequest {
		return compute.Permanent(CodeRequestInvalid, err)
	}
	return err
}

// filters encodes the engine's label filters (every "k=v" must hold).
func filters(labels map[string]string) url.Values {
	var l []string
	for k, v := range labels {
		l = append(l, k+"="+v)
	}
	b, _ := json.Marshal(map[string][]string{"label": l})
	return url.Values{"filters": {string(b)}}
}
