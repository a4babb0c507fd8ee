// Package store holds occ's transactions and queries over database/sql, for
// the embedded SQLite file and for PostgreSQL. Query methods live on Q, which
// both a plain connection pool and a transaction provide.
package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // registers the "sqlite" database/sql driver
)

// Dialect names the database engine behind a Store.
type Dialect string

// The supported dialects.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Store is occ's database: a pool plus its dialect.
type Store struct {
	db      *sql.DB
	dialect Dialect
	url     string // PostgreSQL only: the listener's own connection
	hub     *hub
	Q

	listenMu   sync.Mutex
	stopListen context.CancelFunc // set once the listener runs, and by Close
	listenDone chan struct{}
}

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q carries the query methods; it runs them on a pool or inside a
// transaction, and announces the changes streams watch.
type Q struct {
	q  querier
	ch *changes
}

// Tx is one database transaction.
type Tx struct {
	Q
	tx      *sql.Tx
	dialect Dialect
}

// execDeferred runs a write whose result the transaction does not wait
// for (an audit event, a change notification). Inside a PostgreSQL
// transaction it is sent with the next statement or the commit, whose
// failure it then is (pipeline.go); elsewhere it runs at once.
func (q Q) execDeferred(ctx context.Context, query string, args ...any) error {
	_, err := q.q.ExecContext(deferrable(ctx), query, args...)
	return classify(err)
}

// SQL returns the underlying transaction, for River's transactional enqueue.
func (t *Tx) SQL() *sql.Tx { return t.tx }

// Open connects to the database a URL names: sqlite://PATH or
// postgres://… . It does not migrate.
func Open(ctx context.Context, rawURL string, opts ...Option) (*Store, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	switch {
	case strings.HasPrefix(rawURL, "sqlite://"):
		return openSQLite(ctx, strings.TrimPrefix(rawURL, "sqlite://"), o)
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return openPostgres(ctx, rawURL, o)
	default:
		return nil, fmt.Errorf("database URL must start with sqlite:// or postgres://")
	}
}

// Option changes how Open connects.
type Option func(*options)

type options struct {
	wrap  func(driver.Connector) driver.Connector
	conns int
}

// WithConnections bounds a PostgreSQL pool to n open connections (by
// default postgresConns); SQLite keeps its one.
func WithConnections(n int) Option {
	return func(o *options) { o.conns = n }
}

// WithConnector makes every connection of the pool come from
// wrap(the dialect's own connector): the seam through which tests inject
// database faults (storetest.Faults) under the store and River alike.
func WithConnector(wrap func(driver.Connector) driver.Connector) Option {
	return func(o *options) { o.wrap = wrap }
}

// openDB opens a pool on the registered driver name, its connections
// made by connector (nil: the driver's own) and then through o's wrapper
// when there is one.
func openDB(name, dsn string, connector func(driver.Connector) driver.Connector, o options) (*sql.DB, error) {
	db, err := sql.Open(name, dsn)
	if err != nil || (o.wrap == nil && connector == nil) {
		return db, err
	}
	drv := db.Driver()
	if err := db.Close(); err != nil {
		return nil, err
	}
	var c driver.Connector = dsnConnector{dsn: dsn, drv: drv}
	if connector != nil {
		c = connector(c)
	}
	if o.wrap != nil {
		c = o.wrap(c)
	}
	return sql.OpenDB(c), nil
}

// dsnConnector is a driver.Connector for any driver.
type dsnConnector struct {
	dsn string
	drv driver.Driver
}

func (c dsnConnector) Connect(context.Context) (driver.Conn, error) { return c.drv.Open(c.dsn) }
func (c dsnConnector) Driver() driver.Driver                        { return c.drv }

