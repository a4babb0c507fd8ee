package servertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// gatewayProcs finds the live gateway processes of the local driver's
// Agents under root (by OPENCLAW_STATE_DIR=<root>/<ns>/agents/<agt>/state
// in their environment or command line): Agent ID → PID → command line.
func GatewayProcs(root string) map[string]map[string]string {
	return agentProcs(root, "OPENCLAW_STATE_DIR=", "state")
}

// harnessProcs finds the live Codex harness processes of dedicated Agents
// under root (by CODEX_HOME=<root>/<ns>/agents/<agt>/harness/codex).
func HarnessProcs(root string) map[string]map[string]string {
	return agentProcs(root, "CODEX_HOME=", "harness/codex")
}

// agentProcs finds live processes with variable naming a directory under
// root of the form <ns>/agents/<agt>/<sub>, by Agent ID and PID.
func agentProcs(root, variable, sub string) map[string]map[string]string {
	prefix := root + "/"
	out := map[string]map[string]string{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		stat, err := os.ReadFile(filepath.Join(dir, "stat"))
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(stat, ')'); i < 0 || len(stat) < i+3 || stat[i+2] == 'Z' || stat[i+2] == 'X' {
			continue
		}
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		for _, field := range bytes.Split(append(append(environ, 0), cmdline...), []byte{0}) {
			s := strings.TrimPrefix(string(field), variable)
			rest, ok := strings.CutPrefix(s, prefix)
			if !ok {
				continue
			}
			ns, rest, _ := strings.Cut(rest, "/")
			agents, rest, _ := strings.Cut(rest, "/")
			agt, rest, _ := strings.Cut(rest, "/")
			if ns == "" || agents != "agents" || agt == "" || rest != sub {
				continue
			}
			if out[agt] == nil {
				out[agt] = map[string]string{}
			}
			out[agt][e.Name()] = strings.ReplaceAll(string(bytes.TrimRight(cmdline, "\x00")), "\x00", " ")
			break
		}
	}
	return out
}

// killGatewayProcs SIGKILLs the gateways and harnesses found under root.
func KillGatewayProcs(root string) {
	for _, byAgent := range []map[string]map[string]string{GatewayProcs(root), HarnessProcs(root)} {
		for _, procs := range byAgent {
			for pid := range procs {
				if n, err := strconv.Atoi(pid); err == nil {
					_ = syscall.Kill(n, syscall.SIGKILL)
				}
			}
		}
	}
}
