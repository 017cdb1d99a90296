//! Admission: a job's room in the queue, its tenant's daily bootstraps,
//! and its file on disk before it is acknowledged.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use super::state::{lock, today, Job, Jobs, Shared, State_};
use crate::api::{ApiError, ErrorCode, JobId, Submitted};
use crate::request::parse_job;
use crate::store::{JobMeta, Usage};
use crate::tenants::{now as now_s, Tenant};

impl Shared {
    /// full (checked early, then again on admission).
    pub(super) fn check_room(&self, jobs: &Jobs, tenant: &Tenant) -> Result<(), ApiError> {
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
    pub(super) fn charge(&self, tenant: &Tenant, pbs: u64) -> Result<(), ApiError> {
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
    pub(super) fn refund(&self, tenant: &Tenant, pbs: u64) {
        if tenant.limits.is_some() {
            let mut u = lock(&self.usage);
            if let Some(n) = u.pbs.get_mut(&tenant.name) {
                *n = n.saturating_sub(pbs);
            }
            let _ = self.store.write_usage(&u);
        }
    }

    /// Decodes, admits, writes and queues a job of `tenant` (blocking).
    pub(super) fn admit(&self, tenant: &Tenant, body: &[u8]) -> Result<Submitted, ApiError> {
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
}
