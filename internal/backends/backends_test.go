package backends_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/occ"
)

func TestBackendIssueCredential(t *testing.T) {
	t.Parallel()
	req := backends.IssueRequest{InstallationID: occ.NewID(occ.PrefixInstallation), NamespaceID: occ.NewID(occ.PrefixNamespace),
		ServiceAccountID: occ.NewID(occ.PrefixServiceAccount), Name: "codex-bot"}
	tests := []struct {
		name string
		mode backendstest.Mode
		want error
	}{
		{"success", backendstest.OK, nil},
		{"server error", backendstest.Fail, backends.ErrUnavailable},
		{"refused", backendstest.Reject, backends.ErrRejected},
		{"slow", backendstest.Slow, backends.ErrUnavailable},
		{"oversized", backendstest.Oversized, backends.ErrUnavailable},
		{"malformed", backendstest.Malformed, backends.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := backendstest.New(t)
			fake.SetMode(tt.mode)
			client := &backends.HTTP{Timeout: 200 * time.Millisecond}
			c, err := client.IssueCredential(context.Background(), fake.Backend("chatgpt-main"), req)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("IssueCredential = %v, want %v", err, tt.want)
			}
			if err != nil {
				if strings.Contains(err.Error(), fake.Canary) {
					t.Fatalf("error quotes the Backend's answer: %v", err)
				}
				return
			}
			if !strings.HasPrefix(c.Value, fake.Canary) || c.Kind != "access_token" || c.ExpiresAt == nil ||
				!c.ExpiresAt.Equal(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)) {
				t.Fatalf("credential = %+v (%q)", c, c.Value)
			}
			for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c)} {
				if strings.Contains(s, fake.Canary) {
					t.Fatalf("formatting shows the value: %s", s)
				}
			}
			rs := fake.Requests()
			if len(rs) != 1 || rs[0].IdempotencyKey != req.ServiceAccountID || rs[0].Body["serviceAccountId"] != req.ServiceAccountID ||
				rs[0].Body["namespaceId"] != req.NamespaceID || rs[0].Body["backendId"] != "chatgpt-main" || rs[0].Body["name"] != "codex-bot" {
				t.Fatalf("requests = %+v", rs)
			}
		})
	}
}

func TestBackendUnreachableAndUnsupported(t *testing.T) {
	t.Parallel()
	fake := backendstest.New(t)
	b := fake.Backend("gone")
	fake.Close()
	client := backends.NewHTTP()
	if _, err := client.IssueCredential(context.Background(), b, backends.IssueRequest{}); !errors.Is(err, backends.ErrUnavailable) {
		t.Fatalf("unreachable Backend: %v", err)
	}
	for _, b := range []backends.Backend{{ID: "gh", Type: backends.TypeGitHub, URL: "http://127.0.0.1:1"}, {ID: "c", Type: backends.TypeChatGPT}} {
		if _, err := client.IssueCredential(context.Background(), b, backends.IssueRequest{}); !errors.Is(err, backends.ErrUnsupported) {
			t.Fatalf("Backend %+v: %v, want ErrUnsupported", b, err)
		}
	}
}

// TestBackendAnswers reads answers the fake has no mode for.
func TestBackendAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		want   error
	}{
		{"200 is success too", 200, `{"credential":"c","kind":"api_key","extra":1}`, nil},
		{"unknown kind", 201, `{"credential":"c","kind":"password"}`, backends.ErrUnavailable},
		{"empty credential", 201, `{"credential":"","kind":"access_token"}`, backends.ErrUnavailable},
		{"NUL in credential", 201, `{"credential":"a\u0000b","kind":"access_token"}`, backends.ErrUnavailable},
		{"bad expiresAt", 201, `{"credential":"c","kind":"access_token","expiresAt":"tomorrow"}`, backends.ErrUnavailable},
		{"not an object", 201, `["c"]`, backends.ErrUnavailable},
		{"rate limited", 429, `{}`, backends.ErrUnavailable},
		{"request timeout", 408, `{}`, backends.ErrUnavailable},
		{"redirect", 302, ``, backends.ErrUnavailable},
		{"forbidden", 403, `{}`, backends.ErrRejected},
		{"not found", 404, `{}`, backends.ErrRejected},
		{"unavailable", 503, `{}`, backends.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.status == 302 {
					w.Header().Set("Location", "/elsewhere")
				}
				w.WriteHeader(tt.status)
				_, _ = w.Write([]byte(tt.body))
			}))
			defer srv.Close()
			_, err := backends.NewHTTP().IssueCredential(context.Background(),
				backends.Backend{ID: "b", Type: backends.TypeChatGPT, URL: srv.URL + "/"}, backends.IssueRequest{})
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("IssueCredential = %v, want %v", err, tt.want)
			}
		})
	}
}
