//! The job workers and the expiry sweeper.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth::backend::{CpuBackend, Engine, Evaluator};
use hearth::{Bundle, ServerKey};

use super::lock::lock;
use super::state::{internal, public, Ledger, Phase, Shared};
#[cfg(feature = "mpi")]
use crate::config::Ranks;
use crate::fleet::{Committed, Fleet};
use crate::request::{read_bundle, split_job, stated_cost};
use crate::store::JobMeta;
use crate::tenants::{now as now_s, now_ms};
use crate::wire::{ApiError, ErrorCode, JobId};

/// How often an idle worker in a fleet looks for a job when nothing woke
/// it: a job queued anywhere in the fleet is announced (`NOTIFY`), so this
/// is only for an announcement lost with the listener's connection.
const FLEET_POLL: Duration = Duration::from_secs(1);

/// The span of a job's events.
fn job_span(id: JobId, meta: &JobMeta) -> tracing::Span {
    tracing::info_span!(
        "job",
        job = %id,
        tenant = %meta.tenant,
        key = %meta.key_id,
        pbs = meta.pbs,
        depth = meta.depth
    )
}

/// After `e`, a failed rank ([`hearth::Error::Rank`]) ends every rank: it
/// may hold a half-sent message. The job is kept and runs again at the
/// next start.
#[cfg(feature = "mpi")]
fn end_ranks_after(ranks: &Ranks, e: &hearth::Error) {
    if matches!(e, hearth::Error::Rank { .. }) {
        tracing::error!(error = %e, "a rank failed: ending every rank");
        eprintln!(
            "hearth server: {e}; ending every rank (the job is kept and runs again at the next start)"
        );
        ranks.0.abort(3);
    }
}

impl Shared {
    /// Runs one job's `request` (its program file and bundle) and gives
    /// its result. Its program is the one built at admission if the
    /// program cache still holds it, else built again (admitted again
    /// against the limits the server has now: a job found on disk at
    /// start); the run stops at its next step once `cancel` is set.
    fn run_job(
        &self,
        meta: &JobMeta,
        request: Vec<u8>,
        done: &Arc<AtomicU64>,
        cancel: Option<Arc<AtomicBool>>,
    ) -> Result<Bundle, ApiError> {
        let (program, bundle) = {
            let parts = split_job(&request, u64::MAX)?;
            let cost = stated_cost(&parts, &self.limits)?;
            let program = self
                .program(&meta.tenant, &parts, &cost)
                .map_err(|(e, _)| e)?;
            let bundle = read_bundle(&program, &parts)?;
            (program, bundle)
        };
        drop(request);
        let key = self.server_key(&meta.tenant, bundle.key_id())?;
        if key.params().id != bundle.params() {
            return Err(ApiError::new(
                ErrorCode::WrongKey,
                format!(
                    "the key is of {}, the bundle of {}",
                    key.params().name,
                    bundle.params().params().name
                ),
            ));
        }
        let progress = done.clone();
        let progress = move |d: usize, _| progress.store(d as u64, Ordering::Relaxed);
        // The engine was settled at the start (the command line's fallback
        // from a GPU that cannot be used is `Engine::usable`; `Server::open`
        // refuses one still named here): what is the server's own is the
        // shared pool, the GPU keys kept and the keys the ranks keep.
        let evaluator = match self.config.backend {
            Engine::Cpu => Evaluator::Cpu(CpuBackend::with_pool(&key, self.pool.clone())),
            Engine::Gpu => self.gpu_evaluator(&meta.tenant, &key)?,
            Engine::Mpi => self.rank_evaluator(&meta.tenant, &key)?,
        };
        let mut evaluator = evaluator.with_progress(progress);
        if let Some(flag) = cancel {
            evaluator = evaluator.with_cancel(flag);
        }
        let out = program.run_bundle(&evaluator, &bundle);
        #[cfg(feature = "mpi")]
        if let (Some(ranks), Err(e)) = (&self.config.ranks, &out) {
            end_ranks_after(ranks, e);
        }
        out.map_err(|e| ApiError::new(ErrorCode::JobFailed, e.to_string()))
    }

