package docker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// execResult is what a command run in a container printed (stdout and
// stderr, the last bytes) and its exit code.
type execResult struct {
	Out      string
	ExitCode int
}

// exec runs cmd in the running container id and returns its output and
// exit code. stdin, when not empty, is written to the command's standard
// input, which is then closed: a secret given this way is in no object the
// engine keeps (unlike an environment or a command line). ctx bounds the
// whole run; when it ends first the command keeps running in the container
// (the Engine API cannot stop an exec) and the caller removes the
// container.
//
// The start is the engine's hijacked stream (POST /exec/{id}/start with
// "Upgrade: tcp"), on a connection of its own: the only way to write a
// command's stdin through the Engine API.
func (e engine) exec(ctx context.Context, id string, cmd []string, stdin string) (execResult, error) {
	var created struct {
		ID string `json:"Id"`
	}
	err := e.do(ctx, request{op: "create exec in " + id, method: http.MethodPost, path: "/containers/" + id + "/exec",
		body: map[string]any{"AttachStdin": stdin != "", "AttachStdout": true, "AttachStderr": true, "Tty": false, "Cmd": cmd}, out: &created})
	if err != nil {
		return execResult{}, err
	}
	conn, err := e.dial(ctx)
	if err != nil {
		return execResult{}, fmt.Errorf("start exec in %s: %w", id, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	path := "/exec/" + created.ID + "/start"
	if e.version != "" {
		path = "/v" + e.version + path
	}
	body := `{"Detach":false,"Tty":false}`
	if _, err := fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: docker\r\nContent-Type: application/json\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Length: %d\r\n\r\n%s",
		path, len(body), body); err != nil {
		return execResult{}, e.execErr(ctx, id, err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return execResult{}, e.execErr(ctx, id, err)
	}
	var stream io.Reader = br
	switch resp.StatusCode {
	case http.StatusSwitchingProtocols:
	case http.StatusOK: // an engine that answers without upgrading
		stream = resp.Body
	default:
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return execResult{}, &APIError{Op: "start exec in " + id, Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
	}
	if stdin != "" {
		if _, err := io.WriteString(conn, stdin); err != nil {
			return execResult{}, e.execErr(ctx, id, err)
		}
		if cw, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
	}
	var out tailDemux
	if _, err := io.Copy(&out, stream); err != nil {
		return execResult{}, e.execErr(ctx, id, err)
	}
	res := execResult{Out: string(out.payload.Bytes())}
	// The stream ends when the command does; the engine may record its
	// exit a moment later.
	for i := 0; ; i++ {
		var st struct {
			Running  bool
			ExitCode int
		}
		if err := e.do(ctx, request{op: "inspect exec in " + id, method: http.MethodGet, path: "/exec/" + created.ID + "/json", out: &st}); err != nil {
			return res, err
		}
		if !st.Running || i == 50 {
			res.ExitCode = st.ExitCode
			if st.Running {
				res.ExitCode = -1
			}
			return res, nil
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// execErr is ctx's error when ctx ended (the caller tells a timeout from
// an engine failure by it), else err named.
func (e engine) execErr(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("exec in %s: %w", id, err)
}

// wait waits (at most timeout) until the container exits and returns its
// exit code.
func (e engine) wait(ctx context.Context, id string, timeout time.Duration) (int, error) {
	var out struct{ StatusCode int }
	err := e.do(ctx, request{op: "wait for container " + id, method: http.MethodPost, path: "/containers/" + id + "/wait",
		out: &out, timeout: timeout})
	return out.StatusCode, err
}
