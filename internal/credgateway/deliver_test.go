package credgateway_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/credgateway/credgatewaytest"
)

func TestDeliverGivesThePlaceholderAndBaseURL(t *testing.T) {
	gw := credgatewaytest.New(t)
	c := credgateway.New(gw.URL)
	ctx := context.Background()
	reg := credgateway.Registration{NamespaceID: "ns_1", ID: "cs_1", Type: "openai",
		Secrets: map[string]credgateway.SecretValue{"api_key": {NamespaceID: "ns_1", ID: "sec_1", Value: "sk-real-canary"}}}
	if err := c.Register(ctx, reg); err != nil {
		t.Fatal(err)
	}
	d, err := c.Deliver(ctx, "cs_1", credgateway.DeliveryRequest{NamespaceID: "ns_1", AgentID: "agt_1", RevisionID: "rev_1"})
	if err != nil {
		t.Fatal(err)
	}
	if d.BaseURL != gw.URL+"/relay/v1" || !strings.HasPrefix(d.Placeholder, "cgw-") || d.LoginMode != credgateway.LoginAPIKey {
		t.Fatalf("delivery %+v", d)
	}
	if s := d.String() + d.GoString(); strings.Contains(s, d.Placeholder) {
		t.Fatalf("the delivery's description shows its placeholder: %s", s)
	}
	if got := gw.Deliveries(); len(got) != 1 || got[0].AgentID != "agt_1" || got[0].RevisionID != "rev_1" {
		t.Fatalf("the gateway saw %+v", got)
	}
}

func TestDeliverErrors(t *testing.T) {
	ctx := context.Background()
	gw := credgatewaytest.New(t)
	c := credgateway.New(gw.URL)
	if _, err := c.Deliver(ctx, "cs_unknown", credgateway.DeliveryRequest{}); !errors.Is(err, credgateway.ErrNotRegistered) {
		t.Fatalf("an unregistered source: %v; want ErrNotRegistered", err)
	}
	for _, tt := range []struct {
		mode credgatewaytest.Mode
		want error
	}{{credgatewaytest.RefuseCredential, credgateway.ErrCredentialRejected}, {credgatewaytest.Reject, credgateway.ErrRejected}, {credgatewaytest.Fail, credgateway.ErrUnavailable}} {
		gw.SetMode(tt.mode)
		if _, err := c.Deliver(ctx, "cs_1", credgateway.DeliveryRequest{}); !errors.Is(err, tt.want) {
			t.Errorf("mode %d: %v; want %v", tt.mode, err, tt.want)
		}
	}
	// Answers that are not a delivery: unavailable, never quoted.
	for _, body := range []string{`not json`, `{"baseUrl":"ftp://x","credential":"p","loginMode":"api_key"}`,
		`{"baseUrl":"http://x","credential":"","loginMode":"api_key"}`, `{"baseUrl":"http://x","credential":"p","loginMode":"chatgptAuthTokens"}`,
		`{"baseUrl":"http://u:p@x","credential":"p","loginMode":"api_key"}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(body)) }))
		_, err := credgateway.New(srv.URL).Deliver(ctx, "cs_1", credgateway.DeliveryRequest{})
		srv.Close()
		if !errors.Is(err, credgateway.ErrUnavailable) || strings.Contains(err.Error(), body) {
			t.Errorf("answer %s: %v; want ErrUnavailable without the body", body, err)
		}
	}
}

func TestDeliverIsIdempotentPerRevision(t *testing.T) {
	gw := credgatewaytest.New(t)
	c := credgateway.New(gw.URL)
	ctx := context.Background()
	if err := c.Register(ctx, credgateway.Registration{NamespaceID: "ns_1", ID: "cs_1", Type: "openai"}); err != nil {
		t.Fatal(err)
	}
	deliver := func(rev string) string {
		d, err := c.Deliver(ctx, "cs_1", credgateway.DeliveryRequest{NamespaceID: "ns_1", AgentID: "agt_1", RevisionID: rev})
		if err != nil {
			t.Fatal(err)
		}
		return d.Placeholder
	}
	if a, b, other := deliver("rev_1"), deliver("rev_1"), deliver("rev_2"); a != b || a == other {
		t.Fatalf("placeholders %s %s (same revision), %s (another); want the same for the same revision only", a, b, other)
	}
}
