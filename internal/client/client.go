// Package client is the typed Go client of occ's HTTP API, used by the CLI
// and the end-to-end tests.
//
// Every route is available, generated from api/openapi.yaml, through
// [Client.API]; the shapes (Namespace, Agent, DeploymentStatus…) are the
// generated ones, re-exported here as aliases. Client adds what the
// generated code does not do: the bearer key, the {data, meta} envelope,
// errors as [*APIError], paging, and waiting for Namespaces and
// deployments. It never logs anything, and never a Secret's value.
package client

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/client/gen"
)

// Shapes of the API, as generated from api/openapi.yaml.
type (
	// Namespace is a tenant Namespace.
	Namespace = gen.Namespace
	// Agent is an Agent's saved draft and runtime state.
	Agent = gen.Agent
	// AgentCreate is the body of an Agent create.
	AgentCreate = gen.AgentCreate
	// AgentPatch is the body of an Agent update (configurationId required).
	AgentPatch = gen.AgentPatch
	// AgentRevision is an immutable revision; its ID is the deployment ID.
	AgentRevision = gen.AgentRevision
	// HarnessAuth says how an Agent obtains model credentials.
	HarnessAuth = gen.HarnessAuth
	// DeploymentStatus is a deployment's persisted status.
	DeploymentStatus = gen.DeploymentStatus
	// DeploymentDiagnostics are fresh checks of a deployment's revision.
	DeploymentDiagnostics = gen.DeploymentDiagnostics
	// RuntimeLogs is the recent, redacted output of a revision's gateway.
	RuntimeLogs = gen.RuntimeLogs
	// DiagnosticCheck is one check of DeploymentDiagnostics.
	DiagnosticCheck = gen.DiagnosticCheck
	// Configuration is a native OpenClaw configuration document with its metadata.
	Configuration = gen.Configuration
	// ConfigurationCreate is the body of a Configuration create.
	ConfigurationCreate = gen.ConfigurationCreate
	// ConfigurationDocument is a native OpenClaw configuration document.
	ConfigurationDocument = gen.ConfigurationDocument
	// Secret is a Secret's metadata (the value is write-only).
	Secret = gen.Secret
	// ErrorDetail names one invalid field of a request.
	ErrorDetail = gen.ErrorDetail
	// Role is a named set of permissions at installation or Namespace scope.
	Role = gen.Role
	// RoleCreate is the body of a role create.
	RoleCreate = gen.RoleCreate
	// Binding grants a role to a principal at a scope or on one resource.
	Binding = gen.Binding
	// BindingCreate is the body of a binding create.
	BindingCreate = gen.BindingCreate
	// Target is the one resource a binding is limited to.
	Target = gen.Target
	// ServiceAccount is a Namespace's account at a Backend (harness auth
	// chatgpt_service_account).
	ServiceAccount = gen.ServiceAccount
	// CredentialSource supplies model credentials through a Credential
	// Gateway (harness auth credential_source).
	CredentialSource = gen.CredentialSource
)

// Deployment and Namespace statuses.
const (
	DeploymentQueued    = "queued"
	DeploymentRunning   = "running"
	DeploymentSucceeded = "succeeded"
	DeploymentFailed    = "failed"

	NamespaceProvisioning = "provisioning"
	NamespaceReady        = "ready"
	NamespaceFailed       = "failed"
	NamespaceDeleting     = "deleting"
	// NamespaceGone is the status WaitNamespace waits for to see a
	// Namespace deleted (its GET answers 404).
	NamespaceGone = "gone"
)

// Client talks to one occ server. Its methods are safe for concurrent use.
type Client struct {
	base string
	key  string
	hc   *http.Client
	poll time.Duration
	api  *gen.ClientWithResponses
}

// Option configures a Client.
type Option func(*Client)

// WithKey authenticates every request with a service key
// (Authorization: Bearer key).
func WithKey(key string) Option { return func(c *Client) { c.key = key } }

// WithHTTPClient sends requests through hc instead of http.DefaultClient.
// A client-wide Timeout also cuts deployment event streams; WaitDeployment
// then falls back to polling.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithPollInterval sets how often the Wait methods poll (default 500 ms).
func WithPollInterval(d time.Duration) Option { return func(c *Client) { c.poll = d } }

// New returns a client of the occ server at baseURL (e.g.
// "http://127.0.0.1:8080"). A malformed URL surfaces as the error of the
// first request.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), hc: http.DefaultClient, poll: 500 * time.Millisecond}
	for _, o := range opts {
		o(c)
	}
	// NewClientWithResponses fails only when an option does; these do not.
	api, err := gen.NewClientWithResponses(c.base, gen.WithHTTPClient(c.hc), gen.WithRequestEditorFn(c.authorize))
	if err != nil {
		panic(fmt.Sprintf("client: %v", err))
	}
	c.api = api
	return c
}

// authorize sets the headers every request carries.
func (c *Client) authorize(_ context.Context, req *http.Request) error {
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("User-Agent", "occ-client")
	return nil
}

// API returns the generated client of every route, authenticated like c.
// Its responses keep the envelope; [ErrorFromResponse] turns an error
// response into an *APIError.
func (c *Client) API() *gen.ClientWithResponses { return c.api }

// BaseURL returns the server's base URL.
func (c *Client) BaseURL() string { return c.base }

// Page selects one page of a list; the zero value is the first page of the
// server's default size.
type Page struct {
	// Size is the number of items per page (1-1000); 0 leaves it to the server.
	Size int
	// Token continues after a previous page (its next token).
	Token string
}

// sizeParam returns the page size parameter, nil for the server's default.
func (p Page) sizeParam() *int {
	if p.Size <= 0 {
		return nil
	}
	return &p.Size
}

// tokenParam returns the page token parameter, nil for the first page.
func (p Page) tokenParam() *string {
	if p.Token == "" {
		return nil
	}
	return &p.Token
}

// allPageSize is the page size the ListAll methods use.
const allPageSize = 200

// listAll follows next page tokens until the last page.
func listAll[T any](ctx context.Context, page func(context.Context, Page) ([]T, string, error)) ([]T, error) {
	var out []T
	p := Page{Size: allPageSize}
	for {
		items, next, err := page(ctx, p)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
		if next == "" {
			return out, nil
		}
		if next == p.Token {
			return nil, fmt.Errorf("list: the server repeated page token %q", next)
		}
		p.Token = next
	}
}

// nextToken returns a list's next page token, "" on the last page.
func nextToken(m gen.ListMeta) string {
	if m.NextPageToken == nil {
		return ""
	}
	return *m.NextPageToken
}

// ifMatch returns an If-Match header value, nil for none.
func ifMatch(etag string) *string {
	if etag == "" {
		return nil
	}
	return &etag
}

// requestError wraps a failure to send a request or read its answer.
func requestError(what string, err error) error {
	return fmt.Errorf("%s: %w", what, err)
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ServerVersion returns the server's build version and the OpenClaw
// version it pins (GET /version, which needs no key).
func (c *Client) ServerVersion(ctx context.Context) (version, openclaw string, err error) {
	r, err := c.api.GetVersionWithResponse(ctx)
	if err != nil {
		return "", "", requestError("get version", err)
	}
	if r.JSON200 == nil {
		return "", "", unexpected(r.HTTPResponse, r.Body)
	}
	return r.JSON200.Version, r.JSON200.OpenclawVersion, nil
}
