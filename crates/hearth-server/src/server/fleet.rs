//! A fleet ([`crate::fleet`]) as a server's ledger: the server's side of
//! it. Its database and blob store hold the tenants, keys, jobs and
//! usage; this server keeps only caches, the jobs it runs (their room:
//! [`Shared::jobs`]) and its own counts. Its admission is in `admit.rs`.
//!
//! Where a method here has the name of one of [`Fleet`]'s own,
//! `Fleet::name(self, ..)` calls the fleet's own.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use hearth::crypto::files::{FileInfo, FileKind};
use hearth::{KeyId, ServerKey};

use super::ledger::Ledger;
use super::lock::lock;
use super::routes::heavy;
use super::state::{closed, internal, public, Shared};
use super::worker::job_span;
use crate::fleet::{Committed, Event, Fleet, KeyLimits};
use crate::request::key_error;
use crate::store::StoredKey;
use crate::tenants::{now_ms, Tenant, TenantError, Tenants};
use crate::wire::{ApiError, JobId, JobStatus, Submitted};

/// How often an idle worker in a fleet looks for a job when nothing woke
/// it: a job queued anywhere in the fleet is announced (`NOTIFY`), so this
/// is only for an announcement lost with the listener's connection.
const FLEET_POLL: Duration = Duration::from_secs(1);

