-- +goose Up
CREATE TABLE presets (
    id             TEXT PRIMARY KEY,
    namespace_id   TEXT NOT NULL,
    name           TEXT NOT NULL,
    source         TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    settings       TEXT NOT NULL,
    version        BIGINT NOT NULL,
    created_by     TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
CREATE UNIQUE INDEX presets_name ON presets (namespace_id, name);
CREATE INDEX presets_order ON presets (namespace_id, created_at, id);

-- +goose Down
DROP TABLE presets;
