//! A server's own data folder ([`crate::store`]) as its ledger: what the
//! server holds in memory of it (keys, tenants, the day's bootstraps,
//! bytes stored by tenant) beside every job ([`Shared::jobs`]), and each
//! of the ledger's operations done there. Its admission is in `admit.rs`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use async_trait::async_trait;
use hearth::crypto::files::{remove_durable, write_atomic, FileInfo, FileKind};
use hearth::{KeyId, ServerKey};

use super::caches::KeyName;
use super::ledger::Ledger;
use super::lock::lock;
use super::routes::heavy;
use super::state::{closed, internal, public, Counts, Job, Jobs, Phase, Shared};
use super::storage::Storage;
use super::usage::UsageBook;
use super::worker::job_span;
use crate::config::{Config, ServerError};
use crate::refusals;
use crate::request::key_error;
use crate::store::{Outcome, Recovered, Store, StoredKey};
use crate::tenants::{self, now as now_s, now_ms, Tenant, TenantError, Tenants};
use crate::wire::{ApiError, ErrorCode, JobId, JobState, JobStatus, Submitted};

/// A server's own data folder ([`crate::store`]) and what it holds in
/// memory of it.
pub(super) struct DataFolder {
    pub(super) store: Store,
    keys: Mutex<HashMap<KeyName, StoredKey>>,
    /// The tenants file as last read, and what it looked like on disk.
    tenants: Mutex<(Option<FileStamp>, Arc<Tenants>)>,
    /// Bootstraps admitted today, by tenant (kept in `usage.json`).
    pub(super) usage: UsageBook,
    /// Bytes stored, by tenant.
    pub(super) storage: Storage,
    /// Whether tenants were ever read from the folder (see
    /// [`Ledger::tenants`]).
    had_tenants: AtomicBool,
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

impl DataFolder {
    /// Opens the data folder of `config` (refused if another server holds
    /// it) and recovers its keys and jobs (see [`crate::store`]): the
    /// folder, the jobs (unfinished ones queued again, in submission
    /// order, unless they crashed `max_attempts` times), the counts of
    /// jobs found unfinished (by tenant), and how many.
    pub(super) fn open(
        config: &Config,
    ) -> Result<(DataFolder, Jobs, HashMap<String, Counts>, usize), ServerError> {
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
        let mut jobs = Jobs::default();
        let mut recovered = 0;
        let mut counts = HashMap::<String, Counts>::new();
        let used = Storage::new(store.root(), config.disk_reserve);
        for k in &keys {
            used.add(&k.tenant, k.bytes);
        }
        for j in stored {
            jobs.next_seq = jobs.next_seq.max(j.meta.seq);
            let mut finished = j.finished;
            let state = match j.outcome {
                None if j.attempts >= config.max_attempts => {
                    let e = crate::refusals::crashed(j.attempts);
                    eprintln!("hearth server: job {}: {}", j.id, e.message);
                    if let Err(w) = store.write_failure(j.id, &j.meta, &e) {
                        eprintln!("hearth server: job {}: {w}", j.id);
                    }
                    finished = Some(now_s());
                    Phase::Failed(e)
                }
                None => Phase::Queued,
                Some(Outcome::Done(n)) => Phase::Done(n),
                Some(Outcome::Failed(e)) => Phase::Failed(e),
            };
            let queued = matches!(state, Phase::Queued);
            let held = match state {
                Phase::Queued => store.job_bytes(j.id).saturating_add(j.meta.result_bytes),
                Phase::Done(n) => n,
                _ => 0,
            };
            used.add(&j.meta.tenant, held);
            if queued {
                recovered += 1;
                counts.entry(j.meta.tenant.clone()).or_default().recovered += 1;
            }
            jobs.map.insert(
                j.id,
                Job {
                    meta: j.meta,
                    state,
                    held,
                    finished,
                },
            );
            if queued {
                jobs.enqueue(j.id);
            }
        }
        let folder = DataFolder {
            store,
            keys: Mutex::new(
                keys.into_iter()
                    .map(|k| ((k.tenant.clone(), k.key_id), k))
                    .collect(),
            ),
            // Read (and checked) by the first request, as at every request.
            tenants: Mutex::new((None, Arc::new(Tenants::default()))),
            usage: UsageBook::new(usage),
            storage: used,
            had_tenants: AtomicBool::new(false),
        };
        Ok((folder, jobs, counts, recovered))
    }