func openSQLite(ctx context.Context, path string, o options) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite database URL has no path")
	}
	if err := privateFiles(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "busy_timeout(10000)", "foreign_keys(1)", "synchronous(NORMAL)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := openDB("sqlite", "file:"+path+"?"+q.Encode(), func(c driver.Connector) driver.Connector { return stmtCaching{c} }, o)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// One connection: SQLite has one writer, and River's SQLite driver wants it.
	db.SetMaxOpenConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	// No deadline of its own: opening a local file has no peer to wait
	// for, a lock held by another process ends at busy_timeout, and on a
	// disk that stalls under load (CI ran out a 10 s bound once) a slow
	// start beats a failed one.
	return ping(ctx, db, SQLite)
}

// privateFiles makes the SQLite database and its WAL and shared-memory
// files readable by occ's user only (0600): they hold every row, Secret
// ciphertexts and key digests included. SQLite creates the -wal and -shm
// files with the database file's permissions, so the database is created
// 0600 before SQLite opens it, and files an older occ made are tightened.
func privateFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("open sqlite %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("open sqlite %s: %w", path, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chmod(p, 0o600); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("make %s private: %w", p, err)
		}
	}
	return nil
}

// postgresConns bounds one process's PostgreSQL connections unless
// WithConnections says otherwise (occ serve passes its setting,
// databaseConnections).
const postgresConns = 8

func openPostgres(ctx context.Context, rawURL string, o options) (*Store, error) {
	// pgx keeps its own statement cache; pipelined connections save round
	// trips (pipeline.go).
	db, err := openDB("pgx", rawURL, func(c driver.Connector) driver.Connector { return pipelinedConnector{c} }, o)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	// As many idle connections as open ones: with fewer, a burst of
	// requests closed and reopened connections all the time (503 PostgreSQL
	// sessions for one run of bench/load's agents scenario), and each new one
	// costs the server a process and pgx its prepared statements again.
	// Idle ones are closed after five minutes.
	conns := postgresConns
	if o.conns > 0 {
		conns = o.conns
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	db.SetConnMaxIdleTime(5 * time.Minute)
	// A server that does not answer must not hold up start for ever.
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := ping(pingCtx, db, Postgres)
	if err != nil {
		return nil, err
	}
	st.url = rawURL
	return st, nil
}

func ping(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", d, err)
	}
	h := newHub()
	return &Store{db: db, dialect: d, hub: h, Q: Q{q: db, ch: &changes{hub: h, dialect: d}}}, nil
}

// DB returns the pool, for River.
func (s *Store) DB() *sql.DB { return s.db }

// Dialect reports which engine this is.
func (s *Store) Dialect() Dialect { return s.dialect }

// Close stops the change listener and closes the pool.
func (s *Store) Close() error {
	s.listenMu.Lock()
	if s.stopListen != nil && s.listenDone != nil {
		s.stopListen()
		<-s.listenDone
	}
	s.stopListen, s.listenDone = func() {}, nil // no listener starts after Close
	s.listenMu.Unlock()
	return s.db.Close()
}

// Ping checks that the database answers, for /readyz.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	return s.db.QueryRowContext(ctx, "SELECT 1").Scan(&one)
}

// InTx runs fn in one transaction, committing when it returns nil.
func (s *Store) InTx(ctx context.Context, fn func(tx *Tx) error) error {
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	var pending []string
	tx := &Tx{Q: Q{q: sqlTx, ch: &changes{hub: s.hub, dialect: s.dialect, pending: &pending}}, tx: sqlTx, dialect: s.dialect}
	if err := fn(tx); err != nil {
		_ = sqlTx.Rollback()
		return err
	}
	if err := sqlTx.Commit(); err != nil {
		if deferred := (*DeferredWriteError)(nil); errors.As(err, &deferred) {
			// A write sent with the commit failed: nothing committed.
			return fmt.Errorf("commit: %w", classify(err))
		}
		if err := classify(err); errors.Is(err, ErrStale) {
			return fmt.Errorf("commit: %w", err)
		}
		// The change may have committed: whoever waits for a topic is
		// told, a spurious wake-up costs only a re-read.
		for _, topic := range pending {
			s.hub.publish(topic)
		}
		return fmt.Errorf("commit: %w", errors.Join(ErrCommitUnknown, err))
	}
	for _, topic := range pending {
		s.hub.publish(topic)
	}
	return nil
}
