package docker

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/openclaw/occ/internal/compute"
)

func itoa(n int) string { return strconv.Itoa(n) }

func secondsDuration(n int) time.Duration { return time.Duration(n) * time.Second }

// The parts of the engine's objects occ reads and writes (Engine API
// 1.41+ field names).

type containerState struct {
	Status     string // created, running, restarting, paused, exited, dead, removing
	Running    bool
	Restarting bool
	OOMKilled  bool
	ExitCode   int
	Error      string
	StartedAt  string
}

type portBinding struct {
	HostIP   string `json:"HostIp"`
	HostPort string
}

type containerConfig struct {
	User         string              `json:",omitempty"`
	Env          []string            `json:",omitempty"`
	Entrypoint   []string            `json:",omitempty"`
	Cmd          []string            `json:",omitempty"`
	Image        string              `json:",omitempty"`
	Labels       map[string]string   `json:",omitempty"`
	ExposedPorts map[string]struct{} `json:",omitempty"`
	StopSignal   string              `json:",omitempty"`
	StopTimeout  *int                `json:",omitempty"`
}

type mount struct {
	Type          string // volume
	Source        string
	Target        string
	ReadOnly      bool `json:",omitempty"`
	VolumeOptions *struct {
		NoCopy bool
	} `json:",omitempty"`
}

type restartPolicy struct {
	Name              string
	MaximumRetryCount int `json:",omitempty"`
}

type hostConfig struct {
	NetworkMode    string                   `json:",omitempty"`
	PortBindings   map[string][]portBinding `json:",omitempty"`
	RestartPolicy  restartPolicy
	Mounts         []mount           `json:",omitempty"`
	Tmpfs          map[string]string `json:",omitempty"`
	ReadonlyRootfs bool
	CapDrop        []string `json:",omitempty"`
	CapAdd         []string `json:",omitempty"`
	SecurityOpt    []string `json:",omitempty"`
	Privileged     bool
	Init           *bool  `json:",omitempty"`
	IpcMode        string `json:",omitempty"`
	Memory         int64
	NanoCPUs       int64    `json:"NanoCpus"`
	PidsLimit      *int64   `json:",omitempty"`
	Ulimits        []ulimit `json:",omitempty"`
	Binds          []string `json:",omitempty"`
	Devices        []any    `json:",omitempty"`
}

type ulimit struct {
	Name       string
	Soft, Hard int64
}

type endpointSettings struct {
	Aliases []string `json:",omitempty"`
}

type networkingConfig struct {
	EndpointsConfig map[string]endpointSettings
}

// containerCreate is the body of POST /containers/create.
type containerCreate struct {
	containerConfig
	HostConfig       hostConfig
	NetworkingConfig networkingConfig
}

// containerJSON is GET /containers/{id}/json.
type containerJSON struct {
	ID              string `json:"Id"`
	Name            string
	Created         string
	RestartCount    int
	State           containerState
	Config          containerConfig
	HostConfig      hostConfig
	Mounts          []struct{ Type, Name, Source, Destination string }
	NetworkSettings struct {
		Ports    map[string][]portBinding
		Networks map[string]struct{ NetworkID, IPAddress string }
	}
}

// containerSummary is an item of GET /containers/json.
type containerSummary struct {
	ID     string `json:"Id"`
	Names  []string
	Labels map[string]string
	State  string
}

type network struct {
	ID         string `json:"Id"`
	Name       string
	Driver     string
	Internal   bool
	Labels     map[string]string
	Options    map[string]string
	Containers map[string]struct{ Name string }
}

type volume struct {
	Name       string
	Driver     string
	Mountpoint string
	Labels     map[string]string
}

// engine is the driver's calls of the Engine API.
type engine struct{ *api }

func (e engine) inspectContainer(ctx context.Context, name string) (containerJSON, error) {
	var c containerJSON
	err := e.do(ctx, request{op: "inspect container " + name, method: http.MethodGet, path: "/containers/" + name + "/json", out: &c})
	return c, err
}

func (e engine) listContainers(ctx context.Context, labels map[string]string) ([]containerSummary, error) {
	var l []containerSummary
	q := filters(labels)
	q.Set("all", "1")
	err := e.do(ctx, request{op: "list containers", method: http.MethodGet, path: "/containers/json", query: q, out: &l})
	return l, err
}

func (e engine) createContainer(ctx context.Context, name string, body containerCreate) (string, error) {
	var out struct {
		ID string `json:"Id"`
	}
	err := e.do(ctx, request{op: "create container " + name, method: http.MethodPost, path: "/containers/create",
		query: url.Values{"name": {name}}, body: body, out: &out})
	return out.ID, err
}

// putArchive extracts a tar stream into the container at path.
func (e engine) putArchive(ctx context.Context, id, path string, tar io.Reader) error {
	return e.do(ctx, request{op: "copy into container " + id, method: http.MethodPut, path: "/containers/" + id + "/archive",
		query: url.Values{"path": {path}}, raw: tar, contentType: "application/x-tar"})
}

