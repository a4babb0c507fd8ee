package kubetest

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// PauseImage is the image of a real node's Pod sandboxes (containerd's
// sandbox_image), built by the test and imported, never pulled. Its only
// file is /pause, a static program that waits for SIGTERM or SIGINT; a
// test may run it as an ordinary container too, and with arguments as a
// network probe: "/pause serve <port>" answers every HTTP request on the
// port with "pong", and "/pause get <url>" GETs url (trying for a minute)
// and exits 0 once the answer is 200 "pong", 1 if it never is.
const PauseImage = "kubetest.local/pause:2"

// pauseSource is the program of PauseImage.
const pauseSource = `package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	switch {
	case len(os.Args) == 3 && os.Args[1] == "serve":
		http.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "pong") })
		fmt.Println(http.ListenAndServe(":"+os.Args[2], nil))
		os.Exit(1)
	case len(os.Args) == 3 && os.Args[1] == "get":
		for end := time.Now().Add(time.Minute); time.Now().Before(end); time.Sleep(time.Second) {
			resp, err := http.Get(os.Args[2])
			if err != nil {
				fmt.Println(err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Println(resp.Status, string(b))
			if resp.StatusCode == 200 && string(b) == "pong" {
				os.Exit(0)
			}
		}
		os.Exit(1)
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
`

// buildPauseImage builds the pause program with CGO_ENABLED=0 and writes
// PauseImage as an image tarball (what `ctr images import` reads) in dir.
func buildPauseImage(dir string) (string, error) {
	src := filepath.Join(dir, "pause-src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module kubetest.local/pause\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(pauseSource), 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(src, "pause")
	build := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("kubetest: build the pause program (go must be on PATH): %v\n%s", err, out)
	}
	prog, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var layerTar bytes.Buffer
	tw := tar.NewWriter(&layerTar)
	if err := tw.WriteHeader(&tar.Header{Name: "pause", Mode: 0o755, Size: int64(len(prog)), Typeflag: tar.TypeReg}); err != nil {
		return "", err
	}
	if _, err := tw.Write(prog); err != nil {
		return "", err
	}
	if err := tw.Close(); err != nil {
		return "", err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar.Bytes())), nil
	})
	if err != nil {
		return "", err
	}
	// The configuration first: AppendLayers adds the layer's diff ID to it.
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		OS:           "linux",
		Architecture: runtime.GOARCH,
		RootFS:       v1.RootFS{Type: "layers"},
		Config:       v1.Config{Entrypoint: []string{"/pause"}},
	})
	if err != nil {
		return "", err
	}
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return "", err
	}
	ref, err := name.NewTag(PauseImage)
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "pause.tar")
	if err := tarball.WriteToFile(out, ref, img); err != nil {
		return "", err
	}
	return out, nil
}
