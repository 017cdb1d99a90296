//! The HTTP server: routes, admission, the job workers and the key cache.
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
//! # Durability
//!
//! A job is written to disk before it is acknowledged, its result before
//! it is marked done (see [`crate::store`]). A server killed at any point
//! and started again on the same folder has every acknowledged job: queued
//! ones (and the one that was running) run again, finished ones keep their
//! results until deleted.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use hearth::backend::CpuBackend;
use hearth::crypto::files::{write_atomic, FileInfo, FileKind};
use hearth::{KeyId, ServerKey};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use serde::Deserialize;

use crate::api::{
    parse_key_id, ApiError, Deleted, ErrorCode, JobId, JobState, JobStatus, KeyInfo, ServerInfo,
    ServerStats, Submitted,
};
use crate::metrics::Metrics;
use crate::request::{check_key_header, key_error, parse_job, split_job, Limits};
use crate::schedule::{FairQueue, Lane};
use crate::store::{JobMeta, Outcome, Recovered, Store, StoredKey, Usage};
use crate::tenants::{self, now as now_s, Tenant, Tenants};
use crate::tls::{Tls, TlsFiles};

/// Where a server's jobs bootstrap ([`Config::backend`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum JobBackend {
    /// The CPU backend on the server's rayon pool.
    #[default]
    Cpu,
    /// The GPU backend (tfhe-rs's CUDA bootstrap), one job at a time; a
    /// build with the `gpu` feature on a machine with a CUDA device.
    Gpu,
    /// The ranks of an MPI launch (the `mpi` feature), one job at a time:
    /// rank 0 serves, admits and schedules, and every rank bootstraps.
    #[cfg(feature = "mpi")]
    Mpi(Ranks),
}

/// Rank 0's handle on an MPI launch whose other ranks are in
/// [`hearth::backend::Cluster::work`] ([`JobBackend::Mpi`]).
///
/// Before each job the job's server key file goes to every rank, once:
/// the ranks keep as many keys as the server's key cache
/// ([`Config::key_cache`]), named by their bytes' digest, so a key used
/// again is named, not sent. A rank that dies ends the launch: `mpirun`
/// ends every rank and names the dead one, and a rank that stops
/// answering for the cluster's timeout makes rank 0 print its number and
/// abort the launch (its messages may be half sent). The running job is
/// on disk like every queued one and runs again when the server starts
/// again.
#[cfg(feature = "mpi")]
#[derive(Clone)]
pub struct Ranks(pub Arc<hearth::backend::Cluster>);

#[cfg(feature = "mpi")]
impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks({} ranks)", self.0.size())
    }
}

#[cfg(feature = "mpi")]
impl PartialEq for Ranks {
    fn eq(&self, other: &Ranks) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(feature = "mpi")]
impl Eq for Ranks {}

impl JobBackend {
    /// Where jobs run, in words (`/v1/info`, the start message).
    pub fn describe(&self, threads: usize) -> String {
        match self {
            JobBackend::Cpu => format!("cpu, {threads} threads"),
            JobBackend::Gpu => "gpu, one job at a time".into(),
            #[cfg(feature = "mpi")]
            JobBackend::Mpi(ranks) => {
                let (n, s) = (ranks.0.size(), |k| if k == 1 { "" } else { "s" });
                format!(
                    "mpi, {n} rank{} x {threads} thread{}, one job at a time",
                    s(n as usize),
                    s(threads)
                )
            }
        }
    }
}

/// Why jobs cannot run on the GPU here, if they cannot.
pub fn gpu_unavailable() -> Option<&'static str> {
    #[cfg(feature = "gpu")]
    {
        if hearth::backend::gpu_available() {
            None
        } else {
            Some("no usable CUDA device (no GPU, or no driver)")
        }
    }
    #[cfg(not(feature = "gpu"))]
    Some("this build has no GPU backend (build it with scripts/gpu-build.sh)")
}

/// How a server runs: its folder, its threads and its limits (the
/// `hearth server` options).
#[derive(Clone, Debug)]
pub struct Config {
    /// The data folder: keys, jobs, results (created if missing).
    pub data: PathBuf,
    /// Threads of the pool every job runs on.
    pub threads: usize,
    /// Where jobs bootstrap: the CPU pool, or the GPU (the `gpu` feature;
    /// [`Server::open`] refuses `Gpu` where no GPU can be used, and runs
    /// one job at a time on it).
    pub backend: JobBackend,
    /// Most bootstraps one job may run.
    pub max_pbs: u64,
    /// Most estimated peak memory of one job on `threads`, bytes.
    pub max_memory: u64,
    /// Most jobs waiting at once (the running ones not counted).
    pub max_queue: usize,
    /// Most jobs running at once (their bootstraps share the pool; their
    /// widths together stay under `threads`, their memory estimates under
    /// `max_memory`: see the module's doc).
    pub max_jobs: usize,
    /// Most bytes in one request body (a key upload or a job).
    pub max_body: u64,
    /// Most request bodies received and checked at once: with
    /// `max_body`, this bounds the memory uploads take. Others wait for
    /// their turn (within `body_timeout`, else `queue_full`).
    pub max_uploads: usize,
    /// Most registered keys.
    pub max_keys: usize,
    /// Server keys kept decompressed in memory, least recently used
    /// dropped first (0: load for every job).
    pub key_cache: usize,
    /// Longest a request body may take to arrive.
    pub body_timeout: Duration,
    /// Emit events through [`tracing`]: jobs accepted, started, done and
    /// failed (in a `job` span), refused requests (in a `request` span),
    /// keys registered and deleted. Where they go is the subscriber's
    /// choice (`hearth server` writes them to stderr, as text or JSON).
    pub log: bool,
    /// The certificate chain and private key to serve HTTPS with (PEM);
    /// plain HTTP without.
    pub tls: Option<TlsFiles>,
    /// Where to serve `GET /metrics` (Prometheus; `HOST:PORT`, plain
    /// HTTP, loopback unless `insecure`); none without.
    pub metrics_listen: Option<String>,
    /// How long a finished job's result (or failure) is kept before it is
    /// deleted, fetched or not.
    pub result_ttl: Duration,
    /// How long a job may wait in the queue before it fails as
    /// `expired` (none: for ever).
    pub queue_ttl: Option<Duration>,
    /// Serve on an address other than loopback without tenants (tokens)
    /// or without TLS. Without this, [`start`] and [`run`] refuse such an
    /// address unless the data folder has tenants and `tls` is set.
    pub insecure: bool,
}

impl Config {
    /// Defaults for `data`: all cores, 10 million bootstraps, 8 GiB, 64
    /// queued jobs, as many running jobs as threads, 256 MiB bodies,
    /// 16 uploads at once, 64 keys, 4 cached, 5 minutes per body.
    pub fn new(data: impl Into<PathBuf>) -> Config {
        let threads = hearth::backend::default_threads().unwrap_or(1);
        Config {
            data: data.into(),
            threads,
            backend: JobBackend::Cpu,
            max_pbs: 10_000_000,
            max_memory: 8 << 30,
            max_queue: 64,
            max_jobs: threads,
            max_body: 256 << 20,
            max_uploads: 16,
            max_keys: 64,
            key_cache: 4,
            body_timeout: Duration::from_secs(300),
            log: false,
            tls: None,
            metrics_listen: None,
            result_ttl: Duration::from_secs(7 * 86_400),
            queue_ttl: None,
            insecure: false,
        }
    }

