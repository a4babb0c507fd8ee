package ssh

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// hostPrograms are what the driver's scripts run on a host.
var hostPrograms = []string{"systemctl", "flock", "runuser", "getent", "useradd", "userdel", "groupdel", "id",
	"base64", "sha256sum", "od", "cmp", "sed", "readlink"}

// Preflight logs in to every host (checking its key) and checks what the
// driver needs there: root, a running systemd, the programs its scripts
// use, the gateway command's files, and a port range outside the host's
// ephemeral ports (net.ipv4.ip_local_port_range: any connection may take
// one of those, and a gateway whose port is taken fails to start). occ
// does not start against a host that fails; the error names the host's
// setting and what is missing.
func (d *Driver) Preflight(ctx context.Context) error {
	names := make([]string, 0, len(d.o.Hosts))
	for n := range d.o.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		script := vars("PROGRAMS", strings.Join(hostPrograms, " "), "FILES", strings.Join(d.o.Command, " "),
			"PSTART", strconv.Itoa(d.o.PortStart), "PEND", strconv.Itoa(d.o.PortEnd)) + `
if [ "$(id -u)" != 0 ]; then echo "missing root login"; fi
if [ ! -d /run/systemd/system ]; then echo "missing a running systemd"; fi
for c in $PROGRAMS; do
	if ! command -v "$c" >/dev/null 2>&1; then echo "missing program $c"; fi
done
for f in $FILES; do
	if [ ! -f "$f" ]; then echo "missing file $f (compute.ssh.runtime)"; fi
done
# cat, not read: dash reads byte by byte, and a sysctl file answers only
# a read from its start.
set -- $(cat /proc/sys/net/ipv4/ip_local_port_range)
if [ "$PSTART" -le "$2" ] && [ "$PEND" -ge "$1" ]; then
	lo=$1 hi=$2
	echo "compute.ssh.portRange $PSTART-$PEND overlaps the host's ephemeral ports $lo-$hi (net.ipv4.ip_local_port_range): choose a range outside it"
fi
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
