package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/openclaw/occ/internal/compute"
	"github.com/openclaw/occ/internal/gateway"
	"github.com/openclaw/occ/internal/occ"
)

// Readiness codes of the local driver.
const (
	// PendingStarting: the gateway process runs but does not answer its
	// probes as ready yet (or another process answers its port).
	PendingStarting = occ.PendingGatewayStarting
	// PendingUnavailable: the gateway started but /readyz reports a failing
	// component (for example a dead Slack account).
	PendingUnavailable = occ.PendingGatewayUnavailable
	// CodeStartupFailed is the RuntimeFailure code of a gateway process that
	// exited (component "gateway", check "process").
	CodeStartupFailed = "RUNTIME_STARTUP_FAILED"
	// CodeAuthenticationFailed is the held RuntimeFailure code of a
	// rejected model credential (component "gateway", check
	// compute.HeldCheckModelCredential).
	CodeAuthenticationFailed = compute.HeldAuthenticationFailed
)

// probeTimeout bounds the HTTP probes and healthTimeout the health call
// over the WebSocket of one PrepareRevision (Options.ModelProbeTimeout the
// model probe); diagnoseTimeout bounds Diagnose.
const (
	probeTimeout    = 5 * time.Second
	healthTimeout   = 15 * time.Second
	diagnoseTimeout = 10 * time.Second
)

// target is what a readiness check or a diagnosis needs of a running
// gateway, copied out of the Agent's lock.
type target struct {
	proc              *proc
	port              int
	token             string // the Agent's secret: the token, or the password in trusted-proxy mode
	nativeAdminOrigin string
	dedicated         bool
}

func (t target) httpURL() string { return "http://127.0.0.1:" + strconv.Itoa(t.port) }
func (t target) wsURL() string   { return "ws://127.0.0.1:" + strconv.Itoa(t.port) }

// PrepareRevision makes the Agent's gateway run the revision and reports
// its readiness. If the gateway already runs the revision it is only
// probed. Otherwise the gateway of any other revision is stopped, the
// configuration written, the initial files applied (only before the very
// first start of the Agent), and the gateway started. A gateway of this
// revision that exited is reported as RuntimeFailure while its supervisor
// waits to restart it.
func (d *Driver) PrepareRevision(ctx context.Context, spec compute.RevisionSpec) (compute.Readiness, error) {
	if err := spec.RevisionRef.Validate(); err != nil {
		return compute.Readiness{}, err
	}
	if d.cmd == nil {
		return compute.Readiness{}, compute.Permanent(occ.DeployRuntimeNotConfigured, errNoCommand)
	}
	if err := compute.ValidateInitialFiles(spec.InitialFiles); err != nil {
		return compute.Readiness{}, err
	}
	if err := os.MkdirAll(d.NamespaceDir(spec.NamespaceID), d.dirMode()); err != nil {
		return compute.Readiness{}, fmt.Errorf("create namespace directory: %w", err)
	}
	var t target
	var verified, probed bool
	var answer *compute.Readiness
	err := d.withAgent(spec.AgentRef, true, func(a *agent, st *runState) error {
		if a.held != nil && a.heldRev == spec.RevisionID && st.RevisionID == spec.RevisionID {
			answer = a.held
			return nil
		}
		if a.proc != nil && st.Running && st.RevisionID == spec.RevisionID {
			if a.env == nil && spec.Env != nil {
				a.env = cloneEnv(spec.Env)
			}
		} else {
			if a.proc != nil {
				// Another revision runs: desired state first, then stop it.
				st.Running = false
				if err := writeRun(a.dir, st); err != nil {
					return err
				}
				if err := d.stopProc(a, a.proc); err != nil {
					return err
				}
				a.proc = nil
				st.PID, st.StartTime = 0, 0
			}
			if err := d.stopHarness(a, st); err != nil {
				return err
			}
			first := !st.InitialFilesApplied
			if first {
				if err := applyInitialFiles(filepath.Join(a.dir, workspace), spec.InitialFiles); err != nil {
					return err
				}
				st.InitialFilesApplied = true
			}
			st.RevisionID, st.Running, st.NativeAdminOrigin = spec.RevisionID, true, spec.NativeAdminOrigin
			if st.ActiveRevisionID != "" && st.ActiveRevisionID != spec.RevisionID {
				st.ActiveRevisionID = "" // what served is gone
			}
			a.env, a.backoff = cloneEnv(spec.Env), 0
			a.held, a.heldRev = nil, ""
			st.Dedicated = spec.ExecutionMode == occ.ExecutionDedicated
			if st.Dedicated {
				r, done, err := d.prepareDedicated(ctx, a, st, spec)
				if err != nil || done {
					if r.Held {
						a.held, a.heldRev = &r, spec.RevisionID
						st.Running = false
					}
					answer = &r
					if werr := writeRun(a.dir, st); err == nil {
						err = werr
					}
					return err
				}
			}
			if err := d.start(a, st, spec.Document, !first); err != nil {
				return err
			}
		}
		t = targetOf(a, st)
		verified = a.verified == a.proc.key()
		probed = verified || st.ModelProbed == a.proc.key()
		return nil
	})
	if r, ok := compute.PendingInstalling(err); ok {
		return r, nil
	}
	if err != nil {
		return compute.Readiness{}, err
	}
	if answer != nil {
		return *answer, nil
	}
	r, err := d.readiness(ctx, spec, t, verified, probed)
	if err != nil || !r.Ready || verified {
		return r, err
	}
	err = d.withAgent(spec.AgentRef, false, func(a *agent, st *runState) error {
		if st == nil || a.proc != t.proc {
			return nil
		}
		a.verified = t.proc.key()
		if st.ModelProbed == a.verified {
			return nil
		}
		st.ModelProbed = a.verified
		return writeRun(a.dir, st)
	})
	if err != nil {
		// Ready all the same; a driver that re-adopts it probes again.
		d.log.Warn("record the model probe", "namespace", spec.NamespaceID, "agent", spec.AgentID, "error", err)
	}
	return r, nil
}

