//! A fleet: many `hearth server`s behind one address, sharing one
//! PostgreSQL database (`hearth server --store postgres://...`) and one
//! blob store (`--blobs DIR`, a folder every server mounts).
//!
//! # What lives where
//!
//! The database holds what every server must agree on (`migrations/`):
//! tenants and token hashes ([`tenants`]), key records, jobs with their
//! queue order and leases, each tenant's stored bytes and the day's
//! bootstraps. The blob store ([`blobs`]) holds keys as uploaded, job
//! requests and results; rows name them. Each server keeps only caches
//! (decompressed keys, built programs) and its own counts and metrics.
//!
//! # Jobs
//!
//! * **Admission** (any server): in one transaction that locks the
//!   tenant's `usage` row, the tenant's queue and storage limits and the
//!   day's bootstraps are checked and taken, and the job is written as
//!   `admitting`. Then its program is built and its bundle checked, the
//!   request is written to the blob store, and the job becomes `queued`.
//!   A refused or failed admission gives everything back (a program that
//!   does not build keeps its charge, as on one server).
//! * **Claiming** (a server with room): the next job in the fair order
//!   (the lane served least recently first, then submission order) is
//!   taken with `FOR UPDATE SKIP LOCKED`, so that two servers never take
//!   the same job and none waits for another's claim. The claim adds one
//!   to the job's **fence** and gives its server a **lease** (`--lease`).
//! * **Heartbeats** renew the lease (a third of it apart) and publish the
//!   job's progress. A server that cannot renew it (it was paused, cut off
//!   from the database, or the lease was taken back) stops the job.
//! * **Committing**: the result is written to a blob named by its fence,
//!   then the job is marked `done` only if the server still holds the
//!   lease with the fence it claimed the job with. A server that lost it
//!   has its late result refused (`job_events`: `refused`), so each job
//!   commits exactly one result (a unique index holds it to that).
//! * **Expired leases** (any server's sweeper): the job is queued again,
//!   or fails as `crashed` once it was started `--max-attempts` times.
//!
//! # Guarantees
//!
//! Every acknowledged job runs to one committed result or failure while
//! any server runs, and any server answers for it (status, result,
//! delete). Per-tenant limits (queue, keys, storage, daily bootstraps)
//! hold across the fleet; each server's own `--max-queue` and
//! `--max-keys` bound the fleet's totals as that server sees them. A job
//! may run more than once (a server that died or stalled mid-job), but
//! only one run's result is kept. Clocks: leases, result times and the day
//! are the database's.

pub mod blobs;
mod db;
mod jobs;
mod keys;
pub mod migrate;
mod sql;
pub mod tenants;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use jobs::{Admission, Committed};
pub(crate) use keys::KeyLimits;

use blobs::{BlobStore, Folder};
use db::Db;

use crate::tenants::Tenants;
use crate::wire::JobId;

/// How a server joins a fleet ([`crate::Config::fleet`]).
#[derive(Clone)]
pub struct FleetConfig {
    /// The database: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`.
    pub url: String,
    /// The blob folder every server of the fleet mounts.
    pub blobs: PathBuf,
    /// This server's name in the fleet: it holds leases under it, and
    /// `/v1/info` says it. Unique in the fleet.
    pub server_id: String,
    /// How long a claimed job stays this server's without a heartbeat.
    pub lease: Duration,
    /// The CA (PEM) the database's TLS certificate is checked against;
    /// none: the system's roots.
    pub ca_cert: Option<PathBuf>,
}

impl std::fmt::Debug for FleetConfig {
    /// Without the database's password.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetConfig")
            .field("url", &redacted(&self.url))
            .field("blobs", &self.blobs)
            .field("server_id", &self.server_id)
            .field("lease", &self.lease)
            .field("ca_cert", &self.ca_cert)
            .finish()
    }
}

/// `url` without its password, to be shown.
pub fn redacted(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@') {
            Some((user, host)) => {
                let user = user.split(':').next().unwrap_or_default();
                format!("{scheme}://{user}@{host}")
            }
            None => url.to_string(),
        },
        None => "(a connection string)".into(),
    }
}

