// Package dockertest starts a Docker engine of its own for tests: Debian's
// dockerd (installed with apt-get when missing and running as root) on a
// private socket, data root and exec root under a new directory of /tmp,
// with the overlay storage driver where the kernel allows it (vfs where it
// does not) and neither iptables nor the default bridge (what works on a
// test machine without kernel modules or a systemd); user
// defined bridge networks and ports published on 127.0.0.1 (the userland
// proxy) work. Nothing here touches a Docker daemon the machine may already
// run. It also builds the test gateway image (GatewayImage): the fake
// gateway as the entry point, the fake Codex CLI as codex, the host's node
// for the driver's wrappers.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/compute/hosttest"
	"github.com/openclaw/occ/internal/gateway/gatewaytest"
)

// Daemon is a running dockerd (or Podman's Docker-compatible service) of
// a test.
type Daemon struct {
	dir    string
	podman bool
	cmd    *exec.Cmd
	exited chan struct{}
	client *http.Client

	imageOnce sync.Once
	image     string
	imageErr  error
}

// New starts a dockerd and waits until it answers (60 s at most).
func New() (*Daemon, error) {
	bin, err := install("dockerd", "docker.io")
	if err != nil {
		return nil, err
	}
	return start(false, func(dir string) []string {
		return []string{bin, "--host", "unix://" + filepath.Join(dir, "docker.sock"), "--data-root", filepath.Join(dir, "data"),
			"--exec-root", filepath.Join(dir, "x"), "--pidfile", filepath.Join(dir, "dockerd.pid"), "--storage-driver", storageDriver(dir, false),
			"--iptables=false", "--ip6tables=false", "--bridge=none", "--log-level", "warn",
			"--default-address-pool", "base=" + addressPool() + ",size=24"}
	})
}

// addressPool is a /16 of 10.64.0.0/10, chosen at random, from which a
// daemon gives its networks their /24 subnets. The engines' default pools
// (172.17-31.0.0/16 and 192.168.0.0/16 in /20s) hold about 30 networks
// for the whole machine, and daemons running side by side (the driver's
// tests, the server's lanes) skip what another's bridges already cover:
// they ran out. A pool of its own gives each daemon 256.
func addressPool() string {
	return fmt.Sprintf("10.%d.0.0/16", 64+rand.IntN(64))
}

// NewPodman starts Debian's Podman (installed with apt-get when missing)
// as a Docker-compatible service (`podman system service`) with its
// storage, run root and network configuration under a new directory, and
// waits until it answers.
func NewPodman() (*Daemon, error) {
	bin, err := install("podman", "podman")
	if err != nil {
		return nil, err
	}
	return start(true, func(dir string) []string {
		// Its own address pool, as for dockerd (addressPool), in a
		// containers.conf of its own (CONTAINERS_CONF, set in start).
		conf := fmt.Sprintf("[network]\ndefault_subnet_pools = [{\"base\" = %q, \"size\" = 24}]\n", addressPool())
		_ = os.WriteFile(filepath.Join(dir, "containers.conf"), []byte(conf), 0o644)
		return []string{bin, "--root", filepath.Join(dir, "data"), "--runroot", filepath.Join(dir, "x"), "--storage-driver", storageDriver(dir, true),
			"--network-config-dir", filepath.Join(dir, "cni"), "--tmpdir", filepath.Join(dir, "tmp"), "--log-level", "warn",
			"system", "service", "--time", "0", "unix://" + filepath.Join(dir, "docker.sock")}
	})
}

func start(podman bool, argv func(dir string) []string) (*Daemon, error) {
	// Short: unix socket paths are limited to 108 bytes.
	dir, err := os.MkdirTemp("/tmp", "occdk")
	if err != nil {
		return nil, err
	}
	d := &Daemon{dir: dir, podman: podman, exited: make(chan struct{})}
	log, err := os.Create(filepath.Join(dir, "daemon.log"))
	if err != nil {
		return nil, err
	}
	defer log.Close()
	args := argv(dir)
	d.cmd = exec.Command(args[0], args[1:]...)
	if podman {
		d.cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(dir, "containers.conf"))
	}
	d.cmd.Stdout, d.cmd.Stderr = log, log
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("dockertest: start %s: %w", d.name(), err)
	}
	go func() { _ = d.cmd.Wait(); close(d.exited) }()
	fmt.Fprintf(os.Stderr, "dockertest: started %s (pid %d, storage driver %s) on %s\n", d.name(), d.cmd.Process.Pid, flagValue(args, "--storage-driver"), d.Host())
	sock := d.socket()
	d.client = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "unix", sock)
	}}}
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, _, err := d.Do(http.MethodGet, "/_ping", nil)
		if err == nil && status == http.StatusOK {
			return d, nil
		}
		select {
		case <-d.exited:
			b, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
			d.Stop()
			return nil, fmt.Errorf("dockertest: %s exited at start:\n%s", d.name(), b)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(dir, "daemon.log"))
			d.Stop()
			return nil, fmt.Errorf("dockertest: %s does not answer after 60 s:\n%s", d.name(), b)
		}
	}
}

