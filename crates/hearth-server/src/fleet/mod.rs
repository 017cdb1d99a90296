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
//! # The database's connections
//!
//! [`Database`]: the URL, the password apart from it (so that it is not in
//! the process's arguments; [`redacted`] shows a URL without it, in every
//! form), and a CA file that makes TLS with a checked certificate the only
//! way in (`sslmode=require`: an attacker on the path cannot strip it).
//! Every connection has a statement timeout, an idle-in-transaction
//! timeout, TCP keepalive and a connect timeout (`db.rs`): a statement
//! stuck behind a lock fails, a paused server's transaction is ended by
//! the database, a vanished database is noticed. Requests and workers use
//! a pool, which replaces connections the database closed (a restart);
//! the heartbeats and the listener have one each.
//!
//! # Tokens
//!
//! Each server keeps the tenants (token hashes only) as it last read
//! them. A request whose token they do not know, or without one, is
//! refused without a query while they are younger than 2 s and no edit
//! was announced (`hearth_tenants`);
//! a known token costs one small query, so that a revoked one is refused
//! at once. `/v1/health` asks the database nothing: it says whether the
//! heartbeats were answered within the last lease.
//!
//! # Jobs
//!
//! * **Admission** (any server): in one transaction that locks the
//!   tenant's `usage` row, the tenant's queue and storage limits and the
//!   day's bootstraps are checked and taken, and the job is written as
//!   `admitting` under this server's name. Then its program is built and
//!   its bundle checked, the request is written to the blob store, and the
//!   job becomes `queued`. A refused or failed admission gives everything
//!   back (a program that does not build keeps its charge, as on one
//!   server). An admission whose server stopped heartbeating for longer
//!   than its lease (it died admitting) is given back by any server's
//!   sweeper, its day's charge kept (any admission, after ten minutes).
//! * **Claiming** (a server with room): the next job in the fair order
//!   (the lane served least recently first, then submission order) is
//!   taken with `FOR UPDATE SKIP LOCKED`, so that two servers never take
//!   the same job and none waits for another's claim. The claim adds one
//!   to the job's **fence** and gives its server a **lease** (`--lease`).
//!   The program is built again where it runs: from the server's cache
//!   (by tenant and program digest) where this server admitted it, else
//!   anew, checked against this server's own limits; a build costs a
//!   fraction of the run.
//! * **Heartbeats** renew the leases (a third of one apart), publish the
//!   jobs' progress and say the server lives (`servers`), in one statement
//!   on a connection of their own, on the database's runtime: never behind
//!   the sweeper (a lock, a slow listing of the blob store) or the pool. A
//!   round not answered within its period is dropped with its connection.
//!   A server that cannot renew a lease (it was paused, cut off from the
//!   database, or the lease was taken back) stops the job.
//! * **Committing**: the result is written to a blob named by its fence,
//!   then the job is marked `done` only if the server still holds the
//!   lease with the fence it claimed the job with. A server that lost it
//!   has its late result refused (`job_events`: `refused`), so each job
//!   commits exactly one result (a unique index holds it to that). A
//!   commit whose answer is lost is tried again for up to a lease and
//!   found done if it was; a blob that a commit of unknown outcome wrote
//!   is left to the orphan sweep, never deleted (the same for a key's
//!   registration).
//! * **Expired leases** (any server's sweeper): the job is queued again,
//!   or fails as `crashed` once it was started `--max-attempts` times.
//!
//! # Keys
//!
//! A key upload is checked against the tenant's key count, storage and
//! the disk's reserve before it is decoded. A deleted key is announced
//! (`hearth_keys`) and leaves every server's caches; a cached key is used
//! only while its row names the blob it was read from (a key deleted and
//! registered again under its id is read again).
//!
//! # Guarantees
//!
//! Every acknowledged job runs to one committed result or failure while
//! any server runs, and any server answers for it (status, result,
//! delete). Per-tenant limits (queue, keys, storage, daily bootstraps)
//! hold across the fleet; each server's own `--max-queue` and
//! `--max-keys` bound the fleet's totals as that server sees them. A job
//! may run more than once (a server that died or stalled mid-job, a
//! database out of reach longer than a lease), but only one run's result
//! is kept. Clocks: leases, result times and the day are the database's.

