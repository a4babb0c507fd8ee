package docker_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/docker/dockertest"
)

// One dockerd for the package's tests (started at the first test that
// needs it, stopped after the last).
var engine struct {
	once sync.Once
	d    *dockertest.Daemon
	err  error
}

func daemon(t *testing.T) *dockertest.Daemon {
	t.Helper()
	engine.once.Do(func() { engine.d, engine.err = dockertest.New() })
	if engine.err != nil {
		t.Fatal(engine.err)
	}
	return engine.d
}

func TestMain(m *testing.M) {
	code := m.Run()
	if engine.d != nil {
		engine.d.Stop()
	}
	os.Exit(code)
}

// open returns a driver of the test daemon with the test gateway image,
// after its preflight; edit changes the options first.
func open(t *testing.T, edit ...func(*docker.Options)) *docker.Driver {
	t.Helper()
	return openOn(t, daemon(t), edit...)
}

// openOn is open on another engine.
func openOn(t *testing.T, dd *dockertest.Daemon, edit ...func(*docker.Options)) *docker.Driver {
	t.Helper()
	o := docker.Options{Host: dd.Host(), GatewayImage: dd.GatewayImage(t), GatewayPort: 8080,
		MemoryBytes: 512 << 20, NanoCPUs: 1e9, RequestTimeout: 30 * time.Second}
	for _, e := range edit {
		e(&o)
	}
	d, err := docker.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := d.Preflight(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}
