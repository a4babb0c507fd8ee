package cli

// Examples of the commands written before every command carried its own
// (newer ones set Example where they are made). TestEveryCommandHasHelp
// fails for a runnable command without one.

import "github.com/spf13/cobra"

// examples maps a command's path to its examples.
var examples = map[string]string{
	"occ serve": `  occ serve
  occ serve --data-dir /var/lib/occ --listen 0.0.0.0:8080
  occ serve --config occ.yaml --database-url postgres://occ@db/occ --role api`,
	"occ help":               "  occ help agents deploy",
	"occ migrate":            "  occ migrate --config occ.yaml",
	"occ config validate":    "  occ config validate --config occ.yaml",
	"occ secrets rotate-key": "  occ secrets rotate-key --data-dir /var/lib/occ",
	"occ runtime install":    "  occ runtime install\n  occ runtime install --runtime-dir /opt/occ-runtime",

	"occ namespaces list":   "  occ namespaces list\n  occ namespaces list -o name",
	"occ namespaces create": "  occ namespaces create team --wait",
	"occ namespaces get":    "  occ namespaces get team -o yaml",
	"occ namespaces delete": "  occ namespaces delete team --wait",

	"occ secrets create": "  occ secrets create --name openai --value-file openai.key\n  pass show openai | occ secrets create --name openai --value-file -",
	"occ secrets list":   "  occ secrets list\n  occ secrets list -n team -o name",

	"occ configurations list": "  occ configurations list\n  occ configurations list -o jsonpath='{range [*]}{.name}{\"\\n\"}{end}'",
	"occ configurations get":  "  occ configurations get support\n  occ configurations get support -o jsonpath='{.values.agents.defaults.model}'",

	"occ agents create":        "  occ agents create --name bot --configuration support --secret-api-key openai",
	"occ agents list":          "  occ agents list\n  occ agents list -o name",
	"occ agents get":           "  occ agents get bot\n  occ agents get bot -o jsonpath='{.activeRevisionId}'",
	"occ agents patch":         "  occ agents patch bot --execution-mode dedicated\n  occ agents patch bot --configuration support-v2",
	"occ agents grant-secrets": "  occ agents grant-secrets bot",
	"occ agents deploy":        "  occ agents deploy bot --wait\n  occ agents deploy bot --wait --timeout 5m || echo \"exit $?\"",
	"occ agents stop":          "  occ agents stop bot",
	"occ agents delete":        "  occ agents delete bot --wait",

	"occ deployments get":      "  occ deployments get bot rev_…\n  occ deployments get bot 3     # revision 3",
	"occ deployments diagnose": "  occ deployments diagnose bot rev_…\n  occ deployments diagnose bot 3",

	"occ iam roles list":      "  occ iam roles list\n  occ iam roles list --installation",
	"occ iam roles create":    "  occ iam roles create --name readers --permission secret:read --permission configuration:read",
	"occ iam roles get":       "  occ iam roles get readers\n  occ iam roles get editor --installation",
	"occ iam roles delete":    "  occ iam roles delete readers",
	"occ iam bindings list":   "  occ iam bindings list\n  occ iam bindings list --principal agent:bot",
	"occ iam bindings create": "  occ iam bindings create --principal prn_… --role editor\n  occ iam bindings create --principal agent:bot --role readers --target secret/openai",
	"occ iam bindings delete": "  occ iam bindings delete bnd_…",

	"occ audit export": "  occ audit export --since 2026-01-01T00:00:00Z --out audit-2026.jsonl",
}

// addExamples sets the examples of the commands under root that have
// none.
func addExamples(root *cobra.Command) {
	if ex, ok := examples[root.CommandPath()]; ok && root.Example == "" {
		root.Example = ex
	}
	for _, c := range root.Commands() {
		addExamples(c)
	}
}
