package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
)

// RotateSecretsKey is what `occ secrets rotate-key` runs: it adds a new
// primary key to the keyset file, then re-encrypts every Secret still under
// an older key, one row per statement, while servers keep running. Old
// keys stay in the keyset, so readers never fail; running servers that
// share the file pick up the new key by themselves (see secrets.Keyring).
// The keyset file must already exist (occ serve creates it): a missing
// file most likely means the wrong --config or --data-dir, and a new key
// there would decrypt nothing. It writes a summary to out and fails when
// some Secret could not be re-encrypted.
func RotateSecretsKey(ctx context.Context, cfg *config.Config, out io.Writer) error {
	path := cfg.Secrets.KeysetFile
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no usable secrets keyset at %s (check --config and --data-dir; occ serve creates it): %w", path, err)
	}
	kr, err := secrets.Open(path)
	if err != nil {
		return err
	}
	st, err := Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	id, err := kr.Rotate()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "occ: added key %d to %s and made it primary (%d keys)\n", id, path, len(kr.KeyIDs()))
	if _, err := st.GetInstallation(ctx); errors.Is(err, store.ErrNotFound) {
		fmt.Fprintln(out, "occ: the database holds no installation yet; no Secret to re-encrypt")
		return nil
	}
	a, err := app.New(ctx, st, nil, app.Options{Secrets: kr})
	if err != nil {
		return err
	}
	rep, err := a.ResealSecrets(ctx)
	if err != nil {
		return fmt.Errorf("re-encrypt Secrets: %w", err)
	}
	fmt.Fprintf(out, "occ: re-encrypted %d Secrets under key %d\n", rep.Resealed, rep.PrimaryKeyID)
	others, bad, err := a.ResealOthers(ctx)
	if err != nil {
		return fmt.Errorf("re-encrypt service account credentials and installation keys: %w", err)
	}
	fmt.Fprintf(out, "occ: re-encrypted %d service account credentials and installation keys\n", others)
	if len(bad) > 0 {
		return fmt.Errorf("%d service account credentials or installation keys cannot be decrypted with this keyset: %s", len(bad), strings.Join(bad, ", "))
	}
	switch {
	case len(rep.Unreadable) > 0:
		ids := rep.Unreadable
		more := ""
		if len(ids) > 20 {
			ids, more = ids[:20], fmt.Sprintf(" and %d more", len(ids)-20)
		}
		return fmt.Errorf("%d Secrets cannot be decrypted with this keyset and keep their old ciphertext: %s%s",
			len(rep.Unreadable), strings.Join(ids, ", "), more)
	case rep.Remaining > 0:
		return fmt.Errorf("%d Secrets were written under an older key while this ran; run the command again", rep.Remaining)
	}
	return nil
}
