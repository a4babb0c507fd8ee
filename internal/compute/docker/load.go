package docker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// LoadTimeout bounds an image load: the archive of the gateway image is
// a few hundred MB, which the engine unpacks before it answers.
const LoadTimeout = 30 * time.Minute

// ImageLoader loads image archives into one engine.
type ImageLoader struct {
	a *api
	// Engine is what the engine said of itself.
	Engine Engine
}

// NewImageLoader reaches the engine at host (unix:///path or
// tcp://host:port) and checks that it answers and speaks an API version
// occ knows, before anything is built. Errors name setting, where host
// comes from.
func NewImageLoader(ctx context.Context, setting, host string) (*ImageLoader, error) {
	a, err := newAPI(host, LoadTimeout)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not unix:///path or tcp://host:port", setting, host)
	}
	e, err := a.hello(ctx, setting, host)
	if err != nil {
		a.http.CloseIdleConnections()
		return nil, err
	}
	return &ImageLoader{a: a, Engine: e}, nil
}

// Close releases the loader's connections.
func (l *ImageLoader) Close() { l.a.http.CloseIdleConnections() }

// Load sends an image archive in docker load's format (a tar with
// manifest.json, as `occ runtime image build --output FILE.tar` writes it)
// through POST /images/load and returns the references the engine says
// it loaded ("openclaw-gateway:2026.9.6-node24", or "sha256:…" for an
// image without a tag).
func (l *ImageLoader) Load(ctx context.Context, archive io.Reader) ([]string, error) {
	// The answer is a few short JSON lines, read whole.
	var answer bytes.Buffer
	if err := l.a.do(ctx, request{op: "load image", method: http.MethodPost, path: "/images/load",
		raw: archive, contentType: "application/x-tar", rawOut: &answer}); err != nil {
		return nil, err
	}
	refs, err := loadAnswer(&answer)
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, errors.New("load image: the engine answered without naming a loaded image")
	}
	return refs, nil
}

// loadAnswer reads the engine's JSON stream of an image load: lines
// {"stream":"Loaded image: name:tag\n"} (Docker; Podman writes "Loaded
// image(s): a,b" or "Loaded image: …") and {"error":"…"} when the load
// failed midway.
func loadAnswer(r io.Reader) ([]string, error) {
	var refs []string
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m struct {
			Stream string `json:"stream"`
			Error  string `json:"error"`
		}
		if err := dec.Decode(&m); err == io.EOF {
			return refs, nil
		} else if err != nil {
			return refs, fmt.Errorf("load image: read the answer: %w", err)
		}
		if m.Error != "" {
			return refs, fmt.Errorf("load image: the engine failed: %s", m.Error)
		}
		for _, line := range strings.Split(m.Stream, "\n") {
			for _, prefix := range []string{"Loaded image ID: ", "Loaded image(s): ", "Loaded image: "} {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), prefix); ok {
					for _, ref := range strings.Split(rest, ",") {
						if ref = strings.TrimSpace(ref); ref != "" {
							refs = append(refs, ref)
						}
					}
					break
				}
			}
		}
	}
}