// getArchive writes a tar stream of path in the container to w.
func (e engine) getArchive(ctx context.Context, id, path string, w io.Writer) error {
	return e.do(ctx, request{op: "copy from container " + id, method: http.MethodGet, path: "/containers/" + id + "/archive",
		query: url.Values{"path": {path}}, rawOut: w})
}

func (e engine) startContainer(ctx context.Context, id string) error {
	return e.do(ctx, request{op: "start container " + id, method: http.MethodPost, path: "/containers/" + id + "/start"})
}

// removeContainer stops (SIGTERM, then SIGKILL after the container's stop
// timeout) and removes a container; one already gone is fine.
func (e engine) removeContainer(ctx context.Context, id string, stopSeconds int) error {
	err := e.do(ctx, request{op: "stop container " + id, method: http.MethodPost, path: "/containers/" + id + "/stop",
		query: url.Values{"t": {itoa(stopSeconds)}}, timeout: e.timeout + secondsDuration(stopSeconds)})
	if err != nil && !isNotFound(err) {
		return err
	}
	err = e.do(ctx, request{op: "remove container " + id, method: http.MethodDelete, path: "/containers/" + id,
		query: url.Values{"force": {"1"}, "v": {"0"}}})
	switch {
	case isConflict(err): // 409: removal already in progress (an earlier request that timed out)
		return e.awaitRemoved(ctx, id)
	case err != nil && !isNotFound(err):
		return err
	}
	return nil
}

// awaitRemoved waits, for at most the API's bound, until the engine has
// finished removing a container (on a storage driver that copies the
// image, vfs, that takes seconds); still there, the engine is busy: unavailable
// for now, so the caller is retried without spending an attempt.
func (e engine) awaitRemoved(ctx context.Context, id string) error {
	deadline := time.Now().Add(e.timeout)
	for {
		_, err := e.inspectContainer(ctx, id)
		switch {
		case isNotFound(err):
			return nil
		case err != nil:
			return err
		case time.Now().After(deadline):
			return compute.Unavailable(fmt.Errorf("remove container %s: the engine is still removing it", id))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (e engine) inspectNetwork(ctx context.Context, name string) (network, error) {
	var n network
	err := e.do(ctx, request{op: "inspect network " + name, method: http.MethodGet, path: "/networks/" + name, out: &n})
	return n, err
}

func (e engine) createNetwork(ctx context.Context, n network) error {
	body := map[string]any{"Name": n.Name, "Driver": n.Driver, "Labels": n.Labels, "Options": n.Options, "CheckDuplicate": true, "Internal": n.Internal}
	return e.do(ctx, request{op: "create network " + n.Name, method: http.MethodPost, path: "/networks/create", body: body})
}

func (e engine) removeNetwork(ctx context.Context, id string) error {
	return e.do(ctx, request{op: "remove network " + id, method: http.MethodDelete, path: "/networks/" + id})
}

func (e engine) inspectVolume(ctx context.Context, name string) (volume, error) {
	var v volume
	err := e.do(ctx, request{op: "inspect volume " + name, method: http.MethodGet, path: "/volumes/" + name, out: &v})
	return v, err
}

func (e engine) createVolume(ctx context.Context, name string, labels map[string]string) (volume, error) {
	var v volume
	err := e.do(ctx, request{op: "create volume " + name, method: http.MethodPost, path: "/volumes/create",
		body: map[string]any{"Name": name, "Driver": "local", "Labels": labels}, out: &v})
	return v, err
}

func (e engine) listVolumes(ctx context.Context, labels map[string]string) ([]volume, error) {
	var out struct{ Volumes []volume }
	err := e.do(ctx, request{op: "list volumes", method: http.MethodGet, path: "/volumes", query: filters(labels), out: &out})
	return out.Volumes, err
}

func (e engine) removeVolume(ctx context.Context, name string) error {
	err := e.do(ctx, request{op: "remove volume " + name, method: http.MethodDelete, path: "/volumes/" + name})
	if isNotFound(err) {
		return nil
	}
	return err
}

type imageJSON struct {
	ID     string `json:"Id"`
	Config struct {
		Entrypoint []string
		User       string
		Labels     map[string]string
	}
}

func (e engine) inspectImage(ctx context.Context, ref string) (imageJSON, error) {
	var i imageJSON
	err := e.do(ctx, request{op: "inspect image " + ref, method: http.MethodGet, path: "/images/" + ref + "/json", out: &i})
	return i, err
}

// containerLogs writes the container's last tail lines of output (stdout
// and stderr, in the engine's multiplexed stream format) to w.
func (e engine) containerLogs(ctx context.Context, id string, tail int, w io.Writer) error {
	return e.do(ctx, request{op: "read container logs " + id, method: http.MethodGet, path: "/containers/" + id + "/logs",
		query: url.Values{"stdout": {"1"}, "stderr": {"1"}, "tail": {itoa(tail)}}, rawOut: w})
}
