package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
	"github.com/openclaw/occ/internal/server"
	"github.com/openclaw/occ/internal/server/servertest"
)

// BenchmarkAPI measures two API operations through a real occ on a loopback
// port (SQLite, local compute driver, worker running): GET of one Namespace
// and Namespace create (the 201; the worker prepares it alongside). Besides
// ns/op it reports the p50 and p99 of the per-request durations, measured
// one request at a time.
//
//	go test -run '^$' -bench BenchmarkAPI -benchtime 2000x ./internal/server/
func BenchmarkAPI(b *testing.B) {
	base, key := bootBench(b, "")
	cl := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	send := func(method, path string, body any, want int) ([]byte, error) {
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequest(method, base+path, rd)
		if err != nil {
			return nil, err
		}
		if rd != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Authorization", "Bearer "+key)
		res, err := cl.Do(req)
		if err != nil {
			return nil, err
		}
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		if err == nil && res.StatusCode != want {
			err = fmt.Errorf("%s %s = %d, want %d: %s", method, path, res.StatusCode, want, raw)
		}
		return raw, err
	}

	raw, err := send("GET", "/namespaces?pageSize=1", nil, 200)
	if err != nil {
		b.Fatal(err)
	}
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if err := json.Unmarshal(raw, &list); err != nil || len(list.Data) == 0 {
		b.Fatalf("GET /namespaces: %v %s", err, raw)
	}
	id := list.Data[0].ID

	b.Run("GetNamespace", func(b *testing.B) {
		for range 50 { // warm the connection and the statement caches
			if _, err := send("GET", "/namespaces/"+id, nil, 200); err != nil {
				b.Fatal(err)
			}
		}
		measureAPI(b, func(int) error {
			_, err := send("GET", "/namespaces/"+id, nil, 200)
			return err
		})
	})
	run := 0
	b.Run("CreateNamespace", func(b *testing.B) {
		run++ // live names are unique, across runs of this sub-benchmark too
		measureAPI(b, func(i int) error {
			_, err := send("POST", "/namespaces", map[string]any{"name": fmt.Sprintf("bench-%d-%d", run, i)}, 201)
			return err
		})
	})
}

// measureAPI runs op b.N times, timing each call, and reports p50 and p99.
func measureAPI(b *testing.B, op func(i int) error) {
	b.Helper()
	durs := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		err := op(i)
		durs = append(durs, time.Since(start))
		if err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(durs)
	b.ReportMetric(float64(durs[len(durs)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(durs[len(durs)*99/100].Nanoseconds()), "p99-ns")
}

// bootBench starts occ on port 0 as boot does for tests, with the worker's
// default poll interval and no exchange validation (it would be measured
// too). dbURL "" is the embedded SQLite file.
func bootBench(b *testing.B, dbURL string) (base, key string) {
	b.Helper()
	dir := gatewaytest.ReachableDir(b)
	flags := map[string]string{"dataDir": dir, "listen": "127.0.0.1:0", "publicOrigin": "http://127.0.0.1:8080"}
	maps.Copy(flags, servertest.TestRates)
	if dbURL != "" {
		flags["databaseURL"] = dbURL
	}
	cfg, err := config.Load(config.Source{Flags: flags})
	if err != nil {
		b.Fatal(err)
	}
	m := &server.Main{Config: cfg, Out: io.Discard, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if err := m.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { m.Close() })
	raw, err := os.ReadFile(filepath.Join(dir, "bootstrap-admin.key"))
	if err != nil {
		b.Fatal(err)
	}
	return "http://" + m.Addr(), strings.TrimSpace(string(raw))
}
