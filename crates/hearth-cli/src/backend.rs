//! `--backend cpu|gpu|mpi`: the encrypted evaluator a command runs on.

use std::path::Path;

use hearth::backend::{Backend, CpuBackend};
use hearth::{Ciphertext, Circuit, Error, ServerKey};
use indicatif::ProgressBar;

use crate::options::Engine;

/// An encrypted evaluator chosen by [`Engine`].
pub enum Evaluator<'k> {
    /// The cpu backend.
    Cpu(CpuBackend<'k>),
    /// The gpu backend.
    #[cfg(feature = "gpu")]
    Gpu(Box<hearth::backend::GpuBackend>),
    /// The mpi backend, on rank 0.
    #[cfg(feature = "mpi")]
    Mpi(Box<hearth::backend::MpiBackend<'k>>),
}

impl Evaluator<'_> {
    /// What runs, in words (for tables and logs).
    pub fn describe(&self) -> String {
        match self {
            Evaluator::Cpu(cpu) => format!("cpu, {} threads", cpu.threads()),
            #[cfg(feature = "gpu")]
            Evaluator::Gpu(_) => "gpu".into(),
            #[cfg(feature = "mpi")]
            Evaluator::Mpi(_) => {
                let threads = self.threads();
                let (local, workers) = threads.split_at(1);
                format!(
                    "mpi, {} ranks, threads {} + {workers:?}",
                    threads.len(),
                    local[0]
                )
            }
        }
    }

    /// Threads of rank 0 and of each worker (one entry but for mpi; the gpu
    /// counts as one).
    pub fn threads(&self) -> Vec<usize> {
        match self {
            Evaluator::Cpu(cpu) => vec![cpu.threads()],
            #[cfg(feature = "gpu")]
            Evaluator::Gpu(_) => vec![1],
            #[cfg(feature = "mpi")]
            Evaluator::Mpi(mpi) => {
                let (local, workers) = mpi.threads();
                std::iter::once(local)
                    .chain(workers.iter().copied())
                    .collect()
            }
        }
    }
}

impl Backend for Evaluator<'_> {
    type Digit = Ciphertext;

    fn evaluate(&self, circuit: &Circuit, inputs: &[Ciphertext]) -> Result<Vec<Ciphertext>, Error> {
        match self {
            Evaluator::Cpu(cpu) => cpu.evaluate(circuit, inputs),
            #[cfg(feature = "gpu")]
            Evaluator::Gpu(gpu) => gpu.evaluate(circuit, inputs),
            #[cfg(feature = "mpi")]
            Evaluator::Mpi(mpi) => mpi.evaluate(circuit, inputs),
        }
    }
}

/// The evaluator `engine` names for `server`'s ciphertexts; `gpu` without a
/// usable GPU (or in a build without the feature) says why on stderr and
/// runs on the cpu backend.
pub fn evaluator<'k>(
    engine: Engine,
    server: &'k ServerKey,
    threads: Option<usize>,
) -> Result<Evaluator<'k>, Error> {
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
    match engine {
        Engine::Gpu => match gpu(server) {
            Ok(ev) => return Ok(ev),
            Err(why) => {
                require_gpu(&why)?;
                eprintln!("hearth: --backend gpu: {why}; running on the cpu backend");
            }
        },
        Engine::Mpi => return mpi(server, key_file, threads, bar),
        Engine::Cpu => {}
    }
    let cpu = CpuBackend::new(server, threads)?;
    Ok(Evaluator::Cpu(match bar {
        Some(bar) => cpu.with_progress(crate::progress::advance(bar)),
        None => cpu,
    }))
}

#[cfg(feature = "mpi")]
fn mpi<'k>(
    server: &'k ServerKey,
    key_file: Option<&Path>,
    threads: Option<usize>,
    bar: Option<&ProgressBar>,
) -> Result<Evaluator<'k>, Error> {
    let threads = hearth::backend::resolve_threads(threads)?;
    let mut mpi = crate::cluster::backend(server, key_file, threads)?;
    if let Some(bar) = bar {
        mpi = mpi.with_progress(crate::progress::advance(bar));
    }
    Ok(Evaluator::Mpi(Box::new(mpi)))
}

#[cfg(not(feature = "mpi"))]
fn mpi<'k>(
    _: &'k ServerKey,
    _: Option<&Path>,
    _: Option<usize>,
    _: Option<&ProgressBar>,
) -> Result<Evaluator<'k>, Error> {
    Err(crate::cluster::missing())
}

/// The gpu backend, if `engine` names it and one can be used (else says
/// why on stderr; with `HEARTH_REQUIRE_GPU` set, that is an error).
pub fn gpu_only(engine: Engine, server: &ServerKey) -> Result<Option<Evaluator<'_>>, Error> {
    if engine != Engine::Gpu {
        return Ok(None);
    }
    match gpu(server) {
        Ok(ev) => Ok(Some(ev)),
        Err(why) => {
            require_gpu(&why)?;
            eprintln!("hearth: --backend gpu: {why}; cpu only");
            Ok(None)
        }
    }
}

/// With `HEARTH_REQUIRE_GPU` set (measurements: `scripts/gpu-measure.sh`),
/// a GPU that cannot be used fails the command instead of falling back to
/// the cpu backend, so that no table shows cpu beside cpu as a GPU figure.
/// `why`: the reason no GPU can be used.
pub fn require_gpu(why: &str) -> Result<(), Error> {
    if std::env::var_os("HEARTH_REQUIRE_GPU").is_some() {
        return Err(Error::Config(format!(
            "--backend gpu: {why} (HEARTH_REQUIRE_GPU is set, so no fallback to the cpu backend)"
        )));
    }
    Ok(())
}

/// Why no GPU can be used in this build on this machine, if it cannot.
pub fn no_gpu_reason() -> Option<&'static str> {
    if !cfg!(feature = "gpu") {
        return Some("this build has no GPU backend (build it with scripts/gpu-build.sh)");
    }
    #[cfg(feature = "gpu")]
    if !hearth::backend::gpu_available() {
        return Some("no usable CUDA device (no GPU, or no driver)");
    }
    None
}

#[cfg(feature = "gpu")]
fn gpu(server: &ServerKey) -> Result<Evaluator<'_>, String> {
    if let Some(why) = no_gpu_reason() {
        return Err(why.into());
    }
    let gpu = hearth::backend::GpuBackend::for_key(server).map_err(|e| e.to_string())?;
    Ok(Evaluator::Gpu(Box::new(gpu)))
}

#[cfg(not(feature = "gpu"))]
fn gpu(_: &ServerKey) -> Result<Evaluator<'_>, String> {
    Err(no_gpu_reason().unwrap_or_default().into())
}
