//! `--backend cpu|gpu`: the encrypted evaluator a command runs on.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::testing::circuits::random_circuit;
use hearth::{Ciphertext, Circuit, ClientKey, Error, ParameterSet, Program, ServerKey};
use serde_json::json;

use crate::keygen::generate;
use crate::report::{emit, Table};

/// Where encrypted circuits run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Engine {
    /// tfhe-rs's CPU bootstrap on a thread pool.
    #[default]
    Cpu,
    /// tfhe-rs's CUDA bootstrap, a level per launch (builds with the `gpu`
    /// feature; falls back to cpu, saying so, where no GPU can be used).
    Gpu,
    /// The ranks of an `mpirun` / `srun` launch of this same command: rank 0
    /// schedules and bootstraps, every other rank bootstraps for it (builds
    /// with the `mpi` feature; `HEARTH_RANK_TIMEOUT` seconds of silence from
    /// a rank, 60 by default, end the run naming it).
    Mpi,
}

/// An encrypted evaluator chosen by [`Engine`].
pub enum Evaluator<'k> {
    Cpu(CpuBackend<'k>),
    #[cfg(feature = "gpu")]
    Gpu(Box<hearth::backend::GpuBackend>),
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
    key_file: Option<&std::path::Path>,
    threads: Option<usize>,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<Evaluator<'k>, Error> {
    match engine {
        Engine::Gpu => match gpu(server) {
            Ok(ev) => return Ok(ev),
            Err(why) => {
                no_gpu(&why)?;
                eprintln!("hearth: --backend gpu: {why}; running on the cpu backend");
            }
        },
        Engine::Mpi => {
            let threads = hearth::backend::resolve_threads(threads)?;
            return crate::cluster::evaluator(server, key_file, threads, bar);
        }
        Engine::Cpu => {}
    }
    let cpu = CpuBackend::new(server, threads)?;
    Ok(Evaluator::Cpu(match bar {
        Some(bar) => cpu.with_progress(crate::keygen::advance(bar)),
        None => cpu,
    }))
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
            no_gpu(&why)?;
            eprintln!("hearth: --backend gpu: {why}; cpu only");
            Ok(None)
        }
    }
}

/// With `HEARTH_REQUIRE_GPU` set (measurements: `scripts/gpu-measure.sh`),
/// a GPU that cannot be used fails the command instead of falling back to
/// the cpu backend, so that no table shows cpu beside cpu as a GPU figure.
fn no_gpu(why: &str) -> Result<(), Error> {
    if std::env::var_os("HEARTH_REQUIRE_GPU").is_some() {
        return Err(Error::Config(format!(
            "--backend gpu: {why} (HEARTH_REQUIRE_GPU is set, so no fallback to the cpu backend)"
        )));
    }
    Ok(())
}

#[cfg(feature = "gpu")]
fn gpu(server: &ServerKey) -> Result<Evaluator<'_>, String> {
    if !hearth::backend::gpu_available() {
        return Err("no usable CUDA device (no GPU, or no driver)".into());
    }
    let gpu = hearth::backend::GpuBackend::for_key(server).map_err(|e| e.to_string())?;
    Ok(Evaluator::Gpu(Box::new(gpu)))
}

#[cfg(not(feature = "gpu"))]
fn gpu(_: &ServerKey) -> Result<Evaluator<'_>, String> {
    Err("this build has no GPU backend (build it with scripts/gpu-build.sh)".into())
}

/// A function that makes tfhe-rs's `CudaServerKey` for `ck` the current
/// thread's key (call it on every thread that runs tfhe-rs), or `None`
/// where no GPU can be used (said on stderr; an error with
/// `HEARTH_REQUIRE_GPU`).
#[cfg(feature = "gpu")]
pub fn tfhe_gpu_key(ck: &tfhe::ClientKey) -> Result<Option<impl Fn() + Sync>, Error> {
    if !hearth::backend::gpu_available() {
        let why = "no usable CUDA device (no GPU, or no driver)";
        no_gpu(why)?;
        eprintln!("hearth: tfhe-rs on the gpu: {why}; on the cpu");
        return Ok(None);
    }
    let key = tfhe::CompressedServerKey::new(ck).decompress_to_gpu();
    Ok(Some(move || tfhe::set_server_key(key.clone())))
}

/// Without the gpu feature, tfhe-rs runs on the CPU (said on stderr; an
/// error with `HEARTH_REQUIRE_GPU`).
#[cfg(not(feature = "gpu"))]
pub fn tfhe_gpu_key(_: &tfhe::ClientKey) -> Result<Option<fn()>, Error> {
    let why = "this build has no GPU backend (build it with scripts/gpu-build.sh)";
    no_gpu(why)?;
    eprintln!("hearth: tfhe-rs on the gpu: {why}; on the cpu");
    Ok(None)
}

/// Outputs of `circuit` on `backend`, decrypted, and the run's time.
fn timed<B: Backend<Digit = Ciphertext>>(
    backend: &B,
    client: &ClientKey,
    circuit: &Circuit,
    inputs: &[Ciphertext],
) -> Result<(Vec<u64>, Duration), Error> {
    let t = Instant::now();
    let out = backend.evaluate(circuit, inputs)?;
    let wall = t.elapsed();
    let dec = out
        .iter()
        .map(|c| client.decrypt(c))
        .collect::<Result<_, _>>()?;
    Ok((dec, wall))
}

/// The operands of [`ops32`]'s operations.
const OPERANDS: (i64, i64) = (1_234_567_891, -987_654_321);

