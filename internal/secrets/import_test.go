package secrets_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/secrets"
)

// TestImportKeyset: a keyset file that others may read (a Kubernetes
// Secret's) is imported with mode 0600 and decrypts what the original
// encrypted; importing it again keeps the file; another keyset or a file
// that is no keyset is refused and nothing changes.
func TestImportKeyset(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "from", "secrets.keyset")
	orig, err := secrets.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	ad := secrets.AssociatedData{InstallationID: "inst", NamespaceID: "ns", SecretID: "sec"}
	ct, err := orig.Encrypt([]byte("value"), ad)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(src, 0o440); err != nil { // as a Secret volume with fsGroup
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "data", "secrets.keyset")
	if imported, err := secrets.ImportKeyset(src, dst); err != nil || !imported {
		t.Fatalf("import: %v, %v", imported, err)
	}
	fi, err := os.Stat(dst)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("imported file: %v, %v; want mode 0600", fi, err)
	}
	k, err := secrets.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := k.Decrypt(ct, ad); err != nil || string(pt) != "value" {
		t.Fatalf("decrypt with the imported keyset: %q, %v", pt, err)
	}
	if imported, err := secrets.ImportKeyset(src, dst); err != nil || imported {
		t.Fatalf("second import: %v, %v; want kept", imported, err)
	}

	before, _ := os.ReadFile(dst)
	other := filepath.Join(dir, "other", "secrets.keyset")
	if _, err := secrets.Open(other); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.ImportKeyset(other, dst); err == nil || !strings.Contains(err.Error(), "already holds another keyset") {
		t.Fatalf("import of another keyset over it: %v", err)
	}
	junk := filepath.Join(dir, "junk")
	if err := os.WriteFile(junk, []byte(`{"not":"a keyset"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.ImportKeyset(junk, filepath.Join(dir, "fresh", "k")); err == nil || !strings.Contains(err.Error(), "not a valid tink JSON keyset") {
		t.Fatalf("import of a non-keyset: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "fresh", "k")); !os.IsNotExist(err) {
		t.Fatalf("a refused import left a file: %v", err)
	}
	if after, _ := os.ReadFile(dst); !bytes.Equal(before, after) {
		t.Fatal("a refused import changed the keyset file")
	}
}
