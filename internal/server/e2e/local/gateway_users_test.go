package local_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/server/servertest"
	"github.com/openclaw/occ/internal/store/storetest"
)

// TestServedGatewaysRunAsUsersOfTheirOwn: occ serve running as root (CI)
// runs every Agent's gateway as a user of its own from the default
// compute.local.uidRange, and opens the data directory it made (0700) for
// them to pass through (0711) while its files stay 0600. Not root, the
// gateways run as occ's user and the data directory stays 0700.
func TestServedGatewaysRunAsUsersOfTheirOwn(t *testing.T) {
	t.Parallel()
	d, one := servertest.LiveAgent(t, storetest.URL(t, "sqlite"), "one")
	two, _ := d.NewAgent(t, "two", true)
	for _, a := range []string{one, two} {
		if st := d.WaitDeployment(t, a, d.Deploy(t, a)); st["status"] != "succeeded" {
			t.Fatalf("deployment = %v", st)
		}
	}
	dataDir := d.E.M.Config.DataDir
	procs := servertest.GatewayProcs(filepath.Join(dataDir, "compute", "namespaces"))
	uids := map[string]string{}
	for _, a := range []string{one, two} {
		if len(procs[a]) != 1 {
			t.Fatalf("Agent %s has gateway processes %v; want one", a, procs[a])
		}
		for pid := range procs[a] {
			uids[a] = servertest.RealUID(t, pid)
		}
	}
	fi, err := os.Stat(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		me := strconv.Itoa(os.Getuid())
		if uids[one] != me || uids[two] != me || fi.Mode().Perm() != 0o700 {
			t.Fatalf("gateway users %v, data directory %04o; want occ's %s and 0700 (not root)", uids, fi.Mode().Perm(), me)
		}
		return
	}
	first, last, _ := config.Defaults().Compute.Local.UIDs()
	for a, u := range uids {
		n, _ := strconv.ParseUint(u, 10, 32)
		if n < uint64(first) || n > uint64(last) {
			t.Fatalf("Agent %s's gateway runs as %s; want a user of %d-%d", a, u, first, last)
		}
	}
	if uids[one] == uids[two] {
		t.Fatalf("both gateways run as %s", uids[one])
	}
	if fi.Mode().Perm() != 0o711 {
		t.Fatalf("data directory mode %04o; want 0711", fi.Mode().Perm())
	}
	for _, f := range []string{"secrets.keyset", "bootstrap-admin.key"} {
		fi, err := os.Stat(filepath.Join(dataDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %04o; want 0600", f, fi.Mode().Perm())
		}
	}
}
