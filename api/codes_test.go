package api_test

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/openclaw/occ/api"
	"github.com/openclaw/occ/internal/occ"
)

// property is the part of a schema property these tests read.
type property struct {
	Description string   `yaml:"description"`
	Enum        []string `yaml:"enum"`
}

// schemaProperty reads one property of a component schema of the document.
func schemaProperty(t *testing.T, schema, name string) property {
	t.Helper()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]property `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(api.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas[schema].Properties[name]
}

// TestDetailCodesMatchTheDocument: the document's closed set of error
// detail codes is exactly the one occ answers with (occ.DetailCodes), so a
// new code cannot reach a client undocumented.
func TestDetailCodesMatchTheDocument(t *testing.T) {
	t.Parallel()
	got := slices.Sorted(slices.Values(schemaProperty(t, "ErrorDetail", "code").Enum))
	want := slices.Sorted(slices.Values(occ.DetailCodes))
	if !slices.Equal(got, want) {
		t.Fatalf("ErrorDetail.code enum = %v; occ.DetailCodes = %v", got, want)
	}
}

// TestDeploymentCodesAreDocumented: every deployment error code with a
// fixed message is named in the document (DeploymentStatus.error).
func TestDeploymentCodesAreDocumented(t *testing.T) {
	t.Parallel()
	text := schemaProperty(t, "DeploymentStatus", "error").Description
	for _, code := range occ.DeploymentCodes() {
		if !strings.Contains(text, code) {
			t.Errorf("deployment error code %s is not documented in DeploymentStatus.error", code)
		}
	}
}

// TestAuditOutcomesMatchTheDocument: the document's audit outcomes are
// exactly occ's (occ.AuditOutcomes), in events and in both query filters.
func TestAuditOutcomesMatchTheDocument(t *testing.T) {
	t.Parallel()
	var want []string
	for _, o := range occ.AuditOutcomes {
		want = append(want, string(o))
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(schemaProperty(t, "AuditEvent", "outcome").Enum))
	if !slices.Equal(got, want) {
		t.Fatalf("AuditEvent.outcome enum = %v; occ.AuditOutcomes = %v", got, want)
	}
	filter := "{name: outcome, in: query, schema: {type: string, enum: [" + strings.Join(schemaProperty(t, "AuditEvent", "outcome").Enum, ", ") + "]}}"
	if n := strings.Count(string(api.OpenAPIYAML), filter); n != 2 {
		t.Fatalf("%d audit queries filter outcome by the events' enum; want both", n)
	}
}
