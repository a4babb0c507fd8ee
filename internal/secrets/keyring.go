// Package secrets encrypts Secret values at rest with envelope encryption:
// a tink AEAD keyset of AES256-GCM keys, one of them primary, kept in one
// file (secrets.keysetFile, default <data dir>/secrets.keyset).
//
// The keyset file holds the key material itself, in tink's cleartext JSON
// keyset format: whoever can read it (and the database) can read every
// Secret. Protect it like the database credentials: mode 0600 (occ refuses
// a group- or world-accessible file), backed up together with the
// database, never committed or logged. Wrapping the keyset with a KMS key
// is future work.
//
// Every ciphertext is bound to its row through associated data (the
// installation, Namespace and Secret IDs), so a ciphertext copied into
// another row does not decrypt. Rotation adds a new primary key and keeps
// the old ones, so existing ciphertexts stay readable until they are
// re-encrypted. Several processes may share one keyset file: a Keyring
// notices when another process replaced the file (see Keyring).
package secrets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"

	"github.com/tink-crypto/tink-go/v2/aead"
	"github.com/tink-crypto/tink-go/v2/core/cryptofmt"
	"github.com/tink-crypto/tink-go/v2/insecurecleartextkeyset"
	"github.com/tink-crypto/tink-go/v2/keyset"
	"github.com/tink-crypto/tink-go/v2/tink"
)

// ErrDecrypt is returned when a ciphertext cannot be decrypted: it was made
// by a key the keyset no longer (or not yet) holds, it was altered, or it
// belongs to another row. The error never carries the ciphertext or any
// plaintext.
var ErrDecrypt = errors.New("secrets: ciphertext cannot be decrypted with this keyset")

// adLabel versions the associated-data encoding.
const adLabel = "occ.secret.v1"

// AssociatedData names the row a ciphertext belongs to. All three IDs are
// required; they are bound into the ciphertext, not stored in it.
type AssociatedData struct {
	InstallationID string
	NamespaceID    string
	SecretID       string
}

// encode is the label, then each ID as a 4-byte big-endian length and its
// bytes, so no two distinct triples encode alike.
func (ad AssociatedData) encode() ([]byte, error) {
	fields := []string{ad.InstallationID, ad.NamespaceID, ad.SecretID}
	b := []byte(adLabel)
	for _, f := range fields {
		if f == "" {
			return nil, errors.New("secrets: associated data needs the installation, Namespace and Secret IDs")
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	return b, nil
}

// Keyring is the loaded keyset of one file. It is safe for concurrent use.
//
// Another process (`occ secrets rotate-key`, or another replica sharing the
// file) may replace the file at any time. A Keyring picks that up in two
// ways: Encrypt first checks whether the file changed (one stat: identity,
// size and modification time) and reloads it if so, so new writes use the
// newest primary key; Decrypt reloads the file whenever a ciphertext names
// a key ID the loaded keyset does not hold, so values re-encrypted by the
// rotation stay readable everywhere.
type Keyring struct {
	path string

	mu      sync.Mutex
	aead    tink.AEAD
	primary uint32
	ids     []uint32    // sorted
	stamp   os.FileInfo // the file as last loaded
}

// Open loads the keyset file at path, creating it (mode 0600, with one
// AES256-GCM key) when it does not exist. It refuses a file that group or
// others may access, and a file that is not a tink keyset of AEAD keys.
func Open(path string) (*Keyring, error) {
	if path == "" {
		return nil, errors.New("secrets: no keyset file configured (secrets.keysetFile)")
	}
	k := &Keyring{path: path}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if _, err := k.create(); err != nil {
			return nil, err
		}
	}
	if err := k.load(); err != nil {
		return nil, err
	}
	return k, nil
}

// Path is the keyset file.
func (k *Keyring) Path() string { return k.path }

// create writes a new keyset with one key. The file appears complete or
// not at all: it is written to a temporary file and linked into place, and
// linking fails if another process created it first (then theirs is used).
func (k *Keyring) create() (created bool, err error) {
	h, err := keyset.NewHandle(aead.AES256GCMKeyTemplate())
	if err != nil {
		return false, fmt.Errorf("secrets: generate keyset: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(k.path), 0o700); err != nil {
		return false, fmt.Errorf("secrets: keyset directory: %w", err)
	}
	tmp, err := writeTemp(k.path, h)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, k.path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return false, nil // another process won the race; load theirs
		}
		return false, fmt.Errorf("secrets: create keyset file %s: %w", k.path, err)
	}
	return true, syncDir(filepath.Dir(k.path))
}

