//! Test support below the typed API, not part of the API: keys shared by
//! the tests of one process, random circuits and scratch folders. Compiled
//! for this crate's own tests and, with the feature `testing`, for the
//! tests of the crates above (their dev-dependencies enable it).

use std::path::{Path, PathBuf};

pub mod circuits;
pub mod keys;

/// An empty folder of this process for one test, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// The folder of test `name`.
    pub fn new(name: &str) -> Self {
        let d = std::env::temp_dir().join(format!("hearth-unit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
