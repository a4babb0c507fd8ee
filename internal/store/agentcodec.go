package store

import (
	"encoding/json"

	"github.com/openclaw/occ/internal/occ"
)

// The codecs of Agent and revision rows: the domain types in, the stored
// row out, and back. Unreadable saved settings are named, never defaulted.

// EncodeAgent turns an Agent into its stored row.
func EncodeAgent(g occ.Agent) (AgentRow, error) {
	harness, err := json.Marshal(g.Settings.HarnessAuth)
	if err != nil {
		return AgentRow{}, err
	}
	plugins := g.Settings.Plugins
	if plugins == nil {
		plugins = map[string]occ.PluginSelection{}
	}
	pj, err := json.Marshal(plugins)
	if err != nil {
		return AgentRow{}, err
	}
	return AgentRow{ID: g.ID, NamespaceID: g.NamespaceID, Name: g.Name, Status: g.Status, DesiredState: g.DesiredState,
		ConfigurationID: g.ConfigurationID, ServicePrincipalID: g.ServicePrincipalID, ActiveRevisionID: g.ActiveRevisionID,
		ExecutionMode: g.Settings.ExecutionMode, BackendID: g.Settings.BackendID, HarnessAuth: string(harness), Plugins: string(pj),
		Version: g.Version, CreatedBy: g.CreatedBy, CreatedAt: occ.Millis(g.CreatedAt), UpdatedAt: occ.Millis(g.UpdatedAt)}, nil
}

// DecodeAgent reads a stored Agent. A setting that cannot be decoded is
// left out (never defaulted), marked in Unreadable and named in ReadError.
func DecodeAgent(r AgentRow) occ.Agent {
	g := occ.Agent{ID: r.ID, NamespaceID: r.NamespaceID, Name: r.Name, Status: r.Status, DesiredState: r.DesiredState,
		ConfigurationID: r.ConfigurationID, ServicePrincipalID: r.ServicePrincipalID, ActiveRevisionID: r.ActiveRevisionID,
		Version: r.Version, CreatedBy: r.CreatedBy, CreatedAt: occ.FromMillis(r.CreatedAt), UpdatedAt: occ.FromMillis(r.UpdatedAt),
		Unreadable: map[string]bool{}}
	bad := func(field string) {
		g.Unreadable[field] = true
		if g.ReadError == nil {
			g.ReadError = &occ.ReadError{Code: occ.CodeSavedConfigurationUnreadable, Field: field}
		}
	}
	if r.ExecutionMode == occ.ExecutionEmbedded || r.ExecutionMode == occ.ExecutionDedicated {
		g.Settings.ExecutionMode = r.ExecutionMode
	} else {
		bad("executionMode")
	}
	g.Settings.BackendID = r.BackendID
	var h *occ.HarnessAuth
	if err := json.Unmarshal([]byte(r.HarnessAuth), &h); err != nil || (h != nil && h.Method == "") {
		bad("harnessAuth")
	} else {
		g.Settings.HarnessAuth = h
	}
	var p map[string]occ.PluginSelection
	if err := json.Unmarshal([]byte(r.Plugins), &p); err != nil || p == nil {
		bad("plugins")
	} else {
		g.Settings.Plugins = p
	}
	return g
}

// revisionSchema is the encoding version of stored revision snapshots.
const revisionSchema = 1

// EncodeRevision turns a revision into its stored row.
func EncodeRevision(r occ.Revision) (RevisionRow, error) {
	snap, err := json.Marshal(r.Snapshot)
	if err != nil {
		return RevisionRow{}, err
	}
	return RevisionRow{ID: r.ID, AgentID: r.AgentID, NamespaceID: r.NamespaceID, Number: r.Number, SchemaVersion: revisionSchema,
		Snapshot: string(snap), CreatedBy: r.CreatedBy, CreatedAt: occ.Millis(r.CreatedAt)}, nil
}

// DecodeRevision reads a stored revision field by field: a field that
// cannot be decoded is left out (never defaulted), marked in Unreadable
// and, the first of them, named in ReadError; every readable sibling is
// kept. A snapshot of another encoding version, or not an object at all,
// is unreadable as a whole ("configuration"), the metadata kept.
func DecodeRevision(row RevisionRow) occ.Revision {
	r := occ.Revision{ID: row.ID, AgentID: row.AgentID, NamespaceID: row.NamespaceID, Number: row.Number, CreatedBy: row.CreatedBy,
		CreatedAt: occ.FromMillis(row.CreatedAt)}
	var fields map[string]json.RawMessage
	if row.SchemaVersion != revisionSchema || json.Unmarshal([]byte(row.Snapshot), &fields) != nil || fields == nil {
		r.ReadError = &occ.ReadError{Code: occ.CodeSavedConfigurationUnreadable, Field: "configuration"}
		return r
	}
	s := &occ.RevisionSnapshot{}
	r.Snapshot, r.Unreadable = s, map[string]bool{}
	bad := func(field string) {
		r.Unreadable[field] = true
		if r.ReadError == nil {
			r.ReadError = &occ.ReadError{Code: occ.CodeSavedConfigurationUnreadable, Field: field}
		}
	}
	// decode reads one field; optional ones may be absent or null.
	decode := func(field string, into any, optional bool, valid func() bool) {
		raw, ok := fields[field]
		if !ok || string(raw) == "null" {
			if !optional {
				bad(field)
			}
			return
		}
		if json.Unmarshal(raw, into) != nil || !valid() {
			bad(field)
		}
	}
	always := func() bool { return true }
	decode("configuration", &s.Configuration, false, func() bool { return s.Configuration.Document != nil })
	decode("executionMode", &s.ExecutionMode, false, func() bool {
		return s.ExecutionMode == occ.ExecutionEmbedded || s.ExecutionMode == occ.ExecutionDedicated
	})
	decode("backendId", &s.BackendID, true, always)
	decode("harnessAuth", &s.HarnessAuth, true, func() bool { return s.HarnessAuth.Method != "" })
	decode("plugins", &s.Plugins, true, always)
	decode("computeDriver", &s.ComputeDriver, true, always)
	decode("servicePrincipalId", &s.ServicePrincipalID, true, always)
	decode("secretBindings", &s.SecretBindings, true, always)
	// What did not decode is left out, never half-read.
	if r.Unreadable["configuration"] {
		s.Configuration = occ.ConfigurationSnapshot{}
	}
	if r.Unreadable["executionMode"] {
		s.ExecutionMode = ""
	}
	if r.Unreadable["harnessAuth"] {
		s.HarnessAuth = nil
	}
	if r.Unreadable["plugins"] {
		s.Plugins = nil
	}
	if r.Unreadable["secretBindings"] {
		s.SecretBindings = nil
	}
	return r
}
