//! The one backend selector: which encrypted backend a run uses (cpu, gpu
//! or mpi), and the fallback from a GPU that cannot be used to the cpu
//! backend, with the reason. The command line, the server and the Python
//! package all choose through it (`hearth::backend::{Engine, Evaluator}`).
//!
//! ```
//! use hearth::backend::{Engine, Evaluator};
//! use hearth::{ClientKey, INSECURE_TEST_DIGITS};
//!
//! let server = ClientKey::generate(&INSECURE_TEST_DIGITS).server_key();
//! // "gpu" on a machine or build without one: the cpu backend, and why.
//! let chosen = Evaluator::choose("gpu".parse()?, &server, Some(1))?;
//! assert_eq!(chosen.evaluator.engine(), Engine::Cpu);
//! assert_eq!(chosen.fallback.is_some(), hearth::backend::no_gpu_reason().is_some());
//! # Ok::<(), hearth::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::backend::{Backend, CpuBackend};
use crate::{Ciphertext, Circuit, Error, ServerKey};

/// Where encrypted circuits run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Engine {
    /// tfhe-rs's CPU bootstrap on a thread pool.
    #[default]
    Cpu,
    /// tfhe-rs's CUDA bootstrap, a level per launch (the feature `gpu`).
    Gpu,
    /// The ranks of an `mpirun` / `srun` launch (the feature `mpi`).
    Mpi,
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Engine {
    type Err = Error;

    /// `cpu`, `gpu` or `mpi`, in any case.
    fn from_str(s: &str) -> Result<Engine, Error> {
        let lower = s.to_ascii_lowercase();
        Engine::ALL
            .into_iter()
            .find(|e| e.name() == lower)
            .ok_or_else(|| Error::Config(format!("backend `{s}`: use cpu, gpu or mpi")))
    }
}

impl Engine {
    /// Every engine, in the order `--help` lists them.
    pub const ALL: [Engine; 3] = [Engine::Cpu, Engine::Gpu, Engine::Mpi];

    /// Its name on command lines and in configuration: `cpu`, `gpu`,
    /// `mpi` (what [`FromStr`] reads).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Cpu => "cpu",
            Engine::Gpu => "gpu",
            Engine::Mpi => "mpi",
        }
    }

    /// The engine that runs when `self` is asked for, decided before any
    /// key is at hand (a server's start, a run's plan): `gpu` where no GPU
    /// can be used ([`no_gpu_reason`]) is `cpu`, with the reason for the
    /// caller to say (an error under `HEARTH_REQUIRE_GPU`, see
    /// [`require_gpu`]); `cpu` and `mpi` are themselves.
    /// [`Evaluator::choose`] applies the same rule, and falls back too
    /// where a GPU fails to take the key.
    pub fn usable(self) -> Result<(Engine, Option<String>), Error> {
        match (self, no_gpu_reason()) {
            (Engine::Gpu, Some(why)) => {
                require_gpu(why)?;
                Ok((Engine::Cpu, Some(why.into())))
            }
            (engine, _) => Ok((engine, None)),
        }
    }
}

/// Why the GPU backend cannot run in this build on this machine, or `None`
/// when it can.
pub fn no_gpu_reason() -> Option<&'static str> {
    #[cfg(feature = "gpu")]
    {
        (!crate::backend::gpu_available()).then_some("no usable CUDA device (no GPU, or no driver)")
    }
    #[cfg(not(feature = "gpu"))]
    Some("this build has no GPU backend (build it with the feature `gpu`: scripts/gpu-build.sh)")
}

/// With `HEARTH_REQUIRE_GPU` set (measurements: `scripts/gpu-measure.sh`),
/// a GPU that cannot be used is an error instead of a fallback to the cpu
/// backend, so that no table shows cpu beside cpu as a GPU figure. `why`:
/// the reason no GPU can be used.
pub fn require_gpu(why: &str) -> Result<(), Error> {
    if std::env::var_os("HEARTH_REQUIRE_GPU").is_some() {
        return Err(Error::Gpu(format!(
            "--backend gpu: {why} (HEARTH_REQUIRE_GPU is set, so no fallback to the cpu backend)"
        )));
    }
    Ok(())
}

/// The thread count programs for `engine` are planned for
/// ([`Program::set_threads`](crate::Program::set_threads)): on the cpu and
/// mpi backends `threads` (`None`: `HEARTH_THREADS`, else every core); on a
/// GPU that can run, [`GpuCost::plan_threads`](crate::circuit::GpuCost::plan_threads)
/// for `params` (95 for `DIGITS_128`): a level costs a launch's latency
/// however narrow, so the GPU gets the lowest-depth circuits. Where no GPU
/// can be used the run falls back to the cpu backend, and so does the
/// plan.
pub fn plan_threads(
    engine: Engine,
    params: &crate::ParameterSet,
    threads: Option<usize>,
) -> Result<usize, Error> {
    if engine == Engine::Gpu && no_gpu_reason().is_none() {
        return Ok(crate::circuit::GpuCost::of(params).plan_threads());
    }
    crate::backend::resolve_threads(threads)
}

/// An encrypted evaluator: one of the backends, chosen at run time.
pub enum Evaluator<'k> {
    /// The cpu backend.
    Cpu(CpuBackend<'k>),
    /// The gpu backend.
    #[cfg(feature = "gpu")]
    Gpu(Box<crate::backend::GpuBackend>),
    /// The mpi backend, on rank 0 (made from a `hearth::backend::Cluster`:
    /// `Evaluator::from_cluster`).
    #[cfg(feature = "mpi")]
    Mpi(Box<crate::backend::MpiBackend<'k>>),
}

/// What [`Evaluator::choose`] chose, and why it is not what was asked.
pub struct Chosen<'k> {
    /// The evaluator.
    pub evaluator: Evaluator<'k>,
    /// Why the GPU asked for could not be used (the cpu backend runs
    /// instead); the caller says it to its user.
    pub fallback: Option<String>,
}

