-- +goose Up
-- One row per admitted revision: the deployment's persisted status, which
-- GET …/deployments/:id reads without calling any runtime. Terminal rows
-- are never rewritten.
CREATE TABLE deployments (
    revision_id          TEXT PRIMARY KEY,
    agent_id             TEXT NOT NULL,
    namespace_id         TEXT NOT NULL,
    actor_id             TEXT NOT NULL,
    status               TEXT NOT NULL,
    error_code           TEXT,
    error_data           TEXT,
    warnings             TEXT NOT NULL,
    last_attempt_at      BIGINT,
    last_attempt_code    TEXT,
    runtime_failure      TEXT,
    next_attempt_at      BIGINT,
    attempts             INTEGER NOT NULL DEFAULT 0,
    admitted_at          BIGINT NOT NULL,
    finished_at          BIGINT,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX deployments_agent ON deployments (agent_id, admitted_at);

-- +goose Down
DROP TABLE deployments;
