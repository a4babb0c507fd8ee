-- +goose Up
-- Portable SQL for SQLite and PostgreSQL: times are Unix milliseconds
-- (BIGINT), flags are INTEGER 0/1, documents are JSON text.

CREATE TABLE installation (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    singleton  INTEGER NOT NULL DEFAULT 1 UNIQUE CHECK (singleton = 1),
    created_at BIGINT NOT NULL
);

CREATE TABLE namespaces (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    status     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    version    BIGINT NOT NULL,
    deleted_at BIGINT
);
-- Names are unique among live Namespaces (00010 releases a deleted one's).
CREATE UNIQUE INDEX namespaces_name ON namespaces (name);
CREATE INDEX namespaces_order ON namespaces (created_at, id);

CREATE TABLE principals (
    id            TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    name          TEXT NOT NULL,
    email         TEXT,
    password_hash TEXT,
    namespace_id  TEXT,
    agent_id      TEXT,
    disabled      INTEGER NOT NULL DEFAULT 0,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL,
    version       BIGINT NOT NULL
);
CREATE UNIQUE INDEX principals_email ON principals (email);
CREATE INDEX principals_order ON principals (created_at, id);

CREATE TABLE service_keys (
    id           TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    namespace_id TEXT,
    name         TEXT NOT NULL,
    lookup       TEXT NOT NULL,
    digest       TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    revoked_at   BIGINT
);
CREATE INDEX service_keys_lookup ON service_keys (lookup);
CREATE INDEX service_keys_order ON service_keys (created_at, id);

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    principal_id  TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    digest        TEXT NOT NULL UNIQUE,
    created_at    BIGINT NOT NULL,
    expires_at    BIGINT NOT NULL,
    revoked_at    BIGINT
);

CREATE TABLE roles (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    namespace_id TEXT,
    builtin      INTEGER NOT NULL DEFAULT 0,
    created_at   BIGINT NOT NULL
);
CREATE UNIQUE INDEX roles_name ON roles (COALESCE(namespace_id, ''), name);
CREATE INDEX roles_order ON roles (created_at, id);

CREATE TABLE role_permissions (
    role_id TEXT NOT NULL REFERENCES roles (id) ON DELETE CASCADE,
    kind    TEXT NOT NULL,
    action  TEXT NOT NULL,
    PRIMARY KEY (role_id, kind, action)
);

CREATE TABLE bindings (
    id           TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    role_id      TEXT NOT NULL REFERENCES roles (id),
    namespace_id TEXT,
    target_kind  TEXT,
    target_id    TEXT,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX bindings_principal ON bindings (principal_id);
CREATE INDEX bindings_role ON bindings (role_id);
CREATE INDEX bindings_order ON bindings (created_at, id);

CREATE TABLE restrictions (
    id           TEXT PRIMARY KEY,
    principal_id TEXT NOT NULL REFERENCES principals (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    action       TEXT NOT NULL,
    namespace_id TEXT,
    target_kind  TEXT,
    target_id    TEXT,
    created_by   TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);
CREATE INDEX restrictions_principal ON restrictions (principal_id);
CREATE INDEX restrictions_order ON restrictions (created_at, id);

CREATE TABLE audit_events (
    id            TEXT PRIMARY KEY,
    occurred_at   BIGINT NOT NULL,
    kind          TEXT NOT NULL,
    action        TEXT NOT NULL,
    outcome       TEXT NOT NULL,
    actor_id      TEXT NOT NULL,
    namespace_id  TEXT,
    resource_kind TEXT NOT NULL,
    resource_id   TEXT NOT NULL,
    request_id    TEXT,
    reason_code   TEXT,
    details       TEXT NOT NULL
);
CREATE INDEX audit_events_order ON audit_events (occurred_at, id);
CREATE INDEX audit_events_namespace ON audit_events (namespace_id, occurred_at, id);

-- Teardown bookkeeping: who initiated a deletion, its state and attempts,
-- so the initiator can refill the budget and another actor can take over.
CREATE TABLE teardowns (
    resource_id   TEXT PRIMARY KEY,
    resource_kind TEXT NOT NULL,
    namespace_id  TEXT NOT NULL,
    actor_id      TEXT NOT NULL,
    state         TEXT NOT NULL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    last_code     TEXT,
    created_at    BIGINT NOT NULL,
    updated_at    BIGINT NOT NULL
);

CREATE TABLE idempotency_keys (
    principal_id   TEXT NOT NULL,
    idem_key       TEXT NOT NULL,
    operation      TEXT NOT NULL,
    request_digest TEXT NOT NULL,
    status         INTEGER NOT NULL,
    body           TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    PRIMARY KEY (principal_id, idem_key)
);

-- +goose Down
DROP TABLE idempotency_keys;
DROP TABLE teardowns;
DROP TABLE audit_events;
DROP TABLE restrictions;
DROP TABLE bindings;
DROP TABLE role_permissions;
DROP TABLE roles;
DROP TABLE sessions;
DROP TABLE service_keys;
DROP TABLE principals;
DROP TABLE namespaces;
DROP TABLE installation;