/// Whether `id` can name a server: 1 to 64 of a-z, A-Z, 0-9, '.', '-'
/// and '_'.
pub fn valid_server_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
}

/// A default name for this server: its host's name and process id.
pub fn default_server_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| valid_server_id(h) && h.len() <= 48)
        .unwrap_or_else(|| "hearth".into());
    format!("{host}-{}", std::process::id())
}

/// A job this server runs: what its heartbeats renew.
struct Held {
    fence: i64,
    done: Arc<AtomicU64>,
    /// Set when the lease is lost: the job stops at its next step.
    cancel: Arc<AtomicBool>,
}

/// A server's handle on its fleet.
pub(crate) struct Fleet {
    db: Db,
    blobs: Arc<dyn BlobStore>,
    server: String,
    lease: Duration,
    /// The tenants as last read, and their version.
    tenants: Mutex<Option<(i64, Arc<Tenants>)>>,
    /// The jobs this server runs, by id.
    held: Mutex<HashMap<JobId, Held>>,
    /// When this server last looked for orphan blobs.
    collected: Mutex<Option<std::time::Instant>>,
}

/// Blobs no row names are removed once this old ([`Fleet::collect_orphans`]):
/// far longer than any write waits for its row.
pub(crate) const ORPHAN_AGE: Duration = Duration::from_secs(3600);

impl Fleet {
    /// Joins the fleet of `config`: connects (at most `connections` at
    /// once), brings the schema up to date, and gives back the leases a
    /// server of this name held before it stopped (they expire at once:
    /// the next sweep queues their jobs again).
    pub(crate) fn open(config: &FleetConfig, connections: usize) -> Result<Fleet, String> {
        if !valid_server_id(&config.server_id) {
            return Err(format!(
                "{:?} cannot name a server: 1 to 64 of a-z, A-Z, 0-9, '.', '-' and '_'",
                config.server_id
            ));
        }
        if config.lease < Duration::from_millis(300) {
            return Err("--lease must be at least 300ms (heartbeats are a third of it)".into());
        }
        let blobs = Folder::open(&config.blobs)
            .map_err(|e| format!("the blob folder {}: {e}", config.blobs.display()))?;
        let db = Db::connect(&config.url, config.ca_cert.as_deref(), connections)?;
        let fleet = Fleet {
            db,
            blobs: Arc::new(blobs),
            server: config.server_id.clone(),
            lease: config.lease,
            tenants: Mutex::new(None),
            held: Mutex::new(HashMap::new()),
            collected: Mutex::new(None),
        };
        fleet
            .db
            .block(fleet.release_own_leases())
            .map_err(|e| e.message)?;
        Ok(fleet)
    }

    /// How often heartbeats go: a third of the lease.
    pub(crate) fn heartbeat_every(&self) -> Duration {
        self.lease / 3
    }

    /// Calls `wake` whenever a job is queued anywhere in the fleet.
    pub(crate) fn on_queued(&self, wake: impl Fn() + Send + Sync + 'static) {
        self.db.listen(wake);
    }

    /// Runs `f` to its end from a thread outside any runtime.
    pub(crate) fn block<F: std::future::Future>(&self, f: F) -> F::Output {
        self.db.block(f)
    }

    /// Whether it is time to look for orphan blobs (at start, then every
    /// [`ORPHAN_AGE`]); true once per period.
    pub(crate) fn orphans_due(&self) -> bool {
        let mut at = crate::server::lock(&self.collected);
        let due = at.is_none_or(|t| t.elapsed() >= ORPHAN_AGE);
        if due {
            *at = Some(std::time::Instant::now());
        }
        due
    }

    /// Free bytes where blobs are written.
    pub(crate) fn free_bytes(&self) -> Option<u64> {
        self.blobs.free_bytes()
    }

    /// Whether the database answers.
    pub(crate) async fn ping(&self) -> Result<(), crate::wire::ApiError> {
        let c = self.db.client().await?;
        sql::exec(&c, "SELECT 1", &[]).await.map_err(db::db_err)?;
        Ok(())
    }
}
