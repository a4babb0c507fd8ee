package store

import (
	"database/sql"
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrNotFound is returned when a query that expects one row finds none.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned when a write breaks a uniqueness rule.
var ErrConflict = errors.New("store: unique constraint violated")

// ErrStale is returned when a compare-and-set on a version found another.
var ErrStale = errors.New("store: stale version")

// ErrCommitUnknown is returned when COMMIT failed in a way that does not
// say whether the transaction took effect (a connection lost mid-commit):
// the caller must neither assume the change was made nor make it again
// blindly. A commit refused for a serialization failure is ErrStale instead
// (it certainly did not take effect).
var ErrCommitUnknown = errors.New("store: commit outcome unknown")

// classify turns driver errors into the store's sentinel errors.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return ErrNotFound
	case isUniqueViolation(err):
		return errors.Join(ErrConflict, err)
	case isTransient(err):
		return errors.Join(ErrStale, err)
	}
	return err
}

// isTransient reports a PostgreSQL serialization failure or deadlock: the
// transaction lost a race and can run again on fresh state.
func isTransient(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01")
}

func isUniqueViolation(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		return pg.Code == "23505"
	}
	// modernc.org/sqlite reports SQLITE_CONSTRAINT_UNIQUE (2067) and
	// SQLITE_CONSTRAINT_PRIMARYKEY (1555) in the message.
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") ||
		strings.Contains(msg, "constraint failed: UNIQUE")
}
