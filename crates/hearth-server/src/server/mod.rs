//! The HTTP server, one file per concern: its life (`lifecycle.rs`), its
//! routes (`routes.rs`, `body.rs`, `host.rs`), jobs (`admit.rs`,
//! `worker.rs`), keys (`keys.rs`), its ledger, where what outlives a
//! request is kept (the trait `ledger.rs`: the server's own data folder,
//! `folder.rs`, or a fleet's database, `fleet.rs`), storage (`storage.rs`,
//! `slots.rs`), the day's bootstraps (`usage.rs`), the caches
//! (`caches.rs`) and the state they share (`state.rs`).
//!
//! # Scheduling
//!
//! Queued jobs start **in turn across tenants** (across key ids on an
//! open server; `schedule.rs`), the tenant served least recently first: a
//! tenant's single job waits for the jobs already running, not for other
//! tenants' queues. Several jobs run at once, all on
//! the threads of **one shared rayon pool** (`--threads`), so the
//! bootstraps of narrow jobs fill the threads that one of them alone would
//! leave idle. A job starts when, beside the jobs running,
//!
//! * its *width* fits the pool: its bootstraps per level on average
//!   (#PBS / depth, at most `--threads`), summed over the running jobs, at
//!   most `--threads`. A job that fills the pool by itself runs alone, as
//!   fast as it would one at a time, and cannot keep a newcomer waiting
//!   behind several such jobs (rayon serves work from outside the pool
//!   only when its threads have none of their own);
//! * its memory estimate (on the whole pool, as admitted) fits
//!   `--max-memory` with theirs;
//! * fewer than `--max-jobs` run.
//!
//! The next job in turn waits for room rather than being overtaken, so a
//! large job is not starved by small ones. Each job keeps its own progress
//! counter and its own backend (scratch buffers, tables), so the bound per
//! job stays what admission checked.
//!
//! # Where work happens
//!
//! The async threads only move bytes and check headers. Rebuilding a
//! program, decoding a bundle, and loading or decompressing a server key
//! run under [`tokio::task::spawn_blocking`], at most `--threads` of them
//! at once (a semaphore), so many clients uploading at once wait in line
//! instead of starving the runtime. Each job worker is an OS thread of its
//! own that waits for the pool while its job runs.
//!
//! # Bounds
//!
//! Every resource a request or a job can consume is bounded, per tenant
//! and server-wide, and taken before it is spent: connections and their
//! time (`crate::conn`), request bodies (`body.rs`), the queue, storage
//! and the day's bootstraps (`admit.rs`, `storage.rs`), downloads
//! (`routes.rs`). A failure closes the server, never opens it: a folder
//! that had tenants refuses every request when its tenants file goes
//! ([`crate::tenants`]).
//!
//! # Durability
//!
//! A job is written to disk before it is acknowledged, its result before
//! it is marked done (see [`crate::store`]), each write synced with its
//! folder. A server killed at any point and started again on the same
//! folder has every acknowledged job: queued ones (and the one that was
//! running) run again, finished ones keep their results until deleted.
//! Each start is counted on disk first: a job that was running during
//! `--max-attempts` crashes fails as `crashed` instead, so the server
//! comes up.

mod admit;
mod body;
mod caches;
mod cors;
mod fleet;
mod folder;
mod host;
mod keys;
mod ledger;
mod lifecycle;
mod lock;
mod routes;
mod slots;
mod state;
mod storage;
mod usage;
mod worker;

pub use lifecycle::{run, start, Server, ServerHandle, OPENAPI};
pub(crate) use lock::lock;
pub(crate) use storage::free_bytes;
