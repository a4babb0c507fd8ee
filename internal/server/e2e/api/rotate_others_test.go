package api_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/backends/backendstest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestRotateKeyReencryptsAccountCredentials: rotate-key re-encrypts issued
// service account credentials and the installation's own keys too, and they
// still decrypt afterwards.
func TestRotateKeyReencryptsAccountCredentials(t *testing.T) {
	t.Parallel()
	fake := backendstest.New(t)
	e := servertest.Boot(t, storetest.Migrated(t, "sqlite"), nil, servertest.WithBackend(fake.Backend("chatgpt-main")))
	ns := e.CreateNamespace("rotate")
	sa := e.Call("POST", "/namespaces/"+ns+"/service-accounts", e.Admin, map[string]any{"name": "bot", "backendId": "chatgpt-main"}).Data()["id"].(string)
	if r := e.Call("POST", "/namespaces/"+ns+"/service-accounts/"+sa+"/credentials", e.Admin, nil); r.Status != 201 {
		t.Fatalf("issue = %d %v", r.Status, r.Body)
	}
	ctx := context.Background()
	before, err := e.M.Store().ServiceAccountCiphertext(ctx, ns, sa)
	if err != nil {
		t.Fatal(err)
	}
	keyBefore, _ := e.M.Store().GetInstallationKey(ctx, "idempotency")
	if err := server.RotateSecretsKey(ctx, e.M.Config, io.Discard); err != nil {
		t.Fatal(err)
	}
	after, _ := e.M.Store().ServiceAccountCiphertext(ctx, ns, sa)
	keyAfter, _ := e.M.Store().GetInstallationKey(ctx, "idempotency")
	if after == before || keyAfter == keyBefore {
		t.Fatal("rotate-key left a credential or installation key under the old key")
	}
	v, err := e.M.App().ServiceAccountCredential(ctx, ns, sa)
	if err != nil || !strings.HasPrefix(string(v), fake.Canary) {
		t.Fatalf("credential after rotation: %v", err)
	}
}
