//! What the server holds in memory: its jobs and their states, and the
//! state every request and worker shares.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex};

use super::caches::{key_bytes, KeyCache, KeyName, ProgramCache};
use super::ledger::Ledger;
use super::lock::lock;
use super::slots::Slots;
use hearth::{CompiledProgram, ServerKey};

use crate::config::Config;
use crate::metrics::Metrics;
use crate::refusals;
use crate::request::Limits;
use crate::schedule::{FairQueue, Lane};
use crate::store::{JobMeta, StoredKey};
use crate::tenants::{Tenant, Tenants};
use crate::wire::{ApiError, ErrorCode, JobId, KeyInfo};

/// Where a job is in its life on this server (what a client sees of it
/// is the wire's [`JobState`](crate::wire::JobState)).
pub(super) enum Phase {
    Queued,
    Running(Arc<AtomicU64>),
    Done(u64),
    Failed(ApiError),
}

pub(super) struct Job {
    pub(super) meta: JobMeta,
    pub(super) state: Phase,
    /// Bytes it holds against its tenant's storage: its request and the
    /// most its result can take while it waits or runs, its result's
    /// bytes once done.
    pub(super) held: u64,
    /// When it finished (Unix seconds), for `result_ttl`.
    pub(super) finished: Option<u64>,
}

#[derive(Default)]
pub(super) struct Jobs {
    pub(super) map: HashMap<JobId, Job>,
    pub(super) queue: FairQueue,
    /// Jobs running, their widths and memory estimates together.
    pub(super) running: usize,
    pub(super) running_width: usize,
    pub(super) running_memory: u64,
    /// Slots taken by jobs being written to disk, by tenant.
    pub(super) reserved: HashMap<String, usize>,
    pub(super) next_seq: u64,
}

impl Jobs {
    pub(super) fn reserved(&self) -> usize {
        self.reserved.values().sum()
    }

    /// `tenant`'s jobs queued, running or being written.
    pub(super) fn pending(&self, tenant: &str) -> usize {
        let live = self
            .map
            .values()
            .filter(|j| j.meta.tenant == tenant)
            .filter(|j| matches!(j.state, Phase::Queued | Phase::Running(_)))
            .count();
        live + self.reserved.get(tenant).copied().unwrap_or(0)
    }

    /// Refuses when the server's queue (`max_queue` jobs) or `tenant`'s
    /// share of it is full (checked early, then again on admission). The
    /// words name no count of other tenants' jobs.
    pub(super) fn check_room(&self, max_queue: usize, tenant: &Tenant) -> Result<(), ApiError> {
        if self.queue.len() + self.reserved() >= max_queue {
            return Err(refusals::queue_full());
        }
        if let Some(l) = tenant.limits {
            let mine = self.pending(&tenant.name);
            if mine >= l.max_queue {
                return Err(refusals::queue_limit(mine));
            }
        }
        Ok(())
    }

    /// Queues the known job `id` in its lane.
    pub(super) fn enqueue(&mut self, id: JobId) {
        let meta = &self.map[&id].meta;
        let lane = Lane::new(&meta.tenant, &meta.key_id);
        self.queue.push(lane, id);
    }

    /// Starts the next job in turn if it may run now beside the running
    /// ones (see the module's doc): fewer than `config.max_jobs`, widths
    /// within `config.threads`, memory within `config.max_memory`. One
    /// job alone always may: it was admitted.
    pub(super) fn start_next(&mut self, config: &Config) -> Option<(JobId, JobMeta)> {
        let id = self.queue.peek()?;
        let meta = self.map[&id].meta.clone();
        if !self.take_room(&meta, config) {
            return None;
        }
        self.queue.pop();
        Some((id, meta))
    }

    /// Takes the room a job of `meta` needs beside the running ones if it
    /// fits now (see [`Jobs::start_next`]); false if it does not.
    pub(super) fn take_room(&mut self, meta: &JobMeta, config: &Config) -> bool {
        let (width, memory) = (width(meta, config.threads), meta.memory);
        let fits = self.running < config.max_jobs
            && self.running_width + width <= config.threads
            && self.running_memory.saturating_add(memory) <= config.max_memory;
        if self.running > 0 && !fits {
            return false;
        }
        self.running += 1;
        self.running_width += width;
        self.running_memory += memory;
        true
    }

