-- A fleet of hearth servers on one database (`hearth server --store
-- postgres://...`): tenants and their tokens, key records, jobs with their
-- queue and leases, and each tenant's storage and daily usage. Blobs (keys,
-- requests, results) are in the blob store; rows name them.

-- One row: the tenants' version (every edit adds one, so that servers
-- read them again) and whether the fleet has had tenants (it then stays
-- closed to anyone without a token, as a data folder's tenants.required).
CREATE TABLE fleet (
    one BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (one),
    tenants_version BIGINT NOT NULL DEFAULT 0,
    tenants_required BOOLEAN NOT NULL DEFAULT FALSE
);
INSERT INTO fleet DEFAULT VALUES;

CREATE TABLE tenants (
    name TEXT PRIMARY KEY,
    max_keys BIGINT NOT NULL,
    max_queue BIGINT NOT NULL,
    max_pbs_per_day BIGINT NOT NULL,
    -- Bytes it may keep stored; NULL: each server's --max-storage.
    max_storage BIGINT
);

-- Only the SHA3-256 of each token's secret is kept.
CREATE TABLE tokens (
    id TEXT PRIMARY KEY,
    tenant TEXT NOT NULL REFERENCES tenants (name) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    created BIGINT NOT NULL,
    revoked BIGINT
);

-- What each tenant holds and has spent ('' is an open fleet's one
-- tenant). Every admission, key registration and deletion of a tenant
-- locks its row: its limits hold across servers.
CREATE TABLE usage (
    tenant TEXT PRIMARY KEY,
    stored_bytes BIGINT NOT NULL DEFAULT 0 CHECK (stored_bytes >= 0),
    -- Days since 1970-01-01 (UTC, the database's clock) of pbs_today.
    day BIGINT NOT NULL DEFAULT 0,
    pbs_today BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE keys (
    tenant TEXT NOT NULL,
    key_id TEXT NOT NULL,
    params TEXT NOT NULL,
    compressed BOOLEAN NOT NULL,
    bytes BIGINT NOT NULL,
    blob TEXT NOT NULL,
    PRIMARY KEY (tenant, key_id)
);

-- When each lane (a tenant; a key id on an open fleet) last had a job
-- start: the queue serves the lane served least recently first.
CREATE TABLE lanes (
    lane TEXT PRIMARY KEY,
    served BIGINT NOT NULL
);
CREATE SEQUENCE turns;

CREATE TABLE jobs (
    id TEXT PRIMARY KEY,
    -- Submission order.
    seq BIGSERIAL NOT NULL,
    tenant TEXT NOT NULL,
    lane TEXT NOT NULL,
    key_id TEXT NOT NULL,
    pbs BIGINT NOT NULL,
    depth BIGINT NOT NULL,
    memory BIGINT NOT NULL,
    -- The most bytes its result can take.
    result_max BIGINT NOT NULL,
    -- Bytes it holds against its tenant's storage.
    held BIGINT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('admitting', 'queued', 'running', 'done', 'failed')),
    -- When it was accepted (Unix ms; the admitting server's clock, for
    -- --queue-ttl) and when it finished (Unix s, the database's clock).
    submitted_ms BIGINT NOT NULL,
    finished_s BIGINT,
    request_blob TEXT,
    result_blob TEXT,
    result_bytes BIGINT,
    error_code TEXT,
    error_message TEXT,
    -- Starts so far; a job whose server died --max-attempts times fails
    -- as crashed.
    attempts INT NOT NULL DEFAULT 0,
    -- The lease: one more at every claim. A server commits a result only
    -- with the fence it claimed the job with, while it holds the lease.
    fence BIGINT NOT NULL DEFAULT 0,
    owner TEXT,
    lease_until TIMESTAMPTZ,
    -- Bootstraps done, as the owner's last heartbeat said.
    done_pbs BIGINT NOT NULL DEFAULT 0,
    ran_by TEXT,
    -- When an admission began (the database's clock): one left over by a
    -- server that died admitting it is removed.
    created TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX jobs_state ON jobs (state, seq);
CREATE INDEX jobs_running ON jobs (lease_until) WHERE state = 'running';
CREATE INDEX jobs_tenant ON jobs (tenant, state);

-- What happened to each job's leases: claimed, committed, refused (a
-- result from a server that no longer held the lease), requeued,
-- crashed. No job has two committed rows.
CREATE TABLE job_events (
    at TIMESTAMPTZ NOT NULL DEFAULT now(),
    job_id TEXT NOT NULL,
    fence BIGINT NOT NULL,
    server TEXT NOT NULL,
    event TEXT NOT NULL
);
CREATE INDEX job_events_job ON job_events (job_id);
CREATE UNIQUE INDEX one_commit_per_job ON job_events (job_id) WHERE event = 'committed';
