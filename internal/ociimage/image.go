package ociimage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Spec is an image: layers on an empty base and the run configuration.
type Spec struct {
	// Name is the image's default reference ("openclaw-gateway:2026.9.6"),
	// its tag in a tarball and its ref.name in an OCI layout.
	Name string
	// Architecture is the GOARCH the image runs on; the OS is linux.
	Architecture string
	Layers       [][]Entry
	Entrypoint   []string
	Cmd          []string
	Env          []string
	User         string
	WorkingDir   string
	Labels       map[string]string
}

// Build writes the layers into files under workDir (which must outlive the
// returned image) and assembles the OCI image.
func Build(spec Spec, workDir string) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	for i, entries := range spec.Layers {
		l, err := buildLayer(workDir, entries)
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		if img, err = mutate.AppendLayers(img, l); err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", spec.Architecture
	cf.Created = v1.Time{Time: epoch}
	cf.Config = v1.Config{
		Entrypoint: spec.Entrypoint, Cmd: spec.Cmd, Env: spec.Env,
		User: spec.User, WorkingDir: spec.WorkingDir, Labels: spec.Labels,
	}
	return mutate.ConfigFile(img, cf)
}

// Size is the sum of the image's compressed layers, config and manifest:
// what a registry stores and a node pulls.
func Size(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	total := m.Config.Size + int64(len(raw))
	for _, l := range m.Layers {
		total += l.Size
	}
	return total, nil
}

// CheckTargets refuses, before anything is built, an output that exists,
// an image name that is not a tag and a push reference that does not
// parse.
func CheckTargets(output, imageName, push string) error {
	if output != "" {
		if err := absent(output); err != nil {
			return err
		}
	}
	if imageName != "" {
		if _, err := name.NewTag(imageName); err != nil {
			return fmt.Errorf("image name %q: %w", imageName, err)
		}
	}
	if push != "" {
		if _, err := name.ParseReference(push); err != nil {
			return fmt.Errorf("push reference %q: %w", push, err)
		}
	}
	return nil
}

// absent refuses an existing path.
func absent(p string) error {
	if _, err := os.Lstat(p); err == nil {
		return fmt.Errorf("output %s already exists; remove it or name another", p)
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Write writes img to output: an OCI layout directory whose index names
// ref, or, when output ends in .tar, the same layout as one tar archive
// with a docker manifest.json beside it, which `ctr images import` (keeping
// the digest) and `docker load` read. An existing output is refused, never
// overwritten.
func Write(img v1.Image, output, ref string) error {
	if err := absent(output); err != nil {
		return err
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	// containerd's spelling of Docker Hub names (go-containerregistry
	// says index.docker.io).
	full := tag.Name()
	if tag.RegistryStr() == name.DefaultRegistry {
		full = "docker.io/" + tag.RepositoryStr() + ":" + tag.TagStr()
	}
	if !strings.HasSuffix(output, ".tar") {
		return writeLayout(img, output, ref, full)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(output), ".occ-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "layout")
	if err := writeLayout(img, dir, ref, full); err != nil {
		return err
	}
	if err := writeDockerManifest(img, dir, ref); err != nil {
		return err
	}
	entries, err := Tree(dir, "/")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(tmp, "image-*.tar")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := writeTar(f, entries); err != nil {
		return fmt.Errorf("write %s: %w", output, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), output)
}

// writeLayout writes img as an OCI layout at dir, its index naming it
// ref (org.opencontainers.image.ref.name) and full (containerd's name).
func writeLayout(img v1.Image, dir, ref, full string) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": ref,
		"io.containerd.image.name":          full,
	}))
}

// writeDockerManifest adds docker load's manifest.json to an OCI layout.
func writeDockerManifest(img v1.Image, dir, tag string) error {
	m, err := img.Manifest()
	if err != nil {
		return err
	}
	blob := func(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }
	entry := struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{Config: blob(m.Config.Digest), RepoTags: []string{tag}}
	for _, l := range m.Layers {
		entry.Layers = append(entry.Layers, blob(l.Digest))
	}
	b, err := json.Marshal([]any{entry})
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), b, 0o644)
}

// Push uploads img to the registry reference ref ("registry.example.com/occ/gateway:v1"),
// authenticating as docker and podman do (the default keychain: their
// config files and credential helpers), and returns the reference by
// digest ("registry.example.com/occ/gateway@sha256:…").
func Push(ctx context.Context, img v1.Image, ref string) (string, error) {
	r, err := name.ParseReference(ref)
	if err != nil {
		return "", fmt.Errorf("push reference %q: %w", ref, err)
	}
	if err := remote.Write(r, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := img.Digest()
	if err != nil {
		return "", err
	}
	return r.Context().Digest(d.String()).String(), nil
}
