package secrets_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/secrets"
)

var ad = secrets.AssociatedData{InstallationID: "ins_1", NamespaceID: "ns_1", SecretID: "sec_1"}

func open(t *testing.T) (*secrets.Keyring, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secrets.keyset")
	k, err := secrets.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return k, path
}

// minLeakCheck is the shortest plaintext whose presence in a ciphertext
// means a leak rather than chance (a given 8-byte string occurs in random
// bytes with probability about n/2^64).
const minLeakCheck = 8

func TestRoundTrip(t *testing.T) {
	k, _ := open(t)
	for _, v := range [][]byte{[]byte("x"), []byte("xoxb-canary"), bytes.Repeat([]byte("é"), 32768)} {
		ct, err := k.Encrypt(v, ad)
		if err != nil {
			t.Fatal(err)
		}
		// The leak check needs a value long enough not to occur in the
		// ciphertext by chance: the 1-byte "x" appears somewhere in its
		// 34 random-looking ciphertext bytes in about 1 run in 8.
		if len(v) >= minLeakCheck && bytes.Contains(ct, v) {
			t.Fatal("ciphertext contains the plaintext")
		}
		if id, err := secrets.KeyIDOf(ct); err != nil || id != k.Primary() {
			t.Fatalf("KeyIDOf = %d, %v; primary %d", id, err, k.Primary())
		}
		pt, err := k.Decrypt(ct, ad)
		if err != nil || !bytes.Equal(pt, v) {
			t.Fatalf("Decrypt = %d bytes, %v", len(pt), err)
		}
	}
	// Two encryptions of one value differ (random nonces).
	a, _ := k.Encrypt([]byte("same"), ad)
	b, _ := k.Encrypt([]byte("same"), ad)
	if bytes.Equal(a, b) {
		t.Fatal("equal ciphertexts for equal plaintexts")
	}
}

func TestWrongAssociatedDataFails(t *testing.T) {
	k, _ := open(t)
	ct, err := k.Encrypt([]byte("value"), ad)
	if err != nil {
		t.Fatal(err)
	}
	for name, other := range map[string]secrets.AssociatedData{
		"installation": {InstallationID: "ins_2", NamespaceID: ad.NamespaceID, SecretID: ad.SecretID},
		"namespace":    {InstallationID: ad.InstallationID, NamespaceID: "ns_2", SecretID: ad.SecretID},
		"secret":       {InstallationID: ad.InstallationID, NamespaceID: ad.NamespaceID, SecretID: "sec_2"},
		// Length prefixes keep field boundaries: shifting bytes between
		// fields is another row.
		"shifted": {InstallationID: ad.InstallationID, NamespaceID: "ns_1s", SecretID: "ec_1"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := k.Decrypt(ct, other); !errors.Is(err, secrets.ErrDecrypt) {
				t.Fatalf("Decrypt with another row's data = %v, want ErrDecrypt", err)
			}
		})
	}
	tampered := slices.Clone(ct)
	tampered[len(tampered)-1] ^= 1
	if _, err := k.Decrypt(tampered, ad); !errors.Is(err, secrets.ErrDecrypt) {
		t.Fatalf("tampered = %v", err)
	}
	for _, bad := range [][]byte{nil, {1, 2}, []byte("not a ciphertext at all")} {
		if _, err := k.Decrypt(bad, ad); !errors.Is(err, secrets.ErrDecrypt) {
			t.Fatalf("garbage %q = %v", bad, err)
		}
	}
	if _, err := k.Encrypt([]byte("v"), secrets.AssociatedData{NamespaceID: "ns_1", SecretID: "sec_1"}); err == nil {
		t.Fatal("Encrypt without an installation ID succeeded")
	}
}

func TestRotateKeepsOldCiphertextsReadable(t *testing.T) {
	k, path := open(t)
	first := k.Primary()
	old, _ := k.Encrypt([]byte("before"), ad)
	id, err := k.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	if id == first || k.Primary() != id || !slices.Equal(k.KeyIDs(), slices.Sorted(slices.Values([]uint32{first, id}))) {
		t.Fatalf("after rotate: primary %d (new %d, old %d), keys %v", k.Primary(), id, first, k.KeyIDs())
	}
	if pt, err := k.Decrypt(old, ad); err != nil || string(pt) != "before" {
		t.Fatalf("old ciphertext after rotate: %q, %v", pt, err)
	}
	ct, _ := k.Encrypt([]byte("after"), ad)
	if got, _ := secrets.KeyIDOf(ct); got != id {
		t.Fatalf("new ciphertext uses key %d, want the new primary %d", got, id)
	}
	// The file is replaced atomically, stays 0600, and a fresh Open sees both keys.
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keyset file after rotate: %v, %v", fi, err)
	}
	again, err := secrets.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Primary() != id || len(again.KeyIDs()) != 2 {
		t.Fatalf("reopened: primary %d keys %v", again.Primary(), again.KeyIDs())
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".secrets.keyset.tmp-*"))
	if len(leftovers) > 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
}

