//! Disk use: the bytes each tenant keeps stored (its keys, its queued
//! jobs, the results kept for it), bounded by its quota, and the free
//! space the data folder's disk keeps. Both are checked, and the bytes
//! taken, before anything is written: a job takes its request's bytes
//! and the most its result can take at admission, so a running job can
//! never fill the disk.

use std::collections::HashMap;
use std::path::Path;

use super::state::{lock, Shared};
use crate::wire::{ApiError, ErrorCode};

/// Bytes stored, by tenant (the empty name: an open server's).
#[derive(Debug, Default)]
pub(super) struct Storage {
    used: HashMap<String, u64>,
}

impl Storage {
    /// Counts `bytes` found on disk at start for `tenant`.
    pub(super) fn add(&mut self, tenant: &str, bytes: u64) {
        let n = self.used.entry(tenant.to_string()).or_default();
        *n = n.saturating_add(bytes);
    }

    /// What `tenant` keeps stored now.
    pub(super) fn used(&self, tenant: &str) -> u64 {
        self.used.get(tenant).copied().unwrap_or(0)
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

impl Shared {
    /// The bytes `tenant` may keep stored: its own quota in the tenants
    /// file, else the server's `max_storage`.
    fn quota(&self, tenant: &str) -> u64 {
        self.tenants()
            .ok()
            .and_then(|t| t.max_storage(tenant))
            .unwrap_or(self.config.max_storage)
    }

    /// Takes `bytes` of `tenant`'s storage before they are written, or
    /// refuses: `insufficient_storage` where the disk would go under the
    /// reserve, `storage_limit` where the tenant would go over its quota.
    pub(super) fn take_storage(&self, tenant: &str, bytes: u64) -> Result<(), ApiError> {
        if let Some(free) = free_bytes(self.store.root()) {
            if free.saturating_sub(bytes) < self.config.disk_reserve {
                return Err(ApiError::new(
                    ErrorCode::InsufficientStorage,
                    "the server's disk is nearly full; try again later",
                ));
            }
        }
        let quota = self.quota(tenant);
        let mut st = lock(&self.storage);
        let used = st.used(tenant);
        if used.saturating_add(bytes) > quota {
            return Err(ApiError::new(
                ErrorCode::StorageLimit,
                format!(
                    "this needs {bytes} bytes stored; you keep {used} of your {quota} (delete \
                     results you have fetched, or keys you no longer use)"
                ),
            ));
        }
        st.add(tenant, bytes);
        Ok(())
    }

    /// Gives back `bytes` of `tenant`'s storage (deleted, or never
    /// written).
    pub(super) fn give_storage(&self, tenant: &str, bytes: u64) {
        let mut st = lock(&self.storage);
        if let Some(n) = st.used.get_mut(tenant) {
            *n = n.saturating_sub(bytes);
            if *n == 0 {
                st.used.remove(tenant);
            }
        }
    }
}
