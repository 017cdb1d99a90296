//! Admission: a job is checked from the cheapest check to the dearest,
//! and everything it will consume is taken before anything is spent on
//! it: its slot in the queue, its bytes on disk (its request and the most
//! its result can take), its tenant's bootstraps for the day. Only then
//! is its program rebuilt, within what its stated cost allows
//! ([`crate::request::rebuild_meter`]: a file that understates its cost
//! is refused as soon as its rebuild passes that, and charged the work
//! done), and kept among the programs built lately (counted in bytes,
//! for the job when it runs and the next jobs that send it); then its
//! bundle is checked against it (a compact bundle is not expanded until
//! the job runs), and its file written before it is acknowledged.
//!
//! Each ledger admits its own way ([`super::ledger::Ledger::submit`]): a
//! data folder as above, off the async threads ([`DataFolder::admit`]); a
//! fleet in the same order, its takings in one transaction of its
//! database ([`Fleet::admit`]).

use std::sync::Arc;

use hearth::CompiledProgram;
use sha3::{Digest, Sha3_256};

use super::folder::DataFolder;
use super::lock::lock;
use super::routes::heavy;
use super::state::{Job, Jobs, Phase, Shared};
use crate::fleet::{Admission, Fleet};
use crate::refusals;
use crate::request::{
    build_program, check_bundle, rebuild_charge, split_job, stated_cost, Cost, JobParts,
};
use crate::store::JobMeta;
use crate::tenants::{now_ms, Tenant};
use crate::wire::{ApiError, JobId, Submitted};

/// What admission has taken for a job not accepted yet; given back when
/// dropped, unless the job was accepted.
struct Taken<'a> {
    s: &'a Shared,
    f: &'a DataFolder,
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
        self.f.storage.give(&self.tenant.name, self.bytes);
        if self.pbs > 0 {
            self.f.refund(self.tenant, self.pbs);
        }
    }
}

/// What is recorded of a job admitted now, `seq`-th.
fn job_meta(seq: u64, tenant: &str, parts: &JobParts<'_>, cost: &Cost, unpacked: bool) -> JobMeta {
    JobMeta {
        seq,
        key_id: parts.key_id.to_string(),
        pbs: cost.pbs,
        depth: cost.depth,
        memory: cost.memory,
        tenant: tenant.to_string(),
        submitted_ms: now_ms(),
        result_bytes: cost.result_bytes,
        unpacked,
    }
}

/// Frees a slot taken by [`DataFolder::admit`] while its job was written.
fn unreserve(jobs: &mut Jobs, tenant: &str) {
    if let Some(n) = jobs.reserved.get_mut(tenant) {
        *n -= 1;
        if *n == 0 {
            jobs.reserved.remove(tenant);
        }
    }
}

impl DataFolder {
    /// Counts `pbs` against `tenant`'s bootstraps for today, or refuses;
    /// on disk before it returns (a failed write charges nothing).
    fn charge(&self, tenant: &Tenant, pbs: u64) -> Result<(), ApiError> {
        let Some(l) = tenant.limits else {
            return Ok(());
        };
        let limit = l.max_pbs_per_day;
        self.usage
            .charge(&self.store, &tenant.name, pbs, limit, |used| {
                refusals::daily_limit(pbs, used, limit)
            })
    }

    /// Takes back a [`DataFolder::charge`] for a job that was not accepted.
    fn refund(&self, tenant: &Tenant, pbs: u64) {
        if tenant.limits.is_some() {
            self.usage.refund(&self.store, &tenant.name, pbs);
        }
    }

    /// Charges `tenant` `pbs` more bootstraps of its day for work already
    /// done (a refused rebuild): over the day's limit if need be, so its
    /// day ends early.
    fn charge_done(&self, tenant: &Tenant, pbs: u64) {
        if tenant.limits.is_some() && pbs > 0 {
            self.usage.charge_done(&self.store, &tenant.name, pbs);
        }
    }

