//! Jobs in a fleet: admission, the queue and its leases, results, expiry
//! (see the module doc of [`super`]). Every change to what a tenant holds
//! goes with the change to the job in one transaction.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::GenericClient;
use hearth::Bundle;

use super::db::{db_err, NOW_S, QUEUED};
use super::sql;
use super::{Fleet, Held, ADMISSION_DEADLINE};
use crate::refusals;
use crate::server::lock;
use crate::store::JobMeta;
use crate::tenants::Tenant;
use crate::wire::{ApiError, JobId, JobState, JobStatus};

/// A job admission's checks and what it takes ([`Fleet::reserve`]).
pub(crate) struct Admission<'a> {
    pub(crate) id: JobId,
    pub(crate) tenant: &'a Tenant,
    /// Its meta (`seq` is the database's).
    pub(crate) meta: &'a JobMeta,
    /// Bytes it holds against the tenant's storage.
    pub(crate) held: u64,
    /// Bootstraps charged against the tenant's day.
    pub(crate) charged: u64,
    /// The tenant's storage quota.
    pub(crate) quota: u64,
    /// Most jobs admitted or queued in the fleet (this server's
    /// `--max-queue`).
    pub(crate) max_queue: usize,
    /// Free bytes the blob store's disk keeps.
    pub(crate) reserve: u64,
}

/// A job this server claimed: it runs it and commits its outcome with
/// `fence`.
pub(crate) struct Claim {
    pub(crate) id: JobId,
    pub(crate) meta: JobMeta,
    pub(crate) fence: i64,
    /// Its starts, this one included.
    pub(crate) attempt: u32,
    request_blob: String,
    /// Bootstraps done (the heartbeats publish it).
    pub(crate) done: Arc<AtomicU64>,
    /// Set when the lease is lost: the run stops.
    pub(crate) cancel: Arc<AtomicBool>,
}

/// What came of [`Fleet::commit`].
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Committed {
    /// The result, of this many bytes.
    Done(u64),
    /// The failure.
    Failed,
    /// Refused: the server no longer held the job's lease (another server
    /// runs it, or ran it).
    Stale,
}

/// A tenant's jobs by state (`GET /v1/stats`), or the fleet's by state
/// and tenant (`/metrics`).
#[derive(Default)]
pub(crate) struct JobCounts {
    pub(crate) rows: Vec<(String, String, usize)>,
}

/// What a tenant holds and has spent today, its row locked.
pub(super) struct Used {
    pub(super) stored: u64,
    pbs_today: u64,
    today: i64,
}

