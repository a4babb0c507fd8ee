package ssh

import (
	"bufio"
	"encoding/base64"
	"strings"
)

// The host side of every operation is a POSIX shell script (Transport.Run
// runs it with set -eu under the host lock). Values reach it only as
// quoted variable assignments (vars); file contents as base64. A script
// reports in "key value" lines (report); a refusal is the line
// "refused <reason>" and exit 0, which the driver turns into a permanent
// SSH_OWNERSHIP_CONFLICT.

// prelude defines the helpers every script may use:
//
//	put FILE MODE OWNER BASE64   write FILE atomically (temporary + rename)
//	field FILE KEY               a string or number field of occ's one-line JSON marks
//	unit_state                   systemd's view of $UNIT, as "key value" lines
//	stop_unit                    stop and disable $UNIT, forget its failures, drop the run markers
//	agent_vars                   UNIT, UNITP of the Agent $AG (unit dir $UD)
//	remove_agent                 remove everything of the Agent $AG of Namespace $NS (dir $A)
//
// Every conditional is an if (never "test && action"), so that set -e
// never ends a script at a false test.
const prelude = `
put() {
	t="$1.occ-tmp"
	printf '%s' "$4" | base64 -d > "$t"
	chmod "$2" "$t"
	chown "$3" "$t"
	mv -f "$t" "$1"
}
field() {
	sed -n 's/.*"'"$2"'":"\{0,1\}\([^",}]*\).*/\1/p' "$1" 2>/dev/null || true
}
unit_state() {
	systemctl show -p ActiveState -p SubState -p MainPID -p NRestarts -p ExecMainStartTimestampMonotonic "$UNIT" |
		sed 's/=/ /'
}
stop_unit() {
	if [ -e "$UNITP" ]; then
		systemctl disable --now --quiet "$UNIT" 2>/dev/null || systemctl stop "$UNIT" 2>/dev/null || true
		systemctl reset-failed "$UNIT" 2>/dev/null || true
	fi
	rm -f "$A/running" "$A/current"
}
agent_vars() {
	UNIT="occ-gateway-$AG.service"
	UNITP="$UD/$UNIT"
}
remove_agent() {
	agent_vars
	stop_unit
	if [ -e "$UNITP" ]; then
		rm -f "$UNITP"
		systemctl daemon-reload
	fi
	rm -rf "$A"
	for f in "$R"/ports/*; do
		if [ -f "$f" ] && [ "$(cat "$f")" = "$AG" ]; then rm -f "$f"; fi
	done
	for m in "$R"/accounts/*; do
		if [ -f "$m" ] && [ "$(cat "$m")" = "$NS $AG" ]; then
			U=${m##*/}
			if getent passwd "$U" >/dev/null; then userdel "$U"; fi
			if getent group "$U" >/dev/null; then groupdel "$U"; fi
			rm -f "$m"
		fi
	done
}
`

// vars assigns shell variables (pairs of name and value), quoted.
func vars(kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString(kv[i] + "=" + quote(kv[i+1]) + "\n")
	}
	return b.String()
}

// b64 is content for put.
func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// report is a script's "key value" lines (the last of a key wins).
type report map[string]string

func parseReport(out []byte) report {
	r := report{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		r[k] = v
	}
	return r
}

// decodeB64 decodes a script's base64 output ("" is empty).
func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }
