//! `--backend cpu|gpu|mpi`: the encrypted evaluator a command runs on,
//! chosen by the library's selector ([`hearth::backend::Evaluator`]); what
//! is the command's own is the progress bar, the message on stderr and
//! the MPI launch.

use std::path::Path;

use hearth::backend::{Engine, Evaluator};
use hearth::{Error, ServerKey};
use indicatif::ProgressBar;

/// The evaluator `engine` names for `server`'s ciphertexts; `gpu` without a
/// usable GPU (or in a build without the feature) says why on stderr and
/// runs on the cpu backend.
pub fn evaluator(
    engine: Engine,
    server: &ServerKey,
    threads: Option<usize>,
) -> Result<Evaluator<'_>, Error> {
    with_bar(engine, server, None, threads, None)
}

/// [`evaluator`] advancing `bar` as bootstraps finish (cpu and mpi);
/// `key_file`: where the key came from (mpi sends the file's bytes).
pub fn with_bar<'k>(
    engine: Engine,
    server: &'k ServerKey,
    key_file: Option<&Path>,
    threads: Option<usize>,
    bar: Option<&ProgressBar>,
) -> Result<Evaluator<'k>, Error> {
    let ev = if engine == Engine::Mpi {
        mpi(server, key_file, threads)?
    } else {
        let chosen = Evaluator::choose(engine, server, threads)?;
        if let Some(why) = chosen.fallback {
            eprintln!("hearth: --backend gpu: {why}; running on the cpu backend");
        }
        chosen.evaluator
    };
    Ok(match (bar, ev.engine()) {
        (Some(bar), Engine::Cpu | Engine::Mpi) => ev.with_progress(crate::progress::advance(bar)),
        _ => ev,
    })
}

#[cfg(feature = "mpi")]
fn mpi<'k>(
    server: &'k ServerKey,
    key_file: Option<&Path>,
    threads: Option<usize>,
) -> Result<Evaluator<'k>, Error> {
    let threads = hearth::backend::resolve_threads(threads)?;
    // The file's bytes travel as they are (4-6x smaller when the key file
    // is compressed); keys made here travel uncompressed.
    let bytes = match key_file {
        Some(path) => std::fs::read(path).map_err(|source| hearth::FileError::Io {
            path: path.to_path_buf(),
            source,
        })?,
        None => server.to_bytes()?,
    };
    Evaluator::from_cluster(&crate::cluster::cluster()?, server, &bytes, threads)
}

#[cfg(not(feature = "mpi"))]
fn mpi<'k>(_: &'k ServerKey, _: Option<&Path>, _: Option<usize>) -> Result<Evaluator<'k>, Error> {
    Err(crate::cluster::missing())
}

/// The gpu backend, if `engine` names it and one can be used (else says
/// why on stderr; with `HEARTH_REQUIRE_GPU` set, that is an error): the
/// library's rule ([`Evaluator::gpu_or_fallback`]), for the benchmarks
/// that time something else than hearth's cpu backend without a GPU.
pub fn gpu_only(engine: Engine, server: &ServerKey) -> Result<Option<Evaluator<'_>>, Error> {
    if engine != Engine::Gpu {
        return Ok(None);
    }
    Ok(match Evaluator::gpu_or_fallback(server)? {
        Ok(ev) => Some(ev),
        Err(why) => {
            eprintln!("hearth: --backend gpu: {why}; cpu only");
            None
        }
    })
}
