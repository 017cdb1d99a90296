//! What a caller hooks into a run, the same for every encrypted backend:
//! a progress callback and a cancel flag ([`Hooks`]). The backends' own
//! `with_progress` / `with_cancel` set them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Progress callback: `(bootstraps done, bootstraps in the circuit)`.
pub type Progress = dyn Fn(usize, usize) + Send + Sync;

/// A run's progress callback and cancel flag, both optional.
#[derive(Default)]
pub(crate) struct Hooks {
    progress: Option<Box<Progress>>,
    cancel: Option<Arc<AtomicBool>>,
}

impl Hooks {
    /// Calls `f(done, total)` as the run goes.
    pub(crate) fn set_progress(&mut self, f: impl Fn(usize, usize) + Send + Sync + 'static) {
        self.progress = Some(Box::new(f));
    }

    /// Stops the run once `flag` is set (the backend never clears it).
    pub(crate) fn set_cancel(&mut self, flag: Arc<AtomicBool>) {
        self.cancel = Some(flag);
    }

    /// Whether the caller asked the run to stop.
    pub(crate) fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Relaxed))
    }

    /// Tells the caller `done` of `total` bootstraps are done.
    pub(crate) fn report(&self, done: usize, total: usize) {
        if let Some(progress) = &self.progress {
            progress(done, total);
        }
    }
}
