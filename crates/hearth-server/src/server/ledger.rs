//! Where a server keeps what outlives a request: tenants, keys, jobs and
//! their results, each tenant's stored bytes and day's bootstraps. Two
//! kinds exist: the server's own data folder ([`DataFolder`],
//! `folder.rs`) and a fleet's database and blob store
//! ([`crate::fleet::Fleet`], `fleet.rs`). The routes, the admission, the
//! workers and the sweeper ask the server's ledger through this trait and
//! never which kind it is; what every kind shares (the caches, the
//! running jobs' room, the counts) stays in [`Shared`], which the methods
//! that need it are given.
//!
//! The methods that hand work to another thread or task take
//! `self: Arc<Self>`, so that the work holds the ledger it runs on.
//!
//! [`DataFolder`]: super::folder::DataFolder

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use hearth::crypto::files::FileInfo;
use hearth::KeyId;

use super::state::Shared;
use crate::store::StoredKey;
use crate::tenants::{Tenant, TenantError, Tenants};
use crate::wire::{ApiError, JobId, JobStatus, Submitted};

#[async_trait]
pub(super) trait Ledger: Send + Sync {
    /// What `/v1/info` says the server stores in: `files` or `postgres`.
    fn kind(&self) -> &'static str;

    /// The tenants, read afresh at start; a failure says why in full (the
    /// server does not start).
    fn load_tenants(&self) -> Result<Tenants, TenantError>;

    /// Ties the ledger to the server `s` once it is made, whose tenants at
    /// start were `tenants`: a fleet's announcements reach it; a folder
    /// with tenants from before the marker existed gets the marker.
    fn attach(&self, s: &Arc<Shared>, tenants: &Tenants) -> Result<(), String>;

    /// The longest the sweeper may wait between two calls of
    /// [`Ledger::expire`], where the ledger needs them that often.
    fn upkeep_every(&self) -> Option<Duration> {
        None
    }

    /// Whether the ledger answers (`/v1/health`), without asking it
    /// anything: callers without a token cost it nothing.
    fn reachable(&self) -> bool {
        true
    }

    /// The tenants as they are now, without waiting on a database. Every
    /// failure closes the server, never opens it ([`super::state::closed`]).
    fn tenants(&self) -> Result<Arc<Tenants>, ApiError>;

    /// The tenants a request bearing `token` (if any) is authenticated
    /// against: [`Ledger::tenants`] unless they must be read again.
    async fn tenants_for(&self, _token: Option<&str>) -> Result<Arc<Tenants>, ApiError> {
        self.tenants()
    }

    /// `tenant`'s key `id`, if it is registered.
    async fn key(&self, tenant: &str, id: KeyId) -> Result<Option<StoredKey>, ApiError>;

    /// How many keys `tenant` has registered.
    async fn key_count(&self, tenant: &str) -> Result<usize, ApiError>;

    /// The file of `tenant`'s key `id` as uploaded (compressed if it was),
    /// from a worker thread.
    fn key_file(&self, tenant: &str, id: KeyId) -> Result<Vec<u8>, ApiError>;

    /// Whether a copy of `tenant`'s key `id` loaded before may still be
    /// used (from a worker thread); an `unknown_key` error if the key is
    /// gone.
    fn key_current(&self, _tenant: &str, _id: KeyId) -> Result<bool, ApiError> {
        Ok(true)
    }

    /// `tenant`'s key `id` left the server's caches.
    fn forget_loaded(&self, _tenant: &str, _id: KeyId) {}

    /// Checks (by decoding it: a compressed key is expanded), stores and
    /// registers a key `tenant` uploaded; `true` if it is new. Its room
    /// and its bytes are taken first, so a refused upload costs no
    /// decoding and no disk.
    async fn register_key(
        self: Arc<Self>,
        s: &Arc<Shared>,
        tenant: Tenant,
        info: FileInfo,
        bytes: Vec<u8>,
    ) -> Result<(StoredKey, bool), ApiError>;

    /// Deletes `tenant`'s key `id` unless a job of `tenant` under it is
    /// queued or running (`key_in_use`); the key deleted.
    async fn delete_key(&self, s: &Shared, tenant: &str, id: KeyId) -> Result<StoredKey, ApiError>;

    /// Refuses early when the queue or `tenant`'s share of it is full,
    /// before the body is checked further.
    async fn check_room(&self, s: &Shared, tenant: &Tenant) -> Result<(), ApiError>;

    /// Admits, writes and queues a job of `tenant` whose headers were
    /// checked (`admit.rs`). The admission runs to its end even if the
    /// client goes away meanwhile: what it took is given back, or the job
    /// is queued. Its result is kept `unpacked` (every ciphertext in
    /// full, for later jobs to take with `?with=`) or packed.
    async fn submit(
        self: Arc<Self>,
        s: &Arc<Shared>,
        tenant: Tenant,
        body: Vec<u8>,
        unpacked: bool,
    ) -> Result<Submitted, ApiError>;

    /// Where `tenant`'s job `id` is, and once it is done, the file its
    /// result is streamed from.
    async fn status(
        &self,
        s: &Shared,
        id: JobId,
        tenant: &str,
    ) -> Result<(JobStatus, Option<PathBuf>), ApiError>;

    /// Forgets `tenant`'s job `id` and what it stored, unless it runs
    /// (`job_running`).
    async fn delete_job(
        self: Arc<Self>,
        s: &Shared,
        id: JobId,
        tenant: &str,
    ) -> Result<(), ApiError>;

    /// Jobs by state and tenant: `tenant`'s, or all of them (the fleet's,
    /// in a fleet).
    async fn job_counts(
        &self,
        s: &Shared,
        tenant: Option<&str>,
    ) -> Result<Vec<(String, String, usize)>, ApiError>;

    /// One job worker (`max_jobs` of them run side by side, each on a
    /// thread of its own): runs the jobs it may start, in turn, until the
    /// server stops ([`Shared::halt`]).
    fn work(&self, s: &Shared);

    /// One round of the sweeper: deletes what has expired (results and
    /// failures older than `result_ttl`), fails as `expired` the queued
    /// jobs older than `queue_ttl`, and whatever upkeep the ledger needs.
    fn expire(&self, s: &Shared);
}
