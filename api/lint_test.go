package api_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/openclaw/occ/internal/cachetest"
)

// Redocly is the OpenAPI linter other tools' users run, pinned.
const Redocly = "@redocly/cli@2.77.0"

// TestOpenAPILint lints api/openapi.yaml with Redocly CLI's recommended
// rules: no error, and every operation documents its 4xx responses (so a
// client generated in another language knows the error envelope). The one
// warning left is info-license: the project has chosen no licence yet.
func TestOpenAPILint(t *testing.T) {
	t.Parallel()
	tools := cachetest.NPM(t, Redocly)
	out, err := exec.Command(filepath.Join(tools, "node_modules", ".bin", "redocly"), "lint", "openapi.yaml",
		"--format=json", "--max-problems=1000").Output()
	var report struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if jerr := json.Unmarshal(out, &report); jerr != nil {
		t.Fatalf("redocly lint: %v %v\n%s", err, jerr, out)
	}
	for _, p := range report.Problems {
		if p.Severity == "error" || p.RuleID != "info-license" {
			where := ""
			if len(p.Location) > 0 {
				where = p.Location[0].Pointer
			}
			t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
		}
	}
	t.Logf("redocly lint: %d errors, %d warnings", report.Totals.Errors, report.Totals.Warnings)
}
