-- +goose Up
-- A deleted Namespace releases its name once its teardown has finished
-- (the row stays, tombstoned, so audit history keeps resolving its ID).
-- Partial unique indexes are portable across SQLite and PostgreSQL.
DROP INDEX namespaces_name;
CREATE UNIQUE INDEX namespaces_live_name ON namespaces (name) WHERE deleted_at IS NULL;

-- +goose Down
DROP INDEX namespaces_live_name;
CREATE UNIQUE INDEX namespaces_name ON namespaces (name);
