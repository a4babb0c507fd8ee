// Package credgateway registers credential sources with the installation's
// Credential Gateway, the service that holds model credentials for
// dedicated Codex and inserts them on the way out of the Sandbox (so the
// Harness only ever sees a placeholder).
//
// # occ's side of the gateway contract
//
// Register (create, and replace after a change of Secrets) is idempotent:
//
//	PUT <url>/v1/credential-sources/<credentialSourceId>
//	Content-Type: application/json
//
//	{"installationId": "ins_…", "namespaceId": "ns_…", "id": "cs_…", "name": "…",
//	 "type": "<source type>", "config": {…},
//	 "secrets": {"<field>": {"namespaceId": "ns_…", "id": "sec_…", "value": "…"}}}
//
// Remove is idempotent too (404 counts as removed):
//
//	DELETE <url>/v1/credential-sources/<credentialSourceId>
//
// A dedicated harness bound to a source gets its credential through a
// delivery (deliver.go).
//
// Any 2xx is success; response bodies are ignored (at most 64 KiB is read).
// No answer within the timeout (30 s), a transport error, a redirect, a
// 5xx, 408 or 429 is ErrUnavailable; any other 4xx (an unknown type, a
// config the gateway refuses) is ErrRejected. Errors never carry a
// response body or a Secret value.
package credgateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultTimeout bounds one gateway request.
const DefaultTimeout = 30 * time.Second

// maxResponseBytes is how much of an answer is read (and ignored).
const maxResponseBytes = 64 << 10

// Sentinel errors; every error the HTTP client returns wraps one of them.
var (
	ErrUnavailable = errors.New("credential gateway unavailable")
	ErrRejected    = errors.New("credential gateway rejected the request")
)

// SecretValue is one Secret a source hands to the gateway.
type SecretValue struct {
	NamespaceID string `json:"namespaceId"`
	ID          string `json:"id"`
	Value       string `json:"value"`
}

// Registration is a credential source as the gateway receives it. Its
// String and GoString never show Secret values.
type Registration struct {
	InstallationID string                 `json:"installationId"`
	NamespaceID    string                 `json:"namespaceId"`
	ID             string                 `json:"id"`
	Name           string                 `json:"name"`
	Type           string                 `json:"type"`
	Config         map[string]any         `json:"config"`
	Secrets        map[string]SecretValue `json:"secrets"`
}

// String describes the registration without Secret values.
func (r Registration) String() string {
	return fmt.Sprintf("credgateway.Registration{ID: %s, Namespace: %s, Type: %s, Secrets: %d [redacted]}",
		r.ID, r.NamespaceID, r.Type, len(r.Secrets))
}

// GoString describes the registration without Secret values.
func (r Registration) GoString() string { return r.String() }

// Client talks to the Credential Gateway.
type Client interface {
	// Register creates or replaces a credential source at the gateway.
	Register(ctx context.Context, r Registration) error
	// Remove deletes a credential source from the gateway; removing one
	// the gateway does not know succeeds.
	Remove(ctx context.Context, namespaceID, id string) error
}

// HTTP is the Client for a gateway that speaks the contract above.
type HTTP struct {
	// URL is the gateway's base URL.
	URL string
	// Client sends the requests; nil means one that never follows redirects.
	Client *http.Client
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration
}

var _ Client = (*HTTP)(nil)

// New returns the HTTP client of the gateway at baseURL.
func New(baseURL string) *HTTP { return &HTTP{URL: baseURL} }

// Register implements Client.
func (h *HTTP) Register(ctx context.Context, r Registration) error {
	if r.Config == nil {
		r.Config = map[string]any{}
	}
	if r.Secrets == nil {
		r.Secrets = map[string]SecretValue{}
	}
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("credential source %s: encode: %w", r.ID, err)
	}
	return h.do(ctx, http.MethodPut, r.ID, body, false)
}

// Remove implements Client.
func (h *HTTP) Remove(ctx context.Context, _, id string) error {
	return h.do(ctx, http.MethodDelete, id, nil, true)
}

// httpClient is the configured client, or one that never follows
// redirects.
func (h *HTTP) httpClient() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (h *HTTP) do(ctx context.Context, method, id string, body []byte, goneOK bool) error {
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimRight(h.URL, "/") + "/v1/credential-sources/" + url.PathEscape(id)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fmt.Errorf("credential gateway: build request: %v: %w", err, ErrUnavailable)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	res, err := h.httpClient().Do(req)
	if err != nil {
		return fmt.Errorf("credential gateway %s %s: %v: %w", method, id, err, ErrUnavailable)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxResponseBytes))
	switch s := res.StatusCode; {
	case s >= 200 && s < 300, goneOK && s == http.StatusNotFound:
		return nil
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500 || s < 400:
		return fmt.Errorf("credential gateway %s %s answered %d: %w", method, id, s, ErrUnavailable)
	default:
		return fmt.Errorf("credential gateway %s %s answered %d: %w", method, id, s, ErrRejected)
	}
}
