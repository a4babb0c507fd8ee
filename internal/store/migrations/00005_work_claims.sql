-- +goose Up
-- One live claim per resource: the worker acts on a Namespace (later an
-- Agent) from one job at a time. A claim outlives a dead worker only until
-- it expires.
CREATE TABLE work_claims (
    resource_id TEXT PRIMARY KEY,
    token       TEXT NOT NULL,
    expires_at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE work_claims;
