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
		"deployment " + revID + ": running; last attempt REVISION_INCOMPLETE: The gateway is not ready yet.; next attempt at 2026-01-01T00:00:05.000Z\n" +
		"deployment " + revID + ": succeeded; warning PLUGIN_AUTH_REQUIRED calendar@curated\n"
	if errOut.String() != wantErr {
		t.Fatalf("progress:\n%s\nwant:\n%s", errOut, wantErr)
	}
	if !strings.Contains(out.String(), "status:") || !strings.Contains(out.String(), "succeeded") ||
		!strings.Contains(out.String(), "warning:") {
		t.Fatalf("out:\n%s", out)
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
	for _, want := range []string{"status:", "running", "last attempt:", "REVISION_INCOMPLETE: The gateway is not ready yet.", "next attempt:"} {
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
