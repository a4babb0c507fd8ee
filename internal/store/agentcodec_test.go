package store_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// savedRevision is a revision as occ writes it, with every setting.
func savedRevision(t *testing.T) (occ.Revision, store.RevisionRow) {
	t.Helper()
	rev := occ.Revision{ID: "rev_1", AgentID: "agt_1", NamespaceID: "ns_1", Number: 3, CreatedBy: "usr_1",
		Snapshot: &occ.RevisionSnapshot{
			Configuration: occ.ConfigurationSnapshot{ID: "cfg_1", Kind: "agent", Generation: 2, Document: map[string]any{"agents": map[string]any{}}},
			ExecutionMode: occ.ExecutionDedicated, BackendID: "bk_1",
			HarnessAuth:        &occ.HarnessAuth{Method: "api_key"},
			Plugins:            map[string]occ.PluginSelection{},
			ComputeDriver:      "docker",
			ServicePrincipalID: "spn_1",
			SecretBindings:     map[string]occ.SecretBinding{"OPENAI_API_KEY": {Source: occ.SecretRef{Kind: "secret", NamespaceID: "ns_1", ID: "sec_1"}, Delivery: "env"}},
		}}
	row, err := store.EncodeRevision(rev)
	if err != nil {
		t.Fatal(err)
	}
	return rev, row
}

// withField rewrites one field of a stored snapshot to raw JSON.
func withField(t *testing.T, row store.RevisionRow, field, raw string) store.RevisionRow {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(row.Snapshot), &fields); err != nil {
		t.Fatal(err)
	}
	fields[field] = json.RawMessage(raw)
	b, err := json.Marshal(fields)
	if err != nil {
		t.Fatal(err)
	}
	row.Snapshot = string(b)
	return row
}

// TestDecodeRevisionRoundTrip: what occ writes reads back whole.
func TestDecodeRevisionRoundTrip(t *testing.T) {
	t.Parallel()
	want, row := savedRevision(t)
	got := store.DecodeRevision(row)
	if !got.Complete() || got.ReadError != nil || len(got.Unreadable) != 0 || !reflect.DeepEqual(got.Snapshot, want.Snapshot) {
		t.Fatalf("decoded %+v (read error %v, unreadable %v), want %+v", got.Snapshot, got.ReadError, got.Unreadable, want.Snapshot)
	}
}

// TestDecodeRevisionKeepsReadableSiblings: one unreadable saved field is
// named (the first one in ReadError, every one in Unreadable) and left
// out, never defaulted; every other setting is kept, and the revision is
// not complete (so it is never deployed).
func TestDecodeRevisionKeepsReadableSiblings(t *testing.T) {
	t.Parallel()
	want, row := savedRevision(t)
	for _, c := range []struct{ field, raw string }{
		{"plugins", `"not an object"`},
		{"harnessAuth", `{"method":""}`},
		{"executionMode", `"sideways"`},
		{"configuration", `{"id":"cfg_1","document":null}`},
		{"secretBindings", `["OPENAI_API_KEY"]`},
		{"backendId", `42`},
	} {
		got := store.DecodeRevision(withField(t, row, c.field, c.raw))
		if got.Complete() || got.ReadError == nil || got.ReadError.Code != occ.CodeSavedConfigurationUnreadable || got.ReadError.Field != c.field ||
			!reflect.DeepEqual(got.Unreadable, map[string]bool{c.field: true}) || got.Snapshot == nil {
			t.Fatalf("%s unreadable: complete %v, read error %+v, unreadable %v", c.field, got.Complete(), got.ReadError, got.Unreadable)
		}
		s, w := *got.Snapshot, *want.Snapshot
		switch c.field { // what the unreadable field leaves in the snapshot
		case "plugins":
			w.Plugins = nil
		case "harnessAuth":
			w.HarnessAuth = nil
		case "executionMode":
			w.ExecutionMode = ""
		case "configuration":
			w.Configuration = occ.ConfigurationSnapshot{}
		case "secretBindings":
			w.SecretBindings = nil
		case "backendId":
			w.BackendID = ""
		}
		if !reflect.DeepEqual(s, w) {
			t.Fatalf("%s unreadable: the readable siblings are %+v, want %+v", c.field, s, w)
		}
	}
}

// TestDecodeRevisionUnreadableWhole: another encoding version, or a
// snapshot that is not a JSON object, is unreadable as a whole: the
// metadata is kept, the snapshot omitted and named "configuration".
func TestDecodeRevisionUnreadableWhole(t *testing.T) {
	t.Parallel()
	_, row := savedRevision(t)
	newer, truncated := row, row
	newer.SchemaVersion = 99
	truncated.Snapshot = `{"configuration":`
	for name, r := range map[string]store.RevisionRow{"newer schema": newer, "truncated": truncated} {
		got := store.DecodeRevision(r)
		if got.Snapshot != nil || got.Complete() || got.ReadError == nil || got.ReadError.Field != "configuration" || got.Number != 3 || got.CreatedBy != "usr_1" {
			t.Fatalf("%s: %+v", name, got)
		}
	}
}