// CreateKeyset writes a new keyset (one AES-256-GCM key) to path, mode
// 0600, for an installation whose processes import it (`occ secrets
// import-keyset`, the Helm chart's keyset Secret). An existing file is
// never overwritten.
func CreateKeyset(path string) error {
	created, err := (&Keyring{path: path}).create()
	if err == nil && !created {
		return fmt.Errorf("secrets: %s already exists; it is not overwritten", path)
	}
	return err
}

// writeTemp writes h to a new 0600 file beside path, fsynced, and returns
// its name.
func writeTemp(path string, h *keyset.Handle) (string, error) {
	var buf bytes.Buffer
	if err := insecurecleartextkeyset.Write(h, keyset.NewJSONWriter(&buf)); err != nil {
		return "", fmt.Errorf("secrets: encode keyset: %w", err)
	}
	return writeTempBytes(path, buf.Bytes())
}

// writeTempBytes writes data to a new 0600 file beside path, fsynced, and
// returns its name.
func writeTempBytes(path string, data []byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("secrets: write keyset: %w", err)
	}
	name := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return "", fmt.Errorf("secrets: write keyset: %w", err)
	}
	return name, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, syscall.EINVAL) {
		return fmt.Errorf("secrets: sync %s: %w", dir, err)
	}
	return nil
}

