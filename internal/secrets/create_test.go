package secrets_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/secrets"
)

// TestCreateKeyset: a new keyset file is mode 0600, imports and opens as a
// working keyring; an existing file is refused and left as it was.
func TestCreateKeyset(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new", "secrets.keyset")
	if err := secrets.CreateKeyset(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("created file: %v, %v; want mode 0600", fi, err)
	}
	before, _ := os.ReadFile(path)
	if err := secrets.CreateKeyset(path); err == nil || !strings.Contains(err.Error(), "not overwritten") {
		t.Fatalf("creating over an existing keyset: %v, want a refusal", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the refused create changed the existing keyset")
	}
	dst := filepath.Join(dir, "data", "secrets.keyset")
	if imported, err := secrets.ImportKeyset(path, dst); err != nil || !imported {
		t.Fatalf("import the new keyset: %v, %v", imported, err)
	}
	k, err := secrets.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	ad := secrets.AssociatedData{InstallationID: "inst", NamespaceID: "ns", SecretID: "sec"}
	ct, err := k.Encrypt([]byte("value"), ad)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := k.Decrypt(ct, ad); err != nil || string(pt) != "value" {
		t.Fatalf("round trip: %q, %v", pt, err)
	}
}
