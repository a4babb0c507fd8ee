package store

import (
	"database/sql"
	"strings"
	"time"

	"github.com/openclaw/occ/internal/occ"
)

// Cursor is a position in a list ordered by (created_at, id). The zero
// Cursor is the start.
type Cursor struct {
	CreatedAt int64
	ID        string
}

// After reports the cursor just past a row.
func After(t time.Time, id string) Cursor { return Cursor{CreatedAt: occ.Millis(t), ID: id} }

// nullStr stores "" as NULL.
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func str(ns sql.NullString) string { return ns.String }

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return occ.Millis(*t)
}

func timePtr(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := occ.FromMillis(n.Int64)
	return &t
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func targetArgs(t *occ.Target) (any, any) {
	if t == nil {
		return nil, nil
	}
	return string(t.Kind), t.ID
}

func target(kind, id sql.NullString) *occ.Target {
	if !kind.Valid {
		return nil
	}
	return &occ.Target{Kind: occ.Kind(kind.String), ID: id.String}
}

// rowScanner is what *sql.Row and *sql.Rows share.
type rowScanner interface{ Scan(dest ...any) error }

// collect reads every row of rs with scan.
func collect[T any](rs *sql.Rows, err error, scan func(rowScanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []T
	for rs.Next() {
		v, err := scan(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rs.Err()
}

// affected returns ErrNotFound when an update touched no row.
func affected(res sql.Result, err error) error {
	if err != nil {
		return classify(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

// extraScanner scans a row whose first columns are another scanner's and
// whose last ones go to extra (a row read with a joined table's columns).
type extraScanner struct {
	r     rowScanner
	extra []any
}

func (e extraScanner) Scan(dest ...any) error { return e.r.Scan(append(dest, e.extra...)...) }

// qualified prefixes each column of a comma-separated list with alias.
func qualified(alias, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, c := range parts {
		parts[i] = alias + "." + c
	}
	return strings.Join(parts, ", ")
}