// flagValue returns the argument after flag in args.
func flagValue(args []string, flag string) string {
	for i, a := range args[:len(args)-1] {
		if a == flag {
			return args[i+1]
		}
	}
	return ""
}

// Start starts a dockerd stopped when the test ends.
func Start(t testing.TB) *Daemon {
	t.Helper()
	d, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d
}

// StartPodman starts Podman's service, stopped when the test ends.
func StartPodman(t testing.TB) *Daemon {
	t.Helper()
	d, err := NewPodman()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Stop)
	return d
}

func (d *Daemon) name() string {
	if d.podman {
		return "podman system service"
	}
	return "dockerd"
}

// install finds a program, installing its Debian package when it is
// missing and this process is root.
func install(program, pkg string) (string, error) {
	p, err := hosttest.DebianProgram(program, pkg)
	if err != nil {
		return "", fmt.Errorf("dockertest: %w", err)
	}
	return p, nil
}

func (d *Daemon) socket() string { return filepath.Join(d.dir, "docker.sock") }

// Host is the engine's address, for the driver's Options.Host.
func (d *Daemon) Host() string { return "unix://" + d.socket() }

// VolumeDir is where the engine keeps a named volume's files.
func (d *Daemon) VolumeDir(name string) string {
	return filepath.Join(d.dir, "data", "volumes", name, "_data")
}

// Podman reports whether the engine is Podman's service.
func (d *Daemon) Podman() bool { return d.podman }

// Stop removes every container left (Podman's run on after its service
// ends), stops the daemon (SIGTERM, SIGKILL after 30 s), then the
// containerd dockerd started, both by PID, and removes the directory.
func (d *Daemon) Stop() {
	var left []struct {
		ID string `json:"Id"`
	}
	if status, b, err := d.Do(http.MethodGet, "/containers/json?all=1", nil); err == nil && status == http.StatusOK {
		_ = json.Unmarshal(b, &left)
	}
	for _, c := range left {
		_, _, _ = d.Do(http.MethodDelete, "/containers/"+c.ID+"?force=1", nil)
	}
	// The networks too: a daemon leaves their bridges on the host when it
	// stops, and with them their subnets taken for every later daemon.
	var networks []struct{ ID, Name string }
	if status, b, err := d.Do(http.MethodGet, "/networks", nil); err == nil && status == http.StatusOK {
		_ = json.Unmarshal(b, &networks)
	}
	for _, n := range networks {
		if n.Name != "bridge" && n.Name != "host" && n.Name != "none" && n.Name != "podman" {
			_, _, _ = d.Do(http.MethodDelete, "/networks/"+n.ID, nil)
		}
	}
	containerd := readPID(filepath.Join(d.dir, "x", "containerd", "containerd.pid"))
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.exited
	}
	if containerd > 0 && syscall.Kill(containerd, 0) == nil {
		_ = syscall.Kill(containerd, syscall.SIGTERM)
		for i := 0; i < 100 && syscall.Kill(containerd, 0) == nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
		_ = syscall.Kill(containerd, syscall.SIGKILL)
	}
	fmt.Fprintf(os.Stderr, "dockertest: stopped %s (pid %d)\n", d.name(), d.cmd.Process.Pid)
	// What the engine left mounted (volumes, the exec root's namespaces)
	// is unmounted before the directory goes.
	_ = exec.Command("umount", "-R", "-l", filepath.Join(d.dir, "x")).Run()
	_ = exec.Command("umount", "-R", "-l", filepath.Join(d.dir, "data")).Run()
	if err := os.RemoveAll(d.dir); err != nil {
		fmt.Fprintf(os.Stderr, "dockertest: removing %s: %v\n", d.dir, err)
	}
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	var pid int
	_, _ = fmt.Sscan(strings.TrimSpace(string(b)), &pid)
	return pid
}

