-- +goose Up
-- Secrets: metadata in the clear, the value only as a tink AEAD ciphertext
-- (base64) bound to installation, Namespace and Secret ID. key_id is the
-- keyset key that made the ciphertext, so a key rotation finds the rows
-- still under older keys.
CREATE TABLE secrets (
    id           TEXT PRIMARY KEY,
    namespace_id TEXT NOT NULL REFERENCES namespaces (id),
    name         TEXT NOT NULL,
    ciphertext   TEXT NOT NULL,
    key_id       BIGINT NOT NULL,
    version      BIGINT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX secrets_name ON secrets (namespace_id, name);
CREATE INDEX secrets_order ON secrets (namespace_id, created_at, id);
CREATE INDEX secrets_key ON secrets (key_id, id);

-- +goose Down
DROP TABLE secrets;
