package servertest

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/cli"
)

// cliRunner returns functions running the occ command line (cli.Main) in
// the test's environment: occ returns its output and exit code, must
// fails the test unless it exits 0. Both fail it when the output holds
// one of secrets.
func CliRunner(t *testing.T, secrets ...string) (occ func(args ...string) (string, string, int), must func(args ...string) string) {
	occ = func(args ...string) (string, string, int) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := cli.Main(args, &out, &errOut, cli.Server{})
		for _, s := range secrets {
			if strings.Contains(out.String()+errOut.String(), s) {
				t.Fatalf("occ %v printed a secret", args)
			}
		}
		return out.String(), errOut.String(), code
	}
	must = func(args ...string) string {
		t.Helper()
		out, errOut, code := occ(args...)
		if code != 0 {
			t.Fatalf("occ %v = %d\n%s%s", args, code, out, errOut)
		}
		return out
	}
	return occ, must
}