pub mod blobs;
mod db;
mod jobs;
mod keys;
pub mod migrate;
mod sql;
pub mod tenants;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth::KeyId;

pub(crate) use jobs::{Admission, Committed};
pub(crate) use keys::KeyLimits;

use blobs::{BlobStore, Folder};
use db::{Db, Notice};

use crate::server::lock;
use crate::wire::{parse_key_id, JobId};

/// A fleet's database and how it is reached.
#[derive(Clone, Default)]
pub struct Database {
    /// `postgres://USER@HOST[:PORT]/DB[?sslmode=...]`, or libpq's
    /// `key=value` form. A password may be in it, but a URL given on the
    /// command line is in the process's arguments, which every user of
    /// the machine can read: give it apart ([`Database::password`]).
    pub url: String,
    /// The password, apart from the URL (`HEARTH_STORE_PASSWORD`, or
    /// `--store-password-file`).
    pub password: Option<String>,
    /// The CA (PEM) the database's certificate is checked against: with
    /// one, every connection is TLS with a checked certificate, or none is
    /// made (`sslmode=require`; a URL saying `sslmode=disable` is
    /// refused). Without, TLS where the database offers it (the URL's
    /// `sslmode`), checked against the system's roots.
    pub ca_cert: Option<PathBuf>,
}

impl Database {
    /// The database at `url`, no password apart, no CA file.
    pub fn new(url: impl Into<String>) -> Database {
        Database {
            url: url.into(),
            ..Database::default()
        }
    }

    /// Whether the URL itself holds a password (which the process list
    /// shows, if it was given on the command line).
    pub fn password_in_url(&self) -> bool {
        self.url
            .parse::<tokio_postgres::Config>()
            .is_ok_and(|c| c.get_password().is_some())
    }
}

impl std::fmt::Debug for Database {
    /// Without the password, wherever it was given.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("url", &redacted(&self.url))
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("ca_cert", &self.ca_cert)
            .finish()
    }
}

/// How a server joins a fleet ([`crate::Config::fleet`]).
#[derive(Clone, Debug)]
pub struct FleetConfig {
    /// The database (its `Debug` shows no password).
    pub database: Database,
    /// The blob folder every server of the fleet mounts.
    pub blobs: PathBuf,
    /// This server's name in the fleet: it holds leases under it, and
    /// `/v1/info` says it. Unique in the fleet.
    pub server_id: String,
    /// How long a claimed job stays this server's without a heartbeat.
    pub lease: Duration,
}

/// The database `url` names, to be shown: user, hosts, ports, database
/// and `sslmode` as read from it, nothing else, so that a password is
/// never shown, whether in the URL's user part, a `password=` query
/// parameter or libpq's `key=value` form.
pub fn redacted(url: &str) -> String {
    use tokio_postgres::config::{Host, SslMode};
    let Ok(c) = url.parse::<tokio_postgres::Config>() else {
        return "(a database URL that cannot be read)".into();
    };
    let ports = c.get_ports();
    let hosts: Vec<String> = c
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let host = match h {
                Host::Tcp(name) if name.contains(':') => format!("[{name}]"),
                Host::Tcp(name) => name.clone(),
                #[cfg(unix)]
                Host::Unix(path) => path.display().to_string(),
            };
            match ports.get(i).or(ports.first()) {
                Some(p) => format!("{host}:{p}"),
                None => host,
            }
        })
        .collect();
    let mut out = String::from("postgres://");
    if let Some(user) = c.get_user() {
        out += user;
        if c.get_password().is_some() {
            out += ":***";
        }
        out.push('@');
    }
    out += &hosts.join(",");
    out.push('/');
    out += c.get_dbname().unwrap_or_default();
    match c.get_ssl_mode() {
        SslMode::Disable => out += "?sslmode=disable",
        SslMode::Require => out += "?sslmode=require",
        _ => {}
    }
    out
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
    /// Its outcome is being committed: a heartbeat that finds it no longer
    /// running is not a lost lease.
    committing: bool,
}

