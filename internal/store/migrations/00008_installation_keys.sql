-- +goose Up
-- Small keys occ itself needs, each encrypted with the Secrets keyring (so
-- a database reader cannot use them).
CREATE TABLE installation_keys (
    name       TEXT PRIMARY KEY,
    ciphertext TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE installation_keys;
