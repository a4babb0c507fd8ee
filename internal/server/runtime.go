package server

import (
	"context"
	"fmt"
	"io"

	"github.com/openclaw/occ/internal/agentruntime"
	"github.com/openclaw/occ/internal/config"
)

// InstallRuntime is what `occ runtime install` runs: it installs the agent
// runtime the configuration names (runtime.openclawVersion with Node.js
// runtime.nodeVersion) and its dedicated Codex pieces (the pinned codex
// plugin and Codex CLI) into the runtime directory, or finds them there
// already, writing progress lines and then where the runtime is to out.
func InstallRuntime(ctx context.Context, cfg *config.Config, out io.Writer) error {
	rt, err := agentruntime.Install(ctx, agentruntime.Options{
		Dir:             cfg.RuntimeDir,
		OpenClawVersion: cfg.Runtime.OpenClawVersion,
		NodeVersion:     cfg.Runtime.NodeVersion,
		Progress:        out,
	})
	if err != nil {
		return fmt.Errorf("install the agent runtime: %w", err)
	}
	c, err := agentruntime.InstallCodex(ctx, agentruntime.Options{Dir: cfg.RuntimeDir, Progress: out}, rt)
	if err != nil {
		return fmt.Errorf("install the dedicated Codex pieces of the agent runtime: %w", err)
	}
	fmt.Fprintf(out, "node: %s (v%s)\nopenclaw: %s (%s)\ncodex: %s (%s)\ncodex plugin: %s (%s)\n",
		rt.Node, rt.NodeVersion, rt.OpenClawPkg, rt.Versions.OpenClaw, c.Entry, c.CodexVersion, c.PluginDir, c.PluginVersion)
	return nil
}