// readiness probes a gateway: /healthz, /startupz, /readyz, then over the
// WebSocket the plugin warnings (health). Until a process was once found
// ready by this driver (verified) it also checks that the process itself
// listens on the port (its identity); until it was once found ready by any
// driver (probed: run.json's ModelProbed, kept across occ restarts) it asks
// the gateway to try the model credential (models.probe of the primary
// model's provider).
func (d *Driver) readiness(ctx context.Context, spec compute.RevisionSpec, t target, verified, probed bool) (compute.Readiness, error) {
	failure := func(check, code string) compute.Readiness {
		return compute.Readiness{RuntimeFailure: &compute.RuntimeFailure{Component: "gateway", Check: check, CheckedAt: time.Now().UTC(), Code: code}}
	}
	if t.proc.exited() {
		return failure("process", CodeStartupFailed), nil
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	h, err := gateway.Probe(pctx, t.httpURL())
	cancel()
	switch {
	case err == nil:
	case t.proc.exited():
		return failure("process", CodeStartupFailed), nil
	case errors.Is(err, gateway.ErrNotReady) && h.Started:
		return compute.Readiness{PendingReason: PendingUnavailable}, nil
	case errors.Is(err, gateway.ErrNotReady), errors.Is(err, gateway.ErrUnreachable):
		return compute.Readiness{PendingReason: PendingStarting}, nil
	default:
		return compute.Readiness{}, err
	}
	if !verified && !listensOn(t.proc.pid, t.port) {
		// Ready, but not ours: another process holds the port.
		return compute.Readiness{PendingReason: PendingStarting}, nil
	}

	// A dedicated gateway holds no model credential: its harness passed
	// the model probe before it started.
	return compute.AskGateway(ctx, compute.Ask{Dial: t.dialOptions(), Document: spec.Document, ProbeModel: !probed && !t.dedicated, Report: spec.Report,
		ModelProbeTimeout: d.modelProbeTimeout, HealthTimeout: healthTimeout})
}

func cloneEnv(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// applyInitialFiles writes the initial files into the workspace (0600).
func applyInitialFiles(dir string, files map[string]string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create workspace: %w", err)
	}
	for name, content := range files {
		if err := writeFileAtomic(filepath.Join(dir, name), []byte(content)); err != nil {
			return fmt.Errorf("initial workspace file: %w", err)
		}
	}
	return nil
}

// ActivateRevision records that the revision serves. It must be the one
// the Agent's gateway runs.
func (d *Driver) ActivateRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	return d.withAgent(rev.AgentRef, false, func(a *agent, st *runState) error {
		if st == nil || !st.Running || st.RevisionID != rev.RevisionID || a.proc == nil {
			return fmt.Errorf("activate revision %s: the Agent's gateway does not run it", rev.RevisionID)
		}
		if st.ActiveRevisionID == rev.RevisionID {
			return nil
		}
		st.ActiveRevisionID = rev.RevisionID
		return writeRun(a.dir, st)
	})
}

