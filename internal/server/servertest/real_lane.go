package servertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/compute/local"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// realWorld is the lane's occ, Namespace and Secret.
type RealWorld struct {
	T      *testing.T
	E      *Env
	Ns     string
	Secret string
	Drv    *TimedDriver
	Prov   *fakeProvider
	Events *EventLog
	// Dump, when set, logs what the lane knows of an Agent's runtime (its
	// container or Pod, the gateway's log) before a check of it fails.
	Dump func(agent string)
}

func (w *RealWorld) WithT(t *testing.T) *RealWorld {
	c := *w
	c.T, c.E = t, w.E.WithT(t)
	return &c
}

func (w *RealWorld) Path(p string) string { return "/namespaces/" + w.Ns + p }

// providerDocument is the fake-provider configuration of
// reference/openclaw-runtime.md §5 with the given key.
func (w *RealWorld) ProviderDocument(apiKey string) map[string]any {
	return map[string]any{
		"models": map[string]any{"providers": map[string]any{"fakeprov": map[string]any{
			"baseUrl": w.Prov.URL + "/v1", "apiKey": apiKey, "api": "openai-completions",
			"models": []any{map[string]any{"id": "m1", "name": "M1"}},
		}}},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "fakeprov/m1"}}},
	}
}

// newAgent creates a Configuration with the provider key, and an Agent on
// it bound to the Secret (api_key) whose service principal may operate it.
func (w *RealWorld) NewAgent(name, apiKey string, files map[string]any) (agent, cfg string) {
	t, e := w.T, w.E
	r := e.Call("POST", w.Path("/configurations"), e.Admin, map[string]any{"name": name, "kind": "agent", "values": w.ProviderDocument(apiKey)})
	if r.Status != 201 {
		t.Fatalf("create configuration = %d %v", r.Status, r.Body)
	}
	cfg = r.Data()["id"].(string)
	body := map[string]any{"name": name, "configurationId": cfg,
		"harnessAuth": map[string]any{"method": "api_key", "source": map[string]any{"kind": "secret", "id": w.Secret}}}
	if files != nil {
		body["initialWorkspaceFiles"] = files
	}
	return w.createAgent(name, body), cfg
}

// createAgent creates the Agent body describes and lets its service
// principal operate the Namespace's Secrets; it returns the Agent's ID.
func (w *RealWorld) createAgent(name string, body map[string]any) string {
	t, e := w.T, w.E
	r := e.Call("POST", w.Path("/agents"), e.Admin, body)
	if r.Status != 201 {
		t.Fatalf("create agent = %d %v", r.Status, r.Body)
	}
	agent, sp := r.Data()["id"].(string), r.Data()["servicePrincipalId"].(string)
	r = e.Call("POST", w.Path("/iam/roles"), e.Admin, map[string]any{"name": "operate-" + name, "permissions": []string{"secret:operate"}})
	if r.Status != 201 {
		t.Fatalf("create role = %d %v", r.Status, r.Body)
	}
	if r := e.Call("POST", w.Path("/iam/bindings"), e.Admin, map[string]any{"principalId": sp, "roleId": r.Data()["id"]}); r.Status != 201 {
		t.Fatalf("grant the Agent's principal = %d %v", r.Status, r.Body)
	}
	return agent
}

// deploy admits a revision and returns it and when the 202 arrived.
func (w *RealWorld) Deploy(agent string) (string, time.Time) {
	r := w.E.Call("POST", w.Path("/agents/"+agent+"/deploy"), w.E.Admin, nil)
	at := time.Now()
	if r.Status != 202 || r.Data()["id"] == nil {
		w.T.Fatalf("deploy = %d %v", r.Status, r.Body)
	}
	return r.Data()["id"].(string), at
}

