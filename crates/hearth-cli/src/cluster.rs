//! `--backend mpi`: every rank of an `mpirun` / `srun` launch runs this same
//! command; rank 0 runs it, the others serve its bootstraps (see
//! `hearth::backend::mpi`). Builds with the `mpi` feature; without it the
//! backend is refused, saying how to get it.

use std::path::Path;

use hearth::{Error, ServerKey};
use indicatif::ProgressBar;

use crate::engine::Evaluator;
use crate::options::Threads;

/// How long any rank may stay silent: `HEARTH_RANK_TIMEOUT` seconds, 60 by
/// default.
fn timeout() -> Result<std::time::Duration, Error> {
    match std::env::var("HEARTH_RANK_TIMEOUT") {
        Ok(v) => v
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s > 0.0)
            .map(std::time::Duration::from_secs_f64)
            .ok_or_else(|| {
                Error::Config(format!(
                    "HEARTH_RANK_TIMEOUT=`{v}` is not a positive number of seconds"
                ))
            }),
        Err(_) => Ok(std::time::Duration::from_secs(60)),
    }
}

#[cfg(feature = "mpi")]
mod imp {
    use std::sync::{Arc, Mutex};

    use hearth::backend::{Cluster, MpiBackend};

    use super::*;

    static CLUSTER: Mutex<Option<Arc<Cluster>>> = Mutex::new(None);

    /// Starts MPI for a command with `--backend mpi`: `Ok(true)` on rank 0,
    /// which runs the command; the other ranks serve and then get
    /// `Ok(false)`.
    pub fn start(threads: Threads) -> Result<bool, Error> {
        let cluster = Cluster::init(timeout()?)?;
        if cluster.rank() == 0 {
            *CLUSTER.lock().unwrap() = Some(Arc::new(cluster));
            return Ok(true);
        }
        cluster.work(threads.resolve()?)?;
        Ok(false)
    }

    /// Rank 0: the MPI backend for `server` on `threads` local threads plus
    /// the workers', advancing `bar`. `key_file`: the file the key came
    /// from, sent as it is.
    pub fn evaluator<'k>(
        server: &'k ServerKey,
        key_file: Option<&Path>,
        threads: usize,
        bar: Option<&ProgressBar>,
    ) -> Result<Evaluator<'k>, Error> {
        let cluster = CLUSTER.lock().unwrap().clone().ok_or_else(|| {
            Error::Config("--backend mpi: MPI was not started for this command".into())
        })?;
        // The file's bytes travel as they are (4-6x smaller when the key
        // file is compressed); keys made here travel uncompressed.
        let bytes = match key_file {
            Some(path) => std::fs::read(path).map_err(|source| hearth::FileError::Io {
                path: path.to_path_buf(),
                source,
            })?,
            None => server.to_bytes()?,
        };
        cluster.share_key(&bytes)?;
        let mut mpi: MpiBackend<'k> = cluster.backend(server, threads)?;
        if let Some(bar) = bar {
            mpi = mpi.with_progress(crate::keygen::advance(bar));
        }
        Ok(Evaluator::Mpi(Box::new(mpi)))
    }

    /// Rank 0, when the command is done: stops the workers and finalises
    /// MPI, or, after a rank failed, aborts the launch.
    pub fn end(result: &Result<(), Error>) {
        let Some(cluster) = CLUSTER.lock().unwrap().take() else {
            return;
        };
        if let Err(e @ Error::Rank { .. }) = result {
            eprintln!("hearth: {e}; ending every rank");
            cluster.abort(3);
        }
        // Dropping the last reference tells the workers to stop, then
        // finalises MPI.
    }
}

#[cfg(not(feature = "mpi"))]
mod imp {
    use super::*;

    fn missing() -> Error {
        Error::Config(
            "this build has no MPI backend: build with `cargo build --release -p hearth-cli \
             --features mpi` (needs libopenmpi-dev, openmpi-bin and libclang-dev)"
                .into(),
        )
    }

    pub fn start(_: Threads) -> Result<bool, Error> {
        timeout()?;
        Err(missing())
    }

    pub fn evaluator<'k>(
        _: &'k ServerKey,
        _: Option<&Path>,
        _: usize,
        _: Option<&ProgressBar>,
    ) -> Result<Evaluator<'k>, Error> {
        Err(missing())
    }

    pub fn end(_: &Result<(), Error>) {}
}

pub use imp::{end, evaluator, start};