    /// The GPU backend with `key` converted for it once (kept beside the
    /// key cache, as many as it keeps). Without the `gpu` feature
    /// [`Server::open`] refuses `Engine::Gpu`, so this is not reached.
    fn gpu_evaluator<'k>(
        &self,
        tenant: &str,
        key: &'k ServerKey,
    ) -> Result<Evaluator<'k>, ApiError> {
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
            Ok(Evaluator::Gpu(Box::new(GpuBackend::new(GpuBatch::new(
                gpu_key,
            )))))
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = (tenant, key);
            Err(internal(
                hearth::backend::no_gpu_reason().unwrap_or_default(),
            ))
        }
    }

    /// The MPI backend on every rank of the launch
    /// ([`Evaluator::from_cluster`]), with `key` shared with them first
    /// (sent once while they keep it). A rank error ends the launch (see
    /// [`Ranks`]).
    #[cfg(feature = "mpi")]
    fn rank_evaluator<'k>(
        &self,
        tenant: &str,
        key: &'k ServerKey,
    ) -> Result<Evaluator<'k>, ApiError> {
        let Some(ranks) = &self.config.ranks else {
            return Err(internal("--backend mpi without the ranks of a launch"));
        };
        let cluster = &ranks.0;
        // The file as stored (compressed if it was uploaded so: 4-6x less
        // to send).
        let bytes = self.key_file(tenant, key.key_id())?;
        let before = cluster.key_transfers();
        let evaluator = Evaluator::from_cluster(cluster, key, &bytes, self.config.threads);
        if cluster.key_transfers() > before {
            self.metrics.key_transfers.inc();
            if self.config.log {
                tracing::info!(bytes = bytes.len(), "key sent to the ranks");
            }
        }
        evaluator.map_err(|e| {
            end_ranks_after(ranks, &e);
            ApiError::new(ErrorCode::JobFailed, e.to_string())
        })
    }

    /// Without the `mpi` feature [`Server::open`] refuses `Engine::Mpi`,
    /// so this is not reached.
    #[cfg(not(feature = "mpi"))]
    fn rank_evaluator<'k>(
        &self,
        tenant: &str,
        key: &'k ServerKey,
    ) -> Result<Evaluator<'k>, ApiError> {
        let _ = (tenant, key);
        Err(internal(
            "--backend mpi: this server is built without the feature `mpi`",
        ))
    }

    /// Tells the workers and the sweeper to stop. The flag is set under
    /// the jobs lock, under which each of them checks it before it waits:
    /// set without the lock, it could land between a thread's check and
    /// its wait, and the wake-up would be lost (the sweeper then slept
    /// up to a minute, a worker for good).
    pub(super) fn halt(&self) {
        {
            let _jobs = lock(&self.jobs);
            self.stop.store(true, Ordering::Relaxed);
        }
        self.wake.notify_all();
    }

    /// One worker: takes the next job in turn whenever it may start
    /// ([`Jobs::start_next`]); `max_jobs` workers run side by side. Each
    /// start is counted on disk first ([`crate::store::Store::start_attempt`]),
    /// so that a job the process dies running is not run for ever. In a
    /// fleet, [`Shared::work_in_fleet`].
    pub(super) fn work(&self) {
        let f = match &self.ledger {
            Ledger::Folder(f) => f,
            Ledger::Fleet(fleet) => return self.work_in_fleet(fleet),
        };
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
                job.state = Phase::Running(done.clone());
                (id, meta, done)
            };
            self.make_room();
            let span = job_span(id, &meta);
            let _entered = span.enter();
            let start = Instant::now();
            let outcome = f.store.start_attempt(id).and_then(|attempt| {
                if self.config.log {
                    tracing::info!(attempt, "job started");
                }
                let request = f.store.read_job(id)?.1;
                self.guarded(|| self.run_job(&meta, request, &done, None))
                    .and_then(|out| f.store.write_result(id, &meta, &out))
            });
            let outcome = outcome.map_err(public);
            self.record(&meta, start, &outcome, &done);
            let (state, kept) = match outcome {
                Ok(n) => (Phase::Done(n), n),
                Err(e) => {
                    if let Err(w) = f.store.write_failure(id, &meta, &e) {
                        tracing::error!(error = %w, "the failure could not be written");
                    }
                    (Phase::Failed(e), 0)
                }
            };
            {
                let mut jobs = lock(&self.jobs);
                jobs.end(&meta, self.config.threads);
                if let Some(job) = jobs.map.get_mut(&id) {
                    job.state = state;
                    job.finished = Some(now_s());
                    // The request and the result's reserve give way to the
                    // result's own bytes.
                    f.storage.give(&meta.tenant, job.held.saturating_sub(kept));
                    job.held = kept;
                }
            }
            // Room for the next job in turn, maybe for more than one.
            self.wake.notify_all();
        }
    }

    /// A worker in a fleet: whenever this server has room, it claims the
    /// fleet's next job in turn (if it fits here: [`Jobs::take_room`]),
    /// runs it under its lease and commits its outcome with the claim's
    /// fence. It looks for work when woken (a job queued anywhere in the
    /// fleet, one ended here) and at least every [`FLEET_POLL`].
    fn work_in_fleet(&self, fleet: &Fleet) {
        loop {
            {
                let mut jobs = lock(&self.jobs);
                while jobs.running >= self.config.max_jobs {
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    jobs = self.wake.wait(jobs).unwrap_or_else(|e| e.into_inner());
                }
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            // The room taken for the job the claim found, given back if
            // the claim did not go through.
            let mut took = None;
            let claimed = fleet.claim(|meta| {
                let fits = lock(&self.jobs).take_room(meta, &self.config);
                if fits {
                    took = Some(meta.clone());
                }
                fits
            });
            let claim = match claimed {
                Ok(Some(c)) => c,
                other => {
                    if let Some(meta) = &took {
                        lock(&self.jobs).end(meta, self.config.threads);
                    }
                    // The database out of reach: said once a second, not
                    // at every poll.
                    let pause = match other {
                        Err(e) => {
                            tracing::error!(error = %e.message, "claiming a job");
                            Duration::from_secs(1)
                        }
                        Ok(_) => FLEET_POLL,
                    };
                    let jobs = lock(&self.jobs);
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let _ = self.wake.wait_timeout(jobs, pause);
                    continue;
                }
            };
            let (id, meta) = (claim.id, claim.meta.clone());
            self.make_room();
            let span = job_span(id, &meta);
            let _entered = span.enter();
            if self.config.log {
                tracing::info!(attempt = claim.attempt, fence = claim.fence, "job started");
            }
            let start = Instant::now();
            let outcome = fleet.request(&claim).and_then(|request| {
                self.guarded(|| {
                    self.run_job(&meta, request, &claim.done, Some(claim.cancel.clone()))
                })
            });
            let outcome = outcome.map_err(public);
            let committed = fleet.commit(&claim, outcome.as_ref());
            let outcome = match committed {
                Ok(Committed::Done(n)) => Ok(n),
                // The failure committed is the outcome's.
                Ok(Committed::Failed) => outcome.map(|_| 0),
                Ok(Committed::Stale) => {
                    self.metrics.stale_results.inc();
                    tracing::warn!(
                        fence = claim.fence,
                        "the result was refused: this server's lease on the job was lost \
                         (another server runs it)"
                    );
                    Err(internal("the lease was lost"))
                }
                Err(e) => {
                    tracing::error!(error = %e.message, "the outcome could not be committed");
                    Err(e)
                }
            };
            self.record(&meta, start, &outcome, &claim.done);
            lock(&self.jobs).end(&meta, self.config.threads);
            self.wake.notify_all();
        }
    }

    /// Runs `f`, a panic in it turned into the job's failure.
    fn guarded<T>(&self, f: impl FnOnce() -> Result<T, ApiError>) -> Result<T, ApiError> {
        std::panic::catch_unwind(AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(internal("the job panicked")))
    }

    /// Counts and logs a job's end: its time, its bootstraps (a failed
    /// job's up to its failure), its outcome.
    fn record(
        &self,
        meta: &JobMeta,
        start: Instant,
        outcome: &Result<u64, ApiError>,
        done: &AtomicU64,
    ) {
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
        match outcome {
            Ok(n) => {
                self.count(&meta.tenant, |c| c.completed += 1);
                if self.config.log {
                    let seconds = start.elapsed().as_secs_f64();
                    tracing::info!(seconds, result_bytes = n, "job done");
                }
            }
            Err(e) => {
                if self.config.log {
                    tracing::warn!(code = e.code.as_str(), error = %e.message, "job failed");
                }
            }
        }
    }

    /// Deletes what has expired: results and failures older than
    /// `result_ttl`; queued jobs older than `queue_ttl` fail as `expired`
    /// (their failure then kept for `result_ttl`). A queued job's failure
    /// is written under the jobs lock, so that a `DELETE` cannot come
    /// between the decision and the write and be undone by it. Each
    /// deletion removes the job file first ([`Store::delete_job`]), so a
    /// crash halfway leaves an orphan result that the next start removes.
    pub(super) fn expire(&self) {
        let f = match &self.ledger {
            Ledger::Folder(f) => f,
            Ledger::Fleet(fleet) => return self.upkeep(fleet),
        };
        let (now, now_ms) = (now_s(), now_ms());
        let ttl = self.config.result_ttl.as_secs();
        let mut gone = Vec::new();
        {
            let mut jobs = lock(&self.jobs);
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
                        if let Some(q) = self.config.queue_ttl {
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
                    f.storage.give(&j.meta.tenant, j.held);
                }
            }
            for (id, waited) in timed_out {
                jobs.queue.remove(id);
                let Some(j) = jobs.map.get_mut(&id) else {
                    continue;
                };
                let e = crate::refusals::expired(waited);
                if let Err(w) = f.store.write_failure(id, &j.meta, &e) {
                    tracing::error!(job = %id, error = %w, "an expired job's failure could not be written");
                }
                f.storage.give(&j.meta.tenant, j.held);
                j.held = 0;
                j.state = Phase::Failed(e);
                j.finished = Some(now);
            }
        }
        for id in &gone {
            match f.store.delete_job(*id) {
                Ok(()) => self.log(|| format!("job {id} expired and deleted")),
                Err(e) => {
                    tracing::error!(job = %id, error = %e, "an expired job could not be deleted")
                }
            }
        }
    }

    /// A fleet's upkeep from this server: the leases of its running jobs
    /// renewed, then what has expired in the fleet ([`Fleet::expire`]).
    fn upkeep(&self, fleet: &Fleet) {
        let lost = fleet.heartbeat();
        self.metrics.leases_lost.inc_by(lost as u64);
        let c = &self.config;
        match fleet.expire(c.max_attempts, c.result_ttl, c.queue_ttl, now_ms()) {
            Ok(notes) => {
                for n in notes {
                    self.log(|| n);
                }
            }
            Err(e) => tracing::error!(error = %e.message, "the fleet's upkeep"),
        }
        if fleet.orphans_due() {
            match fleet.collect_orphans(crate::fleet::ORPHAN_AGE) {
                Ok(0) => {}
                Ok(n) => self.log(|| format!("{n} blobs no row names removed")),
                Err(e) => tracing::error!(error = %e.message, "looking for orphan blobs"),
            }
        }
        // Jobs queued again may be this server's to take.
        self.wake.notify_all();
    }

    /// Calls [`Shared::expire`] every `every` until the server stops.
    pub(super) fn sweep(&self, every: Duration) {
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
}
