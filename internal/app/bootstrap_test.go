package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestBootstrapConcurrentReplicas: replicas started at once on one fresh
// database (each with its own connection pool, sharing a data directory)
// all start; exactly one creates the installation, and there is one
// installation, one administrator, one bootstrap key and its one file.
func TestBootstrapConcurrentReplicas(t *testing.T) {
	storetest.EachMigrated(t, func(t *testing.T, url string) {
		const replicas = 8
		ctx := context.Background()
		var stores []*store.Store
		for range replicas {
			stores = append(stores, storetest.Open(t, url))
		}
		dir := t.TempDir()
		results := make([]BootstrapResult, replicas)
		errs := make([]error, replicas)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, st := range stores {
			wg.Go(func() {
				<-start
				results[i], errs[i] = Bootstrap(ctx, st, noJobs{}, BootstrapOptions{DataDir: dir, AdminEmail: "admin@occ.test"})
			})
		}
		close(start)
		wg.Wait()
		created := 0
		for i, err := range errs {
			if err != nil {
				t.Errorf("replica %d: %v", i, err)
				continue
			}
			if results[i].Created {
				created++
			} else if results[i].GeneratedPassword != "" {
				t.Errorf("replica %d did not create the admin but reports a password", i)
			}
		}
		if created != 1 {
			t.Errorf("%d replicas report Created, want 1", created)
		}
		st := stores[0]
		for table, want := range map[string]int{"installation": 1, "principals": 2, "service_keys": 1, "namespaces": 1,
			"roles": len(iam.BuiltinRoles()), "bindings": 2} {
			if n := count(t, st, table, ""); n != want {
				t.Errorf("%d rows in %s, want %d", n, table, want)
			}
		}
		files, _ := os.ReadDir(dir)
		if len(files) != 1 || files[0].Name() != KeyFileName {
			t.Fatalf("data directory holds %v, want only %s", files, KeyFileName)
		}
		key, err := os.ReadFile(filepath.Join(dir, KeyFileName))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := iam.NewAuthenticator(st).ServiceKey(ctx, strings.TrimSpace(string(key))); err != nil {
			t.Errorf("the key file's key does not authenticate: %v", err)
		}
	})
}
