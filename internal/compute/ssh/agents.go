package ssh

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// agentState is what a host reports of an Agent.
type agentState struct {
	exists  bool
	port    int
	token   string
	running string // the revision the unit was last started for
	active  string // systemd's ActiveState of the unit
	pid     string
	started string // ExecMainStartTimestampMonotonic
	restart int    // NRestarts
}

// serving reports whether the unit runs (or starts) revision rev.
func (s agentState) serving(rev string) bool {
	return s.running == rev && (s.active == "active" || s.active == "activating" || s.active == "reloading")
}

// workload names the unit's current process (its PID and start time).
func (s agentState) workload() string { return s.pid + "@" + s.started }

func parseState(r report) agentState {
	port, _ := strconv.Atoi(r["port"])
	restarts, _ := strconv.Atoi(r["NRestarts"])
	return agentState{exists: r["exists"] == "yes", port: port, token: r["token"], running: r["running"],
		active: r["ActiveState"], pid: r["MainPID"], started: r["ExecMainStartTimestampMonotonic"], restart: restarts}
}

// stateReport prints an Agent's state ($A, $UNIT set).
const stateReport = `
if [ -f "$A/agent.json" ]; then
	echo exists yes
	echo "port $(field "$A/agent.json" port)"
	echo "token $(sed -n 's/^OPENCLAW_GATEWAY_TOKEN=//p' "$A/gateway-token.env" 2>/dev/null || true)"
	echo "running $(cat "$A/running" 2>/dev/null || true)"
fi
unit_state
`

// agentVars are the variables of an Agent's scripts.
func (d *Driver) agentVars(a compute.AgentRef, more ...string) string {
	return vars(append([]string{"R", d.o.StateRoot, "NS", a.NamespaceID, "AG", a.AgentID, "A", d.agentDir(a), "UD", d.o.UnitDir}, more...)...) +
		"agent_vars\n"
}

// state reads an Agent's state; found false when its Namespace is on no
// host.
func (d *Driver) state(ctx context.Context, a compute.AgentRef) (Host, agentState, bool, error) {
	h, ok, err := d.hostOf(ctx, a.NamespaceID)
	if err != nil || !ok {
		return Host{}, agentState{}, false, err
	}
	r, err := d.run(ctx, h, d.agentVars(a)+stateReport)
	if err != nil {
		return Host{}, agentState{}, false, err
	}
	return h, parseState(r), true, nil
}

// ensureAgent makes the Agent's account (marked before it is made: an
// account occ did not mark is refused, as is uid 0), its port claim (the
// lowest free one of the range, kept for the Agent's life), its tree and
// token, and its mark (agent.json, last), and reports its state.
func (d *Driver) ensureAgent(ctx context.Context, h Host, a compute.AgentRef) (agentState, error) {
	r, err := d.run(ctx, h, d.agentVars(a, "U", d.userName(a), "PS", strconv.Itoa(d.o.PortStart), "PE", strconv.Itoa(d.o.PortEnd))+`
if [ ! -f "$R/namespaces/$NS/namespace.json" ]; then echo missing namespace; exit 0; fi
if [ ! -f "$A/agent.json" ]; then
	mkdir -p "$R/accounts" "$R/ports"
	chmod 0700 "$R/accounts" "$R/ports"
	if getent passwd "$U" >/dev/null || getent group "$U" >/dev/null; then
		if [ "$(cat "$R/accounts/$U" 2>/dev/null || true)" != "$NS $AG" ]; then
			echo "refused the account $U exists and occ did not make it for this Agent"; exit 0
		fi
	else
		printf '%s %s\n' "$NS" "$AG" > "$R/accounts/$U.occ-tmp"
		mv -f "$R/accounts/$U.occ-tmp" "$R/accounts/$U"
	fi
	if ! getent passwd "$U" >/dev/null; then
		useradd --system --user-group --no-create-home --home-dir "$A/home" --shell /usr/sbin/nologin "$U"
	fi
	if [ "$(id -u "$U")" = 0 ] || [ "$(id -g "$U")" = 0 ]; then
		echo "refused the account $U has uid or gid 0"; exit 0
	fi
	port=
	for f in "$R"/ports/*; do
		if [ -f "$f" ] && [ "$(cat "$f")" = "$AG" ]; then port=${f##*/}; fi
	done
	p=$PS
	while [ -z "$port" ] && [ "$p" -le "$PE" ]; do
		if [ ! -e "$R/ports/$p" ]; then port=$p; fi
		p=$((p + 1))
	done
	if [ -z "$port" ]; then echo "missing port"; exit 0; fi
	echo "$AG" > "$R/ports/$port"
	mkdir -p "$A/revisions"
	chown "root:$U" "$A" "$A/revisions"
	chmod 0750 "$A" "$A/revisions"
	for s in home state workspace logs; do
		mkdir -p "$A/$s"
		chown "$U:$U" "$A/$s"
		chmod 0700 "$A/$s"
	done
	if [ ! -f "$A/gateway-token.env" ]; then
		put "$A/gateway-token.env" 0600 root:root "$(printf 'OPENCLAW_GATEWAY_TOKEN=%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" | base64 -w0)"
	fi
	put "$A/agent.json" 0600 root:root "$(printf '{"namespaceId":"%s","agentId":"%s","user":"%s","port":%s}\n' "$NS" "$AG" "$U" "$port" | base64 -w0)"
fi
`+stateReport)
	if err != nil {
		return agentState{}, err
	}
	switch r["missing"] {
	case "namespace":
		return agentState{}, fmt.Errorf("the Namespace %s has no directory on %s yet", a.NamespaceID, h.hostport())
	case "port":
		return agentState{}, fmt.Errorf("no free port in %d-%d on %s", d.o.PortStart, d.o.PortEnd, h.hostport())
	}
	return parseState(r), nil
}

