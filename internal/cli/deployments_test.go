package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

const eventsPath = agentsPath + "/" + agtID + "/deployments/" + revID + "/events"

// sse answers a deployment event stream with the statuses' events.
func sse(statuses ...map[string]any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, st := range statuses {
			b, _ := json.Marshal(st)
			_, _ = io.WriteString(w, "event: status\ndata: "+string(b)+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

var attempt = map[string]any{"progress": map[string]any{"lastAttempt": map[string]any{"at": timestamp, "code": "REVISION_INCOMPLETE",
	"message": "The gateway is not ready yet."}, "nextAttemptAt": "2026-01-01T00:00:05.000Z"}}

func TestAgentsDeployWait(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	// The worker's passes flip queued/running under one last attempt: one
	// line for each change of attempt, not for each flip.
	f.routes["GET "+eventsPath] = sse(deploymentJSON("queued", nil), deploymentJSON("running", nil), deploymentJSON("running", attempt),
		deploymentJSON("queued", attempt), deploymentJSON("running", attempt), deploymentJSON("queued", attempt),
		deploymentJSON("succeeded", map[string]any{"warnings": []any{map[string]any{"code": "PLUGIN_AUTH_REQUIRED", "pluginId": "calendar@curated"}}}))
	f.start()
	api, out, errOut := f.api("table")
	if err := runAgentsDeploy(context.Background(), &agentsDeployOptions{API: api, Agent: "bot", Wait: true}); err != nil {
		t.Fatal(err)
	}
	wantErr := "deployment " + revID + " admitted (revision 3 of agent " + agtID + ")\n" +
		"deployment " + revID + ": queued\n" +
		"deployment " + revID + ": running; REVISION_INCOMPLETE: The gateway is not ready yet.\n" +
		"deployment " + revID + ": succeeded; warning PLUGIN_AUTH_REQUIRED calendar@curated\n"
	if errOut.String() != wantErr {
		t.Fatalf("progress:\n%s\nwant:\n%s", errOut, wantErr)
	}
	if !strings.Contains(out.String(), "status:") || !strings.Contains(out.String(), "succeeded") ||
		!strings.Contains(out.String(), "warning:") {
		t.Fatalf("out:\n%s", out)
	}
}

// lastAttempt is a pending deployment's progress with this last attempt.
func lastAttempt(code, message string, data map[string]any) map[string]any {
	la := map[string]any{"at": timestamp, "code": code, "message": message}
	if data != nil {
		la["data"] = data
	}
	return map[string]any{"progress": map[string]any{"lastAttempt": la, "nextAttemptAt": "2026-01-01T00:00:05.000Z"}}
}

// TestAgentsDeployWaitShowsPhasesAndRetries: --wait prints each phase of a
// first deploy as it changes (the runtime install's phase and bytes, the
// gateway starting, the model probe), and a retry as progress that says
// when it retries, never as an error.
func TestAgentsDeployWaitShowsPhasesAndRetries(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	installing := func(phase string, bytes int) map[string]any {
		return lastAttempt("RUNTIME_INSTALLING", "The agent runtime is being installed.", map[string]any{"phase": phase, "bytes": bytes})
	}
	f.routes["GET "+eventsPath] = sse(deploymentJSON("queued", nil),
		deploymentJSON("queued", installing("fetching_node", 1_200_000)), deploymentJSON("running", installing("fetching_node", 1_200_000)),
		deploymentJSON("queued", installing("fetching_openclaw", 93_400_000)),
		deploymentJSON("queued", lastAttempt("DEPENDENCY_UNAVAILABLE", "A dependency was unavailable; the attempt will be retried.", nil)),
		deploymentJSON("queued", lastAttempt("AGENT_GATEWAY_STARTING", "The Agent's gateway is starting.", nil)),
		deploymentJSON("running", lastAttempt("MODEL_PROBE_RUNNING", "The gateway is trying the model credential.", nil)),
		deploymentJSON("succeeded", nil))
	f.start()
	r := execute(f.env(), "", "agents", "deploy", "bot", "--wait")
	d := "deployment " + revID + ": "
	want := d + "queued\n" +
		d + "queued; RUNTIME_INSTALLING (fetching_node, 1.2 MB): The agent runtime is being installed.\n" +
		d + "queued; RUNTIME_INSTALLING (fetching_openclaw, 93.4 MB): The agent runtime is being installed.\n" +
		d + "queued; will retry at 2026-01-01T00:00:05.000Z after DEPENDENCY_UNAVAILABLE: A dependency was unavailable; the attempt will be retried.\n" +
		d + "queued; AGENT_GATEWAY_STARTING: The Agent's gateway is starting.\n" +
		d + "running; MODEL_PROBE_RUNNING: The gateway is trying the model credential.\n" +
		d + "succeeded\n"
	if r.code != 0 || !strings.HasSuffix(r.err, want) || strings.Contains(r.err, "occ: ") || strings.Contains(r.err, "error") {
		t.Fatalf("deploy --wait = exit %d\nstderr:\n%s\nwant it to end with:\n%s", r.code, r.err, want)
	}
}

func TestAgentsDeployWaitFailed(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	f.routes["GET "+eventsPath] = sse(deploymentJSON("queued", nil), deploymentJSON("failed", map[string]any{
		"error": map[string]any{"code": "RUNTIME_AUTHENTICATION_FAILED", "message": "The model provider rejected the credential."}}))
	f.start()
	r := execute(f.env(), "", "agents", "deploy", "bot", "--wait")
	wantLast := "occ: RUNTIME_AUTHENTICATION_FAILED: The model provider rejected the credential. (deployment " + revID + ")\n"
	if r.code != ExitDeploymentFailed || !strings.HasSuffix(r.err, wantLast) ||
		!strings.Contains(r.err, ": failed; error RUNTIME_AUTHENTICATION_FAILED") || !strings.Contains(r.out, "RUNTIME_AUTHENTICATION_FAILED") {
		t.Fatalf("failed deploy = %+v", r)
	}
}

// TestAgentsDeployWaitPolls: with no event stream (here a 404), --wait
// polls the deployment.
func TestAgentsDeployWaitPolls(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	r := execute(f.env(), "", "agents", "deploy", agtID, "--wait", "-o", "json")
	var st map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &st) != nil || st["status"] != "succeeded" || st["deploymentId"] != revID {
		t.Fatalf("deploy = %+v", r)
	}
	if !contains(f.requests(), "GET "+agentsPath+"/"+agtID+"/deployments/"+revID) {
		t.Fatalf("requests = %v", f.requests())
	}
}

func TestAgentsDeployNoWait(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t).start()
	api, out, errOut := f.api("json")
	if err := runAgentsDeploy(context.Background(), &agentsDeployOptions{API: api, Agent: "bot"}); err != nil {
		t.Fatal(err)
	}
	var rev map[string]any
	if json.Unmarshal(out.Bytes(), &rev) != nil || rev["id"] != revID || rev["number"] != float64(3) || errOut.Len() != 0 {
		t.Fatalf("out %s err %s", out, errOut)
	}
	r := execute(f.env(), "", "agents", "deploy", "bot")
	if r.code != 0 || !strings.Contains(r.out, "deployment:") || !strings.Contains(r.out, revID) || !strings.Contains(r.out, "revision:") {
		t.Fatalf("deploy = %+v", r)
	}
}

func TestDeploymentsGet(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	f.routes["GET "+agentsPath+"/"+agtID+"/deployments/"+revID] = func(w http.ResponseWriter, r *http.Request) {
		writeData(w, 200, deploymentJSON("running", attempt))
	}
	f.start()
	api, out, _ := f.api("table")
	if err := runDeploymentsGet(context.Background(), &deploymentsGetOptions{API: api, Agent: "bot", Deployment: revID}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"status:", "running", "last attempt:", timestamp + " REVISION_INCOMPLETE: The gateway is not ready yet.", "next attempt:"} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("get lacks %q:\n%s", want, out)
		}
	}
	r := execute(f.env(), "", "deployments", "get", "bot", "rev_00000000-0000-4000-8000-00000000ffff")
	if r.code != ExitNotFound || r.err != "occ: NOT_FOUND: The resource does not exist. (request "+reqID+")\n" {
		t.Fatalf("missing = %+v", r)
	}
}

