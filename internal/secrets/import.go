package secrets

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tink-crypto/tink-go/v2/aead"
	"github.com/tink-crypto/tink-go/v2/insecurecleartextkeyset"
	"github.com/tink-crypto/tink-go/v2/keyset"
)

// ImportKeyset copies the keyset file src to dst (the keysetFile Open
// reads) with mode 0600, after checking that src is a tink JSON keyset of
// usable AEAD keys. src may be readable by others (a Kubernetes Secret's
// file, which belongs to root or is group-readable), dst never is. A dst
// that holds the same bytes already is left as it is and reported false; a
// dst holding anything else is refused, never overwritten.
func ImportKeyset(src, dst string) (bool, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return false, fmt.Errorf("secrets: read keyset to import: %w", err)
	}
	h, err := insecurecleartextkeyset.Read(keyset.NewJSONReader(bytes.NewReader(b)))
	if err != nil {
		// tink's errors never include key material; keep only the path.
		return false, fmt.Errorf("secrets: %s is not a valid tink JSON keyset", src)
	}
	if _, err := aead.New(h); err != nil {
		return false, fmt.Errorf("secrets: %s does not hold usable AEAD keys: %w", src, err)
	}
	if have, err := os.ReadFile(dst); err == nil {
		if bytes.Equal(have, b) {
			return false, nil
		}
		return false, fmt.Errorf("secrets: %s already holds another keyset; it is not overwritten (remove it first if it is not needed)", dst)
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("secrets: keyset file: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return false, fmt.Errorf("secrets: keyset directory: %w", err)
	}
	// The imported bytes as they are, so that importing the same file again
	// compares equal.
	tmp, err := writeTempBytes(dst, b)
	if err != nil {
		return false, err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, dst); err != nil {
		return false, fmt.Errorf("secrets: create keyset file %s: %w", dst, err)
	}
	return true, syncDir(filepath.Dir(dst))
}
