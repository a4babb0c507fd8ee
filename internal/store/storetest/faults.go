package storetest

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/openclaw/occ/internal/jobs"
	"github.com/openclaw/occ/internal/store"
)

// Faults sits between a Store's pool (and River, which shares it) and the
// database driver, and injects failures at transaction commits: a commit
// that fails before it reaches the database, one that commits and then
// reports an error (the outcome-unknown case of a connection lost
// mid-commit), and a crash there (the process dies before or after the
// commit: from then on every call of the pool fails). Crash also kills the
// pool from anywhere else, such as a compute driver failpoint. Safe for
// concurrent use.
type Faults struct {
	mu     sync.Mutex
	faults []*CommitFault
	dead   bool
}

// CommitFault is one failure at a commit.
type CommitFault struct {
	// Match selects the transactions (a write outside one counts as a
	// transaction of one statement): one of whose statements contains it
	// (case-insensitive); "" matches every transaction that writes occ's
	// own tables (River's are named explicitly, such as
	// "JobSetStateIfRunning", the completion of a job).
	Match string
	// Skip lets this many matching commits through first.
	Skip int
	// After commits, then reports ErrInjectedCommit; otherwise the
	// transaction is rolled back and the commit reports it.
	After bool
	// Crash kills the pool at the commit (before it, or after it with
	// After) instead of failing just this one.
	Crash bool

	fired bool
}

// ErrInjectedCommit is the error of an injected commit failure.
var ErrInjectedCommit = errors.New("storetest: injected commit failure")

// errDead is what a killed pool's connector answers.
var errDead = errors.New("storetest: the process is dead (injected crash)")

// OpenFaulty is Open through a Faults seam.
func OpenFaulty(t testing.TB, url string) (*store.Store, *Faults) {
	t.Helper()
	f := &Faults{}
	st, err := store.Open(context.Background(), url, store.WithConnector(f.wrap))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background(), jobs.Migrate(st)); err != nil {
		t.Fatal(err)
	}
	return st, f
}

// Inject arms a commit fault; it fires once.
func (f *Faults) Inject(ft CommitFault) *CommitFault {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, &ft)
	return &ft
}

// Disarm drops every fault that has not fired.
func (f *Faults) Disarm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = nil
}

// Fired reports whether the fault has fired.
func (f *Faults) Fired(ft *CommitFault) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return ft.fired
}

// Crash kills the pool now: every later call fails, as in a killed process.
func (f *Faults) Crash() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead = true
}

// Dead reports whether the pool was killed.
func (f *Faults) Dead() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dead
}

// commit decides what happens to a transaction's commit: the fault that
// fires for its statements, if any.
func (f *Faults) commit(stmts []string) (ft CommitFault, fire bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.faults {
		if c.fired || !matches(c.Match, stmts) {
			continue
		}
		if c.Skip > 0 {
			c.Skip--
			continue
		}
		c.fired = true
		f.faults = slices.DeleteFunc(f.faults, func(c *CommitFault) bool { return c.fired })
		return *c, true
	}
	return CommitFault{}, false
}

func matches(match string, stmts []string) bool {
	for _, s := range stmts {
		s = strings.ToLower(s)
		if match == "" && isWrite(s) && !strings.Contains(s, "river_") {
			return true
		}
		if match != "" && strings.Contains(s, strings.ToLower(match)) {
			return true
		}
	}
	return false
}

// isWrite reports whether a (lower-case) statement writes.
func isWrite(s string) bool {
	return strings.Contains(s, "insert ") || strings.Contains(s, "update ") || strings.Contains(s, "delete ")
}

func (f *Faults) wrap(c driver.Connector) driver.Connector { return &connector{inner: c, f: f} }

type connector struct {
	inner driver.Connector
	f     *Faults
}

func (c *connector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.f.Dead() {
		return nil, errDead
	}
	inner, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{inner: inner, f: c.f}, nil
}

func (c *connector) Driver() driver.Driver { return c.inner.Driver() }

// conn forwards to the driver's connection, records the statements of the
// open transaction and fails every call once the pool is dead.
type conn struct {
	inner driver.Conn
	f     *Faults
	tx    *tx
}

func (c *conn) alive() error {
	if c.f.Dead() {
		return driver.ErrBadConn
	}
	return nil
}

func (c *conn) note(query string) {
	if c.tx != nil {
		c.tx.stmts = append(c.tx.stmts, query)
	}
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	c.note(query)
	if p, ok := c.inner.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.inner.Prepare(query)
}

func (c *conn) Close() error { return c.inner.Close() }

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	b, ok := c.inner.(driver.ConnBeginTx)
	if !ok {
		return nil, errors.New("storetest: the driver has no BeginTx")
	}
	inner, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	c.tx = &tx{inner: inner, c: c}
	return c.tx, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	e, ok := c.inner.(driver.ExecerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	if c.tx != nil || !isWrite(strings.ToLower(query)) {
		c.note(query)
		return e.ExecContext(ctx, query, args)
	}
	// A write on its own commits by itself.
	ft, fire := c.f.commit([]string{query})
	if !fire {
		return e.ExecContext(ctx, query, args)
	}
	if ft.After {
		if _, err := e.ExecContext(ctx, query, args); err != nil {
			return nil, err
		}
	}
	if ft.Crash {
		c.f.Crash()
		return nil, driver.ErrBadConn
	}
	return nil, ErrInjectedCommit
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.alive(); err != nil {
		return nil, err
	}
	q, ok := c.inner.(driver.QueryerContext)
	if !ok {
		return nil, driver.ErrSkip
	}
	c.note(query)
	return q.QueryContext(ctx, query, args)
}

func (c *conn) CheckNamedValue(nv *driver.NamedValue) error {
	if n, ok := c.inner.(driver.NamedValueChecker); ok {
		return n.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func (c *conn) ResetSession(ctx context.Context) error {
	if err := c.alive(); err != nil {
		return err
	}
	if r, ok := c.inner.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if c.f.Dead() {
		return false
	}
	if v, ok := c.inner.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// tx is one transaction and the statements run in it.
type tx struct {
	inner driver.Tx
	c     *conn
	stmts []string
}

func (t *tx) Commit() error {
	t.c.tx = nil
	if err := t.c.alive(); err != nil {
		_ = t.inner.Rollback()
		return err
	}
	ft, fire := t.c.f.commit(t.stmts)
	if !fire {
		return t.inner.Commit()
	}
	if ft.After {
		if err := t.inner.Commit(); err != nil {
			return err
		}
	} else {
		_ = t.inner.Rollback()
	}
	if ft.Crash {
		t.c.f.Crash()
		return driver.ErrBadConn
	}
	return ErrInjectedCommit
}

func (t *tx) Rollback() error {
	t.c.tx = nil
	return t.inner.Rollback()
}
