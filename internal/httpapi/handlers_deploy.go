package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/openclaw/occ/internal/app"
	"github.com/openclaw/occ/internal/httpapi/gen"
	"github.com/openclaw/occ/internal/httpapi/limit"
	"github.com/openclaw/occ/internal/occ"
)

func (h *handlers) DeployAgent(ctx context.Context, r gen.DeployAgentRequestObject) (gen.DeployAgentResponseObject, error) {
	v, err := h.app.Deploy(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId)
	if err != nil {
		return nil, err
	}
	return gen.DeployAgent202JSONResponse{Data: toRevision(v), Meta: meta(ctx)}, nil
}

func (h *handlers) StopAgent(ctx context.Context, r gen.StopAgentRequestObject) (gen.StopAgentResponseObject, error) {
	g, err := h.app.Stop(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId)
	if err != nil {
		return nil, err
	}
	return gen.StopAgent202JSONResponse{Data: toAgent(g), Meta: meta(ctx)}, nil
}

func (h *handlers) DeleteAgent(ctx context.Context, r gen.DeleteAgentRequestObject) (gen.DeleteAgentResponseObject, error) {
	g, err := h.app.DeleteAgent(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId)
	if err != nil {
		return nil, err
	}
	return gen.DeleteAgent202JSONResponse{Data: toAgent(g), Meta: meta(ctx)}, nil
}

// deploymentBody is the wire form of a deployment status: error, progress,
// lastAttempt and nextAttemptAt are explicit nulls when absent.
type deploymentBody struct {
	DeploymentID string                  `json:"deploymentId"`
	NamespaceID  string                  `json:"namespaceId"`
	AgentID      string                  `json:"agentId"`
	Status       string                  `json:"status"`
	Error        *deploymentError        `json:"error"`
	Warnings     []occ.DeploymentWarning `json:"warnings"`
	Progress     *deploymentProgress     `json:"progress"`
}

type deploymentError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Data    map[string]any `json:"data,omitempty"`
}

type deploymentProgress struct {
	LastAttempt   *deploymentAttempt `json:"lastAttempt"`
	NextAttemptAt *string            `json:"nextAttemptAt"`
}

type deploymentAttempt struct {
	At      string               `json:"at"`
	Code    string               `json:"code"`
	Message string               `json:"message"`
	Data    *app.InstallProgress `json:"data,omitempty"`
}

func toDeployment(d app.DeploymentStatus) deploymentBody {
	out := deploymentBody{DeploymentID: d.DeploymentID, NamespaceID: d.NamespaceID, AgentID: d.AgentID, Status: d.Status, Warnings: d.Warnings}
	if d.Error != nil {
		out.Error = &deploymentError{Code: d.Error.Code, Message: d.Error.Message, Data: d.Error.Data}
	}
	if p := d.Progress; p != nil {
		out.Progress = &deploymentProgress{}
		if p.LastAttempt != nil {
			out.Progress.LastAttempt = &deploymentAttempt{At: occ.FormatTime(p.LastAttempt.At), Code: p.LastAttempt.Code, Message: p.LastAttempt.Message,
				Data: p.LastAttempt.Install}
		}
		if p.NextAttemptAt != nil {
			t := occ.FormatTime(*p.NextAttemptAt)
			out.Progress.NextAttemptAt = &t
		}
	}
	return out
}

// deploymentResponse writes the status envelope.
type deploymentResponse struct {
	Data deploymentBody `json:"data"`
	Meta gen.Meta       `json:"meta"`
}

// VisitGetDeploymentResponse implements gen.GetDeploymentResponseObject.
func (d deploymentResponse) VisitGetDeploymentResponse(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	return json.NewEncoder(w).Encode(d)
}

func (h *handlers) GetDeployment(ctx context.Context, r gen.GetDeploymentRequestObject) (gen.GetDeploymentResponseObject, error) {
	d, err := h.app.GetDeployment(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return deploymentResponse{Data: toDeployment(d), Meta: meta(ctx)}, nil
}

// deploymentEvents streams a deployment's status as Server-Sent Events
// until it is terminal or the client goes away. It reads persisted state
// only, like GET …/deployments/:id, when a change is announced or the
// watch's slow timer fires, and ends with an `event: error` when the
// caller lost the permission or the deployment is gone. The stream
// outlives the server's write timeout and leaves the requests in flight:
// each write (an event, or a keep-alive comment every 15 s) must finish
// within writeTimeout instead, so a client that stops reading is cut off.
type deploymentEvents struct {
	ctx          context.Context
	first        app.DeploymentStatus
	watch        *app.DeploymentWatch
	writeTimeout time.Duration
}

// keepAliveEvery is how often an idle stream sends a comment, so proxies
// keep the connection open.
const keepAliveEvery = 15 * time.Second

// VisitStreamDeploymentResponse implements gen.StreamDeploymentResponseObject.
func (s deploymentEvents) VisitStreamDeploymentResponse(w http.ResponseWriter) error {
	defer s.watch.Close()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	limit.Streaming(s.ctx)
	rc := http.NewResponseController(w)
	// deadline bounds the next write; the server's own write deadline,
	// set when the request arrived, is replaced.
	deadline := func() {
		var d time.Time
		if s.writeTimeout > 0 {
			d = time.Now().Add(s.writeTimeout)
		}
		_ = rc.SetWriteDeadline(d)
	}
	deadline()
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	write := func(format string, args ...any) error {
		deadline()
		if _, err := fmt.Fprintf(w, format, args...); err != nil {
			return err
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	cur := toJSONBytes(toDeployment(s.first))
	if err := write("event: status\ndata: %s\n\n", cur); err != nil {
		return err
	}
	status := s.first.Status
	keepAlive := time.NewTicker(keepAliveEvery)
	defer keepAlive.Stop()
	for status != occ.DeploymentSucceeded && status != occ.DeploymentFailed {
		select {
		case <-s.ctx.Done():
			return nil
		case <-keepAlive.C:
			if err := write(": keep-alive\n\n"); err != nil {
				return nil
			}
			continue
		case <-s.watch.Changed():
		case <-s.watch.Tick():
		}
		next, err := s.watch.Read(s.ctx)
		if e := occ.AsError(err); e != nil && (e.Code == occ.CodeForbidden || e.Code == occ.CodeNotFound) {
			_ = write("event: error\ndata: %s\n\n", toJSONBytes(streamError{Code: string(e.Code), Message: e.Message}))
			return nil
		}
		if err != nil {
			return nil // the status stream ends; the client polls GET instead
		}
		if b := toJSONBytes(toDeployment(next)); !bytes.Equal(b, cur) {
			if err := write("event: status\ndata: %s\n\n", b); err != nil {
				return nil
			}
			cur, status = b, next.Status
		}
	}
	return nil
}

// streamError is the data of a stream's final `event: error`.
type streamError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func toJSONBytes(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func (h *handlers) StreamDeployment(ctx context.Context, r gen.StreamDeploymentRequestObject) (gen.StreamDeploymentResponseObject, error) {
	watch, first, err := h.app.WatchDeployment(ctx, callerFrom(ctx), r.NamespaceId, r.AgentId, r.RevisionId)
	if err != nil {
		return nil, err
	}
	return deploymentEvents{ctx: ctx, first: first, watch: watch, writeTimeout: h.opts.StreamWriteTimeout}, nil
}
