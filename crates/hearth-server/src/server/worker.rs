//! What the job workers share (running a job, counting its end) and the
//! expiry sweeper. Each ledger's workers take their jobs their own way
//! ([`Ledger::work`]).
//!
//! [`Ledger::work`]: super::ledger::Ledger::work

use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth::backend::{CpuBackend, Engine, Evaluator};
use hearth::{Bundle, ServerKey};

use super::lock::lock;
use super::state::{internal, Shared};
#[cfg(feature = "mpi")]
use crate::config::Ranks;
use crate::request::{read_bundle, split_job, stated_cost};
use crate::store::JobMeta;
use crate::wire::{ApiError, ErrorCode, JobId};

/// The span of a job's events.
pub(super) fn job_span(id: JobId, meta: &JobMeta) -> tracing::Span {
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
    pub(super) fn run_job(
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
        let out = out.map_err(|e| ApiError::new(ErrorCode::JobFailed, e.to_string()))?;
        // Packed unless asked not to, or too noisy to pack (`pack` checks
        // the outputs' noise, known from the program, before any work).
        if meta.unpacked {
            return Ok(out);
        }
        match self.pool.install(|| program.pack(&key, &out)) {
            Ok(packed) => Ok(packed),
            Err(e @ hearth::Error::Packed(_)) => {
                if self.config.log {
                    tracing::info!(reason = %e, "result kept unpacked");
                }
                Ok(out)
            }
            Err(e) => Err(ApiError::new(ErrorCode::JobFailed, e.to_string())),
        }
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
        let bytes = self.ledger.key_file(tenant, key.key_id())?;
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

    /// Runs `f`, a panic in it turned into the job's failure.
    pub(super) fn guarded<T>(
        &self,
        f: impl FnOnce() -> Result<T, ApiError>,
    ) -> Result<T, ApiError> {
        std::panic::catch_unwind(AssertUnwindSafe(f))
            .unwrap_or_else(|_| Err(internal("the job panicked")))
    }

    /// Counts and logs a job's end: its time, its bootstraps (a failed
    /// job's up to its failure), its outcome.
    pub(super) fn record(
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

    /// Calls [`super::ledger::Ledger::expire`] every `every` until the
    /// server stops.
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
            self.ledger.expire(self);
            jobs = lock(&self.jobs);
        }
    }
}