fn u(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

fn i(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The queue lane of a job: its tenant, or on an open fleet its key.
fn lane(tenant: &str, key_id: &str) -> String {
    if tenant.is_empty() {
        format!("key:{key_id}")
    } else {
        format!("tenant:{tenant}")
    }
}

fn meta(row: &tokio_postgres::Row) -> JobMeta {
    JobMeta {
        seq: u(row.get("seq")),
        key_id: row.get("key_id"),
        pbs: u(row.get("pbs")),
        depth: u(row.get("depth")),
        memory: u(row.get("memory")),
        tenant: row.get("tenant"),
        submitted_ms: u(row.get("submitted_ms")),
        result_bytes: u(row.get("result_max")),
        unpacked: row.get("unpacked"),
    }
}

fn job_id(row: &tokio_postgres::Row) -> Result<JobId, ApiError> {
    row.get::<_, String>("id").parse().map_err(db_err)
}

impl Fleet {
    /// Locks `tenant`'s row of `usage` (made if new) for the transaction.
    pub(super) async fn lock_usage(
        &self,
        c: &impl GenericClient,
        tenant: &str,
    ) -> Result<Used, ApiError> {
        sql::exec(
            c,
            "INSERT INTO usage (tenant) VALUES ($1) ON CONFLICT (tenant) DO NOTHING",
            &[&tenant],
        )
        .await
        .map_err(db_err)?;
        let row = sql::one(
            c,
            &format!(
                "SELECT stored_bytes, day, pbs_today, {NOW_S} / 86400 FROM usage \
                     WHERE tenant = $1 FOR UPDATE"
            ),
            &[&tenant],
        )
        .await
        .map_err(db_err)?;
        let (day, today): (i64, i64) = (row.get(1), row.get(3));
        Ok(Used {
            stored: u(row.get(0)),
            pbs_today: if day == today { u(row.get(2)) } else { 0 },
            today,
        })
    }

    /// Gives `bytes` of `tenant`'s storage back.
    pub(super) async fn give(
        &self,
        c: &impl GenericClient,
        tenant: &str,
        bytes: u64,
    ) -> Result<(), ApiError> {
        sql::exec(
            c,
            "UPDATE usage SET stored_bytes = greatest(stored_bytes - $2, 0) WHERE tenant = $1",
            &[&tenant, &i(bytes)],
        )
        .await
        .map_err(db_err)?;
        Ok(())
    }

    /// Writes a blob off the async threads.
    pub(super) async fn put_blob(&self, name: &str, bytes: Arc<Vec<u8>>) -> Result<(), ApiError> {
        let (blobs, path) = (self.blobs.clone(), name.to_string());
        tokio::task::spawn_blocking(move || blobs.put(&path, &bytes))
            .await
            .map_err(db_err)?
            .map_err(|e| db_err(format!("writing {name}: {e}")))
    }

    /// Removes a blob no row names any more; a failure is logged (the
    /// object is left over, never missing).
    pub(super) async fn delete_blob(&self, name: &str) {
        let (blobs, path) = (self.blobs.clone(), name.to_string());
        let removed = tokio::task::spawn_blocking(move || blobs.delete(&path)).await;
        if let Ok(Err(e)) = removed {
            tracing::warn!(blob = name, error = %e, "a blob could not be removed");
        }
    }

    /// Refuses early when the fleet's queue or the tenant's share of it
    /// is full (checked again, in a transaction, by [`Fleet::reserve`]).
    pub(crate) async fn check_room(
        &self,
        tenant: &Tenant,
        max_queue: usize,
    ) -> Result<(), ApiError> {
        let c = self.db.client().await?;
        room(&c, tenant, max_queue).await
    }

    /// Takes what a job consumes, in one transaction on the tenant's
    /// `usage` row, and writes the job as `admitting`: a slot in the
    /// queue, its bytes against the tenant's storage, its bootstraps
    /// against the tenant's day. Refused with the same codes and words as
    /// on one server.
    pub(crate) async fn reserve(&self, a: &Admission<'_>) -> Result<(), ApiError> {
        let mut c = self.db.client().await?;
        let tx = c.transaction().await.map_err(db_err)?;
        let used = self.lock_usage(&tx, &a.tenant.name).await?;
        room(&tx, a.tenant, a.max_queue).await?;
        refusals::check_disk(self.free_bytes(), a.held, a.reserve)?;
        if used.stored.saturating_add(a.held) > a.quota {
            return Err(refusals::storage_limit(a.held, used.stored, a.quota));
        }
        let mut pbs_today = used.pbs_today;
        if let Some(l) = a.tenant.limits {
            if pbs_today.saturating_add(a.charged) > l.max_pbs_per_day {
                return Err(refusals::daily_limit(
                    a.charged,
                    pbs_today,
                    l.max_pbs_per_day,
                ));
            }
            pbs_today += a.charged;
        }
        sql::exec(
            &tx,
            "UPDATE usage SET stored_bytes = stored_bytes + $2, day = $3, pbs_today = $4 \
             WHERE tenant = $1",
            &[&a.tenant.name, &i(a.held), &used.today, &i(pbs_today)],
        )
        .await
        .map_err(db_err)?;
        let m = a.meta;
        sql::exec(
            &tx,
            "INSERT INTO jobs (id, tenant, lane, key_id, pbs, depth, memory, result_max, held, \
             state, submitted_ms, admitted_by, unpacked) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'admitting', $10, $11, $12)",
            &[
                &a.id.to_string(),
                &m.tenant,
                &lane(&m.tenant, &m.key_id),
                &m.key_id,
                &i(m.pbs),
                &i(m.depth),
                &i(m.memory),
                &i(m.result_bytes),
                &i(a.held),
                &i(m.submitted_ms),
                &self.server,
                &m.unpacked,
            ],
        )
        .await
        .map_err(db_err)?;
        tx.commit().await.map_err(db_err)
    }

    /// Queues a reserved job: its request goes to the blob store, then the
    /// job is `queued`.
    pub(crate) async fn accept(&self, id: JobId, body: Arc<Vec<u8>>) -> Result<(), ApiError> {
        let blob = format!("jobs/{id}.req");
        self.put_blob(&blob, body).await?;
        let c = self.db.client().await?;
        let n = sql::exec(
            &c,
            "UPDATE jobs SET state = 'queued', request_blob = $2 \
                 WHERE id = $1 AND state = 'admitting'",
            &[&id.to_string(), &blob],
        )
        .await
        .map_err(db_err)?;
        if n == 0 {
            self.delete_blob(&blob).await;
            return Err(db_err(format!(
                "job {id} was removed while it was admitted"
            )));
        }
        announce(&c).await
    }

    /// Gives back what [`Fleet::reserve`] took for a job that was not
    /// queued: its row, its bytes, and `refund` of its bootstraps.
    pub(crate) async fn release(&self, id: JobId, tenant: &str, refund: u64) {
        let released = async {
            let mut c = self.db.client().await?;
            let tx = c.transaction().await.map_err(db_err)?;
            let Some(row) = sql::opt(
                &tx,
                "DELETE FROM jobs WHERE id = $1 AND state = 'admitting' RETURNING held",
                &[&id.to_string()],
            )
            .await
            .map_err(db_err)?
            else {
                return Ok(());
            };
            let used = self.lock_usage(&tx, tenant).await?;
            let pbs = used.pbs_today.saturating_sub(refund);
            sql::exec(
                &tx,
                "UPDATE usage SET stored_bytes = greatest(stored_bytes - $2, 0), \
                 pbs_today = CASE WHEN day = $3 THEN $4 ELSE pbs_today END WHERE tenant = $1",
                &[&tenant, &row.get::<_, i64>(0), &used.today, &i(pbs)],
            )
            .await
            .map_err(db_err)?;
            tx.commit().await.map_err(db_err)
        };
        if let Err(e) = released.await {
            // Left as `admitting`: a sweeper removes it after
            // `ADMISSION_DEADLINE`.
            tracing::error!(job = %id, error = %e.message, "an admission could not be given back");
        }
    }

    /// Where `tenant`'s job `id` is, and its result's blob once done.
    pub(crate) async fn status(
        &self,
        id: JobId,
        tenant: &str,
    ) -> Result<(JobStatus, Option<String>), ApiError> {
        let c = self.db.client().await?;
        let row = sql::opt(
            &c,
            "SELECT key_id, pbs, depth, state, done_pbs, result_bytes, error_code, \
                 error_message, result_blob, CASE WHEN state = 'queued' THEN \
                 (SELECT count(*) FROM jobs q WHERE q.tenant = j.tenant \
                 AND q.state = 'queued' AND q.seq < j.seq) END AS ahead FROM jobs j \
                 WHERE id = $1 AND tenant = $2 AND state <> 'admitting'",
            &[&id.to_string(), &tenant],
        )
        .await
        .map_err(db_err)?
        .ok_or_else(|| refusals::no_job(id))?;
        let pbs = u(row.get("pbs"));
        let state = match row.get::<_, &str>("state") {
            "queued" => JobState::Queued {
                position: u(row.get::<_, Option<i64>>("ahead").unwrap_or(0)) as usize,
            },
            "running" => JobState::Running {
                done: u(row.get("done_pbs")).min(pbs),
                total: pbs,
            },
            "done" => JobState::Done {
                result_bytes: u(row.get::<_, Option<i64>>("result_bytes").unwrap_or(0)),
            },
            _ => JobState::Failed {
                code: row
                    .get::<_, Option<String>>("error_code")
                    .unwrap_or_default(),
                message: row
                    .get::<_, Option<String>>("error_message")
                    .unwrap_or_default(),
            },
        };
        let status = JobStatus {
            job_id: id,
            key_id: row.get("key_id"),
            pbs,
            depth: u(row.get("depth")),
            state,
        };
        Ok((status, row.get("result_blob")))
    }

    /// A local file holding the blob `name` (a result, to stream).
    pub(crate) fn local_blob(&self, name: &str) -> std::io::Result<std::path::PathBuf> {
        self.blobs.local(name)
    }

    /// Forgets `tenant`'s job `id` unless it runs: its row, its events, its
    /// bytes against the tenant's storage, then its blobs.
    pub(crate) async fn delete_job(&self, id: JobId, tenant: &str) -> Result<(), ApiError> {
        let mut c = self.db.client().await?;
        let tx = c.transaction().await.map_err(db_err)?;
        let row = sql::opt(
            &tx,
            "SELECT state, held, request_blob, result_blob FROM jobs \
                 WHERE id = $1 AND tenant = $2 AND state <> 'admitting' FOR UPDATE",
            &[&id.to_string(), &tenant],
        )
        .await
        .map_err(db_err)?
        .ok_or_else(|| refusals::no_job(id))?;
        if row.get::<_, &str>(0) == "running" {
            return Err(refusals::job_running(id));
        }
        for sql in [
            "DELETE FROM jobs WHERE id = $1",
            "DELETE FROM job_events WHERE job_id = $1",
        ] {
            sql::exec(&tx, sql, &[&id.to_string()])
                .await
                .map_err(db_err)?;
        }
        self.give(&tx, tenant, u(row.get(1))).await?;
        tx.commit().await.map_err(db_err)?;
        for blob in [row.get::<_, Option<String>>(2), row.get(3)]
            .into_iter()
            .flatten()
        {
            self.delete_blob(&blob).await;
        }
        Ok(())
    }

    /// `tenant`'s jobs by state (none: every tenant's, by state and
    /// tenant).
    pub(crate) async fn counts(&self, tenant: Option<&str>) -> Result<JobCounts, ApiError> {
        let c = self.db.client().await?;
        let rows = sql::rows(
            &c,
            "SELECT state, tenant, count(*) FROM jobs WHERE state <> 'admitting' \
                 AND ($1::text IS NULL OR tenant = $1) GROUP BY state, tenant",
            &[&tenant],
        )
        .await
        .map_err(db_err)?;
        Ok(JobCounts {
            rows: rows
                .iter()
                .map(|r| (r.get(0), r.get(1), r.get::<_, i64>(2) as usize))
                .collect(),
        })
    }

    /// Claims the next queued job in the fair order if `fits` says this
    /// server has room for it now (from a worker thread): its fence goes
    /// up by one and its lease is this server's.
    pub(crate) fn claim(
        &self,
        fits: impl FnOnce(&JobMeta) -> bool,
    ) -> Result<Option<Claim>, ApiError> {
        self.block(async {
            let mut c = self.db.client().await?;
            let tx = c.transaction().await.map_err(db_err)?;
            let Some(row) = sql::opt(
                &tx,
                "SELECT j.id, j.seq, j.tenant, j.lane, j.key_id, j.pbs, j.depth, j.memory, \
                     j.result_max, j.submitted_ms, j.unpacked, j.request_blob \
                     FROM jobs j LEFT JOIN lanes l ON l.lane = j.lane \
                     WHERE j.state = 'queued' ORDER BY COALESCE(l.served, 0), j.seq \
                     LIMIT 1 FOR UPDATE OF j SKIP LOCKED",
                &[],
            )
            .await
            .map_err(db_err)?
            else {
                return Ok(None);
            };
            let meta = meta(&row);
            if !fits(&meta) {
                return Ok(None);
            }
            let id = job_id(&row)?;
            sql::exec(
                &tx,
                "INSERT INTO lanes (lane, served) VALUES ($1, nextval('turns')) \
                 ON CONFLICT (lane) DO UPDATE SET served = EXCLUDED.served",
                &[&row.get::<_, String>("lane")],
            )
            .await
            .map_err(db_err)?;
            let claimed = sql::one(
                &tx,
                "UPDATE jobs SET state = 'running', owner = $2, fence = fence + 1, \
                     attempts = attempts + 1, done_pbs = 0, \
                     lease_until = now() + make_interval(secs => $3) \
                     WHERE id = $1 RETURNING fence, attempts",
                &[&id.to_string(), &self.server, &self.lease.as_secs_f64()],
            )
            .await
            .map_err(db_err)?;
            let fence: i64 = claimed.get(0);
            event(&tx, id, fence, &self.server, "claimed").await?;
            tx.commit().await.map_err(db_err)?;
            let claim = Claim {
                id,
                meta,
                fence,
                attempt: claimed.get::<_, i32>(1) as u32,
                request_blob: row
                    .get::<_, Option<String>>("request_blob")
                    .unwrap_or_default(),
                done: Arc::new(AtomicU64::new(0)),
                cancel: Arc::new(AtomicBool::new(false)),
            };
            lock(&self.held).insert(
                id,
                Held {
                    fence,
                    done: claim.done.clone(),
                    cancel: claim.cancel.clone(),
                    committing: false,
                },
            );
            Ok(Some(claim))
        })
    }

    /// A claimed job's request (program file and bundle).
    pub(crate) fn request(&self, claim: &Claim) -> Result<Vec<u8>, ApiError> {
        self.blobs
            .get(&claim.request_blob)
            .map_err(|e| db_err(format!("job {}'s request: {e}", claim.id)))
    }

    /// Commits a claimed job's outcome if this server still holds its
    /// lease with the claim's fence; else refuses it ([`Committed::Stale`])
    /// and removes the result written for it. A commit that fails (the
    /// database out of reach, its answer lost) is tried again for up to a
    /// lease, and found committed if it was; one that still cannot be told
    /// leaves the result's blob to the orphan sweep
    /// ([`Fleet::collect_orphans`]): the database may name it.
    pub(crate) fn commit(
        &self,
        claim: &Claim,
        outcome: Result<&Bundle, &ApiError>,
    ) -> Result<Committed, ApiError> {
        let result = match outcome {
            Ok(bundle) => {
                let name = format!("results/{}.{}.out", claim.id, claim.fence);
                let n = self
                    .blobs
                    .put_file(&name, &mut |p| {
                        bundle.save_len(p).map_err(std::io::Error::other)
                    })
                    .map_err(|e| db_err(format!("writing the result: {e}")));
                match n {
                    Ok(n) => Some((name, n)),
                    Err(e) => {
                        lock(&self.held).remove(&claim.id);
                        return Err(e);
                    }
                }
            }
            Err(_) => None,
        };
        if let Some(h) = lock(&self.held).get_mut(&claim.id) {
            h.committing = true;
        }
        // Tried again while the lease may still be this server's (the
        // database restarting, say); once any try may have committed, the
        // outcome stays unsure unless a later try tells.
        let deadline = std::time::Instant::now() + self.lease;
        let mut pause = Duration::from_millis(50);
        let mut unsure = false;
        let committed = loop {
            let e = match self.block(self.commit_once(claim, outcome, result.as_ref())) {
                Ok(c) => break Ok(c),
                Err(Failure::Unsure(e)) => {
                    unsure = true;
                    e
                }
                Err(Failure::NotCommitted(e)) => e,
            };
            if std::time::Instant::now() + pause >= deadline {
                break Err(if unsure {
                    Failure::Unsure(e)
                } else {
                    Failure::NotCommitted(e)
                });
            }
            tracing::warn!(error = %e.message, "committing: trying again");
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_secs(1));
        };
        lock(&self.held).remove(&claim.id);
        match &committed {
            Ok(Committed::Stale) | Err(Failure::NotCommitted(_)) => {
                if let Some((name, _)) = &result {
                    let _ = self.blobs.delete(name);
                }
            }
            // Maybe committed: the orphan sweep removes the result's blob
            // an hour on if no row names it.
            Err(Failure::Unsure(_)) => {}
            Ok(_) if !claim.request_blob.is_empty() => {
                let _ = self.blobs.delete(&claim.request_blob);
            }
            Ok(_) => {}
        }
        committed.map_err(|(Failure::NotCommitted(e) | Failure::Unsure(e))| e)
    }

    /// One try of [`Fleet::commit`].
    async fn commit_once(
        &self,
        claim: &Claim,
        outcome: Result<&Bundle, &ApiError>,
        result: Option<&(String, u64)>,
    ) -> Result<Committed, Failure> {
        let mut c = self.db.client().await.map_err(Failure::NotCommitted)?;
        let tx = c
            .transaction()
            .await
            .map_err(|e| Failure::NotCommitted(db_err(e)))?;
        let no = |e: tokio_postgres::Error| Failure::NotCommitted(db_err(e));
        let Some(row) = sql::opt(
            &tx,
            "SELECT held, tenant FROM jobs WHERE id = $1 AND fence = $2 AND owner = $3 \
                 AND state = 'running' FOR UPDATE",
            &[&claim.id.to_string(), &claim.fence, &self.server],
        )
        .await
        .map_err(no)?
        else {
            drop(tx);
            // A try before this one may have committed it, its answer lost.
            let mine = sql::opt(
                &c,
                "SELECT state, result_bytes FROM jobs WHERE id = $1 AND fence = $2 \
                     AND ran_by = $3 AND state IN ('done', 'failed')",
                &[&claim.id.to_string(), &claim.fence, &self.server],
            )
            .await
            .map_err(no)?;
            if let Some(row) = mine {
                return Ok(match row.get::<_, &str>(0) {
                    "done" => Committed::Done(u(row.get::<_, Option<i64>>(1).unwrap_or(0))),
                    _ => Committed::Failed,
                });
            }
            event(&c, claim.id, claim.fence, &self.server, "refused")
                .await
                .map_err(Failure::NotCommitted)?;
            return Ok(Committed::Stale);
        };
        let (held, tenant): (i64, String) = (row.get(0), row.get(1));
        let (kept, committed) = match (result, outcome) {
            (Some((name, n)), _) => {
                sql::exec(
                    &tx,
                    &format!(
                        "UPDATE jobs SET state = 'done', result_blob = $2, result_bytes = $3, \
                         held = $3, finished_s = {NOW_S}, owner = NULL, lease_until = NULL, \
                         ran_by = $4, done_pbs = pbs, request_blob = NULL WHERE id = $1"
                    ),
                    &[&claim.id.to_string(), name, &i(*n), &self.server],
                )
                .await
                .map_err(no)?;
                (*n, Committed::Done(*n))
            }
            (None, Err(e)) => {
                sql::exec(
                    &tx,
                    &format!(
                        "UPDATE jobs SET state = 'failed', error_code = $2, \
                         error_message = $3, \
                         held = 0, finished_s = {NOW_S}, owner = NULL, lease_until = NULL, \
                         ran_by = $4, request_blob = NULL WHERE id = $1"
                    ),
                    &[
                        &claim.id.to_string(),
                        &e.code.as_str(),
                        &e.message,
                        &self.server,
                    ],
                )
                .await
                .map_err(no)?;
                (0, Committed::Failed)
            }
            (None, Ok(_)) => unreachable!("a result is written before it is committed"),
        };
        self.give(&tx, &tenant, u(held).saturating_sub(kept))
            .await
            .map_err(Failure::NotCommitted)?;
        event(&tx, claim.id, claim.fence, &self.server, "committed")
            .await
            .map_err(Failure::NotCommitted)?;
        // Only now may the database have committed without this server
        // hearing it.
        tx.commit().await.map_err(|e| Failure::Unsure(db_err(e)))?;
        Ok(committed)
    }

    /// Starts the heartbeats, on the database's runtime with a connection
    /// of their own, apart from the sweeper (which may wait on a lock or a
    /// slow listing of the blob store) and from the pool (which requests
    /// may exhaust): every [`Fleet::heartbeat_every`] they renew the
    /// leases of the jobs this server runs, publish their progress and
    /// say this server lives (`servers`). A job whose lease is gone (taken
    /// back while this server was paused or cut off) is told to stop. A
    /// round the database does not answer within the period is given up
    /// with its connection, and the next round connects again.
    pub(super) fn start_heartbeats(&self) {
        let (held, beats, server) = (self.held.clone(), self.beats.clone(), self.server.clone());
        beats.answered();
        self.db.spawn(heartbeats(
            self.db.connector(),
            held,
            beats,
            server,
            self.heartbeat_every(),
            self.lease,
        ));
    }

    /// How many leases the heartbeats found lost since the last call (the
    /// heartbeats run on their own: [`Fleet::open`]).
    pub(crate) fn heartbeat(&self) -> usize {
        self.beats.lost.swap(0, Ordering::Relaxed) as usize
    }

    /// At start: makes the leases this server's name held expire (they are
    /// a previous run's), gives back its admissions, and says it lives.
    pub(super) async fn take_over(&self) -> Result<(), ApiError> {
        let c = self.db.client().await?;
        sql::exec(
            &c,
            "UPDATE jobs SET lease_until = now() - interval '1 second' \
             WHERE state = 'running' AND owner = $1",
            &[&self.server],
        )
        .await
        .map_err(db_err)?;
        beat(&c, &self.server, self.lease, &[])
            .await
            .map_err(db_err)?;
        drop(c);
        for id in self.release_admissions(Some(&self.server)).await? {
            tracing::info!(job = %id, "an admission left by this server's previous run, removed");
        }
        Ok(())
    }

    /// Removes the admissions (with their bytes against their tenants'
    /// storage) left by a server whose heartbeats stopped for longer than
    /// its lease, or by `also` (this server, at start), or older than
    /// [`ADMISSION_DEADLINE`]; their day's bootstraps stay spent. Returns
    /// their ids.
    async fn release_admissions(&self, also: Option<&str>) -> Result<Vec<String>, ApiError> {
        let c = self.db.client().await?;
        let rows = sql::rows(
            &c,
            "WITH gone AS (DELETE FROM jobs j WHERE state = 'admitting' AND ( \
                   admitted_by = $1 \
                   OR created < now() - make_interval(secs => $2) \
                   OR (admitted_by IS NOT NULL AND NOT EXISTS (SELECT 1 FROM servers s \
                       WHERE s.id = j.admitted_by \
                       AND s.seen + make_interval(secs => s.lease_ms / 1000.0) > now())) \
                   OR (admitted_by IS NULL AND created < now() - interval '1 hour')) \
                   RETURNING id, tenant, held), \
                 fix AS (UPDATE usage SET stored_bytes = greatest(stored_bytes - g.total, 0) \
                   FROM (SELECT tenant, sum(held)::bigint AS total FROM gone GROUP BY tenant) g \
                   WHERE usage.tenant = g.tenant), \
                 ev AS (DELETE FROM job_events e USING gone WHERE e.job_id = gone.id) \
             SELECT id FROM gone",
            &[&also, &ADMISSION_DEADLINE.as_secs_f64()],
        )
        .await
        .map_err(db_err)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// The fleet's upkeep, from any server (each step locks the rows it
    /// changes, so servers sweeping together do each thing once): jobs
    /// whose lease ran out are queued again, or fail as `crashed` after
    /// `max_attempts` starts; queued jobs older than `queue_ttl` fail as
    /// `expired`; results and failures older than `result_ttl` are
    /// deleted; admissions left over by a server that died admitting (its
    /// heartbeats stopped for longer than its lease) are
    /// removed. Returns what was done, in words, for the log.
    pub(crate) fn expire(
        &self,
        max_attempts: u32,
        result_ttl: Duration,
        queue_ttl: Option<Duration>,
        now_ms: u64,
    ) -> Result<Vec<String>, ApiError> {
        let mut blobs = Vec::new();
        let notes = self.block(async {
            let mut notes = Vec::new();
            let mut c = self.db.client().await?;
            let tx = c.transaction().await.map_err(db_err)?;
            for row in sql::rows(
                &tx,
                "SELECT id, fence, owner, attempts, held, tenant, request_blob FROM jobs \
                     WHERE state = 'running' AND lease_until < now() FOR UPDATE SKIP LOCKED",
                &[],
            )
            .await
            .map_err(db_err)?
            {
                let id = job_id(&row)?;
                let (fence, owner, attempts): (i64, Option<String>, i32) =
                    (row.get(1), row.get(2), row.get(3));
                let owner = owner.unwrap_or_default();
                if attempts as u32 >= max_attempts {
                    let e = refusals::crashed(attempts as u32);
                    fail(&tx, id, &e).await?;
                    self.give(&tx, &row.get::<_, String>(5), u(row.get(4)))
                        .await?;
                    blobs.extend(row.get::<_, Option<String>>(6));
                    event(&tx, id, fence, &owner, "crashed").await?;
                    notes.push(format!(
                        "job {id}: its server {owner} stopped answering, {attempts} times: {}",
                        e.message
                    ));
                } else {
                    sql::exec(
                        &tx,
                        "UPDATE jobs SET state = 'queued', owner = NULL, lease_until = NULL, \
                         done_pbs = 0 WHERE id = $1",
                        &[&id.to_string()],
                    )
                    .await
                    .map_err(db_err)?;
                    event(&tx, id, fence, &owner, "requeued").await?;
                    announce(&tx).await?;
                    notes.push(format!(
                        "job {id}: the lease of {owner} ran out; queued again"
                    ));
                }
            }
            if let Some(ttl) = queue_ttl {
                let ttl = i(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
                for row in sql::rows(
                    &tx,
                    "SELECT id, held, tenant, request_blob, submitted_ms FROM jobs \
                         WHERE state = 'queued' AND submitted_ms > 0 AND submitted_ms + $1 <= $2 \
                         FOR UPDATE SKIP LOCKED",
                    &[&ttl, &i(now_ms)],
                )
                .await
                .map_err(db_err)?
                {
                    let id = job_id(&row)?;
                    let waited = now_ms.saturating_sub(u(row.get(4)));
                    fail(&tx, id, &refusals::expired(waited)).await?;
                    self.give(&tx, &row.get::<_, String>(2), u(row.get(1)))
                        .await?;
                    blobs.extend(row.get::<_, Option<String>>(3));
                    notes.push(format!("job {id} expired in the queue"));
                }
            }
            tx.commit().await.map_err(db_err)?;
            drop(c);
            for id in self.release_admissions(None).await? {
                notes.push(format!(
                    "job {id}: an admission left by a server that stopped, removed"
                ));
            }
            let c = self.db.client().await?;
            // Servers silent for a day (a server's default name changes at
            // every start) hold no admission any more: forgotten.
            sql::exec(
                &c,
                "DELETE FROM servers s WHERE seen < now() - interval '1 day' AND NOT EXISTS \
                 (SELECT 1 FROM jobs WHERE state = 'admitting' AND admitted_by = s.id)",
                &[],
            )
            .await
            .map_err(db_err)?;
            // Finished jobs past their time: deleted with their events,
            // their bytes given back.
            let gone = sql::rows(
                &c,
                &format!(
                    "WITH gone AS (DELETE FROM jobs WHERE \
                           state IN ('done', 'failed') AND finished_s + $1 <= {NOW_S} \
                           RETURNING id, tenant, held, state, request_blob, result_blob), \
                         fix AS (UPDATE usage \
                           SET stored_bytes = greatest(stored_bytes - g.total, 0) \
                           FROM (SELECT tenant, sum(held)::bigint AS total FROM gone \
                           GROUP BY tenant) g \
                           WHERE usage.tenant = g.tenant), \
                         ev AS (DELETE FROM job_events e USING gone WHERE e.job_id = gone.id) \
                         SELECT id, request_blob, result_blob FROM gone"
                ),
                &[&i(result_ttl.as_secs())],
            )
            .await
            .map_err(db_err)?;
            for row in gone {
                let id: String = row.get(0);
                blobs.extend(row.get::<_, Option<String>>(1));
                blobs.extend(row.get::<_, Option<String>>(2));
                notes.push(format!("job {id} expired and deleted"));
            }
            Ok::<_, ApiError>(notes)
        })?;
        for b in blobs {
            if let Err(e) = self.blobs.delete(&b) {
                tracing::warn!(blob = %b, error = %e, "a blob could not be removed");
            }
        }
        Ok(notes)
    }
}

impl Fleet {
    /// Removes the blobs no row names that were last written more than
    /// `older_than` ago: what a server that died between writing a blob
    /// and naming it in the database left (a result before its commit, a
    /// request or a key before its row). Younger blobs may be about to be
    /// named, so they stay. Returns how many went.
    pub(crate) fn collect_orphans(&self, older_than: Duration) -> Result<usize, ApiError> {
        let now = std::time::SystemTime::now();
        let mut old = Vec::new();
        for prefix in ["keys", "jobs", "results"] {
            let listed = self
                .blobs
                .list(prefix)
                .map_err(|e| db_err(format!("{prefix}: {e}")))?;
            for (name, at) in listed {
                if now.duration_since(at).unwrap_or_default() > older_than {
                    old.push(name);
                }
            }
        }
        if old.is_empty() {
            return Ok(0);
        }
        let orphans: Vec<String> = self.block(async {
            let c = self.db.client().await?;
            let rows = sql::rows(
                &c,
                "SELECT n FROM unnest($1::text[]) AS n WHERE NOT EXISTS \
                 (SELECT 1 FROM keys WHERE blob = n) AND NOT EXISTS \
                 (SELECT 1 FROM jobs WHERE request_blob = n OR result_blob = n)",
                &[&old],
            )
            .await
            .map_err(db_err)?;
            Ok::<_, ApiError>(rows.iter().map(|r| r.get(0)).collect())
        })?;
        for name in &orphans {
            if let Err(e) = self.blobs.delete(name) {
                tracing::warn!(blob = %name, error = %e, "an orphan blob could not be removed");
            }
        }
        Ok(orphans.len())
    }
}

/// Refuses when the fleet's queue, or `tenant`'s share of it, is full.
async fn room(c: &impl GenericClient, tenant: &Tenant, max_queue: usize) -> Result<(), ApiError> {
    let row = sql::one(
        c,
        "SELECT (SELECT count(*) FROM jobs WHERE state IN ('admitting', 'queued')), \
             (SELECT count(*) FROM jobs WHERE tenant = $1 \
              AND state IN ('admitting', 'queued', 'running'))",
        &[&tenant.name],
    )
    .await
    .map_err(db_err)?;
    let (all, mine): (i64, i64) = (row.get(0), row.get(1));
    if all as u64 >= max_queue as u64 {
        return Err(refusals::queue_full());
    }
    if let Some(l) = tenant.limits {
        if mine as u64 >= l.max_queue as u64 {
            return Err(refusals::queue_limit(mine as usize));
        }
    }
    Ok(())
}

/// Marks job `id` failed with `e`, holding nothing.
async fn fail(c: &impl GenericClient, id: JobId, e: &ApiError) -> Result<(), ApiError> {
    sql::exec(
        c,
        &format!(
            "UPDATE jobs SET state = 'failed', error_code = $2, error_message = $3, held = 0, \
             finished_s = {NOW_S}, owner = NULL, lease_until = NULL, request_blob = NULL \
             WHERE id = $1"
        ),
        &[&id.to_string(), &e.code.as_str(), &e.message],
    )
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Tells the fleet's idle servers that a job is queued (delivered when
/// the transaction, if any, commits).
async fn announce(c: &impl GenericClient) -> Result<(), ApiError> {
    sql::exec(c, &format!("NOTIFY {QUEUED}"), &[])
        .await
        .map_err(db_err)?;
    Ok(())
}

/// Records what happened to a job's lease.
async fn event(
    c: &impl GenericClient,
    id: JobId,
    fence: i64,
    server: &str,
    what: &str,
) -> Result<(), ApiError> {
    sql::exec(
        c,
        "INSERT INTO job_events (job_id, fence, server, event) VALUES ($1, $2, $3, $4)",
        &[&id.to_string(), &fence, &server, &what],
    )
    .await
    .map_err(db_err)?;
    Ok(())
}

/// Why a commit did not go through.
enum Failure {
    /// Before the transaction's `COMMIT` was sent: nothing was committed.
    NotCommitted(ApiError),
    /// At `COMMIT`: the database may have committed it.
    Unsure(ApiError),
}

/// Says `server` lives (`servers`, its lease with it) and renews the
/// leases of `held` (id, fence, bootstraps done), in one statement;
/// returns the ids whose lease it renewed.
async fn beat(
    c: &tokio_postgres::Client,
    server: &str,
    lease: Duration,
    held: &[(String, i64, i64)],
) -> Result<Vec<String>, tokio_postgres::Error> {
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    let (ids, fences, done): (Vec<&str>, Vec<i64>, Vec<i64>) = held
        .iter()
        .map(|(id, fence, done)| (id.as_str(), *fence, *done))
        .fold(Default::default(), |(mut a, mut b, mut c), (x, y, z)| {
            a.push(x);
            b.push(y);
            c.push(z);
            (a, b, c)
        });
    let rows = c
        .query(
            "WITH alive AS (INSERT INTO servers (id, seen, lease_ms) VALUES ($1, now(), $2) \
             ON CONFLICT (id) DO UPDATE SET seen = now(), lease_ms = $2) \
         UPDATE jobs j SET lease_until = now() + make_interval(secs => $2 / 1000.0), \
             done_pbs = h.done \
         FROM unnest($3::text[], $4::bigint[], $5::bigint[]) AS h(id, fence, done) \
         WHERE j.id = h.id AND j.fence = h.fence AND j.owner = $1 AND j.state = 'running' \
         RETURNING j.id",
            &[&server, &lease_ms, &ids, &fences, &done],
        )
        .await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// The heartbeats ([`Fleet::start_heartbeats`]), until the runtime stops.
async fn heartbeats(
    connector: super::db::Connector,
    held: super::HeldJobs,
    beats: Arc<super::Beats>,
    server: String,
    every: Duration,
    lease: Duration,
) {
    let mut tick = tokio::time::interval(every);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut client: Option<tokio_postgres::Client> = None;
    // Said once per outage, not at every round.
    let mut failing = false;
    loop {
        tick.tick().await;
        let jobs: Vec<(String, i64, i64)> = lock(&held)
            .iter()
            .map(|(id, h)| (id.to_string(), h.fence, i(h.done.load(Ordering::Relaxed))))
            .collect();
        let round = async {
            let c = match client.take().filter(|c| !c.is_closed()) {
                Some(c) => c,
                None => connector.connect().await?,
            };
            let renewed = beat(&c, &server, lease, &jobs).await;
            Ok::<_, tokio_postgres::Error>((c, renewed?))
        };
        let renewed = match tokio::time::timeout(every, round).await {
            Ok(Ok((c, renewed))) => {
                client = Some(c);
                renewed
            }
            // The connection is dropped with the round: the next one
            // connects again.
            Ok(Err(e)) => {
                if !failing {
                    tracing::error!(error = %super::db::chain(&e), "heartbeat: the leases could not be renewed");
                }
                failing = true;
                continue;
            }
            Err(_) => {
                if !failing {
                    tracing::error!(
                        "heartbeat: the database did not answer within {every:?}; connecting again"
                    );
                }
                failing = true;
                continue;
            }
        };
        if failing {
            tracing::info!("heartbeat: the database answers again");
            failing = false;
        }
        beats.answered();
        let held = lock(&held);
        for (id, fence, _) in &jobs {
            if renewed.contains(id) {
                continue;
            }
            let Ok(job) = id.parse::<JobId>() else {
                continue;
            };
            // A job whose outcome is being committed, or that ended
            // meanwhile, did not lose its lease.
            if let Some(h) = held
                .get(&job)
                .filter(|h| h.fence == *fence && !h.committing)
            {
                h.cancel.store(true, Ordering::Relaxed);
                beats.lost.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(job = %id, fence, "the job's lease was lost: it stops here");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::lane;

    #[test]
    fn lanes_are_tenants_or_keys() {
        assert_eq!(lane("alice", "k"), "tenant:alice");
        assert_eq!(lane("", "00ff"), "key:00ff");
        assert_ne!(lane("", "a"), lane("a", ""));
    }
}
