package ssh

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/occ"
)

// run runs a script (after the prelude) on a host and parses its report;
// a "refused" line is a permanent SSH_OWNERSHIP_CONFLICT.
func (d *Driver) run(ctx context.Context, h Host, script string) (report, error) {
	out, err := d.t.Run(ctx, h, prelude+script)
	if err != nil {
		return nil, err
	}
	r := parseReport(out)
	if why, ok := r["refused"]; ok {
		return nil, fail(occ.SSHOwnershipConflict, errors.New(why))
	}
	return r, nil
}

// hostNamed is the host of a Namespace name.
func (d *Driver) hostNamed(name string) (Host, bool) {
	h, ok := d.o.Hosts[name]
	return h, ok
}

// hostOf finds the host that holds a Namespace ID's mark (cached once
// found); false when no host holds it.
func (d *Driver) hostOf(ctx context.Context, nsID string) (Host, bool, error) {
	d.mu.Lock()
	name, ok := d.nsHost[nsID]
	d.mu.Unlock()
	if ok {
		return d.o.Hosts[name], true, nil
	}
	names := make([]string, 0, len(d.o.Hosts))
	for n := range d.o.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		r, err := d.run(ctx, d.o.Hosts[n], vars("F", d.namespaceDir(nsID)+"/"+fileNamespace)+
			`if [ -f "$F" ]; then echo found yes; fi`)
		if err != nil {
			return Host{}, false, err
		}
		if r["found"] == "yes" {
			d.remember(nsID, n)
			return d.o.Hosts[n], true, nil
		}
	}
	return Host{}, false, nil
}

func (d *Driver) remember(nsID, name string) {
	d.mu.Lock()
	d.nsHost[nsID] = name
	d.mu.Unlock()
}

func (d *Driver) forgetNamespace(nsID string) {
	d.mu.Lock()
	delete(d.nsHost, nsID)
	d.mu.Unlock()
}

// EnsureNamespace makes the Namespace's directory and mark on the host
// its name is configured for; a name without a host is SSH_NO_HOST.
func (d *Driver) EnsureNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	h, ok := d.hostNamed(ns.Name)
	if !ok {
		return compute.NamespaceObservation{}, fail(occ.SSHNoHost, fmt.Errorf("no host is configured for Namespace %q", ns.Name))
	}
	mark := []byte(fmt.Sprintf("{\"namespaceId\":%q,\"name\":%q}\n", ns.ID, ns.Name))
	_, err := d.run(ctx, h, vars("R", d.o.StateRoot, "N", d.namespaceDir(ns.ID), "MARK", b64(mark))+`
mkdir -p "$R/namespaces"
chmod 0711 "$R" "$R/namespaces"
mkdir -p "$N/agents"
chmod 0711 "$N" "$N/agents"
[ -f "$N/namespace.json" ] || put "$N/namespace.json" 0600 root:root "$MARK"
`)
	if err != nil {
		return compute.NamespaceObservation{}, err
	}
	d.remember(ns.ID, ns.Name)
	return compute.NamespaceObservation{Done: true}, nil
}

// DeleteNamespace removes every Agent of the Namespace (units, trees,
// accounts, port claims) and its directory, after checking that every
// entry under it is an Agent occ made: anything else refuses the whole
// deletion before anything is removed.
func (d *Driver) DeleteNamespace(ctx context.Context, ns compute.NamespaceRef) (compute.NamespaceObservation, error) {
	if err := ns.Validate(); err != nil {
		return compute.NamespaceObservation{}, err
	}
	h, ok := d.hostNamed(ns.Name)
	if !ok {
		var err error
		if h, ok, err = d.hostOf(ctx, ns.ID); err != nil {
			return compute.NamespaceObservation{}, err
		}
	}
	if !ok {
		return compute.NamespaceObservation{Done: true}, nil
	}
	_, err := d.run(ctx, h, vars("R", d.o.StateRoot, "NS", ns.ID, "N", d.namespaceDir(ns.ID), "UD", d.o.UnitDir)+`
if [ ! -d "$N" ]; then exit 0; fi
for A in "$N"/agents/*; do
	case ${A##*/} in
	"*") ;;
	agt_*) if [ ! -d "$A" ] || [ -L "$A" ]; then echo "refused $A is not an Agent directory occ made"; exit 0; fi ;;
	*) echo "refused $A is not an Agent directory occ made"; exit 0 ;;
	esac
done
for A in "$N"/agents/agt_*; do
	if [ -d "$A" ]; then
		AG=${A##*/}
		remove_agent
	fi
done
rm -rf "$N"
`)
	if err != nil {
		return compute.NamespaceObservation{}, err
	}
	d.forgetNamespace(ns.ID)
	return compute.NamespaceObservation{Done: true}, nil
}