// RetireRevision stops the Agent's gateway if it still runs the revision;
// a gateway that now runs another revision is left alone.
func (d *Driver) RetireRevision(ctx context.Context, rev compute.RevisionRef) error {
	if err := rev.Validate(); err != nil {
		return err
	}
	return d.withAgent(rev.AgentRef, false, func(a *agent, st *runState) error {
		if st == nil || st.RevisionID != rev.RevisionID {
			return nil
		}
		return d.stopAgent(a, st)
	})
}

// StopAgent stops the Agent's gateway; workspace, state, token and port
// stay.
func (d *Driver) StopAgent(ctx context.Context, ref compute.AgentRef) error {
	if err := ref.Validate(); err != nil {
		return err
	}
	return d.withAgent(ref, false, func(a *agent, st *runState) error {
		if st == nil {
			return nil
		}
		return d.stopAgent(a, st)
	})
}

// stopAgent records the desired stop, then stops the process.
func (d *Driver) stopAgent(a *agent, st *runState) error {
	if st.Running || st.ActiveRevisionID != "" {
		st.Running, st.ActiveRevisionID = false, ""
		if err := writeRun(a.dir, st); err != nil {
			return err
		}
	}
	if p := a.proc; p != nil {
		if err := d.stopProc(a, p); err != nil {
			return err
		}
		a.proc = nil
	}
	if err := d.stopHarness(a, st); err != nil {
		return err
	}
	d.killStrays(a, st, 0)
	if st.PID != 0 {
		st.PID, st.StartTime = 0, 0
		return writeRun(a.dir, st)
	}
	return nil
}

// DeleteAgent stops the Agent's gateway and removes its directory.
func (d *Driver) DeleteAgent(ctx context.Context, ref compute.AgentRef) error {
	if err := ref.Validate(); err != nil {
		return err
	}
	return d.withAgent(ref, false, func(a *agent, st *runState) error {
		if st == nil {
			a.reset()
			return nil
		}
		if err := d.stopAgent(a, st); err != nil {
			return err
		}
		if err := os.RemoveAll(a.dir); err != nil {
			return fmt.Errorf("remove agent directory: %w", err)
		}
		a.reset()
		d.releaseClaims(a.dir, st)
		if err := d.releasePort(a.dir); err != nil {
			return err
		}
		d.log.Info("agent removed", "namespace", a.ref.NamespaceID, "agent", a.ref.AgentID)
		return nil
	})
}

// GatewayEndpoint returns ws://127.0.0.1:PORT, occ's credential (the token,
// or the password in trusted-proxy mode), the revision and the native admin
// origin while the Agent's gateway process runs.
func (d *Driver) GatewayEndpoint(ctx context.Context, ref compute.AgentRef) (compute.Endpoint, bool) {
	if ref.Validate() != nil {
		return compute.Endpoint{}, false
	}
	var ep compute.Endpoint
	var ok bool
	_ = d.withAgent(ref, false, func(a *agent, st *runState) error {
		if st == nil || !st.Running || a.proc == nil || a.proc.exited() {
			return nil
		}
		t := targetOf(a, st)
		token, password := secretEnv(st, t.token)
		ep = compute.Endpoint{URL: t.wsURL(), Token: token, Password: password, RevisionID: st.RevisionID, NativeAdminOrigin: st.NativeAdminOrigin}
		if st.NativeAdminOrigin != "" {
			ep.ProxyIdentity = gateway.NativeAdminIdentity(t.token)
		}
		ok = t.token != ""
		return nil
	})
	return ep, ok
}

// Adopt looks at every Agent under the root at once, instead of lazily at
// its next operation: live gateways are re-adopted (and supervised),
// interrupted stops finished, dead gateways recorded as not running, and
// every gateway user claimed again (the claim directory may have been
// emptied, as /tmp is at a reboot): an Agent whose user another root
// claimed meanwhile gets a new one and its tree at once.
func (d *Driver) Adopt(ctx context.Context) error {
	dirs, err := filepath.Glob(filepath.Join(d.root, "namespaces", "*", "agents", "*"))
	if err != nil {
		return err
	}
	var errs []error
	for _, dir := range dirs {
		ref := compute.AgentRef{NamespaceID: filepath.Base(filepath.Dir(filepath.Dir(dir))), AgentID: filepath.Base(dir)}
		if ref.Validate() != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		errs = append(errs, d.withAgent(ref, false, func(a *agent, st *runState) error {
			switch {
			case st == nil || st.UID == 0:
				return nil
			case st.HarnessUID != 0:
				_, err := d.harnessCredential(a, st)
				return err
			}
			_, err := d.gatewayCredential(a, st)
			return err
		}))
	}
	return errors.Join(errs...)
}
