//! The day's bootstraps by tenant on a data folder (`usage.json`),
//! written with group commit: a charge counts in memory at once and is
//! acknowledged once a write of the file holding it is synced, but the
//! charges that arrive while one write is under way share the next one.
//! One tenant's stream of submissions therefore costs the others no
//! waiting on a lock held across a sync, and a burst of charges costs a
//! few syncs, not one each.

use std::sync::Mutex;

use super::lock::lock;
use crate::store::{Store, Usage};
use crate::tenants::now as now_s;
use crate::wire::ApiError;

/// Days since 1970-01-01, UTC.
fn today() -> u64 {
    now_s() / 86_400
}

/// `usage.json`'s contents in memory and on disk.
pub(super) struct UsageBook {
    /// The counts, each change numbered.
    now: Mutex<(Usage, u64)>,
    /// The number of the last change on disk; held while writing.
    written: Mutex<u64>,
}

impl UsageBook {
    /// The counts `usage` as read from disk.
    pub(super) fn new(usage: Usage) -> UsageBook {
        UsageBook {
            now: Mutex::new((usage, 0)),
            written: Mutex::new(0),
        }
    }

    /// Changes today's counts with `f` (a new day starts from none); the
    /// change's number, or `f`'s refusal (nothing changed).
    fn change<T>(
        &self,
        f: impl FnOnce(&mut Usage) -> Result<T, ApiError>,
    ) -> Result<(T, u64), ApiError> {
        let mut now = lock(&self.now);
        let day = today();
        if now.0.day != day {
            now.0 = Usage {
                day,
                ..Usage::default()
            };
        }
        let out = f(&mut now.0)?;
        now.1 += 1;
        Ok((out, now.1))
    }

    /// Returns once change `n` is on disk: written by this call with every
    /// change made so far, or by another one meanwhile.
    fn flush(&self, store: &Store, n: u64) -> Result<(), ApiError> {
        let mut written = lock(&self.written);
        if *written >= n {
            return Ok(());
        }
        let (snapshot, last) = {
            let now = lock(&self.now);
            (now.0.clone(), now.1)
        };
        store.write_usage(&snapshot)?;
        *written = last;
        Ok(())
    }

    /// Counts `pbs` for `tenant` if it stays within `limit` (else
    /// `refused(used)`), on disk before it returns: a failed write takes
    /// the charge back.
    pub(super) fn charge(
        &self,
        store: &Store,
        tenant: &str,
        pbs: u64,
        limit: u64,
        refused: impl FnOnce(u64) -> ApiError,
    ) -> Result<(), ApiError> {
        let ((), n) = self.change(|u| {
            let used = u.pbs.get(tenant).copied().unwrap_or(0);
            if used.saturating_add(pbs) > limit {
                return Err(refused(used));
            }
            *u.pbs.entry(tenant.to_string()).or_default() += pbs;
            Ok(())
        })?;
        self.flush(store, n)
            .inspect_err(|_| self.take_back(tenant, pbs))
    }

    /// Counts `pbs` for `tenant`, whatever its limit: work already done.
    /// A failed write is logged; the count holds in memory.
    pub(super) fn charge_done(&self, store: &Store, tenant: &str, pbs: u64) {
        let counted = self.change(|u| {
            let used = u.pbs.entry(tenant.to_string()).or_default();
            *used = used.saturating_add(pbs);
            Ok(())
        });
        if let Err(e) = counted.and_then(|((), n)| self.flush(store, n)) {
            tracing::error!(error = %e.message, "a charge could not be written");
        }
    }

    /// Takes `pbs` back from `tenant`'s count for a job not accepted. A
    /// failed write leaves the file charged: the tenant's day may end
    /// early, it never runs over.
    pub(super) fn refund(&self, store: &Store, tenant: &str, pbs: u64) {
        self.take_back(tenant, pbs);
        let n = lock(&self.now).1;
        if let Err(e) = self.flush(store, n) {
            tracing::error!(error = %e.message, "a refund could not be written");
        }
    }

    fn take_back(&self, tenant: &str, pbs: u64) {
        let _ = self.change(|u| {
            if let Some(n) = u.pbs.get_mut(tenant) {
                *n = n.saturating_sub(pbs);
            }
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ErrorCode;

    fn refused(used: u64) -> ApiError {
        ApiError::new(ErrorCode::DailyLimit, format!("{used} used"))
    }

    /// Charges from many threads at once all count, on disk too, and the
    /// limit holds among them; refunds and work done count as well.
    #[test]
    fn concurrent_charges_all_reach_the_disk_within_the_limit() {
        let dir = std::env::temp_dir().join(format!("hearth-usage-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = Store::open(&dir).unwrap();
        let book = UsageBook::new(store.read_usage());
        let accepted: u64 = std::thread::scope(|s| {
            let threads: Vec<_> = (0..8)
                .map(|t| {
                    let (book, store) = (&book, &store);
                    s.spawn(move || {
                        let tenant = if t % 2 == 0 { "a" } else { "b" };
                        (0..40)
                            .filter(|_| book.charge(store, tenant, 3, 300, refused).is_ok())
                            .count() as u64
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        });
        // 160 charges of 3 each tenant, 100 fit under 300.
        assert_eq!(accepted, 200);
        let disk = store.read_usage();
        assert_eq!(
            (disk.pbs["a"], disk.pbs["b"], disk.day),
            (300, 300, today())
        );
        let e = book.charge(&store, "a", 1, 300, refused).unwrap_err();
        assert_eq!(e.message, "300 used");
        book.refund(&store, "a", 30);
        book.charge_done(&store, "b", 1000);
        let disk = store.read_usage();
        assert_eq!((disk.pbs["a"], disk.pbs["b"]), (270, 1300));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
