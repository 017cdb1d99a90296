//! Slots shared fairly between tenants: the upload permits
//! (`--max-uploads`) and the download permits (`--max-downloads`). One
//! owner (a tenant, or on an open server a client address) holds at most
//! its share of them, so that its transfers, however slow, leave the
//! others room.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};
use tokio::time::{timeout_at, Instant};

use super::lock::lock;
use crate::wire::{ApiError, ErrorCode};

/// `all` slots, of which one owner holds at most `per_owner`.
pub(super) struct Slots {
    /// What they are for, in messages: `uploads`, `downloads`.
    what: &'static str,
    /// The option that sets one owner's share, in messages.
    share_option: &'static str,
    all: Arc<Semaphore>,
    all_count: usize,
    per_owner: usize,
    /// Slots held (or being waited for) by owner.
    held: std::sync::Mutex<HashMap<String, usize>>,
    /// Signalled whenever an owner gives one back.
    freed: Notify,
}

/// One slot, given back when dropped (an upload keeps it while its bytes
/// are in memory, a download while its body is being sent).
pub(super) struct Slot {
    _all: OwnedSemaphorePermit,
    _share: Share,
}

/// One of an owner's `per_owner` shares.
struct Share {
    slots: Arc<Slots>,
    owner: String,
}

impl Drop for Share {
    fn drop(&mut self) {
        let mut held = lock(&self.slots.held);
        if let Some(n) = held.get_mut(&self.owner) {
            *n -= 1;
            if *n == 0 {
                held.remove(&self.owner);
            }
        }
        drop(held);
        self.slots.freed.notify_waiters();
    }
}

impl Slots {
    /// `all` slots (at least 1) for `what`, at most `per_owner` (at least
    /// 1) to one owner, a share `share_option` sets.
    pub(super) fn new(
        what: &'static str,
        share_option: &'static str,
        all: usize,
        per_owner: usize,
    ) -> Arc<Slots> {
        let all = all.max(1);
        Arc::new(Slots {
            what,
            share_option,
            all: Arc::new(Semaphore::new(all)),
            all_count: all,
            per_owner: per_owner.clamp(1, all),
            held: Default::default(),
            freed: Notify::new(),
        })
    }

    /// Waits for one of `owner`'s shares, then for a slot, both by
    /// `deadline`, else `queue_full`. An owner waits for its own shares
    /// first: its waiting transfers do not stand in the slots' line ahead
    /// of others'.
    pub(super) async fn acquire(
        self: &Arc<Self>,
        owner: String,
        deadline: Instant,
    ) -> Result<Slot, ApiError> {
        let share = timeout_at(deadline, self.share(owner)).await.map_err(|_| {
            ApiError::new(
                ErrorCode::QueueFull,
                format!(
                    "{} of your {} are in progress, the most one tenant may have ({}); \
                         try again later",
                    self.per_owner, self.what, self.share_option
                ),
            )
        })?;
        let all = match timeout_at(deadline, self.all.clone().acquire_owned()).await {
            Ok(Ok(p)) => p,
            _ => {
                return Err(ApiError::new(
                    ErrorCode::QueueFull,
                    format!(
                        "{} {} are in progress, the limit; try again later",
                        self.all_count, self.what
                    ),
                ))
            }
        };
        Ok(Slot {
            _all: all,
            _share: share,
        })
    }

    async fn share(self: &Arc<Self>, owner: String) -> Share {
        loop {
            // Registered before the count is read, so that a share given
            // back in between still wakes this one.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            {
                let mut held = lock(&self.held);
                let n = held.entry(owner.clone()).or_default();
                if *n < self.per_owner {
                    *n += 1;
                    return Share {
                        slots: self.clone(),
                        owner,
                    };
                }
            }
            freed.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn one_owner_holds_at_most_its_share() {
        let uploads = Slots::new("uploads", "--max-uploads-per-tenant", 4, 2);
        let soon = || Instant::now() + Duration::from_millis(50);
        let a1 = uploads.acquire("a".into(), soon()).await.unwrap();
        let _a2 = uploads.acquire("a".into(), soon()).await.unwrap();
        let refused = uploads.acquire("a".into(), soon()).await.err().unwrap();
        assert_eq!(refused.code, ErrorCode::QueueFull);
        assert!(refused.message.contains("--max-uploads-per-tenant"));
        // Another owner gets the slots a's waiting upload did not take.
        let _b1 = uploads.acquire("b".into(), soon()).await.unwrap();
        let _b2 = uploads.acquire("b".into(), soon()).await.unwrap();
        let full = uploads.acquire("c".into(), soon()).await.err().unwrap();
        assert!(full.message.contains("4 uploads"), "{}", full.message);
        // A share given back wakes a waiting upload of the same owner.
        let waiting = uploads.acquire("a".into(), Instant::now() + Duration::from_secs(10));
        let giver = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(a1);
        };
        let (got, ()) = tokio::join!(waiting, giver);
        assert!(got.is_ok());
    }
}
