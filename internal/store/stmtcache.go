package store

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
)

// stmtCacheSize bounds the prepared statements one SQLite connection keeps:
// occ and River run a few hundred distinct statements; the least recently
// used beyond this many is closed.
const stmtCacheSize = 512

// stmtCaching makes every connection of a SQLite pool keep its statements
// prepared, keyed by their text. modernc.org/sqlite parses a statement on
// each ExecContext and QueryContext of a connection (a CPU profile of
// concurrent Agent creates spent a fifth of occ's CPU in the SQL parser); a
// prepared statement it keeps parsed, and runs again after a reset.
//
// It sits under any other wrapper (storetest's faults see every statement
// as before) and does nothing a connection does not already do in order:
// database/sql hands one connection to one goroutine at a time.
type stmtCaching struct{ inner driver.Connector }

func (c stmtCaching) Connect(ctx context.Context) (driver.Conn, error) {
	inner, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{Conn: inner, stmts: map[string]*list.Element{}, order: list.New()}, nil
}

func (c stmtCaching) Driver() driver.Driver { return c.inner.Driver() }

// cachingConn is one connection and its prepared statements, most recently
// used first in order.
type cachingConn struct {
	driver.Conn
	stmts map[string]*list.Element // of *cachedStmt
	order *list.List
}

// cachedStmt is a prepared statement; busy while rows read from it are
// open (a statement runs one query at a time), closed at eviction or, when
// evicted busy, once its rows close.
type cachedStmt struct {
	query   string
	stmt    driver.Stmt
	busy    bool
	evicted bool
}

// errNotCached says a statement could not be taken from the cache; the
// caller runs the query on the connection itself.
var errNotCached = errors.New("statement not cached")

// take returns query's prepared statement, preparing it on first use, or
// errNotCached while its rows are still open (a query run again inside a
// loop over its own rows).
func (c *cachingConn) take(ctx context.Context, query string) (*cachedStmt, error) {
	if e, ok := c.stmts[query]; ok {
		cs := e.Value.(*cachedStmt)
		if cs.busy {
			return nil, errNotCached
		}
		c.order.MoveToFront(e)
		return cs, nil
	}
	p, ok := c.Conn.(driver.ConnPrepareContext)
	if !ok {
		return nil, errNotCached
	}
	st, err := p.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs := &cachedStmt{query: query, stmt: st}
	c.stmts[query] = c.order.PushFront(cs)
	for c.order.Len() > stmtCacheSize {
		c.evict(c.order.Back())
	}
	return cs, nil
}

// evict drops a statement from the cache, closing it now or, while its
// rows are open, when they close.
func (c *cachingConn) evict(e *list.Element) {
	cs := c.order.Remove(e).(*cachedStmt)
	delete(c.stmts, cs.query)
	cs.evicted = true
	if !cs.busy {
		_ = cs.stmt.Close()
	}
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.take(ctx, query)
	if errors.Is(err, errNotCached) {
		if e, ok := c.Conn.(driver.ExecerContext); ok {
			return e.ExecContext(ctx, query, args)
		}
		return nil, driver.ErrSkip
	}
	if err != nil {
		return nil, err
	}
	return cs.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.take(ctx, query)
	if errors.Is(err, errNotCached) {
		if q, ok := c.Conn.(driver.QueryerContext); ok {
			return q.QueryContext(ctx, query, args)
		}
		return nil, driver.ErrSkip
	}
	if err != nil {
		return nil, err
	}
	rows, err := cs.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, cs: cs}, nil
}

// Close closes every cached statement, then the connection.
func (c *cachingConn) Close() error {
	for e := c.order.Front(); e != nil; e = c.order.Front() {
		c.evict(e)
	}
	return c.Conn.Close()
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if p, ok := c.Conn.(driver.ConnPrepareContext); ok {
		return p.PrepareContext(ctx, query)
	}
	return c.Conn.Prepare(query)
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return nil, errors.New("store: the SQLite driver has no BeginTx")
}

func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *cachingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

func (c *cachingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// cachedRows gives its statement back when it closes.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	if r.cs != nil {
		r.cs.busy = false
		if r.cs.evicted {
			_ = r.cs.stmt.Close()
		}
		r.cs = nil
	}
	return err
}
