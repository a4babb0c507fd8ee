-- +goose Up
CREATE TABLE configurations (
    id              TEXT PRIMARY KEY,
    namespace_id    TEXT NOT NULL,
    name            TEXT NOT NULL,
    kind            TEXT NOT NULL,
    schema_version  INTEGER NOT NULL,
    doc_values      TEXT NOT NULL,
    secret_bindings TEXT NOT NULL,
    generation      BIGINT NOT NULL,
    version         BIGINT NOT NULL,
    created_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE UNIQUE INDEX configurations_name ON configurations (namespace_id, name);
CREATE INDEX configurations_order ON configurations (namespace_id, created_at, id);

-- +goose Down
DROP TABLE configurations;