    /// Refuses `addr` unless it is a loopback address, or the data folder
    /// has tenants and TLS is set, or `insecure` is set (see
    /// [`Config::insecure`]).
    fn check_exposure(&self, addr: SocketAddr) -> Result<(), ServerError> {
        if addr.ip().is_loopback() || self.insecure {
            return Ok(());
        }
        let tenants = Tenants::load(&self.data).map_err(|e| ServerError::Config(e.to_string()))?;
        let mut missing = Vec::new();
        if tenants.is_open() {
            missing.push(format!(
                "no tenant has a token, so anyone who reaches the port could register keys and \
                 run jobs (`hearth server token add NAME --data {}`)",
                self.data.display()
            ));
        }
        if self.tls.is_none() {
            missing.push(
                "no TLS, so tokens, keys and ciphertexts would cross the network in the clear \
                 (--tls-cert and --tls-key)"
                    .to_string(),
            );
        }
        if missing.is_empty() {
            return Ok(());
        }
        Err(ServerError::Config(format!(
            "refusing to serve on {addr}, not a loopback address: {}. Pass --insecure \
             (`Config::insecure` in Rust) to serve anyway",
            missing.join("; and ")
        )))
    }

    /// The limits one job is admitted against.
    pub fn limits(&self) -> Limits {
        Limits {
            max_body: self.max_body,
            max_pbs: self.max_pbs,
            max_memory: self.max_memory,
            threads: self.threads,
        }
    }
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A setting that cannot be used.
    #[error("configuration: {0}")]
    Config(String),
    /// The data folder could not be opened or read.
    #[error("data folder: {0}")]
    Data(ApiError),
    /// The address could not be bound, or the runtime not started.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

enum State_ {
    Queued,
    Running(Arc<AtomicU64>),
    Done(u64),
    Failed(ApiError),
}

struct Job {
    meta: JobMeta,
    state: State_,
    /// When it finished (Unix seconds), for `result_ttl`.
    finished: Option<u64>,
}

#[derive(Default)]
struct Jobs {
    map: HashMap<JobId, Job>,
    queue: FairQueue,
    /// Jobs running, their widths and memory estimates together.
    running: usize,
    running_width: usize,
    running_memory: u64,
    /// Slots taken by jobs being written to disk, by tenant.
    reserved: HashMap<String, usize>,
    next_seq: u64,
}

impl Jobs {
    fn reserved(&self) -> usize {
        self.reserved.values().sum()
    }

    /// `tenant`'s jobs queued, running or being written.
    fn pending(&self, tenant: &str) -> usize {
        let live = self
            .map
            .values()
            .filter(|j| j.meta.tenant == tenant)
            .filter(|j| matches!(j.state, State_::Queued | State_::Running(_)))
            .count();
        live + self.reserved.get(tenant).copied().unwrap_or(0)
    }

    /// Queues the known job `id` in its lane.
    fn enqueue(&mut self, id: JobId) {
        let meta = &self.map[&id].meta;
        let lane = Lane::new(&meta.tenant, &meta.key_id);
        self.queue.push(lane, id);
    }

    /// Starts the next job in turn if it may run now beside the running
    /// ones (see the module's doc): fewer than `config.max_jobs`, widths
    /// within `config.threads`, memory within `config.max_memory`. One
    /// job alone always may: it was admitted.
    fn start_next(&mut self, config: &Config) -> Option<(JobId, JobMeta)> {
        let id = self.queue.peek()?;
        let meta = &self.map[&id].meta;
        let (width, memory) = (width(meta, config.threads), meta.memory);
        let fits = self.running < config.max_jobs
            && self.running_width + width <= config.threads
            && self.running_memory.saturating_add(memory) <= config.max_memory;
        if self.running > 0 && !fits {
            return None;
        }
        self.queue.pop();
        self.running += 1;
        self.running_width += width;
        self.running_memory += memory;
        Some((id, self.map[&id].meta.clone()))
    }

    /// Marks a job started by [`Jobs::start_next`] as ended.
    fn end(&mut self, meta: &JobMeta, threads: usize) {
        self.running -= 1;
        self.running_width -= width(meta, threads);
        self.running_memory -= meta.memory;
    }

    /// The job `id` if `tenant` owns it: another tenant's job is
    /// answered as if it did not exist.
    fn owned(&self, id: JobId, tenant: &str) -> Result<&Job, ApiError> {
        self.map
            .get(&id)
            .filter(|j| j.meta.tenant == tenant)
            .ok_or_else(|| not_found(id))
    }
}

/// The threads a job keeps busy on average: its bootstraps per level
/// (#PBS / depth, rounded up), at least 1 and at most `threads`.
fn width(meta: &JobMeta, threads: usize) -> usize {
    let per_level = meta.pbs.div_ceil(meta.depth.max(1));
    per_level.clamp(1, threads as u64) as usize
}

/// A key as the server knows it: the tenant that registered it, and its
/// id. Two tenants may register keys of the same id; each sees its own.
type KeyName = (String, KeyId);

/// Least recently used server keys.
struct KeyCache {
    cap: usize,
    keys: VecDeque<(KeyName, Arc<ServerKey>)>,
}

impl KeyCache {
    fn get(&mut self, id: &KeyName) -> Option<Arc<ServerKey>> {
        let i = self.keys.iter().position(|(k, _)| k == id)?;
        let entry = self.keys.remove(i).expect("found");
        let key = entry.1.clone();
        self.keys.push_back(entry);
        Some(key)
    }

    fn put(&mut self, id: KeyName, key: Arc<ServerKey>) {
        if self.cap == 0 {
            return;
        }
        self.keys.retain(|(k, _)| *k != id);
        while self.keys.len() >= self.cap {
            self.keys.pop_front();
        }
        self.keys.push_back((id, key));
    }
}

struct Shared {
    config: Config,
    limits: Limits,
    store: Store,
    jobs: Mutex<Jobs>,
    wake: Condvar,
    keys: Mutex<HashMap<KeyName, StoredKey>>,
    cache: Mutex<KeyCache>,
    /// The tenants file as last read, and what it looked like on disk.
    tenants: Mutex<(Option<FileStamp>, Arc<Tenants>)>,
    /// Bootstraps admitted today, by tenant (kept in `usage.json`).
    usage: Mutex<Usage>,
    metrics: Metrics,
    /// Server keys converted for the GPU (`JobBackend::Gpu`).
    #[cfg(feature = "gpu")]
    gpu_keys: Mutex<HashMap<KeyName, Arc<hearth::backend::GpuKey>>>,
    /// Permits for CPU-heavy work off the async threads.
    heavy: tokio::sync::Semaphore,
    /// Permits for request bodies in memory.
    uploads: tokio::sync::Semaphore,
    pool: Arc<rayon::ThreadPool>,
    stop: AtomicBool,
    accepted: AtomicU64,
    recovered: AtomicU64,
    completed: AtomicU64,
    refused: Mutex<BTreeMap<&'static str, u64>>,
}

/// A lock that a panic elsewhere does not poison for good.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Internal, e.to_string())
}

/// What a file looked like: a change to any of these means it was
/// written again (the tenants file is replaced whole, by rename).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileStamp {
    modified: Option<std::time::SystemTime>,
    len: u64,
    inode: u64,
}

fn stamp(m: &std::fs::Metadata) -> FileStamp {
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(m);
    #[cfg(not(unix))]
    let inode = 0;
    FileStamp {
        modified: m.modified().ok(),
        len: m.len(),
        inode,
    }
}

/// Days since 1970-01-01, UTC.
fn today() -> u64 {
    now_s() / 86_400
}

