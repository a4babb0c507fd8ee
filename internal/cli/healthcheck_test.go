package cli

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthcheck: exit 0 on 2xx, 1 with the status and body otherwise or
// when nothing answers, 2 for something that is not an http(s) URL.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" {
			http.Error(w, "database unreachable", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	run := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := Main(append([]string{"healthcheck"}, args...), &out, &out, Server{})
		return code, out.String()
	}
	if code, out := run(srv.URL + "/healthz"); code != ExitOK || !strings.Contains(out, "200 OK") {
		t.Errorf("healthy: %d %q", code, out)
	}
	if code, out := run(srv.URL + "/readyz"); code != ExitError || !strings.Contains(out, "503 Service Unavailable: database unreachable") {
		t.Errorf("not ready: %d %q", code, out)
	}
	if code, out := run("http://127.0.0.1:1/healthz"); code != ExitError || !strings.Contains(out, "GET http://127.0.0.1:1/healthz") {
		t.Errorf("nothing listening: %d %q", code, out)
	}
	if code, out := run("127.0.0.1:9090/readyz"); code != ExitUsage {
		t.Errorf("not a URL: %d %q", code, out)
	}
}