impl<'k> Evaluator<'k> {
    /// The evaluator `engine` names for `key`'s ciphertexts, on `threads`
    /// CPU threads (`None`: `HEARTH_THREADS`, else every core). `gpu`
    /// without a usable GPU runs on the cpu backend and says why in
    /// [`Chosen::fallback`] (an error under `HEARTH_REQUIRE_GPU`): the one
    /// place of that fallback ([`Evaluator::gpu_or_fallback`] for callers
    /// that want the GPU or nothing). `mpi` needs the ranks of a launch:
    /// its evaluator is made from a `hearth::backend::Cluster` (feature
    /// `mpi`: `Evaluator::from_cluster`); here it is refused
    /// ([`Error::Cluster`]).
    pub fn choose(
        engine: Engine,
        key: &'k ServerKey,
        threads: Option<usize>,
    ) -> Result<Chosen<'k>, Error> {
        let fallback = match engine {
            Engine::Cpu => None,
            Engine::Gpu => match Evaluator::gpu_or_fallback(key)? {
                Ok(gpu) => {
                    return Ok(Chosen {
                        evaluator: gpu,
                        fallback: None,
                    })
                }
                Err(why) => Some(why),
            },
            Engine::Mpi => {
                return Err(Error::Cluster(
                    "the mpi backend runs on the ranks of an mpirun launch: \
                     make it from a Cluster (hearth::backend::Evaluator::from_cluster)"
                        .into(),
                ))
            }
        };
        Ok(Chosen {
            evaluator: Evaluator::Cpu(CpuBackend::new(key, threads)?),
            fallback,
        })
    }

    /// The gpu backend for `key` (`Ok(Ok(_))`), or why it cannot run
    /// (`Ok(Err(why))`: the caller says it and runs on the cpu backend);
    /// an error under `HEARTH_REQUIRE_GPU` ([`require_gpu`]). The rule of
    /// [`Evaluator::choose`]'s fallback, for callers that run something
    /// else than this crate's cpu backend when no GPU can be used.
    pub fn gpu_or_fallback(key: &'k ServerKey) -> Result<Result<Evaluator<'k>, String>, Error> {
        match Evaluator::gpu(key) {
            Ok(gpu) => Ok(Ok(gpu)),
            Err(why) => {
                require_gpu(&why)?;
                Ok(Err(why))
            }
        }
    }

    /// The mpi backend on rank 0 of `cluster`'s launch for `key`, on
    /// `threads` local threads plus every worker's: `key_bytes` (the key's
    /// file as stored, compressed or not) go to the ranks first, once
    /// while they keep it ([`Cluster::share_key`](crate::backend::Cluster::share_key)).
    /// The one way the command line and the server make it.
    #[cfg(feature = "mpi")]
    pub fn from_cluster(
        cluster: &Arc<crate::backend::Cluster>,
        key: &'k ServerKey,
        key_bytes: &[u8],
        threads: usize,
    ) -> Result<Evaluator<'k>, Error> {
        cluster.share_key(key_bytes)?;
        let mpi = cluster.backend(key, threads)?;
        Ok(Evaluator::Mpi(Box::new(mpi)))
    }

    /// The gpu backend for `key`, or why it cannot run.
    pub fn gpu(key: &'k ServerKey) -> Result<Evaluator<'k>, String> {
        if let Some(why) = no_gpu_reason() {
            return Err(why.into());
        }
        #[cfg(feature = "gpu")]
        {
            let gpu = crate::backend::GpuBackend::for_key(key).map_err(|e| e.to_string())?;
            Ok(Evaluator::Gpu(Box::new(gpu)))
        }
        #[cfg(not(feature = "gpu"))]
        {
            let _ = key;
            Err(String::new())
        }
    }

    /// Which backend it is.
    pub fn engine(&self) -> Engine {
        match self {
            Evaluator::Cpu(_) => Engine::Cpu,
            #[cfg(feature = "gpu")]
            Evaluator::Gpu(_) => Engine::Gpu,
            #[cfg(feature = "mpi")]
            Evaluator::Mpi(_) => Engine::Mpi,
        }
    }

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

    /// Calls `f(done, total)` as bootstraps finish.
    pub fn with_progress(self, f: impl Fn(usize, usize) + Send + Sync + 'static) -> Self {
        match self {
            Evaluator::Cpu(cpu) => Evaluator::Cpu(cpu.with_progress(f)),
            #[cfg(feature = "gpu")]
            Evaluator::Gpu(gpu) => Evaluator::Gpu(Box::new(gpu.with_progress(f))),
            #[cfg(feature = "mpi")]
            Evaluator::Mpi(mpi) => Evaluator::Mpi(Box::new(mpi.with_progress(f))),
        }
    }

    /// Stops a run at its next step once `flag` is set
    /// ([`Error::Cancelled`]).
    pub fn with_cancel(self, flag: Arc<AtomicBool>) -> Self {
        match self {
            Evaluator::Cpu(cpu) => Evaluator::Cpu(cpu.with_cancel(flag)),
            #[cfg(feature = "gpu")]
            Evaluator::Gpu(gpu) => Evaluator::Gpu(Box::new(gpu.with_cancel(flag))),
            #[cfg(feature = "mpi")]
            Evaluator::Mpi(mpi) => Evaluator::Mpi(Box::new(mpi.with_cancel(flag))),
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
