-- +goose Up
-- Service accounts and credential sources (portable SQL; times in Unix ms).

-- A Namespace-owned provider account tied to one configured Backend. The
-- issued credential is kept only as ciphertext (base64 of the Secrets
-- keyring's output, associated data binding installation, Namespace and
-- account ID); kind and times are public metadata.
CREATE TABLE service_accounts (
    id                    TEXT PRIMARY KEY,
    namespace_id          TEXT NOT NULL,
    name                  TEXT NOT NULL,
    backend_id            TEXT NOT NULL,
    credential_kind       TEXT,
    credential_ciphertext TEXT,
    credential_issued_at  BIGINT,
    credential_expires_at BIGINT,
    created_by            TEXT NOT NULL,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL,
    version               BIGINT NOT NULL
);
CREATE UNIQUE INDEX service_accounts_name ON service_accounts (namespace_id, name);
CREATE INDEX service_accounts_order ON service_accounts (namespace_id, created_at, id);

-- A Namespace-owned reference registered with the Credential Gateway.
-- config is a JSON object; secrets is a JSON object of field → SecretRef,
-- mirrored row by row in credential_source_secrets so that a Secret's
-- references can be found without parsing JSON.
CREATE TABLE credential_sources (
    id           TEXT PRIMARY KEY,
    namespace_id TEXT NOT NULL,
    name         TEXT NOT NULL,
    source_type  TEXT NOT NULL,
    config       TEXT NOT NULL,
    secrets      TEXT NOT NULL,
    state        TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    version      BIGINT NOT NULL
);
CREATE UNIQUE INDEX credential_sources_name ON credential_sources (namespace_id, name);
CREATE INDEX credential_sources_order ON credential_sources (namespace_id, created_at, id);

CREATE TABLE credential_source_secrets (
    source_id    TEXT NOT NULL REFERENCES credential_sources (id) ON DELETE CASCADE,
    field        TEXT NOT NULL,
    namespace_id TEXT NOT NULL,
    secret_id    TEXT NOT NULL,
    PRIMARY KEY (source_id, field)
);
CREATE INDEX credential_source_secrets_secret ON credential_source_secrets (secret_id);

-- +goose Down
DROP TABLE credential_source_secrets;
DROP TABLE credential_sources;
DROP TABLE service_accounts;
