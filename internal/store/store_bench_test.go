package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// BenchmarkNamespaceWriteRead is one write transaction (a Namespace
// inserted) and two reads (it, and a page of 20), on each database: the
// shape of most API requests. Run with and without -race, it shows what the
// race detector costs the SQLite lane (docs/PERFORMANCE.md).
func BenchmarkNamespaceWriteRead(b *testing.B) {
	for _, dialect := range storetest.Dialects {
		b.Run(dialect, func(b *testing.B) {
			st := storetest.Open(b, storetest.URL(b, dialect))
			ctx := context.Background()
			b.ResetTimer()
			for i := range b.N {
				ns := newNamespace(fmt.Sprintf("bench-%d", i))
				if err := st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertNamespace(ctx, ns) }); err != nil {
					b.Fatal(err)
				}
				if _, err := st.GetNamespace(ctx, ns.ID); err != nil {
					b.Fatal(err)
				}
				if _, err := st.ListNamespaces(ctx, store.Cursor{}, 20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