/// 32-bit add, mul, max and lt on [`OPERANDS`] in `params`'s family: Ints
/// (exact) on digits sets, signed 32-bit words (wrapping) on bits sets:
/// (label, program, Rust's result).
fn ops32(
    params: &'static ParameterSet,
    threads: usize,
) -> Result<Vec<(String, hearth::CompiledProgram, i128)>, Error> {
    let (x, y) = (OPERANDS.0 as i128, OPERANDS.1 as i128);
    let wrap = |v: i128| v as i32 as i128;
    let ops = ["add", "mul", "max", "lt"];
    let ints = hearth::digits::check_params(params).is_ok();
    let mut out = Vec::new();
    for op in ops {
        let p = Program::new(params);
        p.set_threads(threads);
        let want = match op {
            "add" => x + y,
            "mul" => x * y,
            "max" => x.max(y),
            _ => (x < y) as i128,
        };
        let (kind, want) = if ints {
            let (a, b) = (p.input(32), p.input(32));
            p.output(&match op {
                "add" => &a + &b,
                "mul" => &a * &b,
                "max" => a.max(&b),
                _ => a.lt(&b),
            });
            ("Int", want)
        } else {
            let (a, b) = (I32W::input(&p), I32W::input(&p));
            match op {
                "add" => p.output(&(&a + &b)),
                "mul" => p.output(&(&a * &b)),
                "max" => p.output(&a.max(&b)),
                _ => p.output(&a.lt(&b)),
            }
            ("i32 word", wrap(want))
        };
        out.push((format!("{op}, 32 bits ({kind})"), p.build()?, want));
    }
    Ok(out)
}

/// A signed 32-bit word.
type I32W<'p> = hearth::api::Word<'p, 32, true>;

/// `hearth bench backends`: the gpu backend (or, without one, the cpu
/// backend again) beside the cpu backend on the same keys and ciphertexts.
pub fn compare(
    params: &'static ParameterSet,
    threads: usize,
    bootstraps: usize,
    seed: u64,
    json: Option<PathBuf>,
) -> Result<(), Error> {
    let (client, server) = generate(params);
    let cpu = CpuBackend::new(&server, Some(threads))?;
    let other = evaluator(Engine::Gpu, &server, Some(threads))?;
    let mut t = Table::new(
        format!(
            "{}: {} beside cpu ({threads} threads), same keys and ciphertexts",
            params.name,
            other.describe()
        ),
        &[
            "circuit",
            "#PBS",
            "depth",
            "cpu (s)",
            "other (s)",
            "cpu / other",
            "wrong (cpu / other)",
        ],
    );
    let mut rows = Vec::new();
    let mut wrong_total = 0;
    let mut record = |label: String,
                      circuit: &Circuit,
                      inputs: &[Ciphertext],
                      want: &[u64]|
     -> Result<(), Error> {
        let (a, ta) = timed(&cpu, &client, circuit, inputs)?;
        let (b, tb) = timed(&other, &client, circuit, inputs)?;
        let wa = a.iter().zip(want).filter(|(x, y)| x != y).count();
        let wb = b.iter().zip(want).filter(|(x, y)| x != y).count();
        wrong_total += wa + wb;
        let st = circuit.stats();
        t.row(vec![
            label.clone(),
            st.pbs.to_string(),
            st.depth.to_string(),
            format!("{:.3}", ta.as_secs_f64()),
            format!("{:.3}", tb.as_secs_f64()),
            format!("{:.2}", ta.as_secs_f64() / tb.as_secs_f64()),
            format!("{wa} / {wb}"),
        ]);
        rows.push(json!({
            "circuit": label, "pbs": st.pbs, "depth": st.depth,
            "cpu_s": ta.as_secs_f64(), "other_s": tb.as_secs_f64(),
            "wrong_cpu": wa, "wrong_other": wb,
        }));
        Ok(())
    };
    // Random circuits of uneven level widths, 2 000 bootstraps each.
    let mut done = 0;
    let mut k = 0;
    while done < bootstraps {
        let size = (bootstraps - done).min(2000);
        let rc = random_circuit(params, seed + k, 16, size, 8)?;
        let inputs = rc.encrypt(&client)?;
        let want = ClearBackend.evaluate(&rc.circuit, &rc.inputs)?;
        record(
            format!("random, seed {}", seed + k),
            &rc.circuit,
            &inputs,
            &want,
        )?;
        done += size;
        k += 1;
    }
    // 32-bit operations of the set's family: Ints (digits) or signed words
    // (bits), each checked on the clear backend against Rust first.
    for (label, prog, want) in ops32(params, threads)? {
        let (x, y) = OPERANDS;
        let ins = match prog.input_shapes()[0] {
            hearth::Shape::Word { .. } => [
                client.encrypt_word_of(x, 32, true)?,
                client.encrypt_word_of(y, 32, true)?,
            ],
            _ => [client.encrypt_int(x, 32)?, client.encrypt_int(y, 32)?],
        };
        let clear = prog.run_clear(&[vec![x.into()], vec![y.into()]])?;
        if clear != [vec![want.into()]] {
            return Err(Error::Config(format!(
                "{label}: the clear backend gives {clear:?}, Rust {want}"
            )));
        }
        let flat: Vec<Ciphertext> = ins.iter().flat_map(|e| e.ciphertexts().to_vec()).collect();
        let clear_in: Vec<u64> = flat
            .iter()
            .map(|c| client.decrypt(c))
            .collect::<Result<_, _>>()?;
        let digits = ClearBackend.evaluate(prog.circuit(), &clear_in)?;
        record(label, prog.circuit(), &flat, &digits)?;
    }
    let value = json!({"bench": "backends", "params": params.name, "threads": threads, "other": other.describe(), "rows": rows});
    emit(json.as_deref(), &value, &[t])?;
    if wrong_total > 0 {
        return Err(Error::Config(format!(
            "{wrong_total} outputs differ from the clear backend"
        )));
    }
    Ok(())
}
