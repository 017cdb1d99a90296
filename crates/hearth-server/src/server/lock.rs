//! Locks that a panic elsewhere does not poison for good: a worker that
//! panics mid-job leaves the server's state as consistent as each step
//! left it, and the other requests go on.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking it over from a thread that panicked holding it.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
