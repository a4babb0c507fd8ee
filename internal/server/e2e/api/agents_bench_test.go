package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// BenchmarkAgents creates Agents in one Namespace through the API (run it
// with -benchtime 10000x for the 10,000), then lists them page by
// page (100 per page), over loopback on the embedded SQLite file.
func BenchmarkAgents(b *testing.B) {
	base, key := bootBench(b, "")
	call := func(method, path string, body any, want int) (map[string]any, error) {
		var rd *bytes.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("Authorization", "Bearer "+key)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode != want {
			return nil, fmt.Errorf("%s %s = %d %v", method, path, res.StatusCode, out)
		}
		return out, nil
	}
	nss, err := call("GET", "/namespaces", nil, 200)
	if err != nil {
		b.Fatal(err)
	}
	ns := nss["data"].([]any)[0].(map[string]any)["id"].(string)
	cfg, err := call("POST", "/namespaces/"+ns+"/configurations", map[string]any{"name": "bench", "kind": "agent", "values": map[string]any{}}, 201)
	if err != nil {
		b.Fatal(err)
	}
	cfgID := cfg["data"].(map[string]any)["id"].(string)
	created := 0
	b.Run("create", func(b *testing.B) {
		measureAPI(b, func(i int) error {
			created++
			_, err := call("POST", "/namespaces/"+ns+"/agents", map[string]any{"name": fmt.Sprintf("agent-%d", created), "configurationId": cfgID}, 201)
			return err
		})
	})
	b.Run("list-page-100", func(b *testing.B) {
		token := ""
		measureAPI(b, func(i int) error {
			path := "/namespaces/" + ns + "/agents?pageSize=100"
			if token != "" {
				path += "&pageToken=" + token
			}
			out, err := call("GET", path, nil, 200)
			if err != nil {
				return err
			}
			token, _ = out["meta"].(map[string]any)["nextPageToken"].(string)
			return nil
		})
		b.ReportMetric(float64(created), "agents")
	})
}