// waitDeployment polls a deployment (every 250 ms, at most timeout: a real
// gateway takes tens of seconds, and each poll costs the shared machine) until
// it is terminal; it returns the status and when it was first seen terminal.
func (w *RealWorld) WaitDeployment(agent, rev string, timeout time.Duration) (map[string]any, time.Time) {
	t := w.T
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		r := w.E.Call("GET", w.Path("/agents/"+agent+"/deployments/"+rev), w.E.Admin, nil)
		if r.Status != 200 {
			t.Fatalf("GET deployment = %d %v", r.Status, r.Body)
		}
		d := r.Data()
		if s := d["status"]; s == "succeeded" || s == "failed" {
			return d, time.Now()
		}
		if p, _ := d["progress"].(map[string]any); p != nil && ToJSON(p["lastAttempt"]) != last {
			last = ToJSON(p["lastAttempt"])
			t.Logf("deployment %s: %v, last attempt %s", rev, d["status"], last)
		}
		if time.Now().After(deadline) {
			t.Fatalf("deployment %s not terminal after %s: %v", rev, timeout, d)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (w *RealWorld) AgentGET(agent string) Resp {
	return w.E.Call("GET", w.Path("/agents/"+agent), w.E.Admin, nil)
}

// waitUntil polls cond every 100 ms for at most timeout and returns how long
// it took.
func (w *RealWorld) WaitUntil(what string, timeout time.Duration, cond func() bool) time.Duration {
	w.T.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout && w.E.M == nil { // occ runs elsewhere (in a cluster)
			w.T.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		if time.Since(start) > timeout {
			w.T.Fatalf("timed out after %s waiting for %s; the worker's unfinished jobs and claims: %v",
				timeout, what, unfinishedJobs(w.T, w.E.M.Config.DatabaseURL))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return time.Since(start)
}

func (w *RealWorld) Lifecycle(canary string) {
	t, e := w.T, w.E
	const initial = "Answer support questions.\n"
	agent, cfg := w.NewAgent("bot", "sk-good", map[string]any{"AGENTS.md": initial})
	ref := compute.AgentRef{NamespaceID: w.Ns, AgentID: agent}
	dir := w.Drv.AgentDir(ref)
	stateDir := filepath.Join(dir, "state")
	t.Cleanup(func() { _ = w.Drv.StopAgent(context.Background(), ref) }) // after a failure: before the next case starts

	// Deploy: revision 1 to succeeded.
	ready := watchReadyz(t, dir)
	requestedAt := time.Now()
	rev1, admitted := w.Deploy(agent)
	st, succeededAt := w.WaitDeployment(agent, rev1, 330*time.Second)
	if st["status"] != "succeeded" || st["error"] != nil {
		w.dumpAgent(dir)
		t.Fatalf("first deployment = %v", st)
	}
	readyzAt := ready()
	w.report("revision 1", rev1, requestedAt, admitted, readyzAt, succeededAt)
	if g := w.AgentGET(agent).Data(); g["activeRevisionId"] != rev1 || g["desiredRuntimeState"] != "running" {
		t.Fatalf("agent after deploy = %v", g)
	}
	if n := w.Prov.Count("Bearer sk-good"); n == 0 {
		t.Errorf("the gateway never called the model provider with the configured key; requests: %v", w.Prov.Requests())
	}

	// The gateway answers /readyz on the port the driver gave it.
	ep, ok := w.Drv.GatewayEndpoint(t.Context(), ref)
	if !ok {
		t.Fatal("GatewayEndpoint: no running gateway after a succeeded deployment")
	}
	readyzURL := strings.Replace(ep.URL, "ws://", "http://", 1) + "/readyz"
	res, err := http.Get(readyzURL)
	if err != nil {
		t.Fatalf("GET %s: %v", readyzURL, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("GET %s = %d %s", readyzURL, res.StatusCode, body)
	}
	t.Logf("%s = 200 %s", readyzURL, bytes.TrimSpace(body))
	run1 := readRunJSON(t, dir)
	procs := ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+stateDir)
	t.Logf("gateway pid %d on port %d; its %d processes use %d MB RSS", run1.PID, run1.Port, len(procs), rssKB(procs)/1024)
	// As root the gateway runs as a user of its own, never root (not root:
	// as occ's user), and nothing it did on its way to ready was refused
	// for want of a permission.
	if uid, want := RealUID(t, strconv.Itoa(run1.PID)), strconv.Itoa(os.Getuid()); (os.Geteuid() == 0) == (uid == want) {
		t.Errorf("the gateway runs as user %s (occ's is %s, occ root: %v)", uid, want, os.Geteuid() == 0)
	}
	for _, f := range []string{"console.log", "logs/gateway.log"} {
		if b, _ := os.ReadFile(filepath.Join(dir, f)); bytes.Contains(b, []byte("EACCES")) {
			t.Errorf("the gateway's %s reports a refused permission (EACCES):\n%s", f, b)
		}
	}
	// The Secret reached the gateway through its environment only.
	if !slices.Contains(procs, run1.PID) || !slices.Contains(processEnv(run1.PID), "OPENAI_API_KEY="+canary) {
		t.Errorf("the gateway (pid %d, processes %v) did not get the Secret as OPENAI_API_KEY", run1.PID, procs)
	}

	// Asked again, the gateway reports the configured credential as
	// accepted by the provider (the fake's answer is a valid completion).
	probe := probeModel(t, ep)
	if probe.Status != "ok" {
		t.Fatalf("models.probe fakeprov = %+v, want status ok", probe)
	}
	t.Logf("models.probe fakeprov on the running gateway: %s in %d ms", probe.Status, probe.LatencyMs)

	// The workspace holds the initial file byte for byte; no Secret value
	// is anywhere under the Agent's directory.
	CheckWorkspaceFile(t, dir, initial)
	CheckNoSecret(t, dir, canary)

	// Live workspace files through the gateway, and fresh diagnostics of
	// the running revision.
	w.LiveFiles(agent, dir, initial)
	w.Diagnose(agent, rev1, "succeeded")

	// Stop: activeRevisionId cleared, the processes gone, the workspace kept.
	stopAt := time.Now()
	if r := e.Call("POST", w.Path("/agents/"+agent+"/stop"), e.Admin, nil); r.Status != 202 {
		t.Fatalf("stop = %d %v", r.Status, r.Body)
	}
	took := w.WaitUntil("activeRevisionId cleared", 2*time.Minute, func() bool { return w.AgentGET(agent).Data()["activeRevisionId"] == nil })
	t.Logf("stop: activeRevisionId null %s after the 202", took.Round(time.Millisecond))
	if pids := ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+stateDir); len(pids) != 0 {
		t.Fatalf("processes of the stopped Agent still run: %v", pids)
	}
	if processAlive(run1.PID) {
		t.Fatalf("gateway pid %d still runs after stop", run1.PID)
	}
	if _, ok := w.Drv.GatewayEndpoint(t.Context(), ref); ok {
		t.Fatal("GatewayEndpoint still reports a gateway after stop")
	}
	if g := w.AgentGET(agent).Data(); g["desiredRuntimeState"] != "stopped" {
		t.Fatalf("agent after stop = %v", g)
	}
	CheckWorkspaceFile(t, dir, initial)
	t.Logf("stop took %s in all", time.Since(stopAt).Round(time.Millisecond))
	w.Diagnose(agent, rev1, "unknown") // no process: nothing can be checked

	// Deploy again: revision 2, a new process, the workspace as it was.
	ready = watchReadyz(t, dir)
	requestedAt = time.Now()
	rev2, admitted := w.Deploy(agent)
	st, succeededAt = w.WaitDeployment(agent, rev2, 330*time.Second)
	if st["status"] != "succeeded" {
		w.dumpAgent(dir)
		t.Fatalf("second deployment = %v", st)
	}
	w.report("revision 2", rev2, requestedAt, admitted, ready(), succeededAt)
	if n := e.Call("GET", w.Path("/agents/"+agent+"/revisions/"+rev2), e.Admin, nil).Data()["number"]; n != float64(2) {
		t.Fatalf("second revision number = %v", n)
	}
	if g := w.AgentGET(agent).Data(); g["activeRevisionId"] != rev2 {
		t.Fatalf("agent after the second deploy = %v", g)
	}
	run2 := readRunJSON(t, dir)
	if run2.PID == 0 || run2.PID == run1.PID || run2.RevisionID != rev2 {
		t.Fatalf("run.json after the second deploy = %+v (first pid %d)", run2, run1.PID)
	}
	if st, _ := w.WaitDeployment(agent, rev1, time.Minute); st["status"] != "succeeded" {
		t.Fatalf("first deployment rewritten: %v", st)
	}
	CheckWorkspaceFile(t, dir, initial)
	CheckNoSecret(t, dir, canary)

	// Delete: 404, processes and directory gone, the name free again.
	deleteAt := time.Now()
	if r := e.Call("DELETE", w.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	took = w.WaitUntil("the Agent gone (404)", 2*time.Minute, func() bool { return w.AgentGET(agent).Status == 404 })
	t.Logf("delete: 404 %s after the 202", took.Round(time.Millisecond))
	if pids := ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+stateDir); len(pids) != 0 {
		t.Fatalf("processes of the deleted Agent still run: %v", pids)
	}
	if processAlive(run2.PID) {
		t.Fatalf("gateway pid %d still runs after delete", run2.PID)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the deleted Agent's directory %s: %v", dir, err)
	}
	r := e.Call("POST", w.Path("/agents"), e.Admin, map[string]any{"name": "bot", "configurationId": cfg})
	if r.Status != 201 {
		t.Fatalf("reuse the name of the deleted Agent = %d %v", r.Status, r.Body)
	}
	t.Logf("delete took %s in all", time.Since(deleteAt).Round(time.Millisecond))
}

// rejectedCredential: the provider answers 401 to the document's key, the
// gateway's models.probe reports it, and the deployment fails at once.
func (w *RealWorld) RejectedCredential() {
	t, e := w.T, w.E
	agent, _ := w.NewAgent("bad-key", "sk-bad", nil)
	ref := compute.AgentRef{NamespaceID: w.Ns, AgentID: agent}
	dir := w.Drv.AgentDir(ref)
	t.Cleanup(func() { _ = w.Drv.StopAgent(context.Background(), ref) })
	ready := watchReadyz(t, dir)
	requestedAt := time.Now()
	rev, admitted := w.Deploy(agent)
	st, at := w.WaitDeployment(agent, rev, 330*time.Second)
	er, _ := st["error"].(map[string]any)
	if st["status"] != "failed" || er["code"] != "RUNTIME_AUTHENTICATION_FAILED" {
		w.dumpAgent(dir)
		t.Fatalf("deployment with a rejected key = %v; provider saw %v", st, w.Prov.Requests())
	}
	w.report("rejected key", rev, requestedAt, admitted, ready(), at)
	t.Logf("rejected key: failed with %v (%q)", er["code"], er["message"])
	if w.Prov.Count("Bearer sk-bad") == 0 {
		t.Errorf("the provider never saw the rejected key: %v", w.Prov.Requests())
	}
	if g := w.AgentGET(agent).Data(); g["activeRevisionId"] != nil {
		t.Fatalf("agent after a failed first deployment = %v", g)
	}
	_, running := w.Drv.GatewayEndpoint(t.Context(), ref)
	t.Logf("after the failure: desiredRuntimeState %v, the Agent's gateway process running: %v",
		w.AgentGET(agent).Data()["desiredRuntimeState"], running)

	if r := e.Call("DELETE", w.Path("/agents/"+agent), e.Admin, nil); r.Status != 202 {
		t.Fatalf("delete = %d %v", r.Status, r.Body)
	}
	w.WaitUntil("the Agent gone (404)", 2*time.Minute, func() bool { return w.AgentGET(agent).Status == 404 })
	if pids := ProcessesWithEnv(t, "OPENCLAW_STATE_DIR="+filepath.Join(dir, "state")); len(pids) != 0 {
		t.Fatalf("processes of the deleted Agent still run: %v", pids)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the deleted Agent's directory %s: %v", dir, err)
	}
}

// report logs where the time of one deployment went.
func (w *RealWorld) report(what, rev string, requested, admitted, readyz, terminal time.Time) {
	t := w.T
	calls := w.Drv.prepares(rev)
	if len(calls) == 0 {
		t.Fatalf("%s: no PrepareRevision call recorded", what)
	}
	first, last := calls[0], calls[len(calls)-1]
	started, ok := w.Events.first("gateway started", rev)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s) timeline, %d PrepareRevision calls:\n", what, rev, len(calls))
	fmt.Fprintf(&b, "  deploy request → 202:                       %s\n", ms(admitted.Sub(requested)))
	fmt.Fprintf(&b, "  202 → first PrepareRevision:                %s\n", ms(first.start.Sub(admitted)))
	if ok {
		fmt.Fprintf(&b, "  first PrepareRevision → gateway exec:       %s\n", ms(started.Sub(first.start)))
		if !readyz.IsZero() {
			fmt.Fprintf(&b, "  gateway exec → /readyz 200 (gateway start): %s\n", ms(readyz.Sub(started)))
		}
	}
	if !readyz.IsZero() {
		fmt.Fprintf(&b, "  /readyz 200 → last PrepareRevision begins:  %s\n", ms(last.start.Sub(readyz)))
	}
	fmt.Fprintf(&b, "  last PrepareRevision (probes, models.probe, health): %s\n", ms(last.end.Sub(last.start)))
	fmt.Fprintf(&b, "  last PrepareRevision → terminal seen:       %s (polled every 50 ms)\n", ms(terminal.Sub(last.end)))
	fmt.Fprintf(&b, "  deploy request → terminal seen:             %s\n", ms(terminal.Sub(requested)))
	if ok {
		for _, l := range gatewayLog(w.Drv.AgentDir(compute.AgentRef{NamespaceID: w.Ns, AgentID: first.agent}), started) {
			fmt.Fprintf(&b, "  gateway log at +%s after exec: %s\n", ms(l.at.Sub(started)), l.text)
		}
	}
	for _, r := range w.Prov.Requests() {
		if !r.At.Before(last.start) && !r.At.After(last.end) {
			fmt.Fprintf(&b, "  provider request at +%s into the last PrepareRevision: %s\n", ms(r.At.Sub(last.start)), r.Line)
		}
	}
	// Every call that took a second or more (a probe the gateway was slow to
	// answer), and the last one.
	for i, c := range calls {
		if c.end.Sub(c.start) >= time.Second || i == len(calls)-1 {
			fmt.Fprintf(&b, "    call %d at +%s took %s: ready=%v pending=%q failure=%v err=%v\n", i+1, ms(c.start.Sub(admitted)), ms(c.end.Sub(c.start)),
				c.ready.Ready, c.ready.PendingReason, c.ready.RuntimeFailure != nil, c.err)
		}
	}
	t.Log(b.String())
}

// gatewayLogTimes finds the gateway's own timings in its log: how long
// start-up took until the HTTP server listened, readiness, and each
// models.probe.
var gatewayLogTimes = regexp.MustCompile(`http server listening \([^;)]*; [0-9.]+s\)|^gateway ready$|res [^ ]+ models\.probe [0-9]+ms`)

type logLine struct {
	at   time.Time
	text string
}

// gatewayLog returns the gateway.log lines since a time that gatewayLogTimes
// matches.
func gatewayLog(dir string, since time.Time) []logLine {
	f, err := os.Open(filepath.Join(dir, "logs", "gateway.log"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []logLine
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for s.Scan() {
		var l struct {
			Time    time.Time `json:"time"`
			Message string    `json:"message"`
		}
		if json.Unmarshal(s.Bytes(), &l) != nil || l.Time.Before(since) {
			continue
		}
		if m := gatewayLogTimes.FindString(l.Message); m != "" {
			out = append(out, logLine{at: l.Time, text: m})
		}
	}
	return out
}

// probeModel asks the Agent's running gateway to probe the fake provider.
func probeModel(t *testing.T, ep compute.Endpoint) gateway.ModelProbe {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c, err := gateway.Dial(ctx, gateway.Options{URL: ep.URL, Token: ep.Token, CallTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatalf("dial the gateway: %v", err)
	}
	defer c.Close()
	p, err := c.ProbeModel(ctx, "fakeprov")
	if err != nil {
		t.Fatalf("models.probe fakeprov: %v (%+v)", err, p)
	}
	return p
}

// dumpAgent logs the gateway's console and run.json (a failure's evidence).
func (w *RealWorld) dumpAgent(dir string) {
	for _, name := range []string{"run.json", "console.log", "console.prev.log"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		if len(b) > 8000 {
			b = b[len(b)-8000:]
		}
		w.T.Logf("%s:\n%s", name, b)
	}
	w.T.Logf("provider requests: %v", w.Prov.Requests())
}

// lineLogger returns a writer that logs each line to t until t ends.
func LineLogger(t testing.TB) io.Writer {
	r, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s := bufio.NewScanner(r)
		for s.Scan() {
			t.Log(s.Text())
		}
	}()
	t.Cleanup(func() {
		pw.Close()
		<-done
	})
	return pw
}

func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// timedDriver is the local driver with every PrepareRevision recorded.
type TimedDriver struct {
	*local.Driver
	mu    sync.Mutex
	calls []prepareCall
}

type prepareCall struct {
	agent, rev string
	start, end time.Time
	ready      compute.Readiness
	err        error
}

func (d *TimedDriver) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	start := time.Now()
	r, err := d.Driver.PrepareRevision(ctx, spec)
	d.mu.Lock()
	d.calls = append(d.calls, prepareCall{agent: spec.AgentID, rev: spec.RevisionID, start: start, end: time.Now(), ready: r, err: err})
	d.mu.Unlock()
	return r, err
}

func (d *TimedDriver) prepares(rev string) []prepareCall {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []prepareCall
	for _, c := range d.calls {
		if c.rev == rev {
			out = append(out, c)
		}
	}
	return out
}

// eventLog is a slog.Handler that keeps every record at or above min, for
// the timeline and for the test log.
type EventLog struct {
	Min     slog.Level
	mu      sync.Mutex
	records []slog.Record
}

func (l *EventLog) Enabled(_ context.Context, lv slog.Level) bool { return lv >= l.Min }
func (l *EventLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level < l.Min {
		return nil
	}
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *EventLog) WithAttrs(as []slog.Attr) slog.Handler { return &eventLogView{l: l, attrs: as} }
func (l *EventLog) WithGroup(string) slog.Handler         { return l }

// eventLogView is an eventLog with attributes added (slog.Logger.With).
type eventLogView struct {
	l     *EventLog
	attrs []slog.Attr
}

func (v *eventLogView) Enabled(ctx context.Context, lv slog.Level) bool { return v.l.Enabled(ctx, lv) }
func (v *eventLogView) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(v.attrs...)
	return v.l.Handle(ctx, r)
}
func (v *eventLogView) WithAttrs(as []slog.Attr) slog.Handler {
	return &eventLogView{l: v.l, attrs: append(append([]slog.Attr{}, v.attrs...), as...)}
}
func (v *eventLogView) WithGroup(string) slog.Handler { return v }

// first returns the time of the first record with the message whose
// attributes mention s.
func (l *EventLog) first(msg, s string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.records {
		if r.Message == msg && strings.Contains(recordText(r), s) {
			return r.Time, true
		}
	}
	return time.Time{}, false
}

func (l *EventLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, r := range l.records {
		b.WriteString(recordText(r))
		b.WriteByte('\n')
	}
	return b.String()
}

func recordText(r slog.Record) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s", r.Time.Format("15:04:05.000"), r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		return true
	})
	return b.String()
}