// PrepareRevision makes the Agent's unit run the revision and reports
// readiness. A revision the unit does not run yet is staged (its
// immutable openclaw.json, the unit), made
// current and started: as every occ driver, a new revision replaces the
// running one at prepare (see docs/SSH.md).
func (d *Driver) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	if err := spec.RevisionRef.Validate(); err != nil {
		return compute.Readiness{}, err
	}
	if r := d.Capabilities().Refusal(d.Name(), occ.RevisionNeeds{ExecutionMode: spec.ExecutionMode, InitialFiles: len(spec.InitialFiles) > 0,
		PluginPolicies: pluginPolicies(spec.Plugins), SecretBindings: len(spec.Env) > 0}); r != nil {
		return compute.Readiness{}, compute.Permanent(r.Code, errors.New(r.Message))
	}
	if spec.NativeAdminOrigin != "" {
		return compute.Readiness{}, compute.Permanent(occ.DeployInvalidConfiguration, errors.New("the ssh compute driver does not run the native admin UI"))
	}
	h, ok, err := d.hostOf(ctx, spec.NamespaceID)
	if err != nil {
		return compute.Readiness{}, err
	}
	if !ok {
		return compute.Readiness{}, fmt.Errorf("the Namespace %s is on no configured host (not ensured yet)", spec.NamespaceID)
	}
	st, err := d.ensureAgent(ctx, h, spec.AgentRef)
	if err != nil {
		return compute.Readiness{}, err
	}
	if !st.serving(spec.RevisionID) {
		if st, err = d.start(ctx, h, spec, st.port); err != nil {
			return compute.Readiness{}, err
		}
	}
	return d.readiness(ctx, h, spec, st)
}

// pluginPolicies is what Refusal needs of a revision's plugins.
func pluginPolicies(ids []string) map[string]string {
	m := map[string]string{}
	for _, id := range ids {
		m[id] = occ.DefaultApprovalPolicy
	}
	return m
}

// start stages the revision and (re)starts the unit on it, unless the
// unit already runs it (another occ may have started it meanwhile).
func (d *Driver) start(ctx context.Context, h Host, spec compute.RevisionSpec, port int) (agentState, error) {
	config, err := d.render(spec, port)
	if err != nil {
		return agentState{}, compute.Permanent(occ.DeployInvalidConfiguration, err)
	}
	sum := sha256.Sum256(config)
	r, err := d.run(ctx, h, d.agentVars(spec.AgentRef, "U", d.userName(spec.AgentRef), "PORT", strconv.Itoa(port), "REV", spec.RevisionID,
		"NUM", strconv.FormatInt(spec.Number, 10), "HASH", hex.EncodeToString(sum[:]),
		"CONFIG", b64(config), "UNITTEXT", b64([]byte(d.unit(spec.AgentRef, port))))+`
if [ ! -f "$A/agent.json" ] || [ "$(field "$A/agent.json" port)" != "$PORT" ]; then echo missing agent; exit 0; fi
RD="$A/revisions/$REV"
if [ -f "$RD/openclaw.json" ]; then
	if [ "$(sha256sum < "$RD/openclaw.json" | cut -d' ' -f1)" != "$HASH" ]; then
		echo "refused revision $REV has another openclaw.json on this host"; exit 0
	fi
else
	rm -rf "$RD.occ-tmp"
	mkdir -m 0750 "$RD.occ-tmp"
	chown "root:$U" "$RD.occ-tmp"
	put "$RD.occ-tmp/openclaw.json" 0640 "root:$U" "$CONFIG"
	put "$RD.occ-tmp/revision.json" 0600 root:root "$(printf '{"revisionId":"%s","number":%s,"sha256":"%s"}\n' "$REV" "$NUM" "$HASH" | base64 -w0)"
	mv "$RD.occ-tmp" "$RD"
fi
running=$(cat "$A/running" 2>/dev/null || true)
active=$(systemctl show -p ActiveState --value "$UNIT")
if [ "$running" = "$REV" ] && { [ "$active" = active ] || [ "$active" = activating ]; }; then
	:
else
	printf '%s' "$UNITTEXT" | base64 -d > "$UNITP.occ-tmp"
	if cmp -s "$UNITP.occ-tmp" "$UNITP"; then
		rm -f "$UNITP.occ-tmp"
	else
		chmod 0644 "$UNITP.occ-tmp"
		mv -f "$UNITP.occ-tmp" "$UNITP"
		systemctl daemon-reload
	fi
	ln -sfn "revisions/$REV" "$A/current.occ-tmp"
	mv -T "$A/current.occ-tmp" "$A/current"
	put "$A/running" 0600 root:root "$(printf '%s' "$REV" | base64 -w0)"
	systemctl enable --quiet "$UNIT"
	systemctl reset-failed "$UNIT" 2>/dev/null || true
	systemctl restart "$UNIT"
fi
`+stateReport)
	if err != nil {
		return agentState{}, err
	}
	if r["missing"] == "agent" {
		return agentState{}, fmt.Errorf("the Agent %s changed on %s meanwhile", spec.AgentID, h.hostport())
	}
	d.mu.Lock()
	delete(d.verified, spec.AgentRef)
	d.mu.Unlock()
	return parseState(r), nil
}