/// The jobs this server runs, by id: shared with the heartbeats.
type HeldJobs = Arc<Mutex<HashMap<JobId, Held>>>;

/// What the heartbeats tell the rest of the server.
struct Beats {
    /// When the fleet was opened (the clock of `answered_ms`).
    opened: Instant,
    /// When the database last answered a heartbeat, in ms since `opened`.
    answered_ms: AtomicU64,
    /// Leases found lost, not yet counted in the metrics.
    lost: AtomicU64,
}

impl Beats {
    fn answered(&self) {
        let ms = u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.answered_ms.store(ms, Ordering::Relaxed);
    }

    /// How long ago the database last answered a heartbeat.
    fn silent(&self) -> Duration {
        self.opened.elapsed().saturating_sub(Duration::from_millis(
            self.answered_ms.load(Ordering::Relaxed),
        ))
    }
}

/// Something the fleet told this server ([`Fleet::on_event`]).
pub(crate) enum Event {
    /// A job was queued somewhere in the fleet.
    Queued,
    /// A key was deleted somewhere in the fleet: drop it from the caches.
    KeyDeleted(String, KeyId),
    /// The announcements may have been missed (the listener connected
    /// again): any cached key may have been deleted, any job queued.
    Missed,
}

/// A server's handle on its fleet.
pub(crate) struct Fleet {
    db: Db,
    blobs: Arc<dyn BlobStore>,
    server: String,
    lease: Duration,
    /// The tenants as last read ([`tenants`]).
    tenants: Mutex<Option<tenants::Seen>>,
    /// Set when the tenants changed in the database (announced) or may
    /// have (the listener connected again): read them at the next request.
    tenants_stale: Arc<AtomicBool>,
    /// The jobs this server runs.
    held: HeldJobs,
    /// When this server last looked for orphan blobs.
    collected: Mutex<Option<Instant>>,
    beats: Arc<Beats>,
    /// The blob each key this server loaded was read from: a cached key is
    /// used only while its row still names that blob.
    loaded: Mutex<HashMap<(String, KeyId), String>>,
}

/// Blobs no row names are removed once this old ([`Fleet::collect_orphans`]):
/// far longer than any write waits for its row.
pub(crate) const ORPHAN_AGE: Duration = Duration::from_secs(3600);

/// An admission whose server still beats is given back after this long
/// all the same (one that could not be given back when it failed): far
/// longer than a program takes to build.
pub(crate) const ADMISSION_DEADLINE: Duration = Duration::from_secs(600);

