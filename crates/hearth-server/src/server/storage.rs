//! Disk use: the bytes each tenant keeps stored (its keys, its queued
//! jobs, the results kept for it), bounded by its quota, and the free
//! space the data folder's disk keeps. Both are checked, and the bytes
//! taken, before anything is written: a job takes its request's bytes
//! and the most its result can take at admission, so a running job can
//! never fill the disk.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::lock::lock;
use crate::refusals::{check_disk, storage_limit};
use crate::wire::ApiError;

/// Bytes stored, by tenant (the empty name: an open server's), and the
/// disk's reserve.
#[derive(Debug)]
pub(super) struct Storage {
    used: Mutex<HashMap<String, u64>>,
    root: PathBuf,
    reserve: u64,
}

impl Storage {
    /// Nothing stored yet in the data folder `root`, whose disk keeps
    /// `reserve` bytes free.
    pub(super) fn new(root: &Path, reserve: u64) -> Self {
        Storage {
            used: Mutex::new(HashMap::new()),
            root: root.to_path_buf(),
            reserve,
        }
    }

    /// Counts `bytes` found on disk at start for `tenant`.
    pub(super) fn add(&self, tenant: &str, bytes: u64) {
        let mut used = lock(&self.used);
        let n = used.entry(tenant.to_string()).or_default();
        *n = n.saturating_add(bytes);
    }

    /// Takes `bytes` of `tenant`'s storage, whose quota is `quota`, before
    /// they are written, or refuses: `insufficient_storage` where the disk
    /// would go under the reserve, `storage_limit` where the tenant would
    /// go over its quota.
    pub(super) fn take(&self, tenant: &str, bytes: u64, quota: u64) -> Result<(), ApiError> {
        check_disk(free_bytes(&self.root), bytes, self.reserve)?;
        let mut used = lock(&self.used);
        let now = used.get(tenant).copied().unwrap_or(0);
        if now.saturating_add(bytes) > quota {
            return Err(storage_limit(bytes, now, quota));
        }
        *used.entry(tenant.to_string()).or_default() += bytes;
        Ok(())
    }

    /// Gives back `bytes` of `tenant`'s storage (deleted, or never
    /// written).
    pub(super) fn give(&self, tenant: &str, bytes: u64) {
        let mut used = lock(&self.used);
        if let Some(n) = used.get_mut(tenant) {
            *n = n.saturating_sub(bytes);
            if *n == 0 {
                used.remove(tenant);
            }
        }
    }
}

/// Free bytes for an unprivileged writer on the disk holding `dir`
/// (`None` where the system cannot say).
pub(crate) fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
        let mut st = std::mem::MaybeUninit::<libc::statvfs>::uninit();
        // SAFETY: `path` is a valid C string and `st` a buffer of the
        // struct statvfs fills; it is read only when the call succeeded.
        let st = unsafe {
            if libc::statvfs(path.as_ptr(), st.as_mut_ptr()) != 0 {
                return None;
            }
            st.assume_init()
        };
        Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}
