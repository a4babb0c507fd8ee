package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
)

// ResealOthers re-encrypts, under the keyring's primary key, the values
// outside the secrets table that the keyring protects: issued service
// account credentials and the installation's own keys. It returns how many
// it re-encrypted and the IDs it could not decrypt.
func (a *App) ResealOthers(ctx context.Context) (int, []string, error) {
	kr := a.opts.Secrets
	if kr == nil {
		return 0, nil, errors.New("app: no secrets keyring configured")
	}
	if err := kr.Refresh(); err != nil {
		return 0, nil, err
	}
	n := 0
	var unreadable []string
	reseal := func(c store.SealedCredential, ad secrets.AssociatedData, put func(old, sealed string) error) error {
		raw, err := base64.StdEncoding.DecodeString(c.Ciphertext)
		if err != nil {
			unreadable = append(unreadable, c.ID)
			return nil
		}
		v, err := kr.Decrypt(raw, ad)
		if err != nil {
			unreadable = append(unreadable, c.ID)
			return nil
		}
		sealed, err := kr.Encrypt(v, ad)
		clear(v)
		if err != nil {
			return err
		}
		switch err := put(c.Ciphertext, base64.StdEncoding.EncodeToString(sealed)); {
		case errors.Is(err, store.ErrStale): // changed meanwhile: already current
		case err != nil:
			return fmt.Errorf("re-encrypt %s: %w", c.ID, err)
		default:
			n++
		}
		return nil
	}
	after := ""
	for {
		rows, err := a.st.SealedAccountCredentials(ctx, after, 100)
		if err != nil {
			return n, unreadable, err
		}
		for _, c := range rows {
			after = c.ID
			put := func(old, sealed string) error { return a.st.ResealAccountCredential(ctx, c.ID, old, sealed) }
			if err := reseal(c, a.serviceAccountAD(c.NamespaceID, c.ID), put); err != nil {
				return n, unreadable, err
			}
		}
		if len(rows) < 100 {
			break
		}
	}
	keys, err := a.st.InstallationKeys(ctx)
	if err != nil {
		return n, unreadable, err
	}
	for _, c := range keys {
		ad := secrets.AssociatedData{InstallationID: a.instID, NamespaceID: "-", SecretID: "key:" + c.ID}
		put := func(old, sealed string) error { return a.st.ResealInstallationKey(ctx, c.ID, old, sealed) }
		if err := reseal(c, ad, put); err != nil {
			return n, unreadable, err
		}
	}
	return n, unreadable, nil
}
