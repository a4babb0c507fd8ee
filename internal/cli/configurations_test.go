package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestConfigurationsCreate(t *testing.T) {
	t.Parallel()
	const post = "POST /namespaces/" + defaultNS + "/configurations"
	cases := []struct {
		name  string
		file  string
		flag  string
		env   []string // --secret-env
		stdin bool
		want  string // the body sent, as JSON
		err   string
	}{
		{name: "create body", file: `{"name": "support", "values": {"agents": {}}, "secretBindings": {"TOKEN": {"source": {"kind": "secret", "namespaceId": "` + defaultNS + `", "id": "` + secID + `"}}}}`,
			want: `{"kind":"agent","name":"support","secretBindings":{"TOKEN":{"source":{"id":"` + secID + `","kind":"secret","namespaceId":"` + defaultNS + `"}}},"values":{"agents":{}}}`},
		{name: "create body renamed", file: `{"name": "a", "kind": "agent", "values": {}}`, flag: "b", want: `{"kind":"agent","name":"b","values":{}}`},
		{name: "bare document", file: `{"agents": {"defaults": {"model": "openai/gpt-5"}}}`, flag: "doc",
			want: `{"kind":"agent","name":"doc","values":{"agents":{"defaults":{"model":"openai/gpt-5"}}}}`},
		{name: "standard input", file: `{"gateway": {}}`, flag: "doc", stdin: true, want: `{"kind":"agent","name":"doc","values":{"gateway":{}}}`},
		{name: "secret env by name", file: `{"models": {"providers": {"myllm": {"apiKey": "${MYLLM_API_KEY}"}}}}`, flag: "doc", env: []string{"MYLLM_API_KEY=" + apiKeyName},
			want: `{"kind":"agent","name":"doc","secretBindings":{"MYLLM_API_KEY":{"source":{"id":"` + secID + `","kind":"secret","namespaceId":"` + defaultNS + `"}}},"values":{"models":{"providers":{"myllm":{"apiKey":"${MYLLM_API_KEY}"}}}}}`},
		{name: "secret env that names no Secret", file: `{}`, flag: "doc", env: []string{"X=nope"}, err: "nope"},
		{name: "secret env without a name", file: `{}`, flag: "doc", env: []string{"=x"}, err: "want NAME=SECRET"},
		{name: "bare document without a name", file: `{"agents": {}}`, err: "--name is required"},
		{name: "unknown key in a body", file: `{"name": "a", "values": {}, "valeus": {}}`, err: `unknown field "valeus"`},
		{name: "not an object", file: `[1]`, err: "must hold a JSON object"},
		{name: "null", file: `null`, err: "not null"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeOCC(t).start()
			api, out, _ := f.api("table")
			opts := &configurationsCreateOptions{API: api, Name: tc.flag, File: writeFile(t, "doc.json", tc.file), SecretEnv: tc.env}
			if tc.stdin {
				api.IO.In, opts.File = strings.NewReader(tc.file), "-"
			}
			err := runConfigurationsCreate(context.Background(), opts)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				for _, r := range f.requests() {
					if strings.HasPrefix(r, "POST") {
						t.Fatalf("sent %v", f.requests())
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(f.body(post)); string(got) != tc.want {
				t.Fatalf("body = %s, want %s", got, tc.want)
			}
			if !strings.Contains(out.String(), cfgID) || !strings.Contains(out.String(), "values:") {
				t.Fatalf("out:\n%s", out)
			}
		})
	}
}

func TestConfigurationsListAndGet(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	r := execute(f.env(), "", "configurations", "list")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if r.code != 0 || len(lines) != 2 || !strings.Contains(lines[0], "GENERATION") || !strings.Contains(lines[1], cfgID) ||
		!strings.Contains(lines[1], "SLACK_BOT_TOKEN") {
		t.Fatalf("list = %+v", r)
	}
	// By name; the table ends with the document.
	api, out, _ := f.api("table")
	if err := runConfigurationsGet(context.Background(), &configurationsGetOptions{API: api, Configuration: "support"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "generation:") || !strings.Contains(out.String(), `"model": "openai/gpt-5"`) {
		t.Fatalf("get:\n%s", out)
	}
	r = execute(f.env(), "", "configurations", "get", "missing")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: No Configuration named \"missing\".\n" {
		t.Fatalf("missing = %+v", r)
	}
	r = execute(f.env(), "", "configurations", "get", cfgID, "-o", "json")
	var cfg map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &cfg) != nil || cfg["id"] != cfgID || cfg["values"] == nil {
		t.Fatalf("json = %+v", r)
	}
}
