package cli_test

import (
	"bytes"
	"encoding/base64"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/validate"
	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/server/servertest"
)

// basicAuth wraps a registry so that only user:pass may use it.
func basicAuth(h http.Handler, user, pass string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// TestCLIImageBuildPush: `occ runtime image build` builds the gateway image
// of the installed runtime, writes it, and pushes it to a registry (an
// in-process one that wants credentials, given through the docker config
// file the default keychain reads); the digest it prints is what the
// registry serves under the tag and by digest. Without credentials the
// push is refused.
func TestCLIImageBuildPush(t *testing.T) {
	rtDir := t.TempDir()
	servertest.InstallFakeRuntime(t, rtDir)
	reg := httptest.NewServer(basicAuth(registry.New(registry.Logger(log.New(io.Discard, "", 0))), "ci", "s3cret"))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	ref := host + "/occ/openclaw-gateway:test"

	// No credentials: refused by the registry, the error says so.
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	code, _, errOut := servertest.ImageBuild(t, "--runtime-dir", rtDir, "--push", ref)
	if code == 0 || !strings.Contains(errOut, "push "+ref) || !strings.Contains(errOut, "401 Unauthorized") {
		t.Fatalf("push without credentials: exit %d, %q", code, errOut)
	}

	// Credentials in the docker config file.
	cfgDir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte("ci:s3cret"))
	if err := os.WriteFile(filepath.Join(cfgDir, "config.json"), []byte(`{"auths":{"`+host+`":{"auth":"`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DOCKER_CONFIG", cfgDir)
	output := filepath.Join(t.TempDir(), "gw.tar")
	code, got, errOut := servertest.ImageBuild(t, "--runtime-dir", rtDir, "--push", ref, "--output", output)
	if code != 0 {
		t.Fatalf("image build: exit %d: %s", code, errOut)
	}
	digest := got["digest"]
	if !strings.HasPrefix(digest, "sha256:") || got["image"] != "openclaw-gateway:"+agentruntime.OpenClawVersion+"-node24.22.3" ||
		got["output"] != output || got["pushed"] != host+"/occ/openclaw-gateway@"+digest {
		t.Fatalf("output %q (stderr %s)", got, errOut)
	}
	if _, err := os.Stat(output); err != nil {
		t.Fatal(err)
	}
	kc := authn.NewMultiKeychain(authn.DefaultKeychain)
	for _, r := range []string{ref, got["pushed"]} {
		parsed, err := name.ParseReference(r)
		if err != nil {
			t.Fatal(err)
		}
		img, err := remote.Image(parsed, remote.WithAuthFromKeychain(kc))
		if err != nil {
			t.Fatalf("pull %s: %v", r, err)
		}
		if d, err := img.Digest(); err != nil || d.String() != digest {
			t.Fatalf("pulled %s: digest %s, %v; want %s", r, d, err, digest)
		}
		if err := validate.Image(img); err != nil {
			t.Fatalf("pulled %s: %v", r, err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cf.Config.User != "1000:1000" || cf.Config.Labels["dev.openclaw.occ.openclaw-version"] != agentruntime.OpenClawVersion {
			t.Fatalf("pulled config %+v", cf.Config)
		}
	}

	// A second build of the same runtime pushes the same digest.
	code, again, errOut := servertest.ImageBuild(t, "--runtime-dir", rtDir, "--push", ref)
	if code != 0 || again["digest"] != digest {
		t.Fatalf("second build: exit %d digest %s, want %s (%s)", code, again["digest"], digest, errOut)
	}
}

// TestCLIImageBuildOCC: a static occ (CGO_ENABLED=0 go build ./cmd/occ)
// builds its own image with --occ (from the running executable, outside the
// race detector) and pushes it; a dynamically linked binary is refused.
func TestCLIImageBuildOCC(t *testing.T) {
	bin := servertest.BuildStaticOCC(t)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	ref := strings.TrimPrefix(reg.URL, "http://") + "/occ/occ:test"
	output := filepath.Join(t.TempDir(), "occ-image")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, "runtime", "image", "build", "--occ", "--data-dir", t.TempDir(), "--push", ref, "--output", output)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("occ runtime image build --occ: %v\n%s", err, stderr.String())
	}
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			got[k] = v
		}
	}
	if !strings.HasPrefix(got["image"], "occ:") || got["output"] != output || !strings.HasPrefix(got["digest"], "sha256:") {
		t.Fatalf("--occ output %q (%s)", got, stderr.String())
	}
	parsed, err := name.ParseReference(got["pushed"])
	if err != nil {
		t.Fatal(err)
	}
	img, err := remote.Image(parsed)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := img.Digest(); d.String() != got["digest"] {
		t.Fatalf("pulled %s, printed %s", d, got["digest"])
	}
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers %d, %v", len(layers), err)
	}
	if size, _ := layers[0].Size(); size < 1<<20 {
		t.Fatalf("the occ layer is %d bytes: the binary is missing", size)
	}

	if code, _, errOut := servertest.ImageBuild(t, "--occ", "--occ-binary", "/bin/true", "--push", ref); code == 0 || !strings.Contains(errOut, "dynamically linked") {
		t.Fatalf("--occ with /bin/true: exit %d %s", code, errOut)
	}
}

// TestCLIImageBuildRefusals: nothing to do, no runtime installed,
// --occ-binary without --occ and an existing output are refused before
// anything is written.
func TestCLIImageBuildRefusals(t *testing.T) {
	t.Parallel()
	rtDir := t.TempDir()
	existing := filepath.Join(t.TempDir(), "x.tar")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--runtime-dir", rtDir}, "nothing to do"},
		{[]string{"--runtime-dir", rtDir, "--output", filepath.Join(t.TempDir(), "o.tar")}, "run occ runtime install first"},
		{[]string{"--occ-binary", "/bin/true", "--output", "x"}, "--occ-binary needs --occ"},
		{[]string{"--runtime-dir", rtDir, "--output", filepath.Join(t.TempDir(), "o"), "--name", "Not A Tag"}, `image name "Not A Tag"`},
		// --load reaches the engine before anything is built.
		{[]string{"--runtime-dir", rtDir, "--load", "unix:///nonexistent/docker.sock"}, "--load: the Docker engine at unix:///nonexistent/docker.sock does not answer"},
		{[]string{"--runtime-dir", rtDir, "--load", "ssh://root@host"}, `--load: "ssh://root@host" is not unix:///path or tcp://host:port`},
		{[]string{"--runtime-dir", rtDir, "--push", "not a reference"}, ""},
	} {
		if c.want == "" {
			servertest.InstallFakeRuntime(t, rtDir)
			c.want = `push reference "not a reference"`
		}
		code, _, errOut := servertest.ImageBuild(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%q: exit %d %q, want an error containing %q", c.args, code, errOut, c.want)
		}
	}
	code, _, errOut := servertest.ImageBuild(t, "--runtime-dir", rtDir, "--output", existing)
	if b, _ := os.ReadFile(existing); code == 0 || !strings.Contains(errOut, "already exists") || string(b) != "keep" {
		t.Errorf("existing output: exit %d %q, content %q", code, errOut, b)
	}
}
