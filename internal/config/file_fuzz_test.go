package config

import (
	"regexp"
	"testing"

	"go.yaml.in/yaml/v3"
)

// FuzzConfigFile checks the installation configuration file decoder on any
// bytes. It answers either a parse error or problems, never both; every
// problem names the file and line (but the one about a second document); a
// file with a credential literal anywhere (a key naming a password,
// secret, token, API key or private key with a non-empty scalar value) is
// refused; and an accepted file's settings, written back as YAML, are
// accepted again and give the same settings.
func FuzzConfigFile(f *testing.F) {
	for _, s := range []string{"", "dataDir: /x\n", "worker:\n  maxAttempts: 3\n  convergenceTimeout: 900s\n", "role: api\nrole: worker\n",
		"backends:\n  - id: chatgpt-main\n    type: chatgpt\n    url: https://chatgpt.example\n",
		"presets:\n  - name: p\n    plugins:\n      slack:\n        approvalPolicy: write_actions\n      github@1: {}\n",
		"pluginCatalogs:\n  - id: default\n    plugins: [slack, github@1]\n", "auth:\n  adminPassword: hunter2\n",
		"a: &x 1\nworker:\n  maxAttempts: *x\n", "<<: {role: api}\n", "- a\n", "dataDir: [unclosed\n", "role: api\n---\nrole: worker\n",
		"nativeAdminUI:\n  enabled: yes\n", "limits:\n  defaultBodyBytes: 1.5\n", "nodeVersion: 24\n", "worker: ~\n",
		"runtime:\n  nodeVersion: 24\n", "credentialGateway:\n  url: http://gw\n", "? [a]\n: b\n", "metrics:\n  API_KEY: ''\n",
		"dataDir: !!binary aGVsbG8=\n", "listen: !custom x\n", "\ufeffrole: api\n"} {
		f.Add([]byte(s))
	}
	credential := regexp.MustCompile(`(?i)(password|secret|token|apikey|api_key|privatekey)`)
	lineOf := regexp.MustCompile(`\(occ\.yaml:[0-9]+\)$`)
	f.Fuzz(func(t *testing.T, data []byte) {
		c := defaults()
		problems, err := decodeFile(c, "occ.yaml", data)
		if err != nil {
			if problems != nil {
				t.Fatalf("both a parse error %v and problems %v", err, problems)
			}
			return
		}
		for _, p := range problems {
			if !lineOf.MatchString(p.Reason) && p.Reason != "occ.yaml holds more than one YAML document" {
				t.Fatalf("problem %q names no file and line", p)
			}
		}
		if len(problems) > 0 {
			return
		}
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) == nil && hasCredential(&doc, credential) {
			t.Fatalf("a file with a credential literal was accepted:\n%s", data)
		}
		out, err := yaml.Marshal(c)
		if err != nil {
			t.Fatalf("writing the settings back: %v", err)
		}
		again := defaults()
		if problems, err := decodeFile(again, "occ.yaml", out); err != nil || len(problems) > 0 {
			t.Fatalf("the settings written back are refused: %v %v\n%s", err, problems, out)
		}
		if out2, _ := yaml.Marshal(again); string(out2) != string(out) {
			t.Fatalf("the settings written back read as other settings:\n%s\nthen\n%s", out, out2)
		}
	})
}

// hasCredential reports a mapping member anywhere whose key names a
// credential and whose value is a non-empty, non-null scalar.
func hasCredential(n *yaml.Node, credential *regexp.Regexp) bool {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if credential.MatchString(k.Value) && v.Kind == yaml.ScalarNode && v.Value != "" && v.Tag != "!!null" {
				return true
			}
		}
	}
	for _, c := range n.Content {
		if hasCredential(c, credential) {
			return true
		}
	}
	return false
}