impl Fleet {
    /// Joins the fleet of `config`: connects (at most `connections` at
    /// once), brings the schema up to date, gives back the leases and
    /// admissions a server of this name held before it stopped (its
    /// leases expire at once: the next sweep queues their jobs again), and
    /// starts the heartbeats.
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
        let db = Db::connect(&config.database, connections)?;
        let fleet = Fleet {
            db,
            blobs: Arc::new(blobs),
            server: config.server_id.clone(),
            lease: config.lease,
            tenants: Mutex::new(None),
            tenants_stale: Arc::new(AtomicBool::new(false)),
            held: Arc::new(Mutex::new(HashMap::new())),
            collected: Mutex::new(None),
            beats: Arc::new(Beats {
                opened: Instant::now(),
                answered_ms: AtomicU64::new(0),
                lost: AtomicU64::new(0),
            }),
            loaded: Mutex::new(HashMap::new()),
        };
        fleet.db.block(fleet.take_over()).map_err(|e| e.message)?;
        fleet.start_heartbeats();
        Ok(fleet)
    }

    /// How often heartbeats go: a third of the lease.
    pub(crate) fn heartbeat_every(&self) -> Duration {
        self.lease / 3
    }

    /// Calls `on` with what the fleet announces: jobs queued anywhere,
    /// keys deleted anywhere, and a possible gap in the announcements.
    /// Announced changes of the tenants mark them to be read again.
    pub(crate) fn on_event(&self, on: impl Fn(Event) + Send + Sync + 'static) {
        let stale = self.tenants_stale.clone();
        self.db.listen(move |notice| match notice {
            Notice::Listening => {
                stale.store(true, Ordering::Relaxed);
                on(Event::Missed);
            }
            Notice::Queued => on(Event::Queued),
            Notice::Tenants => stale.store(true, Ordering::Relaxed),
            Notice::KeyDeleted(what) => {
                let key = what
                    .rsplit_once('/')
                    .and_then(|(t, k)| Some((t.to_string(), parse_key_id(k)?)));
                match key {
                    Some((tenant, id)) => on(Event::KeyDeleted(tenant, id)),
                    None => on(Event::Missed),
                }
            }
        });
    }

    /// Runs `f` to its end from a thread outside any runtime.
    pub(crate) fn block<F: std::future::Future>(&self, f: F) -> F::Output {
        self.db.block(f)
    }

    /// Whether it is time to look for orphan blobs (at start, then every
    /// [`ORPHAN_AGE`]); true once per period.
    pub(crate) fn orphans_due(&self) -> bool {
        let mut at = lock(&self.collected);
        let due = at.is_none_or(|t| t.elapsed() >= ORPHAN_AGE);
        if due {
            *at = Some(Instant::now());
        }
        due
    }

    /// Free bytes where blobs are written.
    pub(crate) fn free_bytes(&self) -> Option<u64> {
        self.blobs.free_bytes()
    }

    /// Whether the database answered this server's heartbeats within the
    /// last lease (`/v1/health`: no query of its own, so that callers
    /// without a token cost the database nothing).
    pub(crate) fn reachable(&self) -> bool {
        self.beats.silent() < self.lease
    }
}

#[cfg(test)]
mod tests {
    use super::{redacted, Database};

    #[test]
    fn passwords_are_never_shown() {
        let secret = "s3cr%74-pw";
        for (url, shown) in [
            // In the URL's user part.
            (
                format!("postgres://hearth:{secret}@db.example:6543/fleet"),
                "postgres://hearth:***@db.example:6543/fleet",
            ),
            // A query parameter, with the TLS mode kept.
            (
                format!("postgresql://hearth@db.example/fleet?password={secret}&sslmode=require"),
                "postgres://hearth:***@db.example:5432/fleet?sslmode=require",
            ),
            // libpq's key=value form, plain and quoted.
            (
                format!("host=db.example user=hearth password={secret} dbname=fleet"),
                "postgres://hearth:***@db.example/fleet",
            ),
            (
                "host=db.example user=hearth password='two words' dbname=fleet".into(),
                "postgres://hearth:***@db.example/fleet",
            ),
            // None at all.
            (
                "postgres://hearth@[::1]:5433/fleet?sslmode=disable".into(),
                "postgres://hearth@[::1]:5433/fleet?sslmode=disable",
            ),
        ] {
            let out = redacted(&url);
            assert_eq!(out, shown, "{url}");
            for part in ["s3cr", "pw", "two words"] {
                assert!(!out.contains(part), "{url} shown as {out}");
            }
        }
        // What cannot be read is not shown at all.
        let bad = format!("host=x password={secret} port=notaport");
        assert!(!redacted(&bad).contains("s3cr"), "{}", redacted(&bad));
        // A database's Debug shows neither the URL's password nor its own.
        let db = Database {
            password: Some("apart-pw".into()),
            ..Database::new(format!("postgres://hearth:{secret}@h/db"))
        };
        let debug = format!("{db:?}");
        assert!(
            !debug.contains("s3cr") && !debug.contains("apart"),
            "{debug}"
        );
        assert!(db.password_in_url());
        assert!(!Database::new("postgres://hearth@h/db").password_in_url());
    }
}
