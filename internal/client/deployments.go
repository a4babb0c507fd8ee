package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/openclaw/occ/internal/client/gen"
)

// GetDeployment returns a deployment's persisted status.
func (c *Client) GetDeployment(ctx context.Context, ns, agent, rev string) (*DeploymentStatus, error) {
	r, err := c.api.GetDeploymentWithResponse(ctx, ns, agent, rev)
	if err != nil {
		return nil, requestError("get deployment", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// DiagnoseDeployment asks for fresh checks of a deployment's revision
// (POST …/deployments/{rev}/diagnostics); nothing on the server changes.
func (c *Client) DiagnoseDeployment(ctx context.Context, ns, agent, rev string) (*DeploymentDiagnostics, error) {
	r, err := c.api.DiagnoseDeploymentWithResponse(ctx, ns, agent, rev)
	if err != nil {
		return nil, requestError("diagnose deployment", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// GetRuntimeLogs reads the last tailLines lines (0: the server's default)
// of a revision's gateway output, with secret values redacted.
func (c *Client) GetRuntimeLogs(ctx context.Context, ns, agent, rev string, tailLines int) (*RuntimeLogs, error) {
	params := &gen.GetRuntimeLogsParams{}
	if tailLines != 0 {
		params.TailLines = &tailLines
	}
	r, err := c.api.GetRuntimeLogsWithResponse(ctx, ns, agent, rev, params)
	if err != nil {
		return nil, requestError("read runtime logs", err)
	}
	if r.JSON200 == nil {
		return nil, unexpected(r.HTTPResponse, r.Body)
	}
	return &r.JSON200.Data, nil
}

// Terminal reports whether a deployment status is final (succeeded or
// failed); a terminal result is never rewritten.
func Terminal(st *DeploymentStatus) bool {
	return st != nil && (st.Status == DeploymentSucceeded || st.Status == DeploymentFailed)
}

// WaitDeployment follows a deployment until it is terminal and returns its
// final status. It reads the server's event stream
// (GET …/deployments/{rev}/events) and, when the stream cannot be opened or
// breaks before a terminal status, polls GET …/deployments/{rev} instead.
// A failed deployment returns its status and a *DeploymentError.
func (c *Client) WaitDeployment(ctx context.Context, ns, agent, rev string) (*DeploymentStatus, error) {
	return c.WatchDeployment(ctx, ns, agent, rev, nil)
}

// WatchDeployment is WaitDeployment calling fn (when not nil) with every
// distinct status it sees, in order, the terminal one last.
func (c *Client) WatchDeployment(ctx context.Context, ns, agent, rev string, fn func(*DeploymentStatus)) (*DeploymentStatus, error) {
	w := &watcher{fn: fn}
	st, err := c.streamDeployment(ctx, ns, agent, rev, w.see)
	if err == nil && Terminal(st) {
		return st, outcome(st)
	}
	if ctx.Err() != nil {
		return st, fmt.Errorf("wait for deployment %s: %w", rev, ctx.Err())
	}
	// The stream could not be opened or ended early: poll.
	return c.pollDeployment(ctx, ns, agent, rev, w)
}

// watcher reports each distinct status once.
type watcher struct {
	fn   func(*DeploymentStatus)
	last []byte
}

// see reports st unless it equals the last status reported.
func (w *watcher) see(st *DeploymentStatus) {
	b, _ := json.Marshal(st)
	if bytes.Equal(b, w.last) {
		return
	}
	w.last = b
	if w.fn != nil {
		w.fn(st)
	}
}

// outcome is nil for a succeeded deployment and a *DeploymentError for a
// failed one.
func outcome(st *DeploymentStatus) error {
	if st.Status != DeploymentFailed {
		return nil
	}
	e := &DeploymentError{DeploymentID: st.DeploymentId, Code: "DEPLOYMENT_FAILED", Message: "The deployment failed."}
	if er, err := st.Error.Get(); err == nil {
		e.Code, e.Message = er.Code, er.Message
	}
	return e
}

// maxPollFailures is how many consecutive transient failures (network
// errors, 429 and 5xx answers) polling tolerates.
const maxPollFailures = 5

// pollDeployment polls GET …/deployments/{rev} until terminal.
func (c *Client) pollDeployment(ctx context.Context, ns, agent, rev string, w *watcher) (*DeploymentStatus, error) {
	failures := 0
	for {
		st, err := c.GetDeployment(ctx, ns, agent, rev)
		switch {
		case err == nil:
			failures = 0
			w.see(st)
			if Terminal(st) {
				return st, outcome(st)
			}
		case ctx.Err() != nil || !transient(err):
			return nil, fmt.Errorf("wait for deployment %s: %w", rev, err)
		default:
			if failures++; failures >= maxPollFailures {
				return nil, fmt.Errorf("wait for deployment %s: %w", rev, err)
			}
		}
		if err := sleep(ctx, c.poll); err != nil {
			return st, fmt.Errorf("wait for deployment %s: %w", rev, err)
		}
	}
}

// transient reports whether a request may succeed when repeated: a failure
// to reach the server, or a 429 or 5xx answer.
func transient(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return true
	}
	return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
}

// errStreamEnded is the stream ending before a terminal status.
var errStreamEnded = errors.New("the event stream ended before a terminal status")

// streamDeployment reads the deployment's Server-Sent Events, calling see
// with every status event, until a terminal status (returned) or the end
// of the stream (the last status and an error).
func (c *Client) streamDeployment(ctx context.Context, ns, agent, rev string, see func(*DeploymentStatus)) (*DeploymentStatus, error) {
	res, err := c.api.StreamDeployment(ctx, ns, agent, rev, func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", "text/event-stream")
		return nil
	})
	if err != nil {
		return nil, requestError("stream deployment", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		return nil, unexpected(res, body)
	}
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		return nil, fmt.Errorf("stream deployment: content type %q, not text/event-stream", res.Header.Get("Content-Type"))
	}
	var last *DeploymentStatus
	err = readEvents(res.Body, func(event string, data []byte) error {
		if event != "status" {
			return nil
		}
		var st DeploymentStatus
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("stream deployment: status event: %w", err)
		}
		last = &st
		see(&st)
		if Terminal(&st) {
			return errTerminal
		}
		return nil
	})
	switch {
	case errors.Is(err, errTerminal):
		return last, nil
	case err != nil:
		return last, err
	default:
		return last, errStreamEnded
	}
}

// errTerminal stops reading events after a terminal status.
var errTerminal = errors.New("terminal")

// readEvents parses a text/event-stream (the WHATWG Server-Sent Events
// format: "field: value" lines, events ended by a blank line, ":" comments)
// and calls fn with each event's type ("message" when unnamed) and data
// (data lines joined by "\n"). It returns fn's first error, the reader's,
// or nil at the end of the stream.
func readEvents(r io.Reader, fn func(event string, data []byte) error) error {
	br := bufio.NewReader(r)
	var (
		event   string
		data    bytes.Buffer
		hasData bool
	)
	for {
		line, err := br.ReadString('\n')
		if err != nil && err != io.EOF {
			return err
		}
		if err == io.EOF && line == "" {
			return nil // an unfinished event is dropped, as the format says
		}
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if line == "" {
			if hasData {
				name := event
				if name == "" {
					name = "message"
				}
				if ferr := fn(name, data.Bytes()); ferr != nil {
					return ferr
				}
			}
			event, hasData = "", false
			data.Reset()
		} else if !strings.HasPrefix(line, ":") {
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event = value
			case "data":
				if hasData {
					data.WriteByte('\n')
				}
				data.WriteString(value)
				hasData = true
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// DeploymentSummary is what a person reads of a deployment status,
// flattened; empty strings stand for absent values.
type DeploymentSummary struct {
	Status         string
	ErrorCode      string
	ErrorMessage   string
	AttemptAt      string
	AttemptCode    string
	AttemptMessage string
	// InstallPhase and InstallBytes are the runtime install's phase and
	// bytes on disk (RUNTIME_INSTALLING); "" and 0 otherwise.
	InstallPhase  string
	InstallBytes  int64
	NextAttemptAt string
	// Warnings are "CODE pluginId" pairs.
	Warnings []string
}

// Summarize flattens a deployment status.
func Summarize(st *DeploymentStatus) DeploymentSummary {
	s := DeploymentSummary{Status: string(st.Status)}
	if er, err := st.Error.Get(); err == nil {
		s.ErrorCode, s.ErrorMessage = er.Code, er.Message
	}
	if p, err := st.Progress.Get(); err == nil {
		if la, err := p.LastAttempt.Get(); err == nil {
			s.AttemptAt, s.AttemptCode, s.AttemptMessage = la.At, la.Code, la.Message
			if d := la.Data; d != nil {
				s.InstallPhase, s.InstallBytes = string(d.Phase), d.Bytes
			}
		}
		s.NextAttemptAt = p.NextAttemptAt.GetOrEmpty()
	}
	for _, w := range st.Warnings {
		s.Warnings = append(s.Warnings, string(w.Code)+" "+w.PluginId)
	}
	return s
}