// fakeProvider is gatewaytest's fake model provider.
type fakeProvider = gatewaytest.Provider

func StartFakeProvider(t *testing.T) *fakeProvider {
	return gatewaytest.StartProvider(t, "127.0.0.1:0")
}

// startFakeProviderOn starts the fake provider listening on addr.
func StartFakeProviderOn(t *testing.T, addr string) *fakeProvider {
	return gatewaytest.StartProvider(t, addr)
}

// watchReadyz polls the Agent's gateway /readyz (the port from run.json)
// every 100 ms from now on; the function it returns stops the watch and
// gives the time of the first 200 (zero if none was seen).
func watchReadyz(t *testing.T, dir string) func() time.Time {
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var at time.Time
	done := make(chan struct{})
	go func() {
		defer close(done)
		client := &http.Client{Timeout: 2 * time.Second}
		for ctx.Err() == nil {
			time.Sleep(100 * time.Millisecond)
			b, err := os.ReadFile(filepath.Join(dir, "run.json"))
			if err != nil {
				continue
			}
			var run runJSON
			if json.Unmarshal(b, &run) != nil || run.Port == 0 || run.PID == 0 {
				continue
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", "http://127.0.0.1:"+strconv.Itoa(run.Port)+"/readyz", nil)
			res, err := client.Do(req)
			if err != nil {
				continue
			}
			res.Body.Close()
			if res.StatusCode == 200 {
				mu.Lock()
				at = time.Now()
				mu.Unlock()
				return
			}
		}
	}()
	return func() time.Time {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return at
	}
}

// runJSON is the part of the local driver's run.json the lane reads.
type runJSON struct {
	RevisionID string `json:"revisionId"`
	Running    bool   `json:"running"`
	Port       int    `json:"port"`
	PID        int    `json:"pid"`
}

func readRunJSON(t *testing.T, dir string) runJSON {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var run runJSON
	if err := json.Unmarshal(b, &run); err != nil {
		t.Fatalf("run.json: %v", err)
	}
	return run
}

// processesWithEnv lists the live processes whose environment holds the
// exact entry kv (the gateway and the children it started).
func ProcessesWithEnv(t *testing.T, kv string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if slices.Contains(processEnv(pid), kv) && processAlive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// processEnv returns the environment a process started with.
func processEnv(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// processAlive reports whether pid exists and is not a zombie.
func processAlive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] != 'Z' && b[i+2] != 'X'
}

// rssKB sums VmRSS of the processes.
func rssKB(pids []int) int {
	total := 0
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				n, _ := strconv.Atoi(f[1])
				total += n
			}
		}
	}
	return total
}

