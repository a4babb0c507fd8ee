package servertest

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sse is one open event stream.
type Sse struct {
	res *http.Response
	r   *bufio.Reader
}

// streamWait bounds how long a test reads one stream: an event that
// never comes ends it instead of hanging the test.
const streamWait = 60 * time.Second

// openStream opens …/deployments/{rev}/events with key and returns the
// response; the stream is closed when the test ends or after streamWait.
func (d *DeployWorld) OpenStream(t *testing.T, key, rev string) (*Sse, Resp) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", d.E.Base+d.Path("/agents/"+d.Agent+"/deployments/"+rev+"/events"), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := d.E.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	out := Resp{Status: res.StatusCode, Header: res.Header}
	if res.StatusCode != http.StatusOK {
		_ = json.NewDecoder(res.Body).Decode(&out.Body)
		return nil, out
	}
	return &Sse{res: res, r: bufio.NewReader(res.Body)}, out
}

// next returns the next event's type and data (keep-alive comments are
// skipped), or ok false at the end of the stream.
func (s *Sse) Next(t *testing.T) (event, data string, ok bool) {
	t.Helper()
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", false
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "" && event != "":
			return event, data, true
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
}

// close ends the stream from the client's side.
func (s *Sse) Close() { s.res.Body.Close() }