impl Shared {
    /// An event of the server's own (not of one request or job) at info
    /// level, if `config.log`.
    fn log(&self, msg: impl FnOnce() -> String) {
        if self.config.log {
            tracing::info!("{}", msg());
        }
    }

    /// The tenants file as it is now: read again if it changed on disk
    /// since the last request. An unreadable file refuses every request
    /// (`internal`) rather than letting anyone in.
    fn tenants(&self) -> Result<Arc<Tenants>, ApiError> {
        let path = self.config.data.join(tenants::FILE);
        let now = match std::fs::metadata(&path) {
            Ok(m) => Some(stamp(&m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(internal(format!("{}: {e}", path.display()))),
        };
        let mut t = lock(&self.tenants);
        if t.0 != now {
            t.1 = Arc::new(Tenants::load(&self.config.data).map_err(internal)?);
            t.0 = now;
        }
        Ok(t.1.clone())
    }

    /// The key `id` of `tenant`, from the cache or loaded (and
    /// decompressed) from disk.
    fn server_key(&self, tenant: &str, id: KeyId) -> Result<Arc<ServerKey>, ApiError> {
        let name = (tenant.to_string(), id);
        if let Some(k) = lock(&self.cache).get(&name) {
            self.metrics.key_cache.with_label_values(&["hit"]).inc();
            return Ok(k);
        }
        self.metrics.key_cache.with_label_values(&["miss"]).inc();
        if !lock(&self.keys).contains_key(&name) {
            return Err(ApiError::new(
                ErrorCode::UnknownKey,
                format!("no server key {id} is registered"),
            ));
        }
        let key = Arc::new(ServerKey::load(&self.store.key_path(tenant, id)).map_err(key_error)?);
        lock(&self.cache).put(name, key.clone());
        Ok(key)
    }

    /// Stores, checks (by loading it) and registers a key `tenant`
    /// uploaded.
    fn register_key(
        &self,
        tenant: &Tenant,
        info: FileInfo,
        bytes: &[u8],
    ) -> Result<(StoredKey, bool), ApiError> {
        let id = info.key_id;
        let name = (tenant.name.clone(), id);
        let upload = self.store.upload_path(&tenant.name, id);
        write_atomic(&upload, bytes, false).map_err(internal)?;
        let loaded = ServerKey::load(&upload);
        let result = (|| {
            let key = loaded.map_err(key_error)?;
            let mut keys = lock(&self.keys);
            if let Some(k) = keys.get(&name) {
                return Ok((k.clone(), false));
            }
            if let Some(l) = tenant.limits {
                let own = keys.keys().filter(|(t, _)| *t == tenant.name).count();
                if own >= l.max_keys {
                    return Err(ApiError::new(
                        ErrorCode::KeyLimit,
                        format!(
                            "you have {own} keys registered, your limit; remove one \
                             (ask the operator) or reuse a key"
                        ),
                    ));
                }
            }
            if keys.len() >= self.config.max_keys {
                return Err(ApiError::new(
                    ErrorCode::TooManyKeys,
                    format!("{} keys are registered, the limit", keys.len()),
                ));
            }
            std::fs::rename(&upload, self.store.key_path(&tenant.name, id)).map_err(internal)?;
            let stored = StoredKey {
                tenant: tenant.name.clone(),
                key_id: id,
                params: info.params,
                compressed: info.kind == FileKind::CompressedServerKey,
                bytes: bytes.len() as u64,
            };
            keys.insert(name.clone(), stored.clone());
            drop(keys);
            lock(&self.cache).put(name, Arc::new(key));
            Ok((stored, true))
        })();
        let _ = std::fs::remove_file(&upload);
        result
    }

    /// Refuses when the server's queue or the tenant's share of it is
    /// full (checked early, then again on admission).
    fn check_room(&self, jobs: &Jobs, tenant: &Tenant) -> Result<(), ApiError> {
        let waiting = jobs.queue.len() + jobs.reserved();
        if waiting >= self.config.max_queue {
            return Err(ApiError::new(
                ErrorCode::QueueFull,
                format!("{waiting} jobs are waiting, the limit; try again later"),
            ));
        }
        if let Some(l) = tenant.limits {
            let mine = jobs.pending(&tenant.name);
            if mine >= l.max_queue {
                return Err(ApiError::new(
                    ErrorCode::QueueLimit,
                    format!(
                        "you have {mine} jobs queued or running, your limit; fetch or wait \
                         for some first"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Counts `pbs` against `tenant`'s bootstraps for today, or refuses.
    fn charge(&self, tenant: &Tenant, pbs: u64) -> Result<(), ApiError> {
        let Some(l) = tenant.limits else {
            return Ok(());
        };
        let mut u = lock(&self.usage);
        let day = today();
        if u.day != day {
            *u = Usage {
                day,
                pbs: BTreeMap::new(),
            };
        }
        let used = u.pbs.get(&tenant.name).copied().unwrap_or(0);
        if used.saturating_add(pbs) > l.max_pbs_per_day {
            return Err(ApiError::new(
                ErrorCode::DailyLimit,
                format!(
                    "this job runs {pbs} bootstraps; you have run {used} of your {} today (UTC)",
                    l.max_pbs_per_day
                ),
            ));
        }
        *u.pbs.entry(tenant.name.clone()).or_default() += pbs;
        self.store.write_usage(&u)
    }

    /// Takes back a [`Shared::charge`] for a job that was not accepted.
    fn refund(&self, tenant: &Tenant, pbs: u64) {
        if tenant.limits.is_some() {
            let mut u = lock(&self.usage);
            if let Some(n) = u.pbs.get_mut(&tenant.name) {
                *n = n.saturating_sub(pbs);
            }
            let _ = self.store.write_usage(&u);
        }
    }

    /// Decodes, admits, writes and queues a job of `tenant` (blocking).
    fn admit(&self, tenant: &Tenant, body: &[u8]) -> Result<Submitted, ApiError> {
        let req = parse_job(body, &self.limits)?;
        let seq = {
            let mut jobs = lock(&self.jobs);
            self.check_room(&jobs, tenant)?;
            *jobs.reserved.entry(tenant.name.clone()).or_default() += 1;
            jobs.next_seq += 1;
            jobs.next_seq
        };
        let unreserve = |jobs: &mut Jobs| {
            if let Some(n) = jobs.reserved.get_mut(&tenant.name) {
                *n -= 1;
                if *n == 0 {
                    jobs.reserved.remove(&tenant.name);
                }
            }
        };
        if let Err(e) = self.charge(tenant, req.pbs) {
            unreserve(&mut lock(&self.jobs));
            return Err(e);
        }
        let id = JobId::random();
        let meta = JobMeta {
            seq,
            key_id: req.bundle.key_id().to_string(),
            pbs: req.pbs,
            depth: req.depth,
            memory: req.memory,
            tenant: tenant.name.clone(),
            submitted: now_s(),
        };
        let written = self.store.write_job(id, &meta, body);
        let mut jobs = lock(&self.jobs);
        unreserve(&mut jobs);
        if let Err(e) = written {
            drop(jobs);
            self.refund(tenant, req.pbs);
            return Err(e);
        }
        jobs.map.insert(
            id,
            Job {
                meta,
                state: State_::Queued,
                finished: None,
            },
        );
        jobs.enqueue(id);
        drop(jobs);
        self.wake.notify_all();
        self.accepted.fetch_add(1, Ordering::Relaxed);
        self.metrics
            .accepted
            .with_label_values(&[&tenant.name])
            .inc();
        if self.config.log {
            tracing::info!(job = %id, pbs = req.pbs, depth = req.depth, "job accepted");
        }
        Ok(Submitted {
            job_id: id,
            pbs: req.pbs,
            depth: req.depth,
            memory: req.memory,
        })
    }

    /// Runs one job to its result bytes.
    fn run_job(&self, id: JobId, done: &Arc<AtomicU64>) -> Result<Vec<u8>, ApiError> {
        let (meta, request) = self.store.read_job(id)?;
        let req = parse_job(&request, &self.limits)?;
        let key = self.server_key(&meta.tenant, req.bundle.key_id())?;
        if key.params().id != req.bundle.params() {
            return Err(ApiError::new(
                ErrorCode::WrongKey,
                format!(
                    "the key is of {}, the bundle of {}",
                    key.params().name,
                    req.bundle.params().params().name
                ),
            ));
        }
        let progress = done.clone();
        let progress = move |d: usize, _| progress.store(d as u64, Ordering::Relaxed);
        let out = match &self.config.backend {
            JobBackend::Cpu => {
                let cpu = CpuBackend::with_pool(&key, self.pool.clone()).with_progress(progress);
                req.program.run_bundle(&cpu, &req.bundle)
            }
            JobBackend::Gpu => self.run_on_gpu(&meta.tenant, &key, &req, progress)?,
            #[cfg(feature = "mpi")]
            JobBackend::Mpi(ranks) => {
                self.run_on_ranks(ranks, &meta.tenant, &key, &req, progress)?
            }
        }
        .map_err(|e| ApiError::new(ErrorCode::JobFailed, e.to_string()))?;
        out.to_bytes().map_err(internal)
    }

    /// Runs `req` on the GPU with `key` converted for it once (kept beside
    /// the key cache, as many as it keeps). Without the `gpu` feature
    /// [`Server::open`] refuses `JobBackend::Gpu`, so this is not reached.
    fn run_on_gpu(
        &self,
        tenant: &str,
        key: &ServerKey,
        req: &crate::request::JobRequest,
        progress: impl Fn(usize, usize) + Send + Sync + 'static,
    ) -> Result<Result<hearth::Bundle, hearth::Error>, ApiError> {
        #[cfg(feature = "gpu")]
        {
            use hearth::backend::{GpuBackend, GpuBatch, GpuKey};
            let name = (tenant.to_string(), key.key_id());
            let cached = lock(&self.gpu_keys).get(&name).cloned();
            let gpu_key = match cached {
                Some(k) => k,
                None => {
                    let k = GpuKey::new(key)
                        .map_err(|e| ApiError::new(ErrorCode::JobFailed, e.to_string()))?;
                    let k = Arc::new(k);
                    let mut keys = lock(&self.gpu_keys);
                    if keys.len() >= self.config.key_cache.max(1) {
                        keys.clear();
                    }
                    keys.insert(name, k.clone());
                    k
                }
            };
            let gpu = GpuBackend::new(GpuBatch::new(gpu_key)).with_progress(progress);
            Ok(req.program.run_bundle(&gpu, &req.bundle))
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = (tenant, key, req, progress);
            Err(internal(gpu_unavailable().unwrap_or_default()))
        }
    }

    /// Runs `req` on every rank of the launch, with `key` shared with them
    /// first (sent once while they keep it). A rank error ends the launch
    /// (see [`Ranks`]).
    #[cfg(feature = "mpi")]
    fn run_on_ranks(
        &self,
        ranks: &Ranks,
        tenant: &str,
        key: &ServerKey,
        req: &crate::request::JobRequest,
        progress: impl Fn(usize, usize) + Send + Sync + 'static,
    ) -> Result<Result<hearth::Bundle, hearth::Error>, ApiError> {
        let cluster = &ranks.0;
        // The file as stored (compressed if it was uploaded so: 4-6x less
        // to send).
        let bytes = std::fs::read(self.store.key_path(tenant, key.key_id())).map_err(internal)?;
        let before = cluster.key_transfers();
        let shared = cluster.share_key(&bytes);
        if cluster.key_transfers() > before {
            self.metrics.key_transfers.inc();
            if self.config.log {
                tracing::info!(bytes = bytes.len(), "key sent to the ranks");
            }
        }
        let result = shared
            .and_then(|()| cluster.backend(key, self.config.threads))
            .and_then(|mpi| {
                req.program
                    .run_bundle(&mpi.with_progress(progress), &req.bundle)
            });
        if let Err(e @ hearth::Error::Rank { .. }) = &result {
            tracing::error!(error = %e, "a rank failed: ending every rank");
            eprintln!(
                "hearth server: {e}; ending every rank (the job is kept and runs again at the next start)"
            );
            cluster.abort(3);
        }
        Ok(result)
    }

    /// Tells the workers and the sweeper to stop. The flag is set under
    /// the jobs lock, under which each of them checks it before it waits:
    /// set without the lock, it could land between a thread's check and
    /// its wait, and the wake-up would be lost (the sweeper then slept
    /// up to a minute, a worker for good).
    fn halt(&self) {
        {
            let _jobs = lock(&self.jobs);
            self.stop.store(true, Ordering::Relaxed);
        }
        self.wake.notify_all();
    }

    /// One worker: takes the next job in turn whenever it may start
    /// ([`Jobs::start_next`]); `max_jobs` workers run side by side.
    fn work(&self) {
        loop {
            let (id, meta, done) = {
                let mut jobs = lock(&self.jobs);
                let (id, meta) = loop {
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Some(next) = jobs.start_next(&self.config) {
                        break next;
                    }
                    jobs = self.wake.wait(jobs).unwrap_or_else(|e| e.into_inner());
                };
                let done = Arc::new(AtomicU64::new(0));
                let job = jobs.map.get_mut(&id).expect("queued jobs are known");
                job.state = State_::Running(done.clone());
                (id, meta, done)
            };
            let span = tracing::info_span!(
                "job",
                job = %id,
                tenant = %meta.tenant,
                key = %meta.key_id,
                pbs = meta.pbs,
                depth = meta.depth
            );
            let _entered = span.enter();
            if self.config.log {
                tracing::info!("job started");
            }
            let start = Instant::now();
            let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| self.run_job(id, &done)))
                .unwrap_or_else(|_| Err(internal("the job panicked")));
            self.metrics
                .job_seconds
                .observe(start.elapsed().as_secs_f64());
            let ran = if outcome.is_ok() {
                meta.pbs
            } else {
                done.load(Ordering::Relaxed)
            };
            self.metrics.bootstraps.inc_by(ran);
            let label = if outcome.is_ok() { "done" } else { "failed" };
            self.metrics
                .finished
                .with_label_values(&[meta.tenant.as_str(), label])
                .inc();
            let state = match outcome.and_then(|bytes| {
                self.store.write_result(id, &meta, &bytes)?;
                Ok(bytes.len() as u64)
            }) {
                Ok(n) => {
                    self.completed.fetch_add(1, Ordering::Relaxed);
                    if self.config.log {
                        let seconds = start.elapsed().as_secs_f64();
                        tracing::info!(seconds, result_bytes = n, "job done");
                    }
                    State_::Done(n)
                }
                Err(e) => {
                    if self.config.log {
                        tracing::warn!(code = e.code.as_str(), error = %e.message, "job failed");
                    }
                    if let Err(w) = self.store.write_failure(id, &meta, &e) {
                        tracing::error!(error = %w, "the failure could not be written");
                    }
                    State_::Failed(e)
                }
            };
            {
                let mut jobs = lock(&self.jobs);
                jobs.end(&meta, self.config.threads);
                if let Some(job) = jobs.map.get_mut(&id) {
                    job.state = state;
                    job.finished = Some(now_s());
                }
            }
            // Room for the next job in turn, maybe for more than one.
            self.wake.notify_all();
        }
    }

    /// Deletes what has expired: results and failures older than
    /// `result_ttl`; queued jobs older than `queue_ttl` fail as `expired`
    /// (their failure then kept for `result_ttl`). Each deletion removes
    /// the job file first ([`Store::delete_job`]), so a crash halfway
    /// leaves an orphan result that the next start removes.
    fn expire(&self) {
        let now = now_s();
        let ttl = self.config.result_ttl.as_secs();
        let mut gone = Vec::new();
        let mut timed_out = Vec::new();
        {
            let mut jobs = lock(&self.jobs);
            for (id, j) in &jobs.map {
                match (&j.state, j.finished) {
                    (State_::Done(_) | State_::Failed(_), Some(t))
                        if now >= t.saturating_add(ttl) =>
                    {
                        gone.push(*id)
                    }
                    (State_::Queued, _) => {
                        let waited = now.saturating_sub(j.meta.submitted);
                        if let Some(q) = self.config.queue_ttl {
                            if j.meta.submitted > 0 && waited >= q.as_secs() {
                                timed_out.push((*id, j.meta.clone(), waited));
                            }
                        }
                    }
                    _ => {}
                }
            }
            for id in &gone {
                jobs.map.remove(id);
            }
            for (id, _, waited) in &timed_out {
                jobs.queue.remove(*id);
                if let Some(j) = jobs.map.get_mut(id) {
                    j.state = State_::Failed(ApiError::new(
                        ErrorCode::Expired,
                        format!("the job waited {waited} s in the queue, over --queue-ttl"),
                    ));
                    j.finished = Some(now);
                }
            }
        }
        for (id, meta, _) in &timed_out {
            let e = ApiError::new(ErrorCode::Expired, "the job waited over --queue-ttl");
            if let Err(w) = self.store.write_failure(*id, meta, &e) {
                tracing::error!(job = %id, error = %w, "an expired job's failure could not be written");
            }
        }
        for id in &gone {
            match self.store.delete_job(*id) {
                Ok(()) => self.log(|| format!("job {id} expired and deleted")),
                Err(e) => {
                    tracing::error!(job = %id, error = %e, "an expired job could not be deleted")
                }
            }
        }
    }

    /// Calls [`Shared::expire`] every `every` until the server stops.
    fn sweep(&self, every: Duration) {
        let mut jobs = lock(&self.jobs);
        loop {
            // Checked under the lock before each wait: see `halt`.
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            jobs = self
                .wake
                .wait_timeout(jobs, every)
                .map(|(g, _)| g)
                .unwrap_or_else(|e| e.into_inner().0);
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            drop(jobs);
            self.expire();
            jobs = lock(&self.jobs);
        }
    }

    /// Where `tenant`'s job `id` is.
    fn status(&self, id: JobId, tenant: &Tenant) -> Result<JobStatus, ApiError> {
        let jobs = lock(&self.jobs);
        let job = jobs.owned(id, &tenant.name)?;
        let state = match &job.state {
            State_::Queued => JobState::Queued {
                position: jobs.queue.position(id).unwrap_or(0),
            },
            State_::Running(done) => JobState::Running {
                done: done.load(Ordering::Relaxed),
                total: job.meta.pbs,
            },
            State_::Done(n) => JobState::Done { result_bytes: *n },
            State_::Failed(e) => JobState::Failed {
                code: e.code.as_str().into(),
                message: e.message.clone(),
            },
        };
        Ok(JobStatus {
            job_id: id,
            key_id: job.meta.key_id.clone(),
            pbs: job.meta.pbs,
            depth: job.meta.depth,
            state,
        })
    }
}

fn not_found(id: JobId) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no job {id}"))
}

fn key_info(k: &StoredKey, new: bool) -> KeyInfo {
    KeyInfo {
        key_id: k.key_id.to_string(),
        params: k.params.params().name.to_string(),
        compressed: k.compressed,
        bytes: k.bytes,
        new,
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.code.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (status, Json(self.body())).into_response();
        let retry = match self.code {
            ErrorCode::QueueFull | ErrorCode::QueueLimit => Some(1),
            // The next UTC day.
            ErrorCode::DailyLimit => Some(86_400 - now_s() % 86_400),
            _ => None,
        };
        if let Some(v) = retry.and_then(|s| HeaderValue::from_str(&s.to_string()).ok()) {
            r.headers_mut().insert(header::RETRY_AFTER, v);
        }
        if self.code == ErrorCode::Unauthorized {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"hearth\""),
            );
        }
        r.extensions_mut().insert(self.code);
        r
    }
}

type Shr = State<Arc<Shared>>;

/// Reads a whole body within `--max-body` and `--body-timeout`, holding
/// one of `--max-uploads` permits (returned with the body: the caller
/// keeps it while the bytes are in memory). A `Content-Length` over the
/// limit is refused before any byte is read (a client sending `Expect:
/// 100-continue`, as [`crate::Client`] does, then sends none).
async fn read_body<'a>(
    s: &'a Shared,
    headers: &HeaderMap,
    body: Body,
) -> Result<(Vec<u8>, tokio::sync::SemaphorePermit<'a>), ApiError> {
    let limit = s.config.max_body;
    let too_large = |n: String| {
        ApiError::new(
            ErrorCode::TooLarge,
            format!("the body is {n} bytes, over the limit of {limit}"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(n) = declared.filter(|&n| n > limit) {
        return Err(too_large(n.to_string()));
    }
    let permit = match tokio::time::timeout(s.config.body_timeout, s.uploads.acquire()).await {
        Ok(Ok(p)) => p,
        _ => {
            return Err(ApiError::new(
                ErrorCode::QueueFull,
                format!(
                    "{} uploads are in progress, the limit; try again later",
                    s.config.max_uploads
                ),
            ))
        }
    };
    let limited = Limited::new(body, usize::try_from(limit).unwrap_or(usize::MAX));
    match tokio::time::timeout(s.config.body_timeout, limited.collect()).await {
        Err(_) => Err(ApiError::new(
            ErrorCode::Timeout,
            format!(
                "the body did not arrive within {} s",
                s.config.body_timeout.as_secs()
            ),
        )),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            Err(too_large("more than".into()))
        }
        Ok(Err(e)) => Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("the body could not be read: {e}"),
        )),
        Ok(Ok(c)) => Ok((c.to_bytes().to_vec(), permit)),
    }
}

/// Runs `f` off the async threads, holding one of the heavy-work permits.
async fn heavy<T: Send + 'static>(
    s: &Arc<Shared>,
    f: impl FnOnce(&Shared) -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    let _permit = s.heavy.acquire().await.map_err(internal)?;
    let s = s.clone();
    // The request's span goes along, for the events of the work.
    let span = tracing::Span::current();
    tokio::task::spawn_blocking(move || span.in_scope(|| f(&s)))
        .await
        .map_err(|e| internal(format!("the work stopped: {e}")))?
}

async fn post_key(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<KeyInfo>), ApiError> {
    let (bytes, _upload) = read_body(&s, &headers, body).await?;
    let info = check_key_header(&bytes, s.config.max_body)?;
    if let Some(k) = lock(&s.keys).get(&(t.name.clone(), info.key_id)) {
        return Ok((StatusCode::OK, Json(key_info(k, false))));
    }
    let (stored, new) = heavy(&s, move |s| s.register_key(&t, info, &bytes)).await?;
    if new {
        s.log(|| format!("key {} registered", stored.key_id));
    }
    let status = if new {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(key_info(&stored, new))))
}