    /// Marks a job started by [`Jobs::start_next`] as ended.
    pub(super) fn end(&mut self, meta: &JobMeta, threads: usize) {
        self.running -= 1;
        self.running_width -= width(meta, threads);
        self.running_memory -= meta.memory;
    }

    /// The job `id` if `tenant` owns it: another tenant's job is
    /// answered as if it did not exist.
    pub(super) fn owned(&self, id: JobId, tenant: &str) -> Result<&Job, ApiError> {
        self.map
            .get(&id)
            .filter(|j| j.meta.tenant == tenant)
            .ok_or_else(|| not_found(id))
    }
}

/// The threads a job keeps busy on average: its bootstraps per level
/// (#PBS / depth, rounded up), at least 1 and at most `threads`.
pub(super) fn width(meta: &JobMeta, threads: usize) -> usize {
    let per_level = meta.pbs.div_ceil(meta.depth.max(1));
    per_level.clamp(1, threads as u64) as usize
}

pub(super) struct Shared {
    pub(super) config: Config,
    pub(super) limits: Limits,
    /// This server's name (`/v1/info`): its fleet name, or its host's
    /// name and process id.
    pub(super) name: String,
    /// Where tenants, keys, jobs and usage are kept: the data folder or a
    /// fleet ([`Ledger`]).
    pub(super) ledger: Arc<dyn Ledger>,
    /// On a data folder, every job; in a fleet, only what runs here (the
    /// running jobs' widths and memory, for whether another fits).
    pub(super) jobs: Mutex<Jobs>,
    pub(super) wake: Condvar,
    /// Server keys decompressed lately ([`Shared::keep_key`]).
    pub(super) cache: Mutex<KeyCache>,
    /// Programs built lately, for the jobs that run them and the jobs
    /// that send them again ([`Shared::keep_program`]).
    pub(super) programs: Mutex<ProgramCache>,
    /// Permits for results being sent.
    pub(super) downloads: Arc<Slots>,
    /// The API's address, once serving.
    pub(super) listening: Mutex<Option<std::net::SocketAddr>>,
    pub(super) metrics: Metrics,
    /// Server keys converted for the GPU (`Engine::Gpu`).
    #[cfg(feature = "gpu")]
    pub(super) gpu_keys: Mutex<HashMap<KeyName, Arc<hearth::backend::GpuKey>>>,
    /// Permits for CPU-heavy work off the async threads, shared fairly
    /// by tenant.
    pub(super) heavy: Arc<Slots>,
    /// Permits for request bodies in memory, shared fairly by tenant.
    pub(super) uploads: Arc<Slots>,
    pub(super) pool: Arc<rayon::ThreadPool>,
    pub(super) stop: AtomicBool,
    /// Counts since start, by tenant: each tenant sees its own.
    pub(super) counts: Mutex<HashMap<String, Counts>>,
}

/// One tenant's counts since the server started (`GET /v1/stats`).
#[derive(Clone, Debug, Default)]
pub(super) struct Counts {
    pub(super) accepted: u64,
    pub(super) recovered: u64,
    pub(super) completed: u64,
    pub(super) refused: BTreeMap<&'static str, u64>,
}

/// Why every request is refused: logged in full for the operator, said
/// without local paths to the client.
pub(super) fn closed(e: impl std::fmt::Display) -> ApiError {
    tracing::error!(error = %e, "refusing every request");
    ApiError::new(
        ErrorCode::Closed,
        "the server is closed: its tenants cannot be read (the operator's log says why)",
    )
}

/// `e` as a client may see it: an internal error's words (which may name
/// the data folder's paths) go to the operator's log under a reference,
/// the client gets the reference.
pub(super) fn public(e: ApiError) -> ApiError {
    if e.code != ErrorCode::Internal {
        return e;
    }
    let reference = &JobId::random().to_string()[..8];
    tracing::error!(reference, error = %e.message, "internal error");
    ApiError::new(
        ErrorCode::Internal,
        format!("the server could not do its part (reference {reference} in its log)"),
    )
}

pub(super) fn internal(e: impl std::fmt::Display) -> ApiError {
    ApiError::new(ErrorCode::Internal, e.to_string())
}

impl Shared {
    /// Bytes the caches may hold together now: what `--max-memory`
    /// leaves beside the running jobs' estimates.
    pub(super) fn cache_room(&self) -> u64 {
        let running = lock(&self.jobs).running_memory;
        self.config.max_memory.saturating_sub(running)
    }

