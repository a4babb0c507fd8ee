-- +goose Up
-- The data of a deployment's latest attempt (progress.lastAttempt.data):
-- a JSON object of closed facts, such as the phase and bytes on disk of a
-- runtime install (RUNTIME_INSTALLING); NULL when the attempt has none.
ALTER TABLE deployments ADD COLUMN last_attempt_data TEXT;

-- +goose Down
ALTER TABLE deployments DROP COLUMN last_attempt_data;