// TestOtherProcessRotation: a keyring whose file another process rotated
// decrypts the new ciphertexts (reload on an unknown key ID) and encrypts
// with the new primary (reload when the file changed).
func TestOtherProcessRotation(t *testing.T) {
	replica, path := open(t)
	operator, err := secrets.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	newID, err := operator.Rotate()
	if err != nil {
		t.Fatal(err)
	}
	ct, _ := operator.Encrypt([]byte("rotated"), ad)
	if pt, err := replica.Decrypt(ct, ad); err != nil || string(pt) != "rotated" {
		t.Fatalf("replica decrypt after foreign rotation: %q, %v", pt, err)
	}
	if _, err := operator.Rotate(); err != nil {
		t.Fatal(err)
	}
	ct, _ = replica.Encrypt([]byte("x"), ad)
	if id, _ := secrets.KeyIDOf(ct); id == newID || id != operator.Primary() {
		t.Fatalf("replica encrypts with %d, want the operator's newest primary %d", id, operator.Primary())
	}
}

// TestConcurrentRotationsKeepEveryKey: rotations serialise on the lock
// file and re-read the keyset, so none drops another's key.
func TestConcurrentRotationsKeepEveryKey(t *testing.T) {
	_, path := open(t)
	var wg sync.WaitGroup
	ids := make(chan uint32, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := secrets.Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			id, err := k.Rotate()
			if err != nil {
				t.Error(err)
				return
			}
			ids <- id
		}()
	}
	wg.Wait()
	close(ids)
	k, err := secrets.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for id := range ids {
		if !slices.Contains(k.KeyIDs(), id) {
			t.Fatalf("key %d lost; keyset has %v", id, k.KeyIDs())
		}
	}
	if len(k.KeyIDs()) != 9 {
		t.Fatalf("keys = %v, want 9", k.KeyIDs())
	}
}

func TestFileMode(t *testing.T) {
	k, path := open(t)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("new keyset file mode = %04o, want 0600", fi.Mode().Perm())
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"primaryKeyId"`) {
		t.Fatalf("keyset file is not tink JSON: %.40s…", raw)
	}
	// Opening again reuses the file: ciphertexts survive a restart.
	ct, _ := k.Encrypt([]byte("v"), ad)
	again, err := secrets.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := again.Decrypt(ct, ad); err != nil || string(pt) != "v" {
		t.Fatalf("after reopen: %q, %v", pt, err)
	}
	for _, mode := range []os.FileMode{0o640, 0o604, 0o660, 0o644} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := secrets.Open(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("mode %04o: Open = %v, want a refusal", mode, err)
		}
		// A running keyring refuses to pick up an unprotected file too.
		if _, err := k.Rotate(); err == nil {
			t.Fatalf("mode %04o: Rotate succeeded", mode)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := secrets.Open(path); err != nil {
		t.Fatalf("read-only 0400 file: %v", err)
	}
}

func TestOpenRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"empty": "", "garbage": "not json", "no keys": `{"primaryKeyId":1,"key":[]}`} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := secrets.Open(path); err == nil {
				t.Fatal("Open succeeded")
			}
		})
	}
	if _, err := secrets.Open(""); err == nil {
		t.Fatal("Open with no path succeeded")
	}
	if _, err := secrets.Open(dir); err == nil {
		t.Fatal("Open of a directory succeeded")
	}
}

// TestConcurrentFirstOpen: processes starting at once on an empty data
// directory agree on one keyset.
func TestConcurrentFirstOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "secrets.keyset")
	var wg sync.WaitGroup
	rings := make([]*secrets.Keyring, 6)
	for i := range rings {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, err := secrets.Open(path)
			if err != nil {
				t.Error(err)
				return
			}
			rings[i] = k
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ct, _ := rings[0].Encrypt([]byte("v"), ad)
	for i, k := range rings {
		if pt, err := k.Decrypt(ct, ad); err != nil || string(pt) != "v" {
			t.Fatalf("keyring %d: %q, %v", i, pt, err)
		}
	}
}