async fn get_key(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Response {
    let id = path.ok().and_then(|Path(p)| parse_key_id(&p));
    let found = id.and_then(|id| lock(&s.keys).get(&(t.name.clone(), id)).cloned());
    match found {
        Some(k) => Json(key_info(&k, false)).into_response(),
        None => ApiError::new(ErrorCode::UnknownKey, "no such key is registered").into_response(),
    }
}

/// `DELETE /v1/keys/{key_id}`: forgets one of the caller's keys (its
/// file, its cached copy) unless a job of the caller under it is queued or
/// running (`key_in_use`). A job admitted while the key is being deleted
/// fails as `unknown_key` when it runs.
async fn delete_key(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<KeyInfo>, ApiError> {
    let unknown = || ApiError::new(ErrorCode::UnknownKey, "no such key is registered");
    let id = path
        .ok()
        .and_then(|Path(p)| parse_key_id(&p))
        .ok_or_else(unknown)?;
    let name = (t.name.clone(), id);
    let stored = {
        let mut keys = lock(&s.keys);
        if !keys.contains_key(&name) {
            return Err(unknown());
        }
        let jobs = lock(&s.jobs);
        let key_id = id.to_string();
        let busy = jobs
            .map
            .values()
            .filter(|j| j.meta.tenant == t.name && j.meta.key_id == key_id)
            .filter(|j| matches!(j.state, State_::Queued | State_::Running(_)))
            .count();
        if busy > 0 {
            return Err(ApiError::new(
                ErrorCode::KeyInUse,
                format!("{busy} of your jobs under key {id} are queued or running"),
            ));
        }
        drop(jobs);
        keys.remove(&name).expect("checked above")
    };
    lock(&s.cache).keys.retain(|(k, _)| *k != name);
    let path = s.store.key_path(&t.name, id);
    tokio::task::spawn_blocking(move || std::fs::remove_file(path))
        .await
        .map_err(internal)?
        .map_err(internal)?;
    s.log(|| format!("key {id} deleted"));
    Ok(Json(key_info(&stored, false)))
}

/// The query of `POST /v1/jobs`.
#[derive(Deserialize)]
struct SubmitQuery {
    /// The key the client means (16 hex digits): the bundle must be under it.
    key: Option<String>,
}

async fn post_job(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    query: Result<Query<SubmitQuery>, QueryRejection>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<Submitted>), ApiError> {
    let Query(query) =
        query.map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("the query: {e}")))?;
    let named = match query.key {
        Some(k) => Some(parse_key_id(&k).ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!("key={k:?} is not a key id (16 hex digits)"),
            )
        })?),
        None => None,
    };
    let (bytes, _upload) = read_body(&s, &headers, body).await?;
    let parts = split_job(&bytes, s.config.max_body)?;
    if let Some(k) = named.filter(|&k| k != parts.key_id) {
        return Err(ApiError::new(
            ErrorCode::WrongKey,
            format!(
                "the bundle is under key {}, the request names key {k}",
                parts.key_id
            ),
        ));
    }
    let key = lock(&s.keys).get(&(t.name.clone(), parts.key_id)).cloned();
    let key = key.ok_or_else(|| {
        ApiError::new(
            ErrorCode::UnknownKey,
            format!(
                "the bundle is under key {}, which is not registered (POST /v1/keys first)",
                parts.key_id
            ),
        )
    })?;
    if key.params != parts.params.id {
        return Err(ApiError::new(
            ErrorCode::WrongKey,
            format!(
                "key {} is of {}, the job of {}",
                key.key_id,
                key.params.params().name,
                parts.params.name
            ),
        ));
    }
    s.check_room(&lock(&s.jobs), &t)?;
    let submitted = heavy(&s, move |s| s.admit(&t, &bytes)).await?;
    Ok((StatusCode::ACCEPTED, Json(submitted)))
}