    /// Refuses a new key of `tenant` beyond its `max_keys` or the
    /// server's (`max_keys`): checked before the upload is decoded, and
    /// again when it is registered.
    fn check_key_room(
        keys: &HashMap<KeyName, StoredKey>,
        tenant: &Tenant,
        max_keys: usize,
    ) -> Result<(), ApiError> {
        if let Some(l) = tenant.limits {
            let own = keys.keys().filter(|(t, _)| *t == tenant.name).count();
            if own >= l.max_keys {
                return Err(refusals::key_limit(own));
            }
        }
        if keys.len() >= max_keys {
            return Err(refusals::too_many_keys());
        }
        Ok(())
    }

    /// [`Ledger::register_key`], off the async threads.
    fn register(
        &self,
        s: &Shared,
        tenant: &Tenant,
        info: FileInfo,
        bytes: &[u8],
    ) -> Result<(StoredKey, bool), ApiError> {
        let id = info.key_id;
        let name = (tenant.name.clone(), id);
        Self::check_key_room(&lock(&self.keys), tenant, s.config.max_keys)?;
        let size = bytes.len() as u64;
        self.storage
            .take(&tenant.name, size, s.quota(&tenant.name))?;
        let registered = (|| {
            let key = ServerKey::from_bytes(std::path::Path::new("server key"), bytes)
                .map_err(key_error)?;
            let mut keys = lock(&self.keys);
            if let Some(k) = keys.get(&name) {
                return Ok((k.clone(), false));
            }
            Self::check_key_room(&keys, tenant, s.config.max_keys)?;
            let path = self.store.key_path(&tenant.name, id);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(internal)?;
            }
            write_atomic(&path, bytes, false).map_err(internal)?;
            let stored = StoredKey {
                tenant: tenant.name.clone(),
                key_id: id,
                params: info.params,
                compressed: info.kind == FileKind::CompressedServerKey,
                bytes: size,
            };
            keys.insert(name.clone(), stored.clone());
            drop(keys);
            s.keep_key(name, Arc::new(key));
            Ok((stored, true))
        })();
        if !matches!(registered, Ok((_, true))) {
            self.storage.give(&tenant.name, size);
        }
        registered
    }

