// Command streamidle measures the CPU one occ process spends on idle
// deployment event streams. It starts the given occ binary
// (`go build -o /tmp/occ ./cmd/occ`) on a fresh temporary data directory
// and a free port on 127.0.0.1, creates a Namespace, a Secret, a
// Configuration and an Agent, restarts occ as `--role api` (no worker, so
// a deployment stays queued and its streams stay idle), deploys, opens -n
// streams of that deployment, waits -settle, and prints the process's CPU
// seconds (user + system, /proc/PID/stat) over the next -for.
//
//	go run ./bench/streamidle -bin /tmp/occ -n 200 -for 60s
//
// Extra environment for occ passes through (a build with a cap on streams
// per principal needs OCC_STREAMS_MAX_PER_PRINCIPAL=1024 for 200 streams
// of one key). Requests go to 127.0.0.1 only; occ is stopped and its
// directory removed at the end.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openclaw/occ/bench/internal/occproc"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "streamidle:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("streamidle", flag.ContinueOnError)
	bin := fs.String("bin", "", "the occ binary to start (required)")
	n := fs.Int("n", 200, "streams to open (1..2000)")
	window := fs.Duration("for", 60*time.Second, "how long to measure")
	settle := fs.Duration("settle", 5*time.Second, "wait after opening the streams before measuring")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" || *n < 1 || *n > 2000 {
		return errors.New("-bin is required and -n must lie in 1..2000")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+*window)
	defer cancel()
	dir, err := os.MkdirTemp("", "streamidle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	p, err := start(ctx, *bin, dir, "all")
	if err != nil {
		return err
	}
	key, err := os.ReadFile(filepath.Join(dir, "data", "bootstrap-admin.key"))
	if err != nil {
		p.Stop()
		return err
	}
	c := &api{base: p.Base, key: strings.TrimSpace(string(key))}
	ns, agent, err := c.world(ctx)
	p.Stop()
	if err != nil {
		return err
	}
	if p, err = start(ctx, *bin, dir, "api"); err != nil {
		return err
	}
	defer p.Stop()
	c.base = p.Base
	var dep map[string]any
	if err := c.do("POST", "/namespaces/"+ns+"/agents/"+agent+"/deploy", nil, &dep); err != nil {
		return err
	}
	rev, _ := dep["id"].(string)
	path := "/namespaces/" + ns + "/agents/" + agent + "/deployments/" + rev + "/events"
	for i := range *n {
		if err := c.stream(ctx, path); err != nil {
			return fmt.Errorf("stream %d: %w", i+1, err)
		}
	}
	time.Sleep(*settle)
	before, err := p.CPUSeconds()
	if err != nil {
		return err
	}
	time.Sleep(*window)
	after, err := p.CPUSeconds()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d idle streams for %s: %.2f CPU seconds (%.1f%% of one core)\n", *n, *window, after-before, 100*(after-before)/window.Seconds())
	return nil
}

// api calls occ with the bootstrap key.
type api struct{ base, key string }

func (a *api) do(method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s = %d %s", method, path, res.StatusCode, raw)
	}
	var env struct{ Data json.RawMessage }
	if out == nil || json.Unmarshal(raw, &env) != nil {
		return nil
	}
	return json.Unmarshal(env.Data, out)
}

// world creates a ready Namespace with an Agent that may be deployed.
func (a *api) world(ctx context.Context) (string, string, error) {
	var ns, secret, cfg, agent map[string]any
	if err := a.do("POST", "/namespaces", map[string]any{"name": "bench"}, &ns); err != nil {
		return "", "", err
	}
	id := ns["id"].(string)
	for ns["status"] != "ready" {
		if ctx.Err() != nil {
			return "", "", errors.New("the Namespace never became ready")
		}
		time.Sleep(50 * time.Millisecond)
		if err := a.do("GET", "/namespaces/"+id, nil, &ns); err != nil {
			return "", "", err
		}
	}
	p := "/namespaces/" + id
	if err := a.do("POST", p+"/secrets", map[string]any{"name": "openai", "value": "sk-bench"}, &secret); err != nil {
		return "", "", err
	}
	if err := a.do("POST", p+"/configurations", map[string]any{"name": "c", "kind": "agent",
		"values": map[string]any{"agents": map[string]any{"defaults": map[string]any{"model": "openai/gpt-5"}}}}, &cfg); err != nil {
		return "", "", err
	}
	if err := a.do("POST", p+"/agents", map[string]any{"name": "bot", "configurationId": cfg["id"],
		"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": secret["id"]}}}, &agent); err != nil {
		return "", "", err
	}
	var role map[string]any
	if err := a.do("POST", p+"/iam/roles", map[string]any{"name": "op", "permissions": []string{"secret:operate"}}, &role); err != nil {
		return "", "", err
	}
	if err := a.do("POST", p+"/iam/bindings", map[string]any{"principalId": agent["servicePrincipalId"], "roleId": role["id"]}, nil); err != nil {
		return "", "", err
	}
	return id, agent["id"].(string), nil
}

// stream opens one event stream, reads its first event and leaves it open
// (it ends with the process).
func (a *api) stream(ctx context.Context, path string) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", a.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+a.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	if res.StatusCode != 200 {
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		return fmt.Errorf("%d %s", res.StatusCode, raw)
	}
	line, err := bufio.NewReader(res.Body).ReadString('\n')
	if err != nil || line != "event: status\n" {
		return fmt.Errorf("first line %q: %v", line, err)
	}
	return nil
}

// start runs occ in role on the data directory under dir.
func start(ctx context.Context, bin, dir, role string) (*occproc.Proc, error) {
	return occproc.Start(ctx, bin, filepath.Join(dir, "data"), filepath.Join(dir, "occ.log"), []string{"--role", role},
		"OCC_BOOTSTRAP_ADMIN_PASSWORD=streamidle-admin-password", "OCC_COMPUTE_GATEWAY_COMMAND=/bin/false")
}
