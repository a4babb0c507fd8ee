package credgateway_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
	"github.com/openclaw/occ/internal/occ"
)

func registration() credgateway.Registration {
	ns := occ.NewID(occ.PrefixNamespace)
	return credgateway.Registration{InstallationID: occ.NewID(occ.PrefixInstallation), NamespaceID: ns,
		ID: occ.NewID(occ.PrefixCredentialSource), Name: "openai", Type: "openai", Config: map[string]any{"org": "acme"},
		Secrets: map[string]credgateway.SecretValue{"apiKey": {NamespaceID: ns, ID: occ.NewID(occ.PrefixSecret), Value: "canary-value-1"}}}
}

func TestCredentialGatewayClient(t *testing.T) {
	t.Parallel()
	fake := credgatewaytest.New(t)
	c := &credgateway.HTTP{URL: fake.URL, Timeout: 200 * time.Millisecond}
	ctx := context.Background()
	reg := registration()
	if err := c.Register(ctx, reg); err != nil {
		t.Fatal(err)
	}
	got, ok := fake.Source(reg.ID)
	if !ok || got.Name != "openai" || got.Type != "openai" || got.NamespaceID != reg.NamespaceID || got.InstallationID != reg.InstallationID ||
		got.Config["org"] != "acme" || got.Secrets["apiKey"] != reg.Secrets["apiKey"] {
		t.Fatalf("registered %+v (%v)", got, ok)
	}
	for _, s := range []string{fmt.Sprint(reg), fmt.Sprintf("%+v", reg), fmt.Sprintf("%#v", reg)} {
		if strings.Contains(s, "canary-value-1") {
			t.Fatalf("formatting shows a Secret value: %s", s)
		}
	}
	// Removing twice succeeds (the second answer is 404).
	for range 2 {
		if err := c.Remove(ctx, reg.NamespaceID, reg.ID); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := fake.Source(reg.ID); ok {
		t.Fatal("source still registered")
	}

	for _, tt := range []struct {
		mode credgatewaytest.Mode
		want error
	}{
		{credgatewaytest.Fail, credgateway.ErrUnavailable},
		{credgatewaytest.Reject, credgateway.ErrRejected},
		{credgatewaytest.Slow, credgateway.ErrUnavailable},
	} {
		fake.SetMode(tt.mode)
		if err := c.Register(ctx, registration()); !errors.Is(err, tt.want) {
			t.Fatalf("register in mode %d: %v, want %v", tt.mode, err, tt.want)
		}
		if err := c.Remove(ctx, reg.NamespaceID, reg.ID); !errors.Is(err, tt.want) {
			t.Fatalf("remove in mode %d: %v, want %v", tt.mode, err, tt.want)
		}
	}
}

func TestCredentialGatewayAnswers(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		status int
		want   error
	}{
		{200, nil}, {201, nil}, {204, nil},
		{302, credgateway.ErrUnavailable}, {408, credgateway.ErrUnavailable}, {429, credgateway.ErrUnavailable}, {503, credgateway.ErrUnavailable},
		{400, credgateway.ErrRejected}, {404, credgateway.ErrRejected}, {409, credgateway.ErrRejected},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tt.status == 302 {
				w.Header().Set("Location", "/x")
			}
			w.WriteHeader(tt.status)
			_, _ = w.Write([]byte(strings.Repeat("x", 100<<10)))
		}))
		err := credgateway.New(srv.URL).Register(context.Background(), registration())
		srv.Close()
		if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Fatalf("register answered %d: %v, want %v", tt.status, err, tt.want)
		}
	}
	// An unreachable gateway.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if err := credgateway.New(srv.URL).Remove(context.Background(), "ns", "cs"); !errors.Is(err, credgateway.ErrUnavailable) {
		t.Fatalf("unreachable gateway: %v", err)
	}
}