// Do sends one request to the engine (unversioned path, JSON body) and
// returns its status and body.
func (d *Daemon) Do(method, path string, body any) (int, []byte, error) {
	var r io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case io.Reader:
		r, ct = b, "application/x-tar"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		r, ct = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequest(method, "http://docker"+path, r)
	if err != nil {
		return 0, nil, err
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// MustDo is Do that fails the test on an error or a status of 300 or more,
// decoding a JSON answer into out (when not nil).
func (d *Daemon) MustDo(t testing.TB, method, path string, body, out any) {
	t.Helper()
	status, b, err := d.Do(method, path, body)
	if err != nil || status >= 300 {
		t.Fatalf("%s %s: %d %v %s", method, path, status, err, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// ImageRef is the test gateway image's name.
const ImageRef = "occ-test/fakegateway:1"

// GatewayImage builds the test gateway image once per daemon and returns
// its name: no more than the driver asks of an image — the fake gateway
// (built with CGO_ENABLED=0) as the entry point /usr/local/bin/openclaw,
// the fake Codex CLI (gatewaytest.CodexBinaryPackage, likewise) as
// /usr/local/bin/codex for dedicated revisions,
// the host's node with the libraries it links (the driver's wrapper runs
// it), /etc/passwd and /etc/group naming node (1000:1000) and /tmp —
// imported with the engine's image import (no registry is involved).
func (d *Daemon) GatewayImage(t testing.TB) string {
	t.Helper()
	d.imageOnce.Do(func() { d.image, d.imageErr = d.buildImage(t) })
	if d.imageErr != nil {
		t.Fatal(d.imageErr)
	}
	return d.image
}

func (d *Daemon) buildImage(t testing.TB) (string, error) {
	bin := gatewaytest.BuildStaticBinary(t)
	codex := gatewaytest.BuildStaticCodexBinary(t)
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Errorf("dockertest: node is not on PATH (Debian's nodejs; scripts/test installs npm, which brings it): %w", err)
	}
	node, _ = filepath.EvalSymlinks(node)
	libs, err := sharedLibraries(node)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	dir := func(name string, mode int64, uid int) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, Uid: uid, Gid: uid, ModTime: now})
	}
	file := func(name string, mode int64, data []byte) {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: now})
		_, _ = tw.Write(data)
	}
	copyFile := func(name, from string) error {
		b, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		file(name, 0o755, b)
		return nil
	}
	made := map[string]bool{}
	parents := func(p string) {
		parts := strings.Split(strings.Trim(filepath.Dir(p), "/"), "/")
		for i := range parts {
			q := strings.Join(parts[:i+1], "/")
			if q != "" && q != "." && !made[q] {
				made[q] = true
				dir(q, 0o755, 0)
			}
		}
	}
	for _, p := range []string{"etc/x", "usr/local/bin/x"} {
		parents(p)
	}
	dir("tmp", 0o1777, 0)
	file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnode:x:1000:1000:node:/home/node:/sbin/nologin\n"))
	file("etc/group", 0o644, []byte("root:x:0:\nnode:x:1000:\n"))
	if err := copyFile("usr/local/bin/openclaw", bin); err != nil {
		return "", err
	}
	if err := copyFile("usr/local/bin/codex", codex); err != nil {
		return "", err
	}
	if err := copyFile("usr/local/bin/node", node); err != nil {
		return "", err
	}
	for _, lib := range libs {
		parents(lib)
		if err := copyFile(strings.TrimPrefix(lib, "/"), lib); err != nil {
			return "", err
		}
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	repo, tag, _ := strings.Cut(ImageRef, ":")
	// Imported as :latest, then tagged: Podman 4.3's import ignores the
	// tag parameter.
	q := url.Values{"fromSrc": {"-"}, "repo": {repo},
		"changes": {`ENTRYPOINT ["/usr/local/bin/openclaw"]`, "USER 1000:1000", "ENV PATH=/usr/local/bin:/usr/bin:/bin",
			// Its CLI installs the codex plugin, and codex is on PATH.
			"LABEL " + docker.LabelDedicatedCodex + "=" + docker.CodexPluginSpec}}
	status, b, err := d.Do(http.MethodPost, "/images/create?"+q.Encode(), &buf)
	if err != nil || status != http.StatusOK || bytes.Contains(b, []byte(`"error"`)) {
		return "", fmt.Errorf("dockertest: import the gateway image: %d %v %s", status, err, b)
	}
	if status, b, err := d.Do(http.MethodPost, "/images/"+repo+":latest/tag?"+url.Values{"repo": {repo}, "tag": {tag}}.Encode(), nil); err != nil || status >= 300 {
		return "", fmt.Errorf("dockertest: tag the gateway image: %d %v %s", status, err, b)
	}
	if status, _, err := d.Do(http.MethodGet, "/images/"+ImageRef+"/json", nil); err != nil || status != http.StatusOK {
		_, list, _ := d.Do(http.MethodGet, "/images/json", nil)
		return "", fmt.Errorf("dockertest: the imported image is not %s (%d %v): %s", ImageRef, status, err, list)
	}
	return ImageRef, nil
}

// sharedLibraries lists the libraries a dynamically linked program loads
// (ldd), the loader included.
func sharedLibraries(prog string) ([]string, error) {
	out, err := exec.Command("ldd", prog).Output()
	if err != nil {
		return nil, fmt.Errorf("dockertest: ldd %s: %w", prog, err)
	}
	var libs []string
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				libs = append(libs, f)
			}
		}
	}
	return libs, nil
}