fn job_id(path: Result<Path<String>, PathRejection>) -> Result<JobId, ApiError> {
    let Path(p) = path.map_err(|_| ApiError::new(ErrorCode::NotFound, "no such job"))?;
    p.parse()
}

async fn get_job(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<JobStatus>, ApiError> {
    Ok(Json(s.status(job_id(path)?, &t)?))
}

async fn get_result(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Response, ApiError> {
    let id = job_id(path)?;
    match s.status(id, &t)?.state {
        JobState::Done { .. } => {}
        JobState::Failed { code, message } => {
            return Err(ApiError::new(
                ErrorCode::JobFailed,
                format!("the job failed ({code}): {message}"),
            ))
        }
        JobState::Queued { .. } | JobState::Running { .. } => {
            return Err(ApiError::new(
                ErrorCode::NotReady,
                format!("job {id} has not finished"),
            ))
        }
    }
    let bytes = match tokio::fs::read(s.store.result_path(id)).await {
        Ok(b) => b,
        // Deleted meanwhile.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(not_found(id)),
        Err(e) => return Err(internal(e)),
    };
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/octet-stream"),
        )],
        bytes,
    )
        .into_response())
}

async fn delete_job(
    State(s): Shr,
    Extension(t): Extension<Tenant>,
    path: Result<Path<String>, PathRejection>,
) -> Result<Json<Deleted>, ApiError> {
    let id = job_id(path)?;
    {
        let mut jobs = lock(&s.jobs);
        match jobs.owned(id, &t.name)?.state {
            State_::Running(_) => {
                return Err(ApiError::new(
                    ErrorCode::NotReady,
                    format!("job {id} is running; delete it once it has finished"),
                ))
            }
            State_::Queued => {
                jobs.queue.remove(id);
            }
            _ => {}
        }
        jobs.map.remove(&id);
    }
    let s2 = s.clone();
    tokio::task::spawn_blocking(move || s2.store.delete_job(id))
        .await
        .map_err(internal)??;
    Ok(Json(Deleted { job_id: id }))
}