    /// Keeps a decompressed key for the jobs to come, if it fits beside
    /// the programs kept (see [`Shared::cache_room`]).
    pub(super) fn keep_key(&self, name: KeyName, key: Arc<ServerKey>) {
        let room = self.cache_room();
        let programs = lock(&self.programs).bytes();
        let bytes = key_bytes(&key);
        lock(&self.cache).put(name, key, bytes, room.saturating_sub(programs));
    }

    /// Keeps a built program for the job that runs it and those that send
    /// it again, if it fits beside the keys kept (see
    /// [`Shared::cache_room`]).
    pub(super) fn keep_program(&self, digest: [u8; 32], program: Arc<CompiledProgram>) {
        let room = self.cache_room();
        let keys = lock(&self.cache).bytes();
        let bytes = program.heap_bytes();
        lock(&self.programs).put(digest, program, bytes, room.saturating_sub(keys));
    }

    /// Shrinks the caches to what `--max-memory` leaves beside the
    /// running jobs, programs first (a job started: its memory was
    /// counted).
    pub(super) fn make_room(&self) {
        let room = self.cache_room();
        let keys = lock(&self.cache).bytes();
        lock(&self.programs).shrink(room.saturating_sub(keys));
        let programs = lock(&self.programs).bytes();
        lock(&self.cache).shrink(room.saturating_sub(programs));
    }

    /// The bytes `tenant` may keep stored: its own quota in the tenants
    /// file, else the server's `max_storage`.
    pub(super) fn quota(&self, tenant: &str) -> u64 {
        self.tenants()
            .ok()
            .and_then(|t| t.max_storage(tenant))
            .unwrap_or(self.config.max_storage)
    }

    /// An event of the server's own (not of one request or job) at info
    /// level, if `config.log`.
    pub(super) fn log(&self, msg: impl FnOnce() -> String) {
        if self.config.log {
            tracing::info!("{}", msg());
        }
    }

    /// The tenants as they are now ([`Ledger::tenants`]). Every failure
    /// closes the server, never opens it ([`ErrorCode::Closed`]), an open
    /// server on a public address too (see [`Shared::exposed`]).
    pub(super) fn tenants(&self) -> Result<Arc<Tenants>, ApiError> {
        self.open_only_on_loopback(self.ledger.tenants()?)
    }

    /// The tenants a request bearing `token` is authenticated against
    /// ([`Ledger::tenants_for`]), under the same rules as
    /// [`Shared::tenants`].
    pub(super) async fn tenants_for(&self, token: Option<&str>) -> Result<Arc<Tenants>, ApiError> {
        let t = self.ledger.tenants_for(token).await?;
        self.open_only_on_loopback(t)
    }

    fn open_only_on_loopback(&self, t: Arc<Tenants>) -> Result<Arc<Tenants>, ApiError> {
        if t.is_open() {
            if let Some(addr) = self.exposed() {
                return Err(closed(format!(
                    "the server listens on {addr}, not a loopback address, and has no tenants"
                )));
            }
        }
        Ok(t)
    }

    /// The address served, when it is not loopback and `--insecure` was
    /// not given: the exposure rule (tenants and TLS) holds there for as
    /// long as the server runs, not only at start.
    pub(super) fn exposed(&self) -> Option<std::net::SocketAddr> {
        let addr = (*lock(&self.listening))?;
        (!addr.ip().is_loopback() && !self.config.insecure).then_some(addr)
    }

    /// Changes `tenant`'s counts.
    pub(super) fn count(&self, tenant: &str, f: impl FnOnce(&mut Counts)) {
        f(lock(&self.counts).entry(tenant.to_string()).or_default());
    }

    /// A job of `tenant` accepted.
    pub(super) fn count_accepted(&self, tenant: &str) {
        self.count(tenant, |c| c.accepted += 1);
        self.metrics.accepted.with_label_values(&[tenant]).inc();
    }
}

pub(super) use crate::refusals::no_job as not_found;

pub(super) fn key_info(k: &StoredKey, new: bool) -> KeyInfo {
    KeyInfo {
        key_id: k.key_id.to_string(),
        params: k.params.params().name.to_string(),
        compressed: k.compressed,
        bytes: k.bytes,
        new,
    }
}
