//! The refusals a limit gives, in one set of words for both stores (a
//! data folder and a fleet's database): a client reads the same answer
//! whichever server took its request. None names another tenant's count.

use hearth::KeyId;

use crate::wire::{ApiError, ErrorCode, JobId};

/// The server's (or the fleet's) queue is full.
pub(crate) fn queue_full() -> ApiError {
    ApiError::new(
        ErrorCode::QueueFull,
        "the server's queue is full; try again later",
    )
}

/// The tenant has `mine` jobs queued or running, its limit.
pub(crate) fn queue_limit(mine: usize) -> ApiError {
    ApiError::new(
        ErrorCode::QueueLimit,
        format!("you have {mine} jobs queued or running, your limit; fetch or wait for some first"),
    )
}

/// A job of `pbs` bootstraps would take the tenant over `limit` today,
/// having used `used`.
pub(crate) fn daily_limit(pbs: u64, used: u64, limit: u64) -> ApiError {
    ApiError::new(
        ErrorCode::DailyLimit,
        format!("this job runs {pbs} bootstraps; you have run {used} of your {limit} today (UTC)"),
    )
}

/// Storing `bytes` more would take the tenant, who keeps `now`, over
/// `quota`.
pub(crate) fn storage_limit(bytes: u64, now: u64, quota: u64) -> ApiError {
    ApiError::new(
        ErrorCode::StorageLimit,
        format!(
            "this needs {bytes} bytes stored; you keep {now} of your {quota} (delete results you \
             have fetched, or keys you no longer use)"
        ),
    )
}

/// Refuses `bytes` more where the disk, with `free` bytes free, would go
/// under `reserve` (`insufficient_storage`).
pub(crate) fn check_disk(free: Option<u64>, bytes: u64, reserve: u64) -> Result<(), ApiError> {
    match free {
        Some(free) if free.saturating_sub(bytes) < reserve => Err(ApiError::new(
            ErrorCode::InsufficientStorage,
            "the server's disk is nearly full; try again later",
        )),
        _ => Ok(()),
    }
}

/// The tenant has `own` keys registered, its limit.
pub(crate) fn key_limit(own: usize) -> ApiError {
    ApiError::new(
        ErrorCode::KeyLimit,
        format!(
            "you have {own} keys registered, your limit; delete one (DELETE /v1/keys/{{key_id}}) \
             or reuse a key"
        ),
    )
}

/// The server (or fleet) holds as many keys as it may.
pub(crate) fn too_many_keys() -> ApiError {
    ApiError::new(
        ErrorCode::TooManyKeys,
        "the server holds as many keys as it may; try again later",
    )
}

/// No such key of the caller's.
pub(crate) fn unknown_key() -> ApiError {
    ApiError::new(ErrorCode::UnknownKey, "no such key is registered")
}

/// `busy` of the caller's jobs under key `id` are queued or running.
pub(crate) fn key_in_use(busy: usize, id: KeyId) -> ApiError {
    ApiError::new(
        ErrorCode::KeyInUse,
        format!("{busy} of your jobs under key {id} are queued or running"),
    )
}

/// No job `id` of the caller's.
pub(crate) fn no_job(id: JobId) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no job {id}"))
}

/// Job `id` runs: it can be deleted once it has finished.
pub(crate) fn job_running(id: JobId) -> ApiError {
    ApiError::new(
        ErrorCode::NotReady,
        format!("job {id} is running; delete it once it has finished"),
    )
}

/// A job that waited `ms` in the queue, over `--queue-ttl`.
pub(crate) fn expired(ms: u64) -> ApiError {
    ApiError::new(
        ErrorCode::Expired,
        format!(
            "the job waited {:.1} s in the queue, over --queue-ttl",
            ms as f64 / 1000.0
        ),
    )
}

/// The failure of a job whose server died running it `attempts` times.
pub(crate) fn crashed(attempts: u32) -> ApiError {
    ApiError::new(
        ErrorCode::Crashed,
        format!(
            "the server stopped while running this job, {attempts} times (out of memory, a \
             kill, a crash): it is not run again"
        ),
    )
}
