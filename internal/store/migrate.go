package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"path/filepath"

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
	_, err := s.MigrateReport(ctx, extra...)
	return err
}

// MigrateReport is Migrate, returning the files of occ's migrations it
// applied ("00010_namespace_names.sql"), none when the schema was current.
func (s *Store) MigrateReport(ctx context.Context, extra ...func(context.Context) error) ([]string, error) {
	if s.dialect == Postgres {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return nil, fmt.Errorf("migration lock connection: %w", err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", migrationLockKey); err != nil {
			return nil, fmt.Errorf("take migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLockKey) //nolint:errcheck
	}
	sub, err := fs.Sub(migrationFS, "migrations")
	if err != nil {
		return nil, err
	}
	dialect := goose.DialectSQLite3
	if s.dialect == Postgres {
		dialect = goose.DialectPostgres
	}
	p, err := goose.NewProvider(dialect, s.db, sub, goose.WithDisableGlobalRegistry(true),
		goose.WithGoMigrations(policyGenerationMigration(s.dialect)))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	var applied []string
	for _, r := range results {
		applied = append(applied, filepath.Base(r.Source.Path))
	}
	for _, step := range extra {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	return applied, nil
}
