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
	"unicode/utf8"
)

// Delivering a registered source's credential to a dedicated harness.
//
// The harness never gets the source's credential: occ asks the gateway for
// a delivery, and the harness gets only the gateway's placeholder and the
// base URL it sends its model requests to; the gateway swaps the
// placeholder for the credential on the way out (the reference's Sandbox
// egress proxy inserts it the same way). occ sends
//
//	POST <url>/v1/credential-sources/<credentialSourceId>/deliveries
//	Content-Type: application/json
//
//	{"namespaceId": "ns_…", "agentId": "agt_…", "revisionId": "rev_…"}
//
// and expects 200 or 201 with
//
//	{"baseUrl": "<http(s) URL, OpenAI Responses API base>",
//	 "credential": "<placeholder, 1..65536 bytes of text>", "loginMode": "api_key"}
//
// (loginMode api_key is the only one: Codex logs in with the placeholder
// as its API key). A delivery is idempotent per source and revision: occ
// asks again at every pass of a deployment, and the gateway answers the
// same revision with the same placeholder. 404: the gateway does not know the source
// (ErrNotRegistered); 401 or 403: the gateway refuses the source's
// credential (ErrCredentialRejected); any other 4xx: ErrRejected; no
// answer within the timeout, a transport error, a redirect, a 5xx, 408,
// 429 or an answer that is not the object above: ErrUnavailable.

// More sentinel errors of Deliver.
var (
	ErrNotRegistered      = errors.New("credential gateway does not know the credential source")
	ErrCredentialRejected = errors.New("credential gateway refused the credential source's credential")
)

// LoginAPIKey is the only delivery login mode.
const LoginAPIKey = "api_key"

// maxPlaceholderBytes bounds a delivered placeholder.
const maxPlaceholderBytes = 65536

// DeliveryRequest names the revision a delivery is for.
type DeliveryRequest struct {
	NamespaceID string `json:"namespaceId"`
	AgentID     string `json:"agentId"`
	RevisionID  string `json:"revisionId"`
}

// Delivery is what the harness gets. Its String and GoString never show
// the placeholder (a bearer credential at the gateway).
type Delivery struct {
	BaseURL     string
	Placeholder string
	LoginMode   string
}

// String describes the delivery without its placeholder.
func (d Delivery) String() string {
	return "credgateway.Delivery{BaseURL: " + d.BaseURL + ", LoginMode: " + d.LoginMode + ", Placeholder: [redacted]}"
}

// GoString describes the delivery without its placeholder.
func (d Delivery) GoString() string { return d.String() }

// Deliverer asks the gateway for a delivery of a registered source.
type Deliverer interface {
	Deliver(ctx context.Context, sourceID string, r DeliveryRequest) (Delivery, error)
}

var _ Deliverer = (*HTTP)(nil)

type wireDelivery struct {
	BaseURL    string `json:"baseUrl"`
	Credential string `json:"credential"`
	LoginMode  string `json:"loginMode"`
}

// Deliver implements Deliverer.
func (h *HTTP) Deliver(ctx context.Context, sourceID string, r DeliveryRequest) (Delivery, error) {
	body, err := json.Marshal(r)
	if err != nil {
		return Delivery{}, err
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := strings.TrimRight(h.URL, "/") + "/v1/credential-sources/" + url.PathEscape(sourceID) + "/deliveries"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return Delivery{}, fmt.Errorf("credential gateway: build request: %v: %w", err, ErrUnavailable)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	res, err := h.httpClient().Do(req)
	if err != nil {
		return Delivery{}, fmt.Errorf("credential gateway deliver %s: %v: %w", sourceID, err, ErrUnavailable)
	}
	defer res.Body.Close()
	raw, rerr := io.ReadAll(io.LimitReader(res.Body, maxResponseBytes+1))
	switch s := res.StatusCode; {
	case s == http.StatusOK || s == http.StatusCreated:
	case s == http.StatusNotFound:
		return Delivery{}, fmt.Errorf("credential gateway deliver %s answered %d: %w", sourceID, s, ErrNotRegistered)
	case s == http.StatusUnauthorized || s == http.StatusForbidden:
		return Delivery{}, fmt.Errorf("credential gateway deliver %s answered %d: %w", sourceID, s, ErrCredentialRejected)
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500 || s < 400:
		return Delivery{}, fmt.Errorf("credential gateway deliver %s answered %d: %w", sourceID, s, ErrUnavailable)
	default:
		return Delivery{}, fmt.Errorf("credential gateway deliver %s answered %d: %w", sourceID, s, ErrRejected)
	}
	if rerr != nil || len(raw) > maxResponseBytes {
		return Delivery{}, fmt.Errorf("credential gateway deliver %s: unreadable or oversized answer: %w", sourceID, ErrUnavailable)
	}
	d, err := parseDelivery(raw)
	if err != nil {
		return Delivery{}, fmt.Errorf("credential gateway deliver %s: %v: %w", sourceID, err, ErrUnavailable)
	}
	return d, nil
}

// parseDelivery checks an answer; its errors never quote the body.
func parseDelivery(raw []byte) (Delivery, error) {
	var w wireDelivery
	if err := json.Unmarshal(raw, &w); err != nil {
		return Delivery{}, errors.New("answer is not the expected JSON object")
	}
	u, err := url.Parse(w.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return Delivery{}, errors.New("baseUrl is not an http(s) URL without credentials")
	}
	p := w.Credential
	if p == "" || len(p) > maxPlaceholderBytes || !utf8.ValidString(p) || strings.ContainsAny(p, "\x00\r\n") {
		return Delivery{}, errors.New("credential is empty, too long or not one line of text")
	}
	if w.LoginMode != LoginAPIKey {
		return Delivery{}, errors.New("loginMode is not api_key")
	}
	return Delivery{BaseURL: w.BaseURL, Placeholder: p, LoginMode: w.LoginMode}, nil
}
