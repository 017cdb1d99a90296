//! The job workers and the expiry sweeper.

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth::backend::{CpuBackend, Evaluator};
use hearth::{CompiledProgram, ServerKey};

use super::lock::lock;
use super::state::{internal, public, Phase, Shared};
use crate::config::JobBackend;
#[cfg(feature = "mpi")]
use crate::config::Ranks;
use crate::request::{read_bundle, split_job, stated_cost};
use crate::store::JobMeta;
use crate::tenants::{now as now_s, now_ms};
use crate::wire::{ApiError, ErrorCode, JobId};

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
    /// Runs one job and writes its result (streamed to disk, one copy in
    /// memory); returns the result's bytes. `program` is the one built at
    /// admission, if it is still at hand.
    pub(super) fn run_job(
        &self,
        id: JobId,
        meta: &JobMeta,
        program: Option<Arc<CompiledProgram>>,
        done: &Arc<AtomicU64>,
    ) -> Result<u64, ApiError> {
        let (program, bundle) = {
            let (_, request) = self.store.read_job(id)?;
            let parts = split_job(&request, u64::MAX)?;
            let program = match program {
                Some(p) => p,
                // Found on disk at start: admitted again against the
                // limits the server has now.
                None => {
                    stated_cost(&parts, &self.limits)?;
                    self.program(&meta.tenant, &parts)?
                }
            };
            let bundle = read_bundle(&program, &parts)?;
            (program, bundle)
        };
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
        let evaluator = match &self.config.backend {
            JobBackend::Cpu => Evaluator::Cpu(CpuBackend::with_pool(&key, self.pool.clone())),
            JobBackend::Gpu => self.gpu_evaluator(&meta.tenant, &key)?,
            #[cfg(feature = "mpi")]
            JobBackend::Mpi(ranks) => self.rank_evaluator(ranks, &meta.tenant, &key)?,
        };
        let out = program.run_bundle(&evaluator.with_progress(progress), &bundle);
        #[cfg(feature = "mpi")]
        if let (JobBackend::Mpi(ranks), Err(e)) = (&self.config.backend, &out) {
            end_ranks_after(ranks, e);
        }
        let out = out.map_err(|e| ApiError::new(ErrorCode::JobFailed, e.to_string()))?;
        drop(bundle);
        self.store.write_result(id, meta, &out)
    }

    /// The GPU backend with `key` converted for it once (kept beside the
    /// key cache, as many as it keeps). Without the `gpu` feature
    /// [`Server::open`] refuses `JobBackend::Gpu`, so this is not reached.
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

    /// The MPI backend on every rank of the launch, with `key` shared with
    /// them first (sent once while they keep it). A rank error ends the
    /// launch (see [`Ranks`]).
    #[cfg(feature = "mpi")]
    fn rank_evaluator<'k>(
        &self,
        ranks: &Ranks,
        tenant: &str,
        key: &'k ServerKey,
    ) -> Result<Evaluator<'k>, ApiError> {
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
        shared
            .and_then(|()| cluster.backend(key, self.config.threads))
            .map(|mpi| Evaluator::Mpi(Box::new(mpi)))
            .map_err(|e| {
                end_ranks_after(ranks, &e);
                ApiError::new(ErrorCode::JobFailed, e.to_string())
            })
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
    /// so that a job the process dies running is not run for ever.
    pub(super) fn work(&self) {
        loop {
            let (id, meta, program, done) = {
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
                (id, meta, job.program.take(), done)
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
            let start = Instant::now();
            let outcome = self.store.start_attempt(id).and_then(|attempt| {
                if self.config.log {
                    tracing::info!(attempt, "job started");
                }
                std::panic::catch_unwind(AssertUnwindSafe(|| {
                    self.run_job(id, &meta, program, &done)
                }))
                .unwrap_or_else(|_| Err(internal("the job panicked")))
            });
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
            let (state, kept) = match outcome {
                Ok(n) => {
                    self.count(&meta.tenant, |c| c.completed += 1);
                    if self.config.log {
                        let seconds = start.elapsed().as_secs_f64();
                        tracing::info!(seconds, result_bytes = n, "job done");
                    }
                    (Phase::Done(n), n)
                }
                Err(e) => {
                    let e = public(e);
                    if self.config.log {
                        tracing::warn!(code = e.code.as_str(), error = %e.message, "job failed");
                    }
                    if let Err(w) = self.store.write_failure(id, &meta, &e) {
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
                    self.storage
                        .give(&meta.tenant, job.held.saturating_sub(kept));
                    job.held = kept;
                }
            }
            // Room for the next job in turn, maybe for more than one.
            self.wake.notify_all();
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
                    self.storage.give(&j.meta.tenant, j.held);
                }
            }
            for (id, waited) in timed_out {
                jobs.queue.remove(id);
                let Some(j) = jobs.map.get_mut(&id) else {
                    continue;
                };
                let e = ApiError::new(
                    ErrorCode::Expired,
                    format!(
                        "the job waited {:.1} s in the queue, over --queue-ttl",
                        waited as f64 / 1000.0
                    ),
                );
                if let Err(w) = self.store.write_failure(id, &j.meta, &e) {
                    tracing::error!(job = %id, error = %w, "an expired job's failure could not be written");
                }
                self.storage.give(&j.meta.tenant, j.held);
                j.held = 0;
                j.program = None;
                j.state = Phase::Failed(e);
                j.finished = Some(now);
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
