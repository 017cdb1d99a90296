//! Admission: a job is checked from the cheapest check to the dearest,
//! and everything it will consume is taken before anything is spent on
//! it: its slot in the queue, its bytes on disk (its request and the most
//! its result can take), its tenant's bootstraps for the day. Only then
//! is its program rebuilt (once: the program stays with the queued job,
//! and among the programs built lately for the next jobs that send it),
//! its bundle checked against it (a compact bundle is not expanded until
//! the job runs), and its file written before it is acknowledged.

use std::sync::Arc;

use hearth::CompiledProgram;
use sha3::{Digest, Sha3_256};

use super::lock::lock;
use super::state::{today, Job, Jobs, Phase, Shared};
use crate::request::{build_program, check_bundle, split_job, stated_cost, JobParts};
use crate::store::{JobMeta, Usage};
use crate::tenants::{now_ms, Tenant};
use crate::wire::{ApiError, ErrorCode, JobId, Submitted};

/// What admission has taken for a job not accepted yet; given back when
/// dropped, unless the job was accepted.
struct Taken<'a> {
    s: &'a Shared,
    tenant: &'a Tenant,
    slot: bool,
    bytes: u64,
    pbs: u64,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        if self.slot {
            unreserve(&mut lock(&self.s.jobs), &self.tenant.name);
        }
        self.s.storage.give(&self.tenant.name, self.bytes);
        if self.pbs > 0 {
            self.s.refund(self.tenant, self.pbs);
        }
    }
}

/// Frees a slot taken by [`Shared::admit`] while its job was written.
fn unreserve(jobs: &mut Jobs, tenant: &str) {
    if let Some(n) = jobs.reserved.get_mut(tenant) {
        *n -= 1;
        if *n == 0 {
            jobs.reserved.remove(tenant);
        }
    }
}

impl Shared {
    /// Refuses when the server's queue or the tenant's share of it is
    /// full (checked early, then again on admission). The words name no
    /// count of other tenants' jobs.
    pub(super) fn check_room(&self, jobs: &Jobs, tenant: &Tenant) -> Result<(), ApiError> {
        if jobs.queue.len() + jobs.reserved() >= self.config.max_queue {
            return Err(ApiError::new(
                ErrorCode::QueueFull,
                "the server's queue is full; try again later",
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
    /// The count is written to disk before it counts in memory: a failed
    /// write leaves the tenant charged nothing.
    pub(super) fn charge(&self, tenant: &Tenant, pbs: u64) -> Result<(), ApiError> {
        let Some(l) = tenant.limits else {
            return Ok(());
        };
        let mut u = lock(&self.usage);
        let day = today();
        let mut next = if u.day == day {
            u.clone()
        } else {
            Usage {
                day,
                ..Usage::default()
            }
        };
        let used = next.pbs.get(&tenant.name).copied().unwrap_or(0);
        if used.saturating_add(pbs) > l.max_pbs_per_day {
            return Err(ApiError::new(
                ErrorCode::DailyLimit,
                format!(
                    "this job runs {pbs} bootstraps; you have run {used} of your {} today (UTC)",
                    l.max_pbs_per_day
                ),
            ));
        }
        *next.pbs.entry(tenant.name.clone()).or_default() += pbs;
        self.store.write_usage(&next)?;
        *u = next;
        Ok(())
    }

    /// Takes back a [`Shared::charge`] for a job that was not accepted. A
    /// failed write leaves the file charged: the tenant's day may end
    /// early, it never runs over.
    pub(super) fn refund(&self, tenant: &Tenant, pbs: u64) {
        if tenant.limits.is_some() {
            let mut u = lock(&self.usage);
            if let Some(n) = u.pbs.get_mut(&tenant.name) {
                *n = n.saturating_sub(pbs);
            }
            if let Err(e) = self.store.write_usage(&u) {
                tracing::error!(error = %e, "a refund could not be written");
            }
        }
    }

    /// The program of `parts`, built (every check of the builder) or found
    /// among the programs `tenant` sent lately. Each tenant's are its own:
    /// how fast a program is admitted tells nothing of what others sent.
    pub(super) fn program(
        &self,
        tenant: &str,
        parts: &JobParts<'_>,
    ) -> Result<Arc<CompiledProgram>, ApiError> {
        let mut h = Sha3_256::new();
        h.update((tenant.len() as u64).to_le_bytes());
        h.update(tenant);
        h.update(parts.program);
        let digest: [u8; 32] = h.finalize().into();
        if let Some(p) = lock(&self.programs).get(&digest) {
            return Ok(p);
        }
        let program = Arc::new(build_program(parts)?);
        lock(&self.programs).put(digest, program.clone());
        Ok(program)
    }

    /// Admits, writes and queues a job of `tenant` whose headers were
    /// checked (blocking). A program that does not build, or does not
    /// build at the cost it states, keeps its charge: its rebuild was
    /// spent.
    pub(super) fn admit(&self, tenant: &Tenant, body: &[u8]) -> Result<Submitted, ApiError> {
        let parts = split_job(body, self.config.max_body)?;
        let cost = stated_cost(&parts, &self.limits)?;
        let mut taken = Taken {
            s: self,
            tenant,
            slot: false,
            bytes: 0,
            pbs: 0,
        };
        let seq = {
            let mut jobs = lock(&self.jobs);
            self.check_room(&jobs, tenant)?;
            *jobs.reserved.entry(tenant.name.clone()).or_default() += 1;
            jobs.next_seq += 1;
            jobs.next_seq
        };
        taken.slot = true;
        let held = (body.len() as u64).saturating_add(cost.result_bytes);
        self.storage
            .take(&tenant.name, held, self.quota(&tenant.name))?;
        taken.bytes = held;
        // A job of no bootstrap still counts one: admitting and running
        // it is not free, and the day's limit then bounds its number too.
        let charged = cost.pbs.max(1);
        self.charge(tenant, charged)?;
        taken.pbs = charged;
        let program = self
            .program(&tenant.name, &parts)
            .inspect_err(|_| taken.pbs = 0)?;
        check_bundle(&program, &parts)?;
        let id = JobId::random();
        let meta = JobMeta {
            seq,
            key_id: parts.key_id.to_string(),
            pbs: cost.pbs,
            depth: cost.depth,
            memory: cost.memory,
            tenant: tenant.name.clone(),
            submitted_ms: now_ms(),
            result_bytes: cost.result_bytes,
        };
        self.store.write_job(id, &meta, body)?;
        {
            let mut jobs = lock(&self.jobs);
            unreserve(&mut jobs, &tenant.name);
            jobs.map.insert(
                id,
                Job {
                    meta,
                    state: Phase::Queued,
                    held,
                    program: Some(program),
                    finished: None,
                },
            );
            jobs.enqueue(id);
        }
        (taken.slot, taken.bytes, taken.pbs) = (false, 0, 0);
        self.wake.notify_all();
        self.count_accepted(&tenant.name);
        if self.config.log {
            tracing::info!(job = %id, pbs = cost.pbs, depth = cost.depth, "job accepted");
        }
        Ok(Submitted {
            job_id: id,
            pbs: cost.pbs,
            depth: cost.depth,
            memory: cost.memory,
        })
    }
}
