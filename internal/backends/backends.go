// Package backends asks the installation's Backends to act for occ. Today
// that is one thing: issuing the credential of a service account.
//
// # occ's side of the Backend contract
//
// A Backend of type chatgpt with a URL issues credentials. occ sends
//
//	POST <url>/v1/service-accounts/credentials
//	Content-Type: application/json
//	Accept: application/json
//	Idempotency-Key: <serviceAccountId>
//
//	{"installationId": "ins_…", "namespaceId": "ns_…", "serviceAccountId": "sa_…",
//	 "name": "<service account name>", "backendId": "<backend id>"}
//
// and expects 200 or 201 with a JSON object
//
//	{"credential": "<opaque, 1..65536 bytes, no NUL>", "kind": "access_token",
//	 "expiresAt": "<RFC 3339, optional>"}
//
// where kind is access_token, api_key or oauth_access_token; other members
// are ignored. The Idempotency-Key lets a Backend answer a repeated request
// (after a lost response) with the credential it already issued.
//
// How occ reads the answer:
//   - no answer within the timeout (30 s), a transport error, a redirect, a
//     5xx, 408 or 429, a body over 4 MiB or one that does not parse as the
//     object above: ErrUnavailable (the Backend cannot be relied on now);
//   - any other 4xx: ErrRejected (the Backend refused this account);
//   - a Backend of another type, or one without a URL: ErrUnsupported.
//
// Errors never carry the response body or the credential. occ sends no
// credentials of its own: the Backend URL is a private setting of the
// installation configuration and is expected to be reachable only by occ.
package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Limits of one credential request.
const (
	DefaultTimeout          = 30 * time.Second
	DefaultMaxResponseBytes = 4 << 20
	MaxCredentialBytes      = 65536
)

// Sentinel errors; every error IssueCredential returns wraps one of them.
var (
	ErrUnavailable = errors.New("backend unavailable")
	ErrRejected    = errors.New("backend rejected the request")
	ErrUnsupported = errors.New("backend does not issue service account credentials")
)

// Backend types (installation configuration).
const (
	TypeChatGPT   = "chatgpt"
	TypeGitHub    = "github"
	TypeOpenShell = "openshell"
)

// Backend is one configured Backend as the client needs it.
type Backend struct {
	ID   string
	Type string // chatgpt, github or openshell
	URL  string // base URL; "" = none
}

// CredentialKinds are the kinds of credential a Backend may issue.
var CredentialKinds = []string{"access_token", "api_key", "oauth_access_token"}

// IssueRequest names the service account a credential is for.
type IssueRequest struct {
	InstallationID   string
	NamespaceID      string
	ServiceAccountID string
	Name             string
}

// Credential is what a Backend issued. Its String and GoString never show
// the value, so it cannot leak through a log line or an error.
type Credential struct {
	Value     string
	Kind      string
	ExpiresAt *time.Time
}

// String describes the credential without its value.
func (c Credential) String() string {
	return "backends.Credential{Kind: " + c.Kind + ", Value: [redacted]}"
}

// GoString describes the credential without its value.
func (c Credential) GoString() string { return c.String() }

// Client issues service account credentials through a Backend.
type Client interface {
	// IssueCredential asks Backend b for a credential for the account.
	IssueCredential(ctx context.Context, b Backend, r IssueRequest) (Credential, error)
}

// HTTP is the Client for Backends that speak the contract above.
type HTTP struct {
	// Client sends the requests; nil means one that never follows redirects.
	Client *http.Client
	// Timeout bounds one request; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxResponseBytes bounds the answer; 0 means DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

var _ Client = (*HTTP)(nil)

// NewHTTP returns the HTTP client with the default limits.
func NewHTTP() *HTTP { return &HTTP{} }

func (h *HTTP) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

type wireRequest struct {
	InstallationID   string `json:"installationId"`
	NamespaceID      string `json:"namespaceId"`
	ServiceAccountID string `json:"serviceAccountId"`
	Name             string `json:"name"`
	BackendID        string `json:"backendId"`
}

type wireResponse struct {
	Credential *string `json:"credential"`
	Kind       *string `json:"kind"`
	ExpiresAt  *string `json:"expiresAt"`
}

// IssueCredential implements Client.
func (h *HTTP) IssueCredential(ctx context.Context, b Backend, r IssueRequest) (Credential, error) {
	if b.Type != TypeChatGPT || b.URL == "" {
		return Credential{}, fmt.Errorf("backend %s (%s): %w", b.ID, b.Type, ErrUnsupported)
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	limit := h.MaxResponseBytes
	if limit <= 0 {
		limit = DefaultMaxResponseBytes
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(wireRequest{InstallationID: r.InstallationID, NamespaceID: r.NamespaceID,
		ServiceAccountID: r.ServiceAccountID, Name: r.Name, BackendID: b.ID})
	if err != nil {
		return Credential{}, err
	}
	url := strings.TrimRight(b.URL, "/") + "/v1/service-accounts/credentials"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Credential{}, fmt.Errorf("backend %s: build request: %v: %w", b.ID, err, ErrUnavailable)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Idempotency-Key", r.ServiceAccountID)
	res, err := h.client().Do(req)
	if err != nil {
		return Credential{}, fmt.Errorf("backend %s: %v: %w", b.ID, err, ErrUnavailable)
	}
	defer res.Body.Close()
	switch s := res.StatusCode; {
	case s == http.StatusOK || s == http.StatusCreated:
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500 || s < 400:
		return Credential{}, fmt.Errorf("backend %s answered %d: %w", b.ID, s, ErrUnavailable)
	default:
		return Credential{}, fmt.Errorf("backend %s answered %d: %w", b.ID, s, ErrRejected)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, limit+1))
	if err != nil {
		return Credential{}, fmt.Errorf("backend %s: read answer: %v: %w", b.ID, err, ErrUnavailable)
	}
	if int64(len(raw)) > limit {
		return Credential{}, fmt.Errorf("backend %s: answer larger than %d bytes: %w", b.ID, limit, ErrUnavailable)
	}
	c, err := parse(raw)
	if err != nil {
		return Credential{}, fmt.Errorf("backend %s: %v: %w", b.ID, err, ErrUnavailable)
	}
	return c, nil
}

// parse checks an answer; its errors never quote the body.
func parse(raw []byte) (Credential, error) {
	var w wireResponse
	if err := json.Unmarshal(raw, &w); err != nil {
		return Credential{}, errors.New("answer is not the expected JSON object")
	}
	if w.Credential == nil || w.Kind == nil {
		return Credential{}, errors.New("answer lacks credential or kind")
	}
	v := *w.Credential
	if v == "" || len(v) > MaxCredentialBytes || !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return Credential{}, errors.New("credential is empty, too long or not text")
	}
	kindOK := false
	for _, k := range CredentialKinds {
		kindOK = kindOK || *w.Kind == k
	}
	if !kindOK {
		return Credential{}, errors.New("credential kind is not one occ knows")
	}
	c := Credential{Value: v, Kind: *w.Kind}
	if w.ExpiresAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *w.ExpiresAt)
		if err != nil {
			return Credential{}, errors.New("expiresAt is not an RFC 3339 time")
		}
		t = t.UTC()
		c.ExpiresAt = &t
	}
	return c, nil
}
