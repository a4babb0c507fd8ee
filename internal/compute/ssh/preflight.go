package ssh

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// hostPrograms are what the driver's scripts run on a host.
var hostPrograms = []string{"systemctl", "flock", "runuser", "getent", "useradd", "userdel", "groupdel", "id",
	"base64", "sha256sum", "od", "cmp", "sed", "readlink"}

// Preflight logs in to every host (checking its key) and checks what the
// driver needs there: root, a running systemd, the programs its scripts
// use and the gateway command's files. occ does not start against a host
// that fails; the error names the host's setting and what is missing.
func (d *Driver) Preflight(ctx context.Context) error {
	names := make([]string, 0, len(d.o.Hosts))
	for n := range d.o.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		script := vars("PROGRAMS", strings.Join(hostPrograms, " "), "FILES", strings.Join(d.o.Command, " ")) + `
if [ "$(id -u)" != 0 ]; then echo "missing root login"; fi
if [ ! -d /run/systemd/system ]; then echo "missing a running systemd"; fi
for c in $PROGRAMS; do
	if ! command -v "$c" >/dev/null 2>&1; then echo "missing program $c"; fi
done
for f in $FILES; do
	if [ ! -f "$f" ]; then echo "missing file $f (compute.ssh.runtime)"; fi
done
`
		out, err := d.t.Run(ctx, d.o.Hosts[n], script)
		if err != nil {
			return fmt.Errorf("compute.ssh.hosts.%s: %w", n, err)
		}
		if s := strings.TrimSpace(string(out)); s != "" {
			return fmt.Errorf("compute.ssh.hosts.%s: %s", n, strings.ReplaceAll(s, "\n", "; "))
		}
	}
	return nil
}
