-- +goose Up
CREATE TABLE agents (
    id                   TEXT PRIMARY KEY,
    namespace_id         TEXT NOT NULL,
    name                 TEXT NOT NULL,
    status               TEXT NOT NULL,
    desired_state        TEXT NOT NULL,
    configuration_id     TEXT NOT NULL,
    service_principal_id TEXT NOT NULL,
    active_revision_id   TEXT,
    execution_mode       TEXT NOT NULL,
    backend_id           TEXT,
    harness_auth         TEXT NOT NULL,
    plugins              TEXT NOT NULL,
    version              BIGINT NOT NULL,
    created_by           TEXT NOT NULL,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL
);
-- Names are unique per Namespace; a deleted Agent's row goes, releasing it.
CREATE UNIQUE INDEX agents_name ON agents (namespace_id, name);
CREATE INDEX agents_order ON agents (namespace_id, created_at, id);
CREATE INDEX agents_configuration ON agents (configuration_id);

-- Initial workspace files, staged privately until the first deployment
-- applies them; never part of the Agent, Configuration or revision records.
CREATE TABLE agent_staged_files (
    agent_id    TEXT PRIMARY KEY,
    defaults_id TEXT,
    files       TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE agent_revisions (
    id             TEXT PRIMARY KEY,
    agent_id       TEXT NOT NULL,
    namespace_id   TEXT NOT NULL,
    number         BIGINT NOT NULL,
    schema_version INTEGER NOT NULL,
    snapshot       TEXT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL
);
CREATE UNIQUE INDEX agent_revisions_number ON agent_revisions (agent_id, number);
CREATE INDEX agent_revisions_order ON agent_revisions (agent_id, created_at, id);

-- +goose Down
DROP TABLE agent_revisions;
DROP TABLE agent_staged_files;
DROP TABLE agents;