// readHandle reads and checks the keyset file.
func readHandle(path string) (*keyset.Handle, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("secrets: open keyset file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("secrets: keyset file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("secrets: keyset file %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, nil, fmt.Errorf("secrets: keyset file %s has mode %04o: group and others must have no access (chmod 600 it)", path, perm)
	}
	h, err := insecurecleartextkeyset.Read(keyset.NewJSONReader(f))
	if err != nil {
		// tink's errors never include key material; keep only the path.
		return nil, nil, fmt.Errorf("secrets: keyset file %s is not a valid tink JSON keyset", path)
	}
	return h, fi, nil
}

// install makes h the keyset in use. Callers hold k.mu (or own k alone).
func (k *Keyring) install(h *keyset.Handle, fi os.FileInfo) error {
	p, err := aead.New(h)
	if err != nil {
		return fmt.Errorf("secrets: keyset file %s does not hold usable AEAD keys: %w", k.path, err)
	}
	info := h.KeysetInfo()
	ids := make([]uint32, 0, len(info.GetKeyInfo()))
	for _, ki := range info.GetKeyInfo() {
		ids = append(ids, ki.GetKeyId())
	}
	slices.Sort(ids)
	k.aead, k.primary, k.ids, k.stamp = p, info.GetPrimaryKeyId(), ids, fi
	return nil
}

// load reads the file and installs it.
func (k *Keyring) load() error {
	h, fi, err := readHandle(k.path)
	if err != nil {
		return err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.install(h, fi)
}

// changed reports whether the file differs from the one loaded.
func (k *Keyring) changed() bool {
	fi, err := os.Stat(k.path)
	if err != nil {
		return false // keep using what we have; a later load reports it
	}
	return !os.SameFile(fi, k.stamp) || fi.Size() != k.stamp.Size() || !fi.ModTime().Equal(k.stamp.ModTime())
}

// Refresh reloads the keyset file if it changed since it was loaded.
func (k *Keyring) Refresh() error {
	k.mu.Lock()
	stale := k.changed()
	k.mu.Unlock()
	if !stale {
		return nil
	}
	return k.load()
}

// current returns the AEAD in use.
func (k *Keyring) current() (tink.AEAD, []uint32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.aead, k.ids
}

// Encrypt seals plaintext for the row ad names, with the primary key of
// the newest keyset file.
func (k *Keyring) Encrypt(plaintext []byte, ad AssociatedData) ([]byte, error) {
	b, err := ad.encode()
	if err != nil {
		return nil, err
	}
	if err := k.Refresh(); err != nil {
		return nil, err
	}
	p, _ := k.current()
	ct, err := p.Encrypt(plaintext, b)
	if err != nil {
		return nil, fmt.Errorf("secrets: encrypt: %w", err)
	}
	return ct, nil
}

// Decrypt opens a ciphertext of the row ad names. A ciphertext naming a key
// this keyring does not hold makes it reload the file once (another process
// may have rotated); any failure is ErrDecrypt.
func (k *Keyring) Decrypt(ciphertext []byte, ad AssociatedData) ([]byte, error) {
	b, err := ad.encode()
	if err != nil {
		return nil, err
	}
	id, err := KeyIDOf(ciphertext)
	if err != nil {
		return nil, ErrDecrypt
	}
	p, ids := k.current()
	if _, known := slices.BinarySearch(ids, id); !known {
		if err := k.load(); err != nil {
			return nil, fmt.Errorf("%w (reloading the keyset: %v)", ErrDecrypt, err)
		}
		p, _ = k.current()
	}
	pt, err := p.Decrypt(ciphertext, b)
	if err != nil {
		return nil, ErrDecrypt
	}
	return pt, nil
}

// KeyIDOf returns the ID of the key that made a ciphertext, from its tink
// output prefix.
func KeyIDOf(ciphertext []byte) (uint32, error) {
	if len(ciphertext) < cryptofmt.NonRawPrefixSize || ciphertext[0] != cryptofmt.TinkStartByte {
		return 0, errors.New("secrets: not a tink ciphertext")
	}
	return binary.BigEndian.Uint32(ciphertext[1:cryptofmt.NonRawPrefixSize]), nil
}

// Primary is the ID of the key new ciphertexts use (as last loaded).
func (k *Keyring) Primary() uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.primary
}

// KeyIDs lists the IDs of every key in the keyset (as last loaded), sorted.
func (k *Keyring) KeyIDs() []uint32 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.ids)
}

// Rotate adds a new AES256-GCM key, makes it primary and replaces the file
// atomically (a 0600 temporary file, fsync, rename, directory fsync). The
// old keys stay, so existing ciphertexts still decrypt. An exclusive lock
// on <file>.lock serialises rotations, and the file is re-read under it,
// so concurrent rotations never drop each other's keys. It returns the new
// primary key's ID.
func (k *Keyring) Rotate() (uint32, error) {
	unlock, err := lockFile(k.path + ".lock")
	if err != nil {
		return 0, err
	}
	defer unlock()
	h, _, err := readHandle(k.path)
	if err != nil {
		return 0, err
	}
	m := keyset.NewManagerFromHandle(h)
	id, err := m.Add(aead.AES256GCMKeyTemplate())
	if err != nil {
		return 0, fmt.Errorf("secrets: add key: %w", err)
	}
	if err := m.SetPrimary(id); err != nil {
		return 0, fmt.Errorf("secrets: set primary key: %w", err)
	}
	if h, err = m.Handle(); err != nil {
		return 0, fmt.Errorf("secrets: new keyset: %w", err)
	}
	tmp, err := writeTemp(k.path, h)
	if err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, k.path); err != nil {
		os.Remove(tmp)
		return 0, fmt.Errorf("secrets: replace keyset file: %w", err)
	}
	if err := syncDir(filepath.Dir(k.path)); err != nil {
		return 0, err
	}
	if err := k.load(); err != nil {
		return 0, err
	}
	return id, nil
}

// lockFile takes an exclusive flock on path, waiting for it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("secrets: keyset lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("secrets: keyset lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
