package local_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// TestOpenRefusesUnusableUsers: as root, Open refuses a range that starts
// at 0, a range that holds a user of this machine, and a root that other
// users cannot pass through to; each refusal says what to change. Not
// root, gateways run as occ's user and none of that matters: Open opens.
func TestOpenRefusesUnusableUsers(t *testing.T) {
	user, id := machineUser(t)
	closed := t.TempDir()
	if err := os.Chmod(closed, 0o700); err != nil { // nobody else passes
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, root string
		uids       local.UIDRange
		want       string
	}{
		{"range from 0", gatewaytest.ReachableDir(t), local.UIDRange{First: 0, Last: 10}, "must be FIRST-LAST with 0 < FIRST <= LAST"},
		{"a machine user", gatewaytest.ReachableDir(t), local.UIDRange{First: id, Last: id}, "holds the user " + user},
		{"a closed directory above", filepath.Join(closed, "compute"), testUIDs, "chmod o+x " + closed},
	} {
		d, err := local.Open(local.Options{Root: c.root, Command: local.BinaryCommand(fakeGateway), UIDRange: c.uids})
		if os.Geteuid() != 0 {
			if err != nil {
				t.Fatalf("%s: Open (not root) = %v; want it open", c.name, err)
			}
			d.Close()
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: Open = %v; want an error saying %q", c.name, err, c.want)
		}
	}
}

// machineUser is a user of /etc/passwd other than root.
func machineUser(t *testing.T) (string, uint32) {
	t.Helper()
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, ":")
		if len(f) > 2 && f[2] != "0" {
			if n, err := strconv.ParseUint(f[2], 10, 32); err == nil {
				return f[0], uint32(n)
			}
		}
	}
	t.Fatal("/etc/passwd has no user but root")
	return "", 0
}

func TestMappedUserNamespace(t *testing.T) {
	r := local.UIDRange{First: 100, Last: 200}
	for _, c := range []struct {
		idMap string
		want  bool
	}{
		{"0 0 4294967295\n", true},                                // the initial namespace
		{"0 1000 1\n1 100000 65536\n", true},                      // rootless: 0 and 1-65536
		{"         0          0        150\n150 5000 51\n", true}, // two pieces, joined
		{"0 0 150\n151 5000 100\n", false},                        // a hole at 150
		{"0 1000 1\n1 100000 150\n", false},                       // ends at 150
		{"", false},
	} {
		if got := local.Mapped(r, c.idMap); got != c.want {
			t.Errorf("mapped(%v, %q) = %v; want %v", r, c.idMap, got, c.want)
		}
	}
}