    /// [`Ledger::status`] of a job the server holds in memory.
    fn job_status(s: &Shared, id: JobId, tenant: &str) -> Result<JobStatus, ApiError> {
        let jobs = lock(&s.jobs);
        let job = jobs.owned(id, tenant)?;
        let state = match &job.state {
            Phase::Queued => JobState::Queued {
                position: jobs.queue.position(id).unwrap_or(0),
            },
            Phase::Running(done) => JobState::Running {
                done: done.load(Ordering::Relaxed),
                total: job.meta.pbs,
            },
            Phase::Done(n) => JobState::Done { result_bytes: *n },
            Phase::Failed(e) => JobState::Failed {
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

#[async_trait]
impl Ledger for DataFolder {
    fn kind(&self) -> &'static str {
        "files"
    }

    fn load_tenants(&self) -> Result<Tenants, TenantError> {
        Tenants::load(self.store.root())
    }

    fn attach(&self, _s: &Arc<Shared>, tenants: &Tenants) -> Result<(), String> {
        if tenants.is_open() {
            return Ok(());
        }
        // A folder with tenants from before the marker existed.
        tenants::mark_required(self.store.root()).map_err(|e| e.to_string())
    }

    /// The tenants file, read again if it changed on disk since the last
    /// request. A folder that has had tenants and lost or emptied its file
    /// closes the server.
    fn tenants(&self) -> Result<Arc<Tenants>, ApiError> {
        let data = self.store.root();
        let path = data.join(tenants::FILE);
        let now = match std::fs::metadata(&path) {
            Ok(m) => Some(stamp(&m)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(closed(e)),
        };
        let mut t = lock(&self.tenants);
        if t.0 != now || t.0.is_none() {
            let loaded = Tenants::load(data).map_err(closed)?;
            // Once tenants were seen, a file that vanishes along with its
            // marker still closes the server: only `reopen`'s empty file
            // (there, not missing) opens it.
            if loaded.is_open() && now.is_none() && self.had_tenants.load(Ordering::Relaxed) {
                return Err(closed("tenants.json is missing"));
            }
            self.had_tenants
                .fetch_or(!loaded.is_open(), Ordering::Relaxed);
            t.1 = Arc::new(loaded);
            t.0 = now;
        }
        Ok(t.1.clone())
    }

    async fn key(&self, tenant: &str, id: KeyId) -> Result<Option<StoredKey>, ApiError> {
        Ok(lock(&self.keys).get(&(tenant.to_string(), id)).cloned())
    }

    async fn key_count(&self, tenant: &str) -> Result<usize, ApiError> {
        Ok(lock(&self.keys)
            .keys()
            .filter(|(n, _)| *n == tenant)
            .count())
    }

    fn key_file(&self, tenant: &str, id: KeyId) -> Result<Vec<u8>, ApiError> {
        if !lock(&self.keys).contains_key(&(tenant.to_string(), id)) {
            return Err(ApiError::new(
                ErrorCode::UnknownKey,
                format!("no server key {id} is registered"),
            ));
        }
        std::fs::read(self.store.key_path(tenant, id)).map_err(internal)
    }

    async fn register_key(
        self: Arc<Self>,
        s: &Arc<Shared>,
        tenant: Tenant,
        info: FileInfo,
        bytes: Vec<u8>,
    ) -> Result<(StoredKey, bool), ApiError> {
        let owner = tenant.name.clone();
        heavy(s, &owner, move |s| self.register(s, &tenant, info, &bytes)).await
    }

    async fn delete_key(&self, s: &Shared, tenant: &str, id: KeyId) -> Result<StoredKey, ApiError> {
        let stored = {
            let mut keys = lock(&self.keys);
            let name = (tenant.to_string(), id);
            if !keys.contains_key(&name) {
                return Err(refusals::unknown_key());
            }
            let jobs = lock(&s.jobs);
            let key_id = id.to_string();
            let busy = jobs
                .map
                .values()
                .filter(|j| j.meta.tenant == tenant && j.meta.key_id == key_id)
                .filter(|j| matches!(j.state, Phase::Queued | Phase::Running(_)))
                .count();
            if busy > 0 {
                return Err(refusals::key_in_use(busy, id));
            }
            drop(jobs);
            keys.remove(&name).expect("checked above")
        };
        self.storage.give(&stored.tenant, stored.bytes);
        let path = self.store.key_path(tenant, id);
        tokio::task::spawn_blocking(move || remove_durable(&path))
            .await
            .map_err(internal)?
            .map_err(internal)?;
        Ok(stored)
    }

    async fn check_room(&self, s: &Shared, tenant: &Tenant) -> Result<(), ApiError> {
        lock(&s.jobs).check_room(s.config.max_queue, tenant)
    }

    async fn submit(
        self: Arc<Self>,
        s: &Arc<Shared>,
        tenant: Tenant,
        body: Vec<u8>,
        unpacked: bool,
    ) -> Result<Submitted, ApiError> {
        let owner = tenant.name.clone();
        heavy(s, &owner, move |s| self.admit(s, &tenant, &body, unpacked)).await
    }

    async fn status(
        &self,
        s: &Shared,
        id: JobId,
        tenant: &str,
    ) -> Result<(JobStatus, Option<PathBuf>), ApiError> {
        let status = Self::job_status(s, id, tenant)?;
        let file =
            matches!(status.state, JobState::Done { .. }).then(|| self.store.result_path(id));
        Ok((status, file))
    }

    async fn delete_job(
        self: Arc<Self>,
        s: &Shared,
        id: JobId,
        tenant: &str,
    ) -> Result<(), ApiError> {
        {
            let mut jobs = lock(&s.jobs);
            match jobs.owned(id, tenant)?.state {
                Phase::Running(_) => return Err(refusals::job_running(id)),
                Phase::Queued => {
                    jobs.queue.remove(id);
                }
                _ => {}
            }
            if let Some(j) = jobs.map.remove(&id) {
                self.storage.give(tenant, j.held);
            }
        }
        tokio::task::spawn_blocking(move || self.store.delete_job(id))
            .await
            .map_err(internal)?
    }

    async fn job_counts(
        &self,
        s: &Shared,
        tenant: Option<&str>,
    ) -> Result<Vec<(String, String, usize)>, ApiError> {
        let jobs = lock(&s.jobs);
        let mut counts: BTreeMap<(&'static str, &str), usize> = BTreeMap::new();
        for j in jobs.map.values() {
            if tenant.is_some_and(|t| t != j.meta.tenant) {
                continue;
            }
            let state = match j.state {
                Phase::Queued => "queued",
                Phase::Running(_) => "running",
                Phase::Done(_) => "done",
                Phase::Failed(_) => "failed",
            };
            *counts.entry((state, j.meta.tenant.as_str())).or_default() += 1;
        }
        Ok(counts
            .into_iter()
            .map(|((state, t), n)| (state.to_string(), t.to_string(), n))
            .collect())
    }

    /// Takes the next job in turn whenever it may start
    /// ([`Jobs::start_next`]). Each start is counted on disk first
    /// ([`Store::start_attempt`]), so that a job the process dies running
    /// is not run for ever.
    fn work(&self, s: &Shared) {
        loop {
            let (id, meta, done) = {
                let mut jobs = lock(&s.jobs);
                let (id, meta) = loop {
                    if s.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    if let Some(next) = jobs.start_next(&s.config) {
                        break next;
                    }
                    jobs = s.wake.wait(jobs).unwrap_or_else(|e| e.into_inner());
                };
                let done = Arc::new(AtomicU64::new(0));
                let job = jobs.map.get_mut(&id).expect("queued jobs are known");
                job.state = Phase::Running(done.clone());
                (id, meta, done)
            };
            s.make_room();
            let span = job_span(id, &meta);
            let _entered = span.enter();
            let start = Instant::now();
            let outcome = self.store.start_attempt(id).and_then(|attempt| {
                if s.config.log {
                    tracing::info!(attempt, "job started");
                }
                let request = self.store.read_job(id)?.1;
                s.guarded(|| s.run_job(&meta, request, &done, None))
                    .and_then(|out| self.store.write_result(id, &meta, &out))
            });
            let outcome = outcome.map_err(public);
            s.record(&meta, start, &outcome, &done);
            let (state, kept) = match outcome {
                Ok(n) => (Phase::Done(n), n),
                Err(e) => {
                    if let Err(w) = self.store.write_failure(id, &meta, &e) {
                        tracing::error!(error = %w, "the failure could not be written");
                    }
                    (Phase::Failed(e), 0)
                }
            };
            {
                let mut jobs = lock(&s.jobs);
                jobs.end(&meta, s.config.threads);
                if let Some(job) = jobs.map.get_mut(&id) {
                    job.state = state;
                    job.finished = Some(now_s());
                    // The request and the result's reserve give way to the
                    // result's own bytes.
                    self.storage
                        .give(&meta.tenant, job.held.saturating_sub(kept));
                    job.held = kept;
                }
            }
            // Room for the next job in turn, maybe for more than one.
            s.wake.notify_all();
        }
    }

    /// A queued job's failure is written under the jobs lock, so that a
    /// `DELETE` cannot come between the decision and the write and be
    /// undone by it. Each deletion removes the job file first
    /// ([`Store::delete_job`]), so a crash halfway leaves an orphan result
    /// that the next start removes.
    fn expire(&self, s: &Shared) {
        let (now, now_ms) = (now_s(), now_ms());
        let ttl = s.config.result_ttl.as_secs();
        let mut gone = Vec::new();
        {
            let mut jobs = lock(&s.jobs);
            let mut timed_out = Vec::new();
            for (id, j) in &jobs.map {
                match (&j.state, j.finished) {
                    (Phase::Done(_) | Phase::Failed(_), Some(t))
                        if now >= t.saturating_add(ttl) =>
                    {
                        gone.push(*id)
                    }
                    (Phase::Queued, _) => {
                        let waited = now_ms.saturating_sub(j.meta.submitted_ms);
                        if let Some(q) = s.config.queue_ttl {
                            if j.meta.submitted_ms > 0 && u128::from(waited) >= q.as_millis() {
                                timed_out.push((*id, waited));
                            }
                        }
                    }
                    _ => {}
                }
            }
            for id in &gone {
                if let Some(j) = jobs.map.remove(id) {
                    self.storage.give(&j.meta.tenant, j.held);
                }
            }
            for (id, waited) in timed_out {
                jobs.queue.remove(id);
                let Some(j) = jobs.map.get_mut(&id) else {
                    continue;
                };
                let e = crate::refusals::expired(waited);
                if let Err(w) = self.store.write_failure(id, &j.meta, &e) {
                    tracing::error!(job = %id, error = %w, "an expired job's failure could not be written");
                }
                self.storage.give(&j.meta.tenant, j.held);
                j.held = 0;
                j.state = Phase::Failed(e);
                j.finished = Some(now);
            }
        }
        for id in &gone {
            match self.store.delete_job(*id) {
                Ok(()) => s.log(|| format!("job {id} expired and deleted")),
                Err(e) => {
                    tracing::error!(job = %id, error = %e, "an expired job could not be deleted")
                }
            }
        }
    }
}
