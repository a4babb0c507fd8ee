package app

import (
	"context"
	"sync"
	"time"

	"github.com/openclaw/occ/internal/config"
	"github.com/openclaw/occ/internal/occ"
	"github.com/openclaw/occ/internal/store"
)

// StreamOptions bound the deployment event streams (config streams.*).
type StreamOptions struct {
	MaxPerPrincipal int           // open streams per principal in this process
	RecheckInterval time.Duration // how often an open stream authorizes its caller again
	PollInterval    time.Duration // how often a stream reads without an announced change
}

// withDefaults fills unset options from config.Defaults.
func (o StreamOptions) withDefaults() StreamOptions {
	def := config.Defaults().Streams
	if o.MaxPerPrincipal <= 0 {
		o.MaxPerPrincipal = def.MaxPerPrincipal
	}
	if o.RecheckInterval <= 0 {
		o.RecheckInterval = def.RecheckInterval.D()
	}
	if o.PollInterval <= 0 {
		o.PollInterval = def.PollInterval.D()
	}
	return o
}

// streamRetryAfter is the Retry-After (seconds) of a refused stream.
const streamRetryAfter = 5

// streamSlots counts the open streams of each principal in this process.
type streamSlots struct {
	mu   sync.Mutex
	max  int
	open map[string]int
}

// take reserves one of the principal's slots, or refuses with 429
// RATE_LIMITED when all are taken; release gives it back.
func (s *streamSlots) take(principalID string) (release func(), err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[principalID] >= s.max {
		return nil, &occ.Error{Code: occ.CodeRateLimited, Message: occ.MsgTooManyStreams, RetryAfter: streamRetryAfter}
	}
	s.open[principalID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.open[principalID]--; s.open[principalID] <= 0 {
				delete(s.open, principalID)
			}
		})
	}, nil
}

// DeploymentWatch follows one deployment for one caller: it wakes when the
// deployment changes (Changed) and on a slow timer (Tick), and each Read
// authorizes the caller again once RecheckInterval has passed.
type DeploymentWatch struct {
	a                *App
	c                occ.Caller
	ns, agent, rev   string
	changed          <-chan struct{}
	tick             *time.Ticker
	unsubscribe      func()
	release          func()
	nextAuthorizedAt time.Time
}

// WatchDeployment opens a watch of a deployment with the permission of
// GetDeployment, taking one of the caller's stream slots (429
// RATE_LIMITED once streams.maxPerPrincipal are open), and returns the
// deployment's current status. The caller must Close it.
func (a *App) WatchDeployment(ctx context.Context, c occ.Caller, nsID, agentID, revID string) (*DeploymentWatch, DeploymentStatus, error) {
	if err := a.requireDeploymentRead(ctx, c, nsID, agentID, revID); err != nil {
		return nil, DeploymentStatus{}, err
	}
	release, err := a.streams.take(c.PrincipalID)
	if err != nil {
		return nil, DeploymentStatus{}, err
	}
	o := a.opts.Streams
	w := &DeploymentWatch{a: a, c: c.AfterRequest(), ns: nsID, agent: agentID, rev: revID, release: release,
		tick: time.NewTicker(min(o.PollInterval, o.RecheckInterval)), nextAuthorizedAt: a.now().Add(o.RecheckInterval)}
	// Subscribed before the first read: no change falls between the two.
	w.changed, w.unsubscribe = a.st.Subscribe(store.AgentTopic(agentID))
	st, err := a.deploymentStatus(ctx, nsID, agentID, revID)
	if err != nil {
		w.Close()
		return nil, DeploymentStatus{}, err
	}
	return w, st, nil
}

// Changed receives a value when a change to the deployment was committed.
func (w *DeploymentWatch) Changed() <-chan struct{} { return w.changed }

// Tick fires every PollInterval (or RecheckInterval, when shorter): read
// again even though no change was announced.
func (w *DeploymentWatch) Tick() <-chan time.Time { return w.tick.C }

// Read returns the deployment's status, first authorizing the caller again
// when RecheckInterval has passed since the last time: an error (FORBIDDEN
// or NOT_FOUND, as GetDeployment answers) ends the watch.
func (w *DeploymentWatch) Read(ctx context.Context) (DeploymentStatus, error) {
	if now := w.a.now(); !now.Before(w.nextAuthorizedAt) {
		if err := w.a.requireDeploymentRead(ctx, w.c, w.ns, w.agent, w.rev); err != nil {
			return DeploymentStatus{}, err
		}
		w.nextAuthorizedAt = now.Add(w.a.opts.Streams.RecheckInterval)
	}
	return w.a.deploymentStatus(ctx, w.ns, w.agent, w.rev)
}

// Close ends the watch and gives its stream slot back.
func (w *DeploymentWatch) Close() {
	w.tick.Stop()
	w.unsubscribe()
	w.release()
}