#[async_trait]
impl Ledger for Fleet {
    fn kind(&self) -> &'static str {
        "postgres"
    }

    fn load_tenants(&self) -> Result<Tenants, TenantError> {
        self.block(Fleet::tenants(self))
            .map(|t| (*t).clone())
            .map_err(TenantError::Database)
    }

    fn attach(&self, s: &Arc<Shared>, _tenants: &Tenants) -> Result<(), String> {
        // Idle workers wake when a job is queued anywhere in the fleet;
        // a key deleted anywhere leaves the caches.
        let s = Arc::downgrade(s);
        self.on_event(move |event| {
            if let Some(s) = s.upgrade() {
                match event {
                    Event::Queued => {}
                    Event::KeyDeleted(tenant, id) => s.forget(&tenant, id),
                    Event::Missed => s.forget_all_keys(),
                }
                s.wake.notify_all();
            }
        });
        Ok(())
    }

    /// The sweeper takes back the fleet's lapsed leases as often as
    /// heartbeats renew them (the heartbeats run on their own).
    fn upkeep_every(&self) -> Option<Duration> {
        Some(self.heartbeat_every())
    }

    /// Whether the database answered this server's heartbeats within the
    /// last lease.
    fn reachable(&self) -> bool {
        Fleet::reachable(self)
    }

    /// The tenants as last read from the database (at the last request's
    /// authentication: [`Ledger::tenants_for`]).
    fn tenants(&self) -> Result<Arc<Tenants>, ApiError> {
        self.tenants_seen()
            .ok_or_else(|| closed("the fleet's tenants have not been read"))
    }

    /// The tenants as last read where they refuse `token` without a query
    /// ([`Fleet::refuses`]), else read again if they changed in the
    /// database.
    async fn tenants_for(&self, token: Option<&str>) -> Result<Arc<Tenants>, ApiError> {
        match self.refuses(token) {
            Some(t) => Ok(t),
            None => Fleet::tenants(self).await.map_err(closed),
        }
    }

    async fn key(&self, tenant: &str, id: KeyId) -> Result<Option<StoredKey>, ApiError> {
        Fleet::key(self, tenant, id).await
    }

    async fn key_count(&self, tenant: &str) -> Result<usize, ApiError> {
        Fleet::key_count(self, tenant).await
    }

    fn key_file(&self, tenant: &str, id: KeyId) -> Result<Vec<u8>, ApiError> {
        self.key_bytes(tenant, id)
    }

    /// A cached key is used only while it is registered with the file it
    /// was read from (another server may have deleted it).
    fn key_current(&self, tenant: &str, id: KeyId) -> Result<bool, ApiError> {
        Fleet::key_current(self, tenant, id)
    }

    fn forget_loaded(&self, tenant: &str, id: KeyId) {
        Fleet::forget_loaded(self, tenant, id)
    }

    async fn register_key(
        self: Arc<Self>,
        s: &Arc<Shared>,
        tenant: Tenant,
        info: FileInfo,
        bytes: Vec<u8>,
    ) -> Result<(StoredKey, bool), ApiError> {
        let limits = KeyLimits {
            quota: s.quota(&tenant.name),
            max_keys: s.config.max_keys,
            reserve: s.config.disk_reserve,
        };
        self.check_key_room(&tenant, bytes.len() as u64, &limits)
            .await?;
        let bytes = Arc::new(bytes);
        let file = bytes.clone();
        let key = heavy(s, &tenant.name, move |_| {
            ServerKey::from_bytes(std::path::Path::new("server key"), &file).map_err(key_error)
        })
        .await?;
        let stored = StoredKey {
            tenant: tenant.name.clone(),
            key_id: info.key_id,
            params: info.params,
            compressed: info.kind == FileKind::CompressedServerKey,
            bytes: bytes.len() as u64,
        };
        let (stored, new) = self.add_key(&tenant, stored, bytes, limits).await?;
        if new {
            s.keep_key((tenant.name, info.key_id), Arc::new(key));
        }
        Ok((stored, new))
    }

    async fn delete_key(
        &self,
        _s: &Shared,
        tenant: &str,
        id: KeyId,
    ) -> Result<StoredKey, ApiError> {
        Fleet::delete_key(self, tenant, id).await
    }

    async fn check_room(&self, s: &Shared, tenant: &Tenant) -> Result<(), ApiError> {
        Fleet::check_room(self, tenant, s.config.max_queue).await
    }

    async fn submit(
        self: Arc<Self>,
        s: &Arc<Shared>,
        tenant: Tenant,
        body: Vec<u8>,
        unpacked: bool,
    ) -> Result<Submitted, ApiError> {
        let s = s.clone();
        tokio::spawn(async move { self.admit(&s, tenant, body, unpacked).await })
            .await
            .map_err(|e| internal(format!("the admission stopped: {e}")))?
    }

    async fn status(
        &self,
        _s: &Shared,
        id: JobId,
        tenant: &str,
    ) -> Result<(JobStatus, Option<PathBuf>), ApiError> {
        let (status, blob) = Fleet::status(self, id, tenant).await?;
        let file = blob
            .map(|b| self.local_blob(&b))
            .transpose()
            .map_err(internal)?;
        Ok((status, file))
    }

    async fn delete_job(
        self: Arc<Self>,
        _s: &Shared,
        id: JobId,
        tenant: &str,
    ) -> Result<(), ApiError> {
        Fleet::delete_job(&self, id, tenant).await
    }

    async fn job_counts(
        &self,
        _s: &Shared,
        tenant: Option<&str>,
    ) -> Result<Vec<(String, String, usize)>, ApiError> {
        Ok(self.counts(tenant).await?.rows)
    }

    /// Whenever this server has room, claims the fleet's next job in turn
    /// (if it fits here: [`super::state::Jobs::take_room`]), runs it under
    /// its lease and commits its outcome with the claim's fence. It looks
    /// for work when woken (a job queued anywhere in the fleet, one ended
    /// here) and at least every [`FLEET_POLL`].
    fn work(&self, s: &Shared) {
        loop {
            {
                let mut jobs = lock(&s.jobs);
                while jobs.running >= s.config.max_jobs {
                    if s.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    jobs = s.wake.wait(jobs).unwrap_or_else(|e| e.into_inner());
                }
                if s.stop.load(Ordering::Relaxed) {
                    return;
                }
            }
            // The room taken for the job the claim found, given back if
            // the claim did not go through.
            let mut took = None;
            let claimed = self.claim(|meta| {
                let fits = lock(&s.jobs).take_room(meta, &s.config);
                if fits {
                    took = Some(meta.clone());
                }
                fits
            });
            let claim = match claimed {
                Ok(Some(c)) => c,
                other => {
                    if let Some(meta) = &took {
                        lock(&s.jobs).end(meta, s.config.threads);
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
                    let jobs = lock(&s.jobs);
                    if s.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let _ = s.wake.wait_timeout(jobs, pause);
                    continue;
                }
            };
            let (id, meta) = (claim.id, claim.meta.clone());
            s.make_room();
            let span = job_span(id, &meta);
            let _entered = span.enter();
            if s.config.log {
                tracing::info!(attempt = claim.attempt, fence = claim.fence, "job started");
            }
            let start = Instant::now();
            let outcome = self.request(&claim).and_then(|request| {
                s.guarded(|| s.run_job(&meta, request, &claim.done, Some(claim.cancel.clone())))
            });
            let outcome = outcome.map_err(public);
            let committed = self.commit(&claim, outcome.as_ref());
            let outcome = match committed {
                Ok(Committed::Done(n)) => Ok(n),
                // The failure committed is the outcome's.
                Ok(Committed::Failed) => outcome.map(|_| 0),
                Ok(Committed::Stale) => {
                    s.metrics.stale_results.inc();
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
            s.record(&meta, start, &outcome, &claim.done);
            lock(&s.jobs).end(&meta, s.config.threads);
            s.wake.notify_all();
        }
    }

    /// The leases of this server's running jobs renewed, then what has
    /// expired in the fleet ([`Fleet::expire`]).
    fn expire(&self, s: &Shared) {
        let lost = self.heartbeat();
        s.metrics.leases_lost.inc_by(lost as u64);
        let c = &s.config;
        match Fleet::expire(self, c.max_attempts, c.result_ttl, c.queue_ttl, now_ms()) {
            Ok(notes) => {
                for n in notes {
                    s.log(|| n);
                }
            }
            Err(e) => tracing::error!(error = %e.message, "the fleet's upkeep"),
        }
        if self.orphans_due() {
            match self.collect_orphans(crate::fleet::ORPHAN_AGE) {
                Ok(0) => {}
                Ok(n) => s.log(|| format!("{n} blobs no row names removed")),
                Err(e) => tracing::error!(error = %e.message, "looking for orphan blobs"),
            }
        }
        // Jobs queued again may be this server's to take.
        s.wake.notify_all();
    }
}
