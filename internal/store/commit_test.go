package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/openclaw/occ/internal/store"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestCommitOutcomeUnknown: a COMMIT that fails without saying why (the
// connection went away mid-commit) is ErrCommitUnknown whether or not it
// took effect, never a plain error a caller could take for "nothing
// happened" (nor ErrStale, which callers retry); the transaction is
// present exactly when the commit happened.
func TestCommitOutcomeUnknown(t *testing.T) {
	storetest.Each(t, func(t *testing.T, url string) {
		st, faults := storetest.OpenFaulty(t, url)
		ctx := context.Background()
		for _, after := range []bool{false, true} {
			ns := newNamespace(map[bool]string{false: "lost-commit", true: "kept-commit"}[after])
			faults.Inject(storetest.CommitFault{Match: "INSERT INTO namespaces", After: after})
			err := st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertNamespace(ctx, ns) })
			if !errors.Is(err, store.ErrCommitUnknown) || errors.Is(err, store.ErrStale) {
				t.Fatalf("commit failure (after the commit: %v) = %v; want ErrCommitUnknown", after, err)
			}
			_, err = st.GetNamespace(ctx, ns.ID)
			switch {
			case after && err != nil:
				t.Fatalf("a commit that happened: GetNamespace = %v", err)
			case !after && !errors.Is(err, store.ErrNotFound):
				t.Fatalf("a commit that did not happen: GetNamespace = %v; want ErrNotFound", err)
			}
		}
	})
}
