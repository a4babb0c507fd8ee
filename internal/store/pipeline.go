package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
)

// On PostgreSQL each statement is a round trip to the server, and the
// round trips, more than the statements, are what a write costs the server
// and occ (a create made eight). Two kinds of them carry nothing the
// transaction waits for, so a pipelined connection sends them with the
// next statement in one round trip (a pgx batch):
//
//   - BEGIN: sent with the transaction's first statement when that is a
//     write (an Exec) with arguments; before a first read it is still its
//     own round trip, as database/sql wants that read's rows from pgx's
//     own driver.
//   - writes made with execDeferred (the audit event, a change
//     notification): sent with the next statement, or with COMMIT. Their
//     result is known only then; their failure fails that statement, or the
//     commit, and so the transaction, never silently.
//
// Outside a transaction nothing is held back.

// pipelinedConnector makes pgx's connections pipelined.
type pipelinedConnector struct{ driver.Connector }

func (c pipelinedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	pc, ok := conn.(*stdlib.Conn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("pipelined connection: %T is not pgx's", conn)
	}
	return &pipelinedConn{Conn: pc}, nil
}

// pipelinedConn is a pgx connection whose transactions begin lazily and
// hold back deferred writes. database/sql uses a connection from one
// goroutine at a time, so it needs no lock.
type pipelinedConn struct {
	*stdlib.Conn
	inTx     bool     // a transaction is open for database/sql
	begun    bool     // BEGIN has been sent
	deferred []queued // writes held back, in order
}

type queued struct {
	sql  string
	args []any
}

// DeferredWriteError is the failure of a write sent after its call
// returned (execDeferred): it is reported by the statement or the commit
// it went with, and the transaction did not commit.
type DeferredWriteError struct{ Err error }

func (e *DeferredWriteError) Error() string {
	return "an earlier write of the transaction failed: " + e.Err.Error()
}
func (e *DeferredWriteError) Unwrap() error { return e.Err }

type deferKey struct{}

// deferrable marks ctx so that a write made with it inside a transaction
// is held back (execDeferred).
func deferrable(ctx context.Context) context.Context { return context.WithValue(ctx, deferKey{}, true) }

func (c *pipelinedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.Isolation != 0 || opts.ReadOnly {
		tx, err := c.Conn.BeginTx(ctx, opts)
		if err != nil {
			return nil, err
		}
		c.inTx, c.begun = true, true
		return pipelinedTx{c: c, ctx: ctx, eager: tx}, nil
	}
	if c.closed() {
		return nil, driver.ErrBadConn
	}
	c.inTx, c.begun, c.deferred = true, false, nil
	return pipelinedTx{c: c, ctx: ctx}, nil
}

// closed reports whether pgx's connection is closed.
func (c *pipelinedConn) closed() bool { return c.Conn.Conn().IsClosed() }

func (c *pipelinedConn) ExecContext(ctx context.Context, query string, named []driver.NamedValue) (driver.Result, error) {
	if !c.inTx {
		return c.Conn.ExecContext(ctx, query, named)
	}
	args := values(named)
	if ctx.Value(deferKey{}) != nil {
		c.deferred = append(c.deferred, queued{query, args})
		return deferredResult{}, nil
	}
	if len(args) == 0 {
		// pgx runs a statement without arguments by the simple protocol,
		// which takes several statements at once (migrations do): a batch
		// would not.
		if err := c.flush(ctx); err != nil {
			return nil, err
		}
		return c.Conn.ExecContext(ctx, query, named)
	}
	if c.begun && len(c.deferred) == 0 {
		return c.Conn.ExecContext(ctx, query, named)
	}
	tags, err := c.send(ctx, queued{query, args})
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(tags[len(tags)-1].RowsAffected()), nil
}

func (c *pipelinedConn) QueryContext(ctx context.Context, query string, named []driver.NamedValue) (driver.Rows, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.Conn.QueryContext(ctx, query, named)
}

// PrepareContext sends what is held back first: a prepared statement runs
// past this connection's ExecContext and QueryContext.
func (c *pipelinedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.flush(ctx); err != nil {
		return nil, err
	}
	return c.Conn.PrepareContext(ctx, query)
}

func (c *pipelinedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// flush sends BEGIN, if not yet sent, and the deferred writes, inside a
// transaction; outside one there is nothing to send.
func (c *pipelinedConn) flush(ctx context.Context) error {
	if !c.inTx || (c.begun && len(c.deferred) == 0) {
		return nil
	}
	_, err := c.send(ctx)
	return err
}

// send sends BEGIN if not yet sent, the deferred writes and then last, in
// one round trip, and returns the command tags of last. The transaction
// counts as begun whatever the outcome: a failure leaves it to roll back.
func (c *pipelinedConn) send(ctx context.Context, last ...queued) ([]pgconn.CommandTag, error) {
	b := &pgx.Batch{}
	if !c.begun {
		b.Queue("BEGIN")
	}
	held := len(c.deferred)
	for _, q := range append(c.deferred, last...) {
		b.Queue(q.sql, q.args...)
	}
	wasBegun := c.begun
	c.begun, c.deferred = true, nil
	res := c.Conn.Conn().SendBatch(ctx, b)
	defer res.Close()
	if !wasBegun {
		if _, err := res.Exec(); err != nil {
			return nil, err
		}
	}
	for range held {
		if _, err := res.Exec(); err != nil {
			return nil, &DeferredWriteError{Err: err}
		}
	}
	tags := make([]pgconn.CommandTag, 0, len(last))
	for range last {
		tag, err := res.Exec()
		if err != nil {
			return nil, err
		}
		tags = append(tags, tag)
	}
	return tags, res.Close()
}

// pipelinedTx ends a pipelined transaction: COMMIT goes with the deferred
// writes; a transaction that sent nothing has nothing to end.
type pipelinedTx struct {
	c     *pipelinedConn
	ctx   context.Context
	eager driver.Tx // a transaction with options, begun at once by pgx
}

func (t pipelinedTx) Commit() error {
	c := t.c
	defer func() { c.inTx, c.begun, c.deferred = false, false, nil }()
	if t.eager != nil {
		return t.eager.Commit()
	}
	if !c.begun && len(c.deferred) == 0 {
		return nil
	}
	tags, err := c.send(t.ctx, queued{sql: "COMMIT"})
	if err != nil {
		// A statement failed before COMMIT ran: the transaction is open
		// and aborted on the server.
		if !c.closed() {
			_, _ = c.Conn.Conn().Exec(t.ctx, "ROLLBACK")
		}
		return err
	}
	// COMMIT of a transaction that failed earlier answers ROLLBACK.
	if tags[0].String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	return nil
}

func (t pipelinedTx) Rollback() error {
	c := t.c
	defer func() { c.inTx, c.begun, c.deferred = false, false, nil }()
	if t.eager != nil {
		return t.eager.Rollback()
	}
	if !c.begun || c.closed() {
		return nil
	}
	_, err := c.Conn.Conn().Exec(t.ctx, "ROLLBACK")
	return err
}

// deferredResult is the result of a held-back write: known at commit.
type deferredResult struct{}

var errDeferredResult = errors.New("a deferred write's result is known only when the transaction commits")

func (deferredResult) LastInsertId() (int64, error) { return 0, errDeferredResult }
func (deferredResult) RowsAffected() (int64, error) { return 0, errDeferredResult }

func values(named []driver.NamedValue) []any {
	args := make([]any, len(named))
	for i, v := range named {
		args[i] = v.Value
	}
	return args
}
