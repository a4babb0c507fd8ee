// Package ociimage builds the container images occ ships without pulling
// anything: the OpenClaw gateway image the Kubernetes driver runs (the
// pinned OpenClaw and Node.js from the runtime occ installs) and the image
// of occ itself (its static binary) that the Helm chart runs. Each image is
// an empty base plus layers written here from files on this machine, so the
// same inputs give the same digest (fixed times, owners and order). It
// writes an OCI layout directory or a tarball and pushes to a registry
// with github.com/google/go-containerregistry.
package ociimage

import (
	"archive/tar"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is the time of every file and of the image: a fixed time makes
// the digest depend only on the content.
var epoch = time.Unix(0, 0).UTC()

// Entry is one file, directory or symbolic link of a layer.
type Entry struct {
	// Path is the absolute path in the image ("/etc/passwd").
	Path string
	// Mode is the permission bits plus fs.ModeDir or fs.ModeSymlink for
	// those kinds (none for a regular file); fs.ModeSticky is kept.
	Mode fs.FileMode
	// UID and GID own the entry.
	UID, GID int
	// Data is a regular file's content, unless Source names a file of
	// this machine to copy (symbolic links followed).
	Data   []byte
	Source string
	// Link is a symbolic link's target.
	Link string
}

// Dir, File, Copy and Symlink make entries owned by root unless changed.
func Dir(p string, mode fs.FileMode) Entry { return Entry{Path: p, Mode: fs.ModeDir | mode} }

// File is a regular file with the given content.
func File(p string, mode fs.FileMode, data []byte) Entry {
	return Entry{Path: p, Mode: mode, Data: data}
}

// Copy is a regular file with the content of the host file src.
func Copy(p string, mode fs.FileMode, src string) Entry {
	return Entry{Path: p, Mode: mode, Source: src}
}

// Symlink is a symbolic link to target.
func Symlink(p, target string) Entry {
	return Entry{Path: p, Mode: fs.ModeSymlink | 0o777, Link: target}
}

// Tree returns the entries of the host directory src placed at dst in the
// image, owned by root and read-only to everyone else: directories 0755,
// files 0755 when the owner may execute them and 0644 otherwise, symbolic
// links kept as they are (their targets must stay inside src). Anything
// else (a socket, a device) is refused.
func Tree(src, dst string) ([]Entry, error) {
	var out []Entry
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		at := path.Join(dst, filepath.ToSlash(rel))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch m := info.Mode(); {
		case m.IsDir():
			out = append(out, Dir(at, 0o755))
		case m&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			resolved := target
			if !path.IsAbs(target) {
				resolved = path.Join(path.Dir(at), target)
			}
			if resolved != dst && !strings.HasPrefix(resolved, dst+"/") {
				return fmt.Errorf("%s: symbolic link to %s leaves %s", p, target, src)
			}
			out = append(out, Symlink(at, target))
		case m.IsRegular():
			mode := fs.FileMode(0o644)
			if m&0o100 != 0 {
				mode = 0o755
			}
			out = append(out, Copy(at, mode, p))
		default:
			return fmt.Errorf("%s: %s is neither a file, a directory nor a symbolic link", p, m.Type())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	return out, nil
}

// writeTar writes entries as a tar stream: sorted by path, every parent
// directory present (root-owned 0755 unless listed), fixed times, numeric
// owners only. Two entries for one path are refused.
func writeTar(w io.Writer, entries []Entry) error {
	byPath := map[string]Entry{}
	for _, e := range entries {
		p := path.Clean("/" + e.Path)
		if _, dup := byPath[p]; dup {
			return fmt.Errorf("two entries for %s", p)
		}
		e.Path = p
		byPath[p] = e
	}
	for p := range byPath {
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = Dir(d, 0o755)
			}
		}
	}
	delete(byPath, "/")
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	tw := tar.NewWriter(w)
	for _, p := range paths {
		if err := writeEntry(tw, byPath[p]); err != nil {
			return err
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, e Entry) error {
	h := &tar.Header{
		Name: strings.TrimPrefix(e.Path, "/"), Mode: int64(e.Mode.Perm()), Uid: e.UID, Gid: e.GID,
		ModTime: epoch, Format: tar.FormatPAX,
	}
	if e.Mode&fs.ModeSticky != 0 {
		h.Mode |= 0o1000
	}
	switch {
	case e.Mode.IsDir():
		h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
		return tw.WriteHeader(h)
	case e.Mode&fs.ModeSymlink != 0:
		h.Typeflag, h.Linkname = tar.TypeSymlink, e.Link
		return tw.WriteHeader(h)
	}
	h.Typeflag = tar.TypeReg
	if e.Source == "" {
		h.Size = int64(len(e.Data))
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		_, err := tw.Write(e.Data)
		return err
	}
	f, err := os.Open(e.Source)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", e.Source)
	}
	h.Size = st.Size()
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if n, err := io.Copy(tw, f); err != nil {
		return fmt.Errorf("copy %s: %w", e.Source, err)
	} else if n != st.Size() {
		return fmt.Errorf("%s changed while it was read", e.Source)
	}
	return nil
}

// buildLayer writes the entries as a gzip-compressed tar into a file in
// dir and returns it as an OCI layer (read back from that file).
func buildLayer(dir string, entries []Entry) (v1.Layer, error) {
	f, err := os.CreateTemp(dir, "layer-*.tar.gz")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// BestSpeed: the runtime layer is most of a gigabyte of mostly
	// JavaScript; better levels cost minutes for a few percent.
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if err := writeTar(zw, entries); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	name := f.Name()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return os.Open(name) },
		tarball.WithMediaType(types.OCILayer))
}
