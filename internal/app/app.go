// Package app holds occ's use cases, one file per resource. Each one
// authorizes, validates, and then writes the change, its audit event and any
// queued work in one transaction. Effects on runtimes happen later, in the
// worker.
package app

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/openclaw/occ/internal/audit"
	"github.com/openclaw/occ/internal/backends"
	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/credgateway"
	"github.com/openclaw/occ/internal/iam"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/secrets"
	"github.com/openclaw/occ/internal/store"
)

// Enqueuer inserts durable work inside a transaction.
type Enqueuer interface {
	Enqueue(ctx context.Context, tx *store.Tx, args river.JobArgs) error
}

// Options tune the use cases.
type Options struct {
	MaxAttempts              int              // teardown attempt budget
	SignInFailuresPerAccount int              // per account and client address, per minute; default 10
	SignInFailuresPerClient  int              // per client address, per minute; default 20
	SignInConcurrency        int              // password hashes at once; default 2
	SessionLifetime          time.Duration    // browser sessions
	KeyDefaultTTL            time.Duration    // service keys without expiresIn
	Secrets                  *secrets.Keyring // encrypts Secret values at rest
	Backends                 []Backend        // installation-configured Backends
	Presets                  []PresetTemplate // installation-wide Presets, seeded into every Namespace
	ComputeDriver            string           // local | ssh | docker | kubernetes
	// Compute is what the installation's compute driver declares it can
	// run: deploy admission refuses what it cannot (Capabilities.Refusal).
	Compute             occ.ComputeCapabilities
	WorkspaceDefaultsID string           // SHA-256 identity of the pinned runtime's default workspace files
	Gateways            GatewayEndpoint  // finds a running Agent's gateway (live workspace files, native admin UI)
	NativeAdmin         NativeAdmin      // the native admin UI toggle and domains
	Diagnose            Diagnoser        // runs fresh checks of a revision (deployment diagnostics)
	RuntimeLogs         RuntimeLogReader // reads a revision's gateway output (runtime logs)
	// BackendClient issues service account credentials; nil means the
	// HTTP client of package backends.
	BackendClient backends.Client
	// CredentialGateway registers credential sources; nil means the
	// installation has no gateway (credential source routes answer 409).
	CredentialGateway credgateway.Client
	// Streams bound the deployment event streams; zero fields take the
	// configuration defaults.
	Streams StreamOptions
}

// Backend is an installation-configured Backend (never created by the API).
type Backend struct {
	ID   string
	Type string // chatgpt | github | openshell
	URL  string // private: never returned
}

// PresetTemplate is an installation-wide Preset from the configuration file.
type PresetTemplate struct {
	Name          string
	ExecutionMode string
	BackendID     string
	Plugins       map[string]string // plugin ID → approval policy ("" = provider default)
}

// backend returns the configured Backend with that ID.
func (a *App) backend(id string) (Backend, bool) {
	for _, b := range a.opts.Backends {
		if b.ID == id {
			return b, true
		}
	}
	return Backend{}, false
}

// App is the set of use cases.
type App struct {
	st     *store.Store
	authz  *iam.Authorizer
	jobs   Enqueuer
	opts   Options
	now    func() time.Time
	instID string

	pairThrottle, clientThrottle *throttle // failed sign-ins per account-and-client, per client
	hashes                       *hashGate
	checkPassword                func(password, hash string) bool // iam.CheckPassword; tests hold it
	idemKey                      []byte                           // HMAC key of Idempotency-Key request digests
	idemInFlight                 sync.Map                         // IdempotencyClaim marks of requests running in this process

	writers     keyLocks         // one in-process writer at a time per resource (optimistic)
	streams     *streamSlots     // open deployment event streams per principal
	hosts       nativeAdminHosts // derived native admin host labels → Agents
	nativeKeyMu sync.Mutex
	nativeKey   []byte // HMAC key of native admin shared tokens, loaded on first use
}

// New returns the use cases over a migrated, bootstrapped store.
func New(ctx context.Context, st *store.Store, jobs Enqueuer, opts Options) (*App, error) {
	in, err := st.GetInstallation(ctx)
	if err != nil {
		return nil, fmt.Errorf("load installation: %w", err)
	}
	def := config.Defaults()
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = def.Worker.MaxAttempts
	}
	if opts.SessionLifetime <= 0 {
		opts.SessionLifetime = def.Auth.SessionLifetime.D()
	}
	if opts.KeyDefaultTTL <= 0 {
		opts.KeyDefaultTTL = config.DefaultServiceKeyTTL
	}
	if opts.SignInFailuresPerAccount <= 0 {
		opts.SignInFailuresPerAccount = def.Auth.SignInFailuresPerAccount
	}
	if opts.SignInFailuresPerClient <= 0 {
		opts.SignInFailuresPerClient = def.Auth.SignInFailuresPerClient
	}
	if opts.SignInConcurrency <= 0 {
		opts.SignInConcurrency = def.Auth.SignInConcurrency
	}
	opts.Streams = opts.Streams.withDefaults()
	a := &App{st: st, authz: iam.NewAuthorizer(st), jobs: jobs, opts: opts, now: time.Now, instID: in.ID,
		pairThrottle:   newThrottle(opts.SignInFailuresPerAccount, time.Minute),
		clientThrottle: newThrottle(opts.SignInFailuresPerClient, time.Minute),
		hashes:         newHashGate(opts.SignInConcurrency), checkPassword: iam.CheckPassword,
		streams: &streamSlots{max: opts.Streams.MaxPerPrincipal, open: map[string]int{}}}
	if opts.Secrets != nil {
		if a.idemKey, err = installationKey(ctx, st, opts.Secrets, in.ID, "idempotency"); err != nil {
			return nil, fmt.Errorf("idempotency key: %w", err)
		}
	} else {
		// No keyring (embedded uses without Secrets): a per-process key.
		a.idemKey = make([]byte, 32)
		if _, err := rand.Read(a.idemKey); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// InstallationID is this installation's ID.
func (a *App) InstallationID() string { return a.instID }

// Authorizer exposes the one authorizer, for the HTTP layer's filters.
func (a *App) Authorizer() *iam.Authorizer { return a.authz }

// record appends an audit event inside tx; failure fails the change (503).
func (a *App) record(ctx context.Context, tx *store.Tx, ev occ.AuditEvent) error {
	if ev.Kind == "" {
		ev.Kind = occ.AuditMutation
	}
	if ev.Outcome == "" {
		ev.Outcome = occ.OutcomeSuccess
	}
	if err := audit.Append(ctx, tx, ev); err != nil {
		return occ.Unavailable(fmt.Errorf("append audit event %s: %w", ev.Action, err))
	}
	return nil
}

// notFoundOr maps store.ErrNotFound to NOT_FOUND and other failures to
// 503, keeping occ errors, and store.ErrStale for optimistic to retry.
func notFoundOr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return occ.ErrNotFound
	case occ.AsError(err) != nil, errors.Is(err, store.ErrStale):
		return err
	}
	return occ.Unavailable(err)
}