// checkWorkspaceFile checks the workspace AGENTS.md byte for byte.
// liveFiles writes each of the four files through the API (the real
// gateway's agents.files.set), reads it back (agents.files.get) and finds
// it byte for byte in the workspace on disk; trailing newlines, spaces,
// CRLF and non-ASCII text survive. AGENTS.md is written back to initial.
func (w *RealWorld) LiveFiles(agent, dir, initial string) {
	t, e := w.T, w.E
	base := w.Path("/agents/" + agent + "/workspace/files/")
	started := time.Now()
	for i, name := range []string{"AGENTS.md", "SOUL.md", "IDENTITY.md", "USER.md"} {
		content := fmt.Sprintf("# %s\n\nLine with trailing spaces   \r\nTabs\tand ünïcödé ✓ %d\n\n\n", name, i)
		r := e.Call("PUT", base+name, e.Admin, map[string]any{"content": content})
		if r.Status != 200 || r.Data()["name"] != name || r.Data()["size"] != float64(len(content)) {
			t.Fatalf("PUT %s = %d %v, want 200 {name, size %d}", name, r.Status, r.Body, len(content))
		}
		r = e.Call("GET", base+name, e.Admin, nil)
		if r.Status != 200 || r.Data()["content"] != content {
			t.Fatalf("GET %s = %d %v, want the content written %q", name, r.Status, r.Body, content)
		}
		if b, err := os.ReadFile(filepath.Join(dir, "workspace", name)); err != nil || string(b) != content {
			t.Fatalf("workspace %s on disk = %q (%v), want %q", name, b, err, content)
		}
	}
	if r := e.Call("PUT", base+"AGENTS.md", e.Admin, map[string]any{"content": initial}); r.Status != 200 {
		t.Fatalf("PUT AGENTS.md back = %d %v", r.Status, r.Body)
	}
	CheckWorkspaceFile(t, dir, initial)
	t.Logf("live workspace files: 4 round trips and a rewrite in %s", time.Since(started).Round(time.Millisecond))
}