func TestDeploymentsDiagnose(t *testing.T) {
	t.Parallel()
	f := newFakeOCC(t)
	diag := agentsPath + "/" + agtID + "/deployments/" + revID + "/diagnostics"
	f.routes["POST "+diag] = func(w http.ResponseWriter, r *http.Request) {
		writeData(w, 200, map[string]any{"revisionId": revID, "observedAt": timestamp, "checks": []any{
			map[string]any{"component": "gateway", "check": "process", "status": "succeeded", "code": "OK", "message": "The check succeeded."},
			map[string]any{"component": "slack", "check": "authentication", "status": "failed", "code": "SLACK_AUTHENTICATION_FAILED",
				"message": "Slack rejected the configured tokens."}}})
	}
	f.routes["POST "+agentsPath+"/"+agtID+"/deployments/rev_00000000-0000-4000-8000-00000000ffff/diagnostics"] = func(w http.ResponseWriter, r *http.Request) {
		writeError(w, 503, "DEPENDENCY_UNAVAILABLE", "Diagnostics are unavailable: the compute driver gave no usable evidence for this revision.")
	}
	f.start()
	api, out, _ := f.api("table")
	if err := runDeploymentsDiagnose(context.Background(), &deploymentsDiagnoseOptions{API: api, Agent: "bot", Deployment: revID}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 4 || lines[0] != "revision "+revID+" observed at "+timestamp ||
		strings.Join(strings.Fields(lines[1]), " ") != "COMPONENT CHECK STATUS CODE MESSAGE" ||
		strings.Join(strings.Fields(lines[2]), " ") != "gateway process succeeded OK The check succeeded." ||
		strings.Join(strings.Fields(lines[3]), " ") != "slack authentication failed SLACK_AUTHENTICATION_FAILED Slack rejected the configured tokens." {
		t.Fatalf("diagnose table:\n%s", out)
	}
	if f.body("POST "+diag) != nil {
		t.Fatalf("diagnose sent a body: %v", f.body("POST "+diag))
	}

	r := execute(f.env(), "", "deployments", "diagnose", "bot", revID, "-o", "json")
	var d map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.out), &d) != nil || d["revisionId"] != revID || len(d["checks"].([]any)) != 2 {
		t.Fatalf("diagnose -o json = %+v", r)
	}
	r = execute(f.env(), "", "deployments", "diagnose", "bot", "rev_00000000-0000-4000-8000-00000000ffff")
	if r.code != 1 || r.err != "occ: DEPENDENCY_UNAVAILABLE: Diagnostics are unavailable: the compute driver gave no usable evidence for this revision. (request "+reqID+")\n" {
		t.Fatalf("unavailable = %+v", r)
	}
}
