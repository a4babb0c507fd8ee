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