async fn get_info(State(s): Shr) -> Json<ServerInfo> {
    Json(ServerInfo {
        version: env!("CARGO_PKG_VERSION").into(),
        threads: s.config.threads,
        max_pbs: s.config.max_pbs,
        max_memory: s.config.max_memory,
        max_queue: s.config.max_queue,
        max_jobs: s.config.max_jobs,
        max_body: s.config.max_body,
        backend: s.config.backend.describe(s.config.threads),
    })
}

async fn get_stats(State(s): Shr, Extension(t): Extension<Tenant>) -> Json<ServerStats> {
    let mut st = ServerStats::default();
    {
        let jobs = lock(&s.jobs);
        for j in jobs.map.values().filter(|j| j.meta.tenant == t.name) {
            match j.state {
                State_::Queued => st.queued += 1,
                State_::Running(_) => st.running += 1,
                State_::Done(_) => st.done += 1,
                State_::Failed(_) => st.failed += 1,
            }
        }
    }
    st.accepted = s.accepted.load(Ordering::Relaxed);
    st.recovered = s.recovered.load(Ordering::Relaxed);
    st.completed = s.completed.load(Ordering::Relaxed);
    st.keys = lock(&s.keys).keys().filter(|(n, _)| *n == t.name).count();
    st.refused = lock(&s.refused)
        .iter()
        .map(|(k, v)| (k.to_string(), *v))
        .collect();
    Json(st)
}

/// The OpenAPI document of this API (`openapi.json` beside the crate's
/// manifest; a test checks it against the routes and the error codes).
pub const OPENAPI: &str = include_str!("../openapi.json");

