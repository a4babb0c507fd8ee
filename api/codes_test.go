package api_test

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/openclaw/occ/api"
	"github.com/openclaw/occ/internal/occ"
)

// TestDetailCodesMatchTheDocument: the document's closed set of error
// detail codes is exactly the one occ answers with (occ.DetailCodes), so a
// new code cannot reach a client undocumented.
func TestDetailCodesMatchTheDocument(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `yaml:"enum"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(api.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	got := slices.Sorted(slices.Values(doc.Components.Schemas["ErrorDetail"].Properties["code"].Enum))
	want := slices.Sorted(slices.Values(occ.DetailCodes))
	if !slices.Equal(got, want) {
		t.Fatalf("ErrorDetail.code enum = %v; occ.DetailCodes = %v", got, want)
	}
}

// TestDeploymentCodesAreDocumented: every deployment error code with a
// fixed message is named in the document (DeploymentStatus.error).
func TestDeploymentCodesAreDocumented(t *testing.T) {
	t.Parallel()
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Description string `yaml:"description"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	if err := yaml.Unmarshal(api.OpenAPIYAML, &doc); err != nil {
		t.Fatal(err)
	}
	text := doc.Components.Schemas["DeploymentStatus"].Properties["error"].Description
	for _, code := range occ.DeploymentCodes() {
		if !strings.Contains(text, code) {
			t.Errorf("deployment error code %s is not documented in DeploymentStatus.error", code)
		}
	}
}
