//! `--backend mpi`: every rank of an `mpirun` / `srun` launch runs this same
//! command; rank 0 runs it, the others serve its bootstraps (see
//! `hearth::backend::mpi`). Builds with the `mpi` feature; without it the
//! backend is refused, saying how to get it.

use std::process::ExitCode;

use hearth::Error;

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

    use hearth::backend::Cluster;

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

    /// Rank 0: the launch's cluster (its evaluators:
    /// `hearth::backend::Evaluator::from_cluster`).
    pub fn cluster() -> Result<Arc<Cluster>, Error> {
        CLUSTER.lock().unwrap().clone().ok_or_else(|| {
            Error::Config("--backend mpi: MPI was not started for this command".into())
        })
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

/// A command's `main`: under `--backend mpi` (`mpi` is the command's
/// thread option then) every rank runs the command; rank 0 goes on to
/// `run`, the others serve it and stop. Then MPI ends and the result
/// becomes the exit status (an error is printed first).
pub fn main(mpi: Option<Threads>, run: impl FnOnce() -> Result<(), Error>) -> ExitCode {
    if let Some(threads) = mpi {
        match start(threads) {
            Ok(true) => {}
            Ok(false) => return ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let result = run();
    end(&result);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The error of `--backend mpi` in a build without the `mpi` feature.
pub fn missing() -> Error {
    Error::Config(
        "this build has no MPI backend: build with `--features mpi` (`cargo build --release \
         -p hearth-cli --features mpi`; needs libopenmpi-dev, openmpi-bin and libclang-dev)"
            .into(),
    )
}

#[cfg(not(feature = "mpi"))]
mod imp {
    use super::*;

    /// Without the `mpi` feature: the error saying how to get it.
    pub fn start(_: Threads) -> Result<bool, Error> {
        timeout()?;
        Err(missing())
    }

    /// Nothing to end without MPI.
    pub fn end(_: &Result<(), Error>) {}
}

#[cfg(feature = "mpi")]
pub use imp::cluster;
pub use imp::{end, start};