// diagnose asks for fresh diagnostics of a revision and wants every
// gateway check to have the given status.
func (w *RealWorld) Diagnose(agent, rev, want string) {
	t, e := w.T, w.E
	r := e.Call("POST", w.Path("/agents/"+agent+"/deployments/"+rev+"/diagnostics"), e.Admin, nil)
	if r.Status != 200 || r.Data()["revisionId"] != rev {
		t.Fatalf("diagnostics of %s = %d %v", rev, r.Status, r.Body)
	}
	checks, _ := r.Data()["checks"].([]any)
	gatewayChecks := 0
	for _, c := range checks {
		c := c.(map[string]any)
		if c["component"] != "gateway" {
			continue
		}
		gatewayChecks++
		if c["status"] != want {
			if w.Dump != nil {
				w.Dump(agent)
			}
			t.Fatalf("diagnostics of %s: %v, want every gateway check %s; all: %v", rev, c, want, checks)
		}
	}
	if gatewayChecks == 0 {
		t.Fatalf("diagnostics of %s have no gateway checks: %v", rev, checks)
	}
	t.Logf("diagnostics of %s: %d checks, gateway ones %s", rev, len(checks), want)
}

func CheckWorkspaceFile(t *testing.T, dir, want string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "workspace", "AGENTS.md"))
	if err != nil {
		t.Fatalf("workspace AGENTS.md: %v", err)
	}
	if string(b) != want {
		t.Fatalf("workspace AGENTS.md = %q, want %q", b, want)
	}
}

// checkNoSecret fails when any file under dir holds the Secret's value.
func CheckNoSecret(t *testing.T, dir, secret string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed by the gateway meanwhile
		}
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		files++
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("the Secret's value is in %s", path)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	t.Logf("no Secret value in the %d files under the Agent's directory", files)
}
