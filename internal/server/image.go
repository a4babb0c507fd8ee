package server

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/cli"
	"github.com/openclaw/occ/internal/compute/docker"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/ociimage"
)

// BuildImage is what `occ runtime image build` runs: it builds the gateway
// image from the runtime the configuration names, installed in the runtime
// directory (or, with o.OCC, occ's own image from a static occ binary),
// writes it to o.Output and pushes it to o.Push, printing progress to
// progress and the result to out.
func BuildImage(ctx context.Context, cfg *config.Config, o cli.ImageBuild, out, progress io.Writer) error {
	start := time.Now()
	if err := ociimage.CheckTargets(o.Output, o.Name, o.Push); err != nil {
		return err
	}
	var loader *docker.ImageLoader
	if o.Load != "" {
		l, err := docker.NewImageLoader(ctx, "--load", o.Load)
		if err != nil {
			return err
		}
		defer l.Close()
		loader = l
	}
	var spec ociimage.Spec
	if o.OCC {
		bin := o.OCCBinary
		if bin == "" {
			exe, err := os.Executable()
			if err != nil {
				return fmt.Errorf("find this occ binary: %w", err)
			}
			bin = exe
		}
		s, err := ociimage.OCC(bin, Version, ociimage.CACertificates)
		if err != nil {
			return err
		}
		spec = s
	} else {
		v := agentruntime.Versions{OpenClaw: cfg.Runtime.OpenClawVersion, NodeMajor: cfg.Runtime.NodeVersion}
		rt, ok := agentruntime.Find(cfg.RuntimeDir, v)
		if !ok {
			return fmt.Errorf("openclaw %s with Node.js %s is not installed in %s: run occ runtime install first (with the same --runtime-dir or --config)",
				v.OpenClaw, v.NodeMajor, cfg.RuntimeDir)
		}
		fmt.Fprintf(progress, "image: reading openclaw %s with Node.js %s from %s\n", rt.Versions.OpenClaw, rt.NodeVersion, rt.Dir)
		var codex *agentruntime.Codex
		if c, ok := agentruntime.FindCodex(cfg.RuntimeDir); ok {
			codex = &c
			fmt.Fprintf(progress, "image: with Codex %s and the codex plugin %s from %s (dedicated Agents)\n", c.CodexVersion, c.PluginVersion, c.Dir)
		} else {
			fmt.Fprintf(progress, "image: no Codex install in %s: dedicated Agents cannot run on this image (occ runtime install installs it)\n", cfg.RuntimeDir)
		}
		s, missing, err := ociimage.Gateway(ctx, rt, codex, ociimage.CACertificates)
		if err != nil {
			return err
		}
		for _, m := range missing {
			fmt.Fprintf(progress, "image: %s, which a prebuilt addon for another C library names, is not on this machine and not in the image\n", m)
		}
		spec = s
	}
	if o.Name != "" {
		spec.Name = o.Name
	}
	work, err := os.MkdirTemp("", "occ-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fmt.Fprintf(progress, "image: writing %d layers of %s\n", len(spec.Layers), spec.Name)
	img, err := ociimage.Build(spec, work)
	if err != nil {
		return fmt.Errorf("build image: %w", err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	size, err := ociimage.Size(img)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "image: %s\ndigest: %s\nsize: %d bytes (compressed)\n", spec.Name, digest, size)
	if o.Output != "" {
		fmt.Fprintf(progress, "image: writing %s\n", o.Output)
		if err := ociimage.Write(img, o.Output, spec.Name); err != nil {
			return fmt.Errorf("write image: %w", err)
		}
		fmt.Fprintf(out, "output: %s\n", o.Output)
	}
	if o.Load != "" {
		archive := o.Output
		if !strings.HasSuffix(archive, ".tar") {
			archive = filepath.Join(work, "load.tar")
			if err := ociimage.Write(img, archive, spec.Name); err != nil {
				return fmt.Errorf("write image: %w", err)
			}
		}
		refs, err := loadImage(ctx, loader, o.Load, archive, progress)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "loaded: %s\n", strings.Join(refs, ", "))
	}
	if o.Push != "" {
		fmt.Fprintf(progress, "image: pushing %s\n", o.Push)
		ref, err := ociimage.Push(ctx, img, o.Push)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "pushed: %s\n", ref)
	}
	fmt.Fprintf(progress, "image: done in %s\n", time.Since(start).Round(time.Second))
	return nil
}

// loadImage sends the archive (docker load's format) to the engine at
// host through l, as docker load does, and returns the references it loaded.
func loadImage(ctx context.Context, l *docker.ImageLoader, host, archive string, progress io.Writer) ([]string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fmt.Fprintf(progress, "image: loading into the engine at %s\n", host)
	return l.Load(ctx, f)
}
