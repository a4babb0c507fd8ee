package ssh

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
)

// Where things are on a host, under the state root (Options.StateRoot):
//
//	.compute-lock                    the host lock (flock)
//	accounts/<user>                  occ's mark on an account it made: "<ns ID> <agent ID>"
//	ports/<port>                     a port's claim: the Agent ID
//	namespaces/<ns ID>/namespace.json                 the Namespace's mark (0600)
//	namespaces/<ns ID>/agents/<agent ID>/             root:<agent group> 0750
//	  agent.json                     the Agent's mark: user, port (0600)
//	  gateway-token.env              OPENCLAW_GATEWAY_TOKEN=… (root 0600)
//	  env                            the operator's (model credentials); occ never reads or writes it
//	  home/ state/ workspace/ logs/  the Agent user's, 0700
//	  revisions/<rev ID>/openclaw.json   immutable, root:<agent group> 0640
//	  current -> revisions/<rev ID>  the revision the unit runs
//	  running                        the revision the unit was last started for (0600)
//
// and outside it the unit (UnitDir/occ-gateway-<agent ID>.service). occ
// delivers no Secret to the host: the operator's env file holds what the
// gateway needs (a revision with Secret bindings is refused).
const (
	fileLock        = ".compute-lock"
	fileNamespace   = "namespace.json"
	fileAgent       = "agent.json"
	fileToken       = "gateway-token.env"
	fileOperatorEnv = "env"
	fileRunning     = "running"
	linkCurrent     = "current"
)

func (d *Driver) namespaceDir(nsID string) string {
	return d.o.StateRoot + "/namespaces/" + nsID
}

func (d *Driver) agentDir(a compute.AgentRef) string {
	return d.namespaceDir(a.NamespaceID) + "/agents/" + a.AgentID
}

// UnitName is the systemd unit of an Agent's gateway.
func UnitName(a compute.AgentRef) string { return "occ-gateway-" + a.AgentID + ".service" }

func (d *Driver) unitPath(a compute.AgentRef) string { return d.o.UnitDir + "/" + UnitName(a) }

// userName is the Agent's account: the prefix and 12 hex digits of
// sha256("<ns ID>:<agent ID>") (at most 32 characters).
func (d *Driver) userName(a compute.AgentRef) string {
	h := sha256.Sum256([]byte(a.NamespaceID + ":" + a.AgentID))
	return d.o.UserPrefix + "-" + hex.EncodeToString(h[:])[:12]
}

// AgentPaths are where an Agent's files are on its host.
type AgentPaths struct {
	Dir, Home, State, Workspace, Logs string
}

// Paths are an Agent's paths on its host (for tests and diagnostics).
func (d *Driver) Paths(a compute.AgentRef) AgentPaths {
	dir := d.agentDir(a)
	return AgentPaths{Dir: dir, Home: dir + "/home", State: dir + "/state", Workspace: dir + "/workspace", Logs: dir + "/logs"}
}

// User is an Agent's account name on its host.
func (d *Driver) User(a compute.AgentRef) string { return d.userName(a) }

// StateRoot is the state root on every host.
func (d *Driver) StateRoot() string { return d.o.StateRoot }

// UnitPath is where the Agent's unit is on its host.
func (d *Driver) UnitPath(a compute.AgentRef) string { return d.unitPath(a) }

// logFile is a revision's gateway log (logging.file of its openclaw.json).
func (d *Driver) logFile(r compute.RevisionRef) string {
	return d.Paths(r.AgentRef).Logs + "/" + r.RevisionID + ".log"
}

// render is a revision's openclaw.json for the port.
func (d *Driver) render(spec compute.RevisionSpec, port int) ([]byte, error) {
	p := d.Paths(spec.AgentRef)
	return gateway.RenderConfig(gateway.RenderInput{Document: spec.Document, Port: port, Bind: gateway.BindLoopback,
		WorkspaceDir: p.Workspace, LogFile: d.logFile(spec.RevisionRef)})
}

// unit is the text of an Agent's unit.
func (d *Driver) unit(a compute.AgentRef, port int) string {
	p := d.Paths(a)
	user := d.userName(a)
	env := gateway.LaunchEnv(gateway.LaunchInput{Home: p.Home, ConfigPath: p.Dir + "/" + linkCurrent + "/" + gateway.ConfigFileName,
		StateDir: p.State, ConfigReadOnly: true})
	s := "# occ-ssh namespace=" + a.NamespaceID + " agent=" + a.AgentID + "\n" +
		"[Unit]\nDescription=OpenClaw gateway of occ Agent " + a.AgentID + "\nAfter=network.target\n\n" +
		"[Service]\nType=simple\nUser=" + user + "\nGroup=" + user + "\nWorkingDirectory=" + p.State + "\n"
	for _, kv := range env {
		s += "Environment=" + kv + "\n"
	}
	s += "EnvironmentFile=" + p.Dir + "/" + fileToken + "\n" +
		"EnvironmentFile=-" + p.Dir + "/" + fileOperatorEnv + "\n" +
		"ExecStart="
	for _, c := range d.o.Command {
		s += c + " "
	}
	for i, c := range gateway.LaunchArgs(port) {
		if i > 0 {
			s += " "
		}
		s += c
	}
	s += "\nRestart=always\nRestartSec=2\nKillSignal=SIGTERM\nTimeoutStopSec=" + strconv.Itoa(StopSeconds) + "\n" +
		"NoNewPrivileges=true\nPrivateTmp=true\nUMask=0077\n\n[Install]\nWantedBy=multi-user.target\n"
	return s
}