/// `GET /v1/openapi.json`: [`OPENAPI`], for clients generated from it.
async fn get_openapi() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        OPENAPI,
    )
        .into_response()
}

/// `GET /v1/health`: the server answers and its job worker runs.
async fn get_health(State(s): Shr) -> Response {
    if s.stop.load(Ordering::Relaxed) {
        return ApiError::new(ErrorCode::Internal, "stopping").into_response();
    }
    Json(serde_json::json!({"status": "ok"})).into_response()
}

/// `GET /metrics` on the metrics address: the gauges set from the jobs
/// held now, then everything in Prometheus's text format.
async fn get_metrics(State(s): Shr) -> Response {
    {
        let jobs = lock(&s.jobs);
        s.metrics.jobs.reset();
        for j in jobs.map.values() {
            let state = match j.state {
                State_::Queued => "queued",
                State_::Running(_) => "running",
                State_::Done(_) => "done",
                State_::Failed(_) => "failed",
            };
            s.metrics
                .jobs
                .with_label_values(&[state, j.meta.tenant.as_str()])
                .inc();
        }
        s.metrics.queue_depth.set(jobs.queue.len() as i64);
        s.metrics.running_memory.set(jobs.running_memory as i64);
    }
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        s.metrics.render(),
    )
        .into_response()
}

async fn no_route() -> ApiError {
    ApiError::new(
        ErrorCode::NotFound,
        "no such endpoint (see GET /v1/openapi.json)",
    )
}

async fn no_method() -> ApiError {
    ApiError::new(
        ErrorCode::BadRequest,
        "this endpoint does not take that method",
    )
}

/// Lets a request through with the tenant its bearer token names (or as
/// the anonymous tenant, on an open server), or refuses it
/// (`unauthorized`) before its body is read.
async fn authenticate(State(s): Shr, mut req: Request, next: Next) -> Response {
    let tenants = match s.tenants() {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let tenant = if tenants.is_open() {
        Tenant::anonymous()
    } else {
        let token = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        match token.map(|t| tenants.authenticate(t)) {
            Some(Some(t)) => t,
            Some(None) => {
                return ApiError::new(
                    ErrorCode::Unauthorized,
                    "the token is not valid (unknown, mistyped or revoked)",
                )
                .into_response()
            }
            None => {
                return ApiError::new(
                    ErrorCode::Unauthorized,
                    "this server needs an API token: Authorization: Bearer TOKEN \
                     (hearth --token or HEARTH_TOKEN; the operator makes one with \
                     `hearth server token add`)",
                )
                .into_response()
            }
        }
    };
    tracing::Span::current().record("tenant", tenant.name.as_str());
    req.extensions_mut().insert(tenant);
    next.run(req).await
}

/// Counts every refusal by its code (for `GET /v1/stats`).
/// Every answer, seen once: one span per request (method, path, then the
/// tenant and the answer's status); refusals counted by code (stats and
/// metrics); with `config.log`, refusals logged at info level with their
/// code, other answers at debug level (clients poll).
async fn observe(State(s): Shr, req: Request, next: Next) -> Response {
    use tracing::Instrument;
    let span = tracing::info_span!(
        "request",
        method = %req.method(),
        path = %req.uri().path(),
        tenant = tracing::field::Empty,
        status = tracing::field::Empty,
    );
    let start = Instant::now();
    let r = next.run(req).instrument(span.clone()).await;
    let status = r.status().as_u16();
    span.record("status", status);
    let code = r.extensions().get::<ErrorCode>().copied();
    if let Some(code) = code {
        *lock(&s.refused).entry(code.as_str()).or_default() += 1;
        s.metrics.refusals.with_label_values(&[code.as_str()]).inc();
    }
    if s.config.log {
        let _entered = span.enter();
        let ms = start.elapsed().as_secs_f64() * 1e3;
        match code {
            Some(code) => tracing::info!(status, ms, code = code.as_str(), "refused"),
            None => tracing::debug!(status, ms, "answered"),
        }
    }
    r
}

/// A server on its data folder: jobs and keys recovered, the workers
/// started. Serve it with [`Server::serve`].
pub struct Server {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    sweeper: Option<JoinHandle<()>>,
    tls: Option<Tls>,
}

impl Server {
    /// Opens the data folder (refused if another server holds it),
    /// recovers its keys and jobs (unfinished jobs are queued again, in
    /// submission order), and starts the job workers.
    pub fn open(config: Config) -> Result<Server, ServerError> {
        if config.threads == 0 {
            return Err(ServerError::Config("--threads must be positive".into()));
        }
        if config.max_jobs == 0 {
            return Err(ServerError::Config("--max-jobs must be positive".into()));
        }
        let mut config = config;
        if config.backend == JobBackend::Gpu {
            if let Some(why) = gpu_unavailable() {
                return Err(ServerError::Config(format!("--backend gpu: {why}")));
            }
            // One device stream: jobs take turns on it.
            config.max_jobs = 1;
        }
        #[cfg(feature = "mpi")]
        if let JobBackend::Mpi(ranks) = &config.backend {
            if ranks.0.rank() != 0 {
                return Err(ServerError::Config(format!(
                    "--backend mpi: rank 0 serves; rank {} bootstraps (Cluster::work)",
                    ranks.0.rank()
                )));
            }
            // Rank 0 keeps as many keys decompressed as the cache; the
            // workers keep as many (at least the one in use).
            ranks
                .0
                .keep_keys(config.key_cache)
                .map_err(|e| ServerError::Config(e.to_string()))?;
            // The ranks' bootstrap slots serve one circuit at a time.
            config.max_jobs = 1;
        }
        let tls = match &config.tls {
            Some(files) => Some(Tls::load(files).map_err(|e| ServerError::Config(e.to_string()))?),
            None => None,
        };
        let store = Store::open(&config.data).map_err(ServerError::Data)?;
        let usage = store.read_usage();
        let Recovered {
            keys,
            jobs: stored,
            notes,
        } = store.recover().map_err(ServerError::Data)?;
        for n in notes {
            eprintln!("hearth server: {n}");
        }
        let pool =
            CpuBackend::pool(config.threads).map_err(|e| ServerError::Config(e.to_string()))?;
        let mut jobs = Jobs::default();
        let mut recovered = 0;
        for j in stored {
            jobs.next_seq = jobs.next_seq.max(j.meta.seq);
            let state = match j.outcome {
                None => State_::Queued,
                Some(Outcome::Done(n)) => State_::Done(n),
                Some(Outcome::Failed(e)) => State_::Failed(e),
            };
            let queued = matches!(state, State_::Queued);
            jobs.map.insert(
                j.id,
                Job {
                    meta: j.meta,
                    state,
                    finished: j.finished,
                },
            );
            if queued {
                jobs.enqueue(j.id);
                recovered += 1;
            }
        }
        let shared = Arc::new(Shared {
            limits: config.limits(),
            heavy: tokio::sync::Semaphore::new(config.threads),
            uploads: tokio::sync::Semaphore::new(config.max_uploads.max(1)),
            cache: Mutex::new(KeyCache {
                cap: config.key_cache,
                keys: VecDeque::new(),
            }),
            keys: Mutex::new(
                keys.into_iter()
                    .map(|k| ((k.tenant.clone(), k.key_id), k))
                    .collect(),
            ),
            // Read (and checked) below, as at every request.
            tenants: Mutex::new((None, Arc::new(Tenants::default()))),
            usage: Mutex::new(usage),
            metrics: Metrics::new(),
            #[cfg(feature = "gpu")]
            gpu_keys: Mutex::new(HashMap::new()),
            jobs: Mutex::new(jobs),
            wake: Condvar::new(),
            store,
            pool: Arc::new(pool),
            stop: AtomicBool::new(false),
            accepted: AtomicU64::new(0),
            recovered: AtomicU64::new(recovered),
            completed: AtomicU64::new(0),
            refused: Mutex::new(BTreeMap::new()),
            config,
        });
        if recovered > 0 {
            shared.log(|| format!("{recovered} unfinished jobs queued again"));
        }
        shared
            .tenants()
            .map_err(|e| ServerError::Config(e.message))?;
        shared.expire();
        let workers = (0..shared.config.max_jobs)
            .map(|i| {
                let s = shared.clone();
                std::thread::Builder::new()
                    .name(format!("hearth-job-{i}"))
                    .spawn(move || s.work())
            })
            .collect::<Result<Vec<_>, _>>()?;
        let shortest = match shared.config.queue_ttl {
            Some(q) => q.min(shared.config.result_ttl),
            None => shared.config.result_ttl,
        };
        let every = (shortest / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
        let s = shared.clone();
        let sweeper = std::thread::Builder::new()
            .name("hearth-expiry".into())
            .spawn(move || s.sweep(every))?;
        Ok(Server {
            shared,
            workers,
            sweeper: Some(sweeper),
            tls,
        })
    }

    /// Whether the data folder has no tenants: every request is served
    /// without a token.
    pub fn is_open(&self) -> bool {
        self.shared.tenants().map(|t| t.is_open()).unwrap_or(false)
    }

    /// Whether it serves HTTPS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The HTTP routes (see the crate doc), with the server as state.
    /// Every route but `GET /v1/info`, `/v1/health` and `/v1/openapi.json`
    /// authenticates its caller.
    pub fn router(&self) -> Router {
        let tenant_routes = Router::new()
            .route("/v1/stats", get(get_stats))
            .route("/v1/keys", post(post_key))
            .route("/v1/keys/{key_id}", get(get_key).delete(delete_key))
            .route("/v1/jobs", post(post_job))
            .route("/v1/jobs/{job_id}", get(get_job).delete(delete_job))
            .route("/v1/jobs/{job_id}/result", get(get_result))
            .route_layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                authenticate,
            ));
        Router::new()
            .route("/v1/info", get(get_info))
            .route("/v1/health", get(get_health))
            .route("/v1/openapi.json", get(get_openapi))
            .merge(tenant_routes)
            .fallback(no_route)
            .method_not_allowed_fallback(no_method)
            .layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                observe,
            ))
            .with_state(self.shared.clone())
    }

    /// The metrics address's routes: `GET /metrics`.
    pub fn metrics_router(&self) -> Router {
        Router::new()
            .route("/metrics", get(get_metrics))
            .fallback(no_route)
            .with_state(self.shared.clone())
    }

    /// Serves on `listener` until `shutdown` completes (requests in flight
    /// are finished), then stops the workers: a running job finishes
    /// first when [`Server::stop`] is called, or runs again at the next
    /// start when the process ends.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let r = match &self.tls {
            Some(tls) => {
                axum::serve(tls.listen(listener)?, self.router())
                    .with_graceful_shutdown(shutdown)
                    .await
            }
            None => {
                axum::serve(listener, self.router())
                    .with_graceful_shutdown(shutdown)
                    .await
            }
        };
        self.shared.halt();
        r
    }

    /// Stops the workers (each after its running job, if any) and waits
    /// for them.
    pub fn stop(mut self) {
        self.shared.halt();
        for t in self.workers.drain(..).chain(self.sweeper.take()) {
            let _ = t.join();
        }
    }
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.clamp(1, 4))
        .thread_name("hearth-http")
        .enable_all()
        .build()
}