    /// Admits, writes and queues a job of `tenant` whose headers were
    /// checked, on the server `s` (blocking: [`Ledger::submit`] runs it
    /// off the async threads). A program that does not build, or does not
    /// build at the cost it states, keeps its charge: its rebuild was
    /// spent.
    ///
    /// [`Ledger::submit`]: super::ledger::Ledger::submit
    pub(super) fn admit(
        &self,
        s: &Shared,
        tenant: &Tenant,
        body: &[u8],
        unpacked: bool,
    ) -> Result<Submitted, ApiError> {
        let parts = split_job(body, s.config.max_body)?;
        let cost = stated_cost(&parts, &s.limits)?;
        let mut taken = Taken {
            s,
            f: self,
            tenant,
            slot: false,
            bytes: 0,
            pbs: 0,
        };
        let seq = {
            let mut jobs = lock(&s.jobs);
            jobs.check_room(s.config.max_queue, tenant)?;
            *jobs.reserved.entry(tenant.name.clone()).or_default() += 1;
            jobs.next_seq += 1;
            jobs.next_seq
        };
        taken.slot = true;
        let held = (body.len() as u64).saturating_add(cost.result_bytes);
        self.storage
            .take(&tenant.name, held, s.quota(&tenant.name))?;
        taken.bytes = held;
        // A job of no bootstrap still counts one: admitting and running
        // it is not free, and the day's limit then bounds its number too.
        let charged = cost.pbs.max(1);
        self.charge(tenant, charged)?;
        taken.pbs = charged;
        let program = match s.program(&tenant.name, &parts, &cost) {
            Ok(p) => p,
            Err((e, work)) => {
                // The rebuild was spent: its charge is kept, and topped
                // up to the work it did.
                taken.pbs = 0;
                self.charge_done(tenant, work.saturating_sub(charged));
                return Err(e);
            }
        };
        check_bundle(&program, &parts)?;
        let id = JobId::random();
        let meta = job_meta(seq, &tenant.name, &parts, &cost, unpacked);
        self.store.write_job(id, &meta, body)?;
        {
            let mut jobs = lock(&s.jobs);
            unreserve(&mut jobs, &tenant.name);
            jobs.map.insert(
                id,
                Job {
                    meta,
                    state: Phase::Queued,
                    held,
                    finished: None,
                },
            );
            jobs.enqueue(id);
        }
        (taken.slot, taken.bytes, taken.pbs) = (false, 0, 0);
        Ok(s.accepted(&tenant.name, id, &cost))
    }
}

impl Fleet {
    /// [`DataFolder::admit`] in a fleet: the room, the storage and the
    /// day's bootstraps are taken in one transaction of the fleet's, then
    /// the program is built (off the async threads), the bundle checked,
    /// and the request written to the blob store before the job is queued.
    pub(super) async fn admit(
        &self,
        s: &Arc<Shared>,
        tenant: Tenant,
        body: Vec<u8>,
        unpacked: bool,
    ) -> Result<Submitted, ApiError> {
        let parts = split_job(&body, s.config.max_body)?;
        let cost = stated_cost(&parts, &s.limits)?;
        // The fleet's database numbers its jobs.
        let meta = job_meta(0, &tenant.name, &parts, &cost, unpacked);
        let id = JobId::random();
        let charged = cost.pbs.max(1);
        self.reserve(&Admission {
            id,
            tenant: &tenant,
            meta: &meta,
            held: (body.len() as u64).saturating_add(cost.result_bytes),
            charged,
            quota: s.quota(&tenant.name),
            max_queue: s.config.max_queue,
            reserve: s.config.disk_reserve,
        })
        .await?;
        let body = Arc::new(body);
        let (name, request) = (tenant.name.clone(), body.clone());
        // The error, and whether it keeps the day's charge: a program
        // that does not build does (its rebuild was spent).
        let owner = tenant.name.clone();
        let checked = heavy(s, &owner, move |s| {
            let parts = split_job(&request, u64::MAX)?;
            Ok(match s.program(&name, &parts, &cost) {
                Err((e, _)) => Err((e, true)),
                Ok(p) => check_bundle(&p, &parts).map_err(|e| (e, false)),
            })
        })
        .await
        .unwrap_or_else(|e| Err((e, false)));
        let accepted = match checked {
            Ok(()) => self.accept(id, body).await.map_err(|e| (e, false)),
            Err(e) => Err(e),
        };
        if let Err((e, keep_charge)) = accepted {
            let refund = if keep_charge { 0 } else { charged };
            self.release(id, &tenant.name, refund).await;
            return Err(e);
        }
        Ok(s.accepted(&tenant.name, id, &cost))
    }
}

impl Shared {
    /// The program of `parts`, which states `cost`: found among the
    /// programs `tenant` sent lately, or built (every check of the
    /// builder, within what `cost` allows) and kept there. Each tenant's
    /// are its own: how fast a program is admitted tells nothing of what
    /// others sent. A refusal says how many bootstraps of the day's limit
    /// its rebuild's work is charged ([`rebuild_charge`]; 0 where nothing
    /// was built).
    pub(super) fn program(
        &self,
        tenant: &str,
        parts: &JobParts<'_>,
        cost: &Cost,
    ) -> Result<Arc<CompiledProgram>, (ApiError, u64)> {
        let mut h = Sha3_256::new();
        h.update((tenant.len() as u64).to_le_bytes());
        h.update(tenant);
        h.update(parts.program);
        let digest: [u8; 32] = h.finalize().into();
        if let Some(p) = lock(&self.programs).get(&digest) {
            return Ok(p);
        }
        let (built, spent) = build_program(parts, cost);
        let program = Arc::new(built.map_err(|e| (e, rebuild_charge(&spent)))?);
        self.keep_program(digest, program.clone());
        Ok(program)
    }

    /// A job of `tenant` queued: the workers woken, counted and logged,
    /// its answer.
    fn accepted(&self, tenant: &str, id: JobId, cost: &Cost) -> Submitted {
        self.wake.notify_all();
        self.count_accepted(tenant);
        if self.config.log {
            tracing::info!(job = %id, pbs = cost.pbs, depth = cost.depth, "job accepted");
        }
        Submitted {
            job_id: id,
            pbs: cost.pbs,
            depth: cost.depth,
            memory: cost.memory,
        }
    }
}