// ActivateRevision checks that the unit runs the revision; it was made
// current and enabled when it started.
func (d *Driver) ActivateRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	_, st, ok, err := d.state(ctx, rev.AgentRef)
	if err != nil {
		return err
	}
	if !ok || !st.serving(rev.RevisionID) {
		return fmt.Errorf("revision %s of Agent %s is not running", rev.RevisionID, rev.AgentID)
	}
	return nil
}

// RetireRevision stops the unit if it runs the revision and removes the
// revision's snapshot; another revision's unit is left alone.
func (d *Driver) RetireRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	h, ok, err := d.hostOf(ctx, rev.NamespaceID)
	if err != nil || !ok {
		return err
	}
	_, err = d.run(ctx, h, d.agentVars(rev.AgentRef, "REV", rev.RevisionID)+`
if [ ! -d "$A" ]; then exit 0; fi
if [ "$(cat "$A/running" 2>/dev/null || true)" = "$REV" ]; then stop_unit; fi
if [ "$(readlink "$A/current" 2>/dev/null || true)" = "revisions/$REV" ]; then rm -f "$A/current"; fi
rm -rf "$A/revisions/$REV" "$A/logs/$REV.log"
`)
	return err
}

// StopAgent stops and disables the unit; the tree, account and port
// stay.
func (d *Driver) StopAgent(ctx context.Context, a compute.AgentRef) error {
	if err := a.Validate(); err != nil {
		return err
	}
	h, ok, err := d.hostOf(ctx, a.NamespaceID)
	if err != nil || !ok {
		return err
	}
	_, err = d.run(ctx, h, d.agentVars(a)+`
if [ -d "$A" ] || [ -e "$UNITP" ]; then stop_unit; fi
`)
	return err
}

// DeleteAgent removes the unit, the tree, the port claim and the account.
func (d *Driver) DeleteAgent(ctx context.Context, a compute.AgentRef) error {
	if err := a.Validate(); err != nil {
		return err
	}
	h, ok, err := d.hostOf(ctx, a.NamespaceID)
	if err != nil || !ok {
		return err
	}
	_, err = d.run(ctx, h, d.agentVars(a)+"remove_agent\n")
	return err
}

// GatewayEndpoint is the running gateway's endpoint (through the tunnel
// to its port on the host, tunnel.go) and token, read from the host.
func (d *Driver) GatewayEndpoint(ctx context.Context, a compute.AgentRef) (compute.Endpoint, bool) {
	if a.Validate() != nil {
		return compute.Endpoint{}, false
	}
	h, st, ok, err := d.state(ctx, a)
	if err != nil || !ok || st.running == "" || !st.serving(st.running) || st.token == "" {
		return compute.Endpoint{}, false
	}
	ep, err := d.endpoint(h, st)
	return ep, err == nil
}

// endpoint is the Agent's endpoint, its tunnel made sure of.
func (d *Driver) endpoint(h Host, st agentState) (compute.Endpoint, error) {
	addr, err := d.tun.ensure(h, st.port)
	if err != nil {
		return compute.Endpoint{}, err
	}
	return compute.Endpoint{URL: "ws://" + addr, Token: st.token, RevisionID: st.running}, nil
}