/// A server running on a thread of its own ([`start`]).
pub struct ServerHandle {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    scheme: &'static str,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl ServerHandle {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where `GET /metrics` is served ([`Config::metrics_listen`]).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// `http://ADDR`, or `https://ADDR` when serving TLS.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Stops serving, lets the running job finish, and releases the data
    /// folder (another server may then open it).
    pub fn stop(mut self) -> std::io::Result<()> {
        self.halt()
    }

    fn halt(&mut self) -> std::io::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the server thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// Opens the server on `config` and serves on `listen` (`HOST:PORT`;
/// port 0 picks a free one) from a background thread, until
/// [`ServerHandle::stop`] or drop. An address other than loopback is
/// refused unless [`Config::insecure`] is set.
pub fn start(config: Config, listen: &str) -> Result<ServerHandle, ServerError> {
    let rt = runtime(config.threads)?;
    let listener = rt.block_on(tokio::net::TcpListener::bind(listen))?;
    let addr = listener.local_addr()?;
    config.check_exposure(addr)?;
    let metrics = bind_metrics(&rt, &config)?;
    let server = Server::open(config)?;
    let metrics_addr = serve_metrics(&rt, &server, metrics)?;
    let scheme = if server.is_tls() { "https" } else { "http" };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("hearth-server".into())
        .spawn(move || {
            let r = rt.block_on(server.serve(listener, async {
                let _ = rx.await;
            }));
            server.stop();
            drop(rt);
            r
        })?;
    Ok(ServerHandle {
        addr,
        metrics_addr,
        scheme,
        stop: Some(tx),
        thread: Some(thread),
    })
}

/// Opens the server on `config`, serves on `listen` and calls `ready`
/// with its URL (`http://ADDR` or `https://ADDR`) and whether it is open
/// (no tenants); returns on Ctrl-C or SIGTERM without waiting for a
/// running job (it runs again at the next start).
pub fn run(
    config: Config,
    listen: &str,
    ready: impl FnOnce(&str, bool),
) -> Result<(), ServerError> {
    let rt = runtime(config.threads)?;
    let listener = rt.block_on(tokio::net::TcpListener::bind(listen))?;
    config.check_exposure(listener.local_addr()?)?;
    let metrics = bind_metrics(&rt, &config)?;
    let log = config.log;
    let server = Server::open(config)?;
    if let Some(addr) = serve_metrics(&rt, &server, metrics)? {
        if log {
            eprintln!("hearth server: metrics on http://{addr}/metrics");
        }
    }
    rt.block_on(async {
        let scheme = if server.is_tls() { "https" } else { "http" };
        ready(
            &format!("{scheme}://{}", listener.local_addr()?),
            server.is_open(),
        );
        server.serve(listener, shutdown_signal()).await
    })?;
    Ok(())
}

/// Binds [`Config::metrics_listen`], if set: loopback only unless
/// [`Config::insecure`] (the metrics name tenants and count their jobs).
fn bind_metrics(
    rt: &tokio::runtime::Runtime,
    config: &Config,
) -> Result<Option<tokio::net::TcpListener>, ServerError> {
    let Some(at) = &config.metrics_listen else {
        return Ok(None);
    };
    let listener = rt.block_on(tokio::net::TcpListener::bind(at))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && !config.insecure {
        return Err(ServerError::Config(format!(
            "refusing to serve metrics on {addr}, not a loopback address: they name tenants and \
             count their jobs, and have no token. Scrape them on 127.0.0.1, or pass --insecure"
        )));
    }
    Ok(Some(listener))
}

/// Serves `GET /metrics` on `listener` until the runtime ends.
fn serve_metrics(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    listener: Option<tokio::net::TcpListener>,
) -> Result<Option<SocketAddr>, ServerError> {
    let Some(listener) = listener else {
        return Ok(None);
    };
    let addr = listener.local_addr()?;
    let router = server.metrics_router();
    rt.spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Ok(Some(addr))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
