-- Each server's last heartbeat (the database's clock) and its lease: an
-- admission left `admitting` by a server whose heartbeats stopped for
-- longer than its lease is given back by any server's sweeper at once,
-- not after an hour.
CREATE TABLE servers (
    id TEXT PRIMARY KEY,
    seen TIMESTAMPTZ NOT NULL,
    lease_ms BIGINT NOT NULL
);

-- The server admitting a job (`admitting` rows only; NULL for rows
-- written before this version, which keep the hour).
ALTER TABLE jobs ADD COLUMN admitted_by TEXT;
CREATE INDEX jobs_admitting ON jobs (admitted_by) WHERE state = 'admitting';
