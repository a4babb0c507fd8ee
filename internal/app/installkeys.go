package app

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
)

// installationKey returns a named 32-byte key of this installation, made on
// first use and stored encrypted with the Secrets keyring, so every replica
// sharing the keyring derives the same one and the database alone reveals
// nothing.
func installationKey(ctx context.Context, st interface {
	PutInstallationKey(ctx context.Context, name, ciphertext string, at int64) error
	GetInstallationKey(ctx context.Context, name string) (string, error)
}, kr *secrets.Keyring, instID, name string) ([]byte, error) {
	ad := secrets.AssociatedData{InstallationID: instID, NamespaceID: "-", SecretID: "key:" + name}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	sealed, err := kr.Encrypt(fresh, ad)
	if err != nil {
		return nil, fmt.Errorf("seal %s key: %w", name, err)
	}
	if err := st.PutInstallationKey(ctx, name, base64.StdEncoding.EncodeToString(sealed), occ.Millis(time.Now())); err != nil {
		return nil, err
	}
	stored, err := st.GetInstallationKey(ctx, name)
	if err != nil {
		return nil, err
	}
	raw, err := base64.StdEncoding.DecodeString(stored)
	if err != nil {
		return nil, fmt.Errorf("decode %s key: %w", name, err)
	}
	return kr.Decrypt(raw, ad)
}
