package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationLockKey is the PostgreSQL advisory lock that serialises migrations
// when several replicas start at once.
const migrationLockKey = 7_242_001_331

// Migrate applies occ's schema migrations, then runs each extra step (River's
// migrations) while holding the same lock. On PostgreSQL a session advisory
// lock makes concurrent starts safe; a SQLite file has one process.
func (s *Store) Migrate(ctx context.Context, extra ...func(context.Context) error) error {
	if s.dialect == Postgres {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("migration lock connection: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
			return fmt.Errorf("take migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockKey) //nolint:errcheck
	}
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	if s.dialect == Postgres {
		dialect = goose.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, s.db, sub, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	for _, step := range extra {
		if err := step(ctx); err != nil {
			return err
		}
	}
	return nil
}
