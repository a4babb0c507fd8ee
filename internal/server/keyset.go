package server

import (
	"context"
	"fmt"
	"io"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/secrets"
)

// ImportSecretsKeyset is what `occ secrets import-keyset` runs: it copies
// the keyset file from into secrets.keysetFile (the Helm chart's init
// container does this with the keyset Secret).
func ImportSecretsKeyset(_ context.Context, cfg *config.Config, from string, out io.Writer) error {
	imported, err := secrets.ImportKeyset(from, cfg.Secrets.KeysetFile)
	if err != nil {
		return err
	}
	if imported {
		fmt.Fprintf(out, "imported the secrets keyset from %s into %s\n", from, cfg.Secrets.KeysetFile)
	} else {
		fmt.Fprintf(out, "%s already holds the secrets keyset of %s\n", cfg.Secrets.KeysetFile, from)
	}
	return nil
}

// CreateSecretsKeyset is what `occ secrets create-keyset` runs: a new
// keyset file at path, for an installation that imports it.
func CreateSecretsKeyset(path string, out io.Writer) error {
	if err := secrets.CreateKeyset(path); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote a new secrets keyset to %s (mode 0600); keep it with the database's backups\n", path)
	return nil
}
