//! `hearth bench`: the subcommands, and `pbs`, `engine` and `noise`.

use std::time::{Duration, Instant};

use clap::Subcommand;
use hearth::backend::{Backend, ClearBackend, CpuBackend};
use hearth::crypto::bootstrap::{accumulator, dense_slots, PbsScratch};
use hearth::crypto::noise::{measure_on, NoiseModel};
use hearth::crypto::params::Margin;
use hearth::testing::circuits::random_circuit;
use hearth::{
    Ciphertext, CircuitBuilder, ClientKey, Error, Lut, ParameterSet, ParamsId, ServerKey,
};
use serde_json::json;
use tfhe::core_crypto::prelude::Fft;
use tfhe::shortint::parameters::ClassicPBSParameters;

use crate::keygen::{generate, steps};
use crate::options::{JsonOut, ParamsArg, PlotOut, Threads};
use crate::report::{emit, median, ms, Table};

#[derive(Subcommand)]
pub enum Which {
    /// Single-PBS latency beside tfhe-rs shortint, and batch throughput.
    ///
    /// `--plot`: bootstraps per second against the batch size for each
    /// backend measured, and the two points of the 1-thread / T-thread
    /// scaling run.
    Pbs {
        #[command(flatten)]
        params: ParamsArg,
        /// gpu: throughput of the gpu backend beside the cpu backend's.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: crate::engine::Engine,
        #[command(flatten)]
        threads: Threads,
        /// Largest batch (powers of two from 1).
        #[arg(long, default_value_t = 1024)]
        max_batch: usize,
        /// Latency samples per side.
        #[arg(long, default_value_t = 30)]
        samples: usize,
        #[command(flatten)]
        json: JsonOut,
        #[command(flatten)]
        plot: PlotOut,
    },
    /// The gpu backend beside the cpu backend, same keys: decrypted values of
    /// random circuits and of 32-bit integer operations (each against the
    /// clear backend and plain Rust), and their times.
    Backends {
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        threads: Threads,
        /// Bootstraps of random circuits, in all (circuits of 2 000).
        #[arg(long, default_value_t = 10_000)]
        bootstraps: usize,
        /// Seed of the random circuits and inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Scheduler efficiency on random circuits with uneven level widths.
    ///
    /// `--backend mpi` (under `mpirun -np P`): the circuit over all ranks,
    /// then on the cpu backend with as many threads on rank 0, each beside
    /// the simulator's prediction.
    Engine {
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        threads: Threads,
        /// cpu, or mpi: the ranks of this launch (`--threads` per rank).
        #[arg(long, value_enum, default_value = "cpu")]
        backend: crate::engine::Engine,
        /// With mpi: cores that all ranks share (one host, oversubscribed),
        /// for the prediction; default a core per thread.
        #[arg(long)]
        cores: Option<usize>,
        /// With mpi: skip the cpu backend's run on rank 0 (when ranks are
        /// bound to their cores, rank 0 alone cannot use them all; time
        /// `bench engine --backend cpu` apart instead).
        #[arg(long)]
        no_cpu: bool,
        /// Bootstraps in the random circuit.
        #[arg(long, default_value_t = 2000)]
        bootstraps: usize,
        /// Independent computations interleaved in the circuit.
        #[arg(long, default_value_t = 8)]
        streams: usize,
        /// Seed of the random circuit and its inputs.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Predicted wall time on 1 to 64 ranks of T threads: the MPI
    /// backend's schedule replayed on a circuit's bootstraps (no keys).
    Simulate {
        /// `mul32` (a 32-digit product on DIGITS_128) or a program file
        /// (`hearth app digits --images 1 --export DIR` writes the CNN's);
        /// repeat for several.
        #[arg(long, default_value = "mul32")]
        circuit: Vec<String>,
        /// Rank counts to predict for.
        #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16,32,64")]
        ranks: Vec<usize>,
        /// Threads per rank.
        #[arg(long, default_value_t = 16)]
        threads: usize,
        /// Milliseconds per bootstrap with every thread busy (default:
        /// measured here, one thread, DIGITS_128).
        #[arg(long)]
        pbs_ms: Option<f64>,
        /// Microseconds to move one ciphertext between ranks (default: 16.4
        /// KB at 10 Gb/s).
        #[arg(long, default_value_t = 13.0)]
        transfer_us: f64,
        /// Microseconds added to each remote bootstrap (the backend's polls).
        #[arg(long, default_value_t = 400.0)]
        latency_us: f64,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Every digits operation: on the count backend beside PARMESAN, or
    /// encrypted beside tfhe-rs's FheInt.
    ///
    /// `--params` is the digits family's set for the timed comparison
    /// (DIGITS_KS32_128: the 32-bit key switch, faster on CPUs); `--family
    /// bits` runs the words on GATES_128 beside tfhe-rs's FheUint.
    ///
    /// `--plot`: on cpu, hearth / tfhe-rs time per operation and width
    /// (bars from 1.0, log scale); on count, the bootstraps ready at each
    /// level of a few operations at the largest width (seconds to draw).
    Ops {
        /// count: #PBS, depth and level widths (no keys, seconds); cpu:
        /// encrypted and timed beside tfhe-rs; gpu: on the gpu backend
        /// beside tfhe-rs's CUDA integer API (`CudaServerKey`).
        #[arg(long, value_enum, default_value = "cpu")]
        backend: crate::ops::OpsBackend,
        #[command(flatten)]
        threads: Threads,
        /// Operand sizes (default: 4,8,16,32 for count, 8,16,32 for cpu;
        /// bits family: 8,16,32,64 and 16,32).
        #[arg(long, value_delimiter = ',')]
        bits: Vec<usize>,
        /// digits (Int, DIGITS_128 beside PARMESAN and FheInt) or bits
        /// (words, GATES_128 beside FheUint and the digits family).
        #[arg(long, value_enum, default_value = "digits")]
        family: crate::fuzz::Family,
        /// How the digits family's operands are encrypted for the timed
        /// comparison: two's complement (like FheInt's) or signed-binary
        /// digits (PARMESAN's). The count backend shows both.
        #[arg(long, value_enum, default_value = "twos")]
        inputs: crate::ops::InputsArg,
        /// Timed runs of each side per operation (cpu backend), alternating
        /// hearth and tfhe-rs; the tables show the medians.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        samples: u32,
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        json: JsonOut,
        #[command(flatten)]
        plot: PlotOut,
    },
    /// Candidate parameter sets side by side: budgets and KS-PBS latency.
    Params {
        /// Latency samples per set.
        #[arg(long, default_value_t = 30)]
        samples: usize,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Issue 9's study: signed-binary against wide redundant digits
    /// (radix 4, 8) on the count backend.
    Radix {
        /// Operand sizes in bits.
        #[arg(long, value_delimiter = ',', default_value = "8,16,32,64")]
        bits: Vec<usize>,
        #[command(flatten)]
        json: JsonOut,
    },
    /// The CSA paper's kernels: dot products and convolutions, beside
    /// tfhe-rs FheUint16.
    Kernels {
        /// count: #PBS and depth of both families' forms (no keys); cpu:
        /// encrypted and timed beside tfhe-rs; gpu: the same on the gpu
        /// backend beside tfhe-rs's CUDA integer API.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: crate::ops::OpsBackend,
        #[command(flatten)]
        threads: Threads,
        /// Kernels to run, comma-separated (default: all).
        #[arg(long, value_enum, value_delimiter = ',')]
        cases: Vec<crate::kernels_bench::Case>,
        #[command(flatten)]
        json: JsonOut,
    },
    /// tfhe-rs's own #PBS per operation beside hearth's (needs a build with
    /// `--features tfhe-pbs-stats`).
    TfhePbs {
        #[command(flatten)]
        threads: Threads,
        /// Operand sizes in bits (8, 16, 32).
        #[arg(long, value_delimiter = ',', default_value = "8,16,32")]
        bits: Vec<usize>,
        #[command(flatten)]
        json: JsonOut,
    },
    /// CryptoEmu's functional units (16 and 32 bits) on the bits family:
    /// #PBS, depth, time and time in units of one bootstrap, beside the
    /// paper's latencies in units of its own.
    Emu {
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Bootstraps at the full noise budget: wrong decryptions and measured noise.
    Noise {
        #[command(flatten)]
        params: ParamsArg,
        /// gpu: every round of 4 096 bootstraps as one circuit on the gpu
        /// backend (inputs' errors computed on the CPU either way).
        #[arg(long, value_enum, default_value = "cpu")]
        backend: crate::engine::Engine,
        #[command(flatten)]
        threads: Threads,
        /// Bootstraps to run.
        #[arg(long, default_value_t = 20_000)]
        count: usize,
        /// Quadratic weight of every bootstrap input (default: the budget).
        #[arg(long)]
        weight: Option<u64>,
        /// Margin level: values 2^level units apart, margin 2^level / 2
        /// (default: the lowest level with a nonzero budget).
        #[arg(long)]
        margin: Option<usize>,
        /// Seed of the inputs.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[command(flatten)]
        json: JsonOut,
    },
}

pub fn run(which: Which) -> Result<(), Error> {
    match which {
        Which::Pbs {
            params,
            backend,
            threads,
            max_batch,
            samples,
            json,
            plot,
        } => pbs(
            params.params,
            backend,
            threads,
            max_batch,
            samples.max(3),
            json,
            plot,
        ),
        Which::Backends {
            params,
            threads,
            bootstraps,
            seed,
            json,
        } => crate::engine::compare(
            params.params,
            threads.resolve()?,
            bootstraps,
            seed,
            json.json,
        ),
        Which::Engine {
            params,
            threads,
            backend: crate::engine::Engine::Mpi,
            cores,
            no_cpu,
            bootstraps,
            streams,
            seed,
            json,
        } => crate::scale_bench::mpi_engine(
            params.params,
            threads,
            bootstraps,
            (streams, seed),
            cores,
            !no_cpu,
            json,
        ),
        Which::Engine {
            params,
            threads,
            bootstraps,
            streams,
            seed,
            json,
            ..
        } => engine(params.params, threads, bootstraps, streams, seed, json),
        Which::Simulate {
            circuit,
            ranks,
            threads,
            pbs_ms,
            transfer_us,
            latency_us,
            json,
        } => crate::scale_bench::simulate_table(
            &circuit,
            &ranks,
            threads,
            pbs_ms,
            transfer_us,
            latency_us,
            json,
        ),
        Which::Noise {
            params,
            backend,
            threads,
            count,
            weight,
            margin,
            seed,
            json,
        } => noise(
            params.params,
            (backend, threads),
            count,
            (weight, margin),
            seed,
            json,
        ),
        Which::Params { samples, json } => crate::params_bench::params(samples, json.json),
        Which::Emu { threads, json } => crate::emu_bench::emu(threads.resolve()?, json.json),
        Which::Kernels {
            backend,
            threads,
            cases,
            json,
        } => crate::kernels_bench::kernels(backend.engine(), threads.resolve()?, &cases, json.json),
        Which::Radix { bits, json } => crate::radix_study::radix(&bits, json.json),
        Which::TfhePbs {
            threads,
            bits,
            json,
        } => {
            let threads = threads.resolve()?;
            #[cfg(feature = "tfhe-pbs-stats")]
            return crate::tfhe_pbs::tfhe_pbs(threads, &bits, json.json);
            #[cfg(not(feature = "tfhe-pbs-stats"))]
            {
                let _ = (threads, bits, json);
                Err(Error::Config(
                    "this build has no tfhe-rs PBS counter: run `cargo run --release --bin hearth \
                     --features tfhe-pbs-stats -- bench tfhe-pbs`"
                        .into(),
                ))
            }
        }
        Which::Ops {
            backend,
            threads,
            bits,
            family,
            inputs,
            samples,
            params,
            json,
            plot,
        } => {
            use crate::fuzz::Family;
            use crate::ops::OpsBackend;
            let bits = match (bits.is_empty(), backend, family) {
                (false, _, _) => bits,
                (true, OpsBackend::Count, Family::Digits) => vec![4, 8, 16, 32],
                (true, _, Family::Digits) => vec![8, 16, 32],
                (true, OpsBackend::Count, Family::Bits) => vec![8, 16, 32, 64],
                (true, _, Family::Bits) => vec![16, 32],
            };
            let timing = crate::ops::Timing {
                engine: backend.engine().unwrap_or_default(),
                threads: threads.resolve()?,
                samples: samples as usize,
            };
            match family {
                Family::Digits => {
                    crate::ops::ops(backend, timing, &bits, inputs, params.params, json, plot)
                }
                Family::Bits => crate::bits_ops::ops(backend, timing, &bits, json, plot),
            }
        }
    }
}

/// The tfhe-rs shortint parameters with the same LWE/GLWE parameters and
/// decompositions as `p` (2 message + 2 carry bits + padding is pi = 5;
/// 1 + 1 + padding is pi = 3).
fn shortint_twin(p: &ParameterSet) -> ClassicPBSParameters {
    ClassicPBSParameters {
        lwe_dimension: p.lwe_dimension,
        glwe_dimension: p.glwe_dimension,
        polynomial_size: p.polynomial_size,
        lwe_noise_distribution: p.lwe_noise,
        glwe_noise_distribution: p.glwe_noise,
        pbs_base_log: p.pbs_base_log,
        pbs_level: p.pbs_level,
        ks_base_log: p.ks_base_log,
        ks_level: p.ks_level,
        ..shortint_source(p)
    }
}

/// The unmodified tfhe-rs set `p` is derived from.
fn shortint_source(p: &ParameterSet) -> ClassicPBSParameters {
    use tfhe::shortint::parameters::v1_0::V1_0_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M40 as GATES;
    use tfhe::shortint::parameters::v1_8::{
        V1_8_PARAM_MESSAGE_1_CARRY_1_KS_PBS_TUNIFORM_2M128 as BITS,
        V1_8_PARAM_MESSAGE_2_CARRY_2_KS_PBS_TUNIFORM_2M128 as DIGITS,
    };
    match p.id {
        // The KS32 set is compared with tfhe-rs's default 64-bit pattern
        // (what `FheInt` runs), its twin being DIGITS_128's.
        ParamsId::Digits128 | ParamsId::Digits128Ks32 | ParamsId::InsecureTestDigits => DIGITS,
        ParamsId::Gates128 | ParamsId::InsecureTestBits => GATES,
        ParamsId::Bits128 => BITS,
    }
}

/// Median latency of tfhe-rs shortint's `apply_lookup_table` (identity).
struct ShortintPbs {
    client: tfhe::shortint::ClientKey,
    server: tfhe::shortint::ServerKey,
    lut: tfhe::shortint::server_key::LookupTableOwned,
    ct: tfhe::shortint::Ciphertext,
}

impl ShortintPbs {
    fn new(params: ClassicPBSParameters) -> Self {
        let (client, server) = tfhe::shortint::gen_keys(params);
        let lut = server.generate_lookup_table(|x| x);
        let ct = client.encrypt(1);
        ShortintPbs {
            client,
            server,
            lut,
            ct,
        }
    }

    fn once(&self) -> Duration {
        let t = Instant::now();
        let r = self.server.apply_lookup_table(&self.ct, &self.lut);
        let d = t.elapsed();
        assert_eq!(self.client.decrypt(&r), 1, "tfhe-rs bootstrap decrypts");
        d
    }
}

/// Median time of one KS-PBS through hearth's bootstrap on this thread.
struct RawPbs<'a> {
    server: &'a ServerKey,
    scratch: PbsScratch,
    fft: Fft,
    acc: tfhe::core_crypto::prelude::GlweCiphertextOwned<u64>,
    out: [tfhe::core_crypto::prelude::LweCiphertextOwned<u64>; 1],
    input: Vec<u64>,
}

impl<'a> RawPbs<'a> {
    fn new(client: &ClientKey, server: &'a ServerKey) -> Result<Self, Error> {
        let p = server.params();
        let fft = Fft::new(p.polynomial_size);
        let lut = Lut::negacyclic(p.pi, |x| x)?;
        Ok(RawPbs {
            server,
            scratch: PbsScratch::new(p, fft.as_view()),
            acc: accumulator(p, &dense_slots(lut.table())),
            out: [server.trivial(0)?.lwe().clone()],
            input: client.encrypt(1)?.lwe().as_ref().to_vec(),
            fft,
        })
    }

    fn once(&mut self) -> Duration {
        let t = Instant::now();
        self.scratch.input_mut().copy_from_slice(&self.input);
        self.server.bootstrap_input(
            &mut self.scratch,
            &self.acc,
            &[0],
            self.fft.as_view(),
            &mut self.out,
        );
        t.elapsed()
    }
}

/// Values are this many units apart: 2 on a set that only decodes spread
/// selectors (GATES_128: bits stored as 0 or 2), else 1.
fn spacing(params: &ParameterSet) -> i64 {
    if params.budgets.half == 0 {
        2
    } else {
        1
    }
}

/// A circuit of `n` independent bootstraps (identity on 0 and one step).
fn batch_circuit(params: &'static ParameterSet, n: usize) -> Result<hearth::Circuit, Error> {
    let mut b = CircuitBuilder::new(params);
    let s = spacing(params);
    let lut = Lut::negacyclic(params.pi, |x| x)?;
    for _ in 0..n {
        let x = b.input_with_step(0, s, s)?;
        let y = b.bootstrap(x, &lut)?;
        b.output(y)?;
    }
    Ok(b.build())
}

/// Throughput (PBS/s) of `n` independent bootstraps on `backend`, every
/// output checked; the wall time includes moving inputs and outputs.
fn throughput<B: Backend<Digit = Ciphertext>>(
    client: &ClientKey,
    backend: &B,
    n: usize,
) -> Result<(f64, Duration), Error> {
    let params = client.params();
    let circuit = batch_circuit(params, n)?;
    let s = spacing(params);
    let inputs = (0..n)
        .map(|i| client.encrypt(s * (i % 2) as i64))
        .collect::<Result<Vec<_>, _>>()?;
    let start = Instant::now();
    let out = backend.evaluate(&circuit, &inputs)?;
    let wall = start.elapsed();
    for (i, o) in out.iter().enumerate() {
        if client.decrypt(o)? != (s as u64) * (i % 2) as u64 {
            return Err(Error::Config("bench: a bootstrap decrypted wrongly".into()));
        }
    }
    Ok((n as f64 / wall.as_secs_f64(), wall))
}

/// [`throughput`] on a fresh cpu backend of `threads` threads.
pub(crate) fn cpu_throughput(
    client: &ClientKey,
    server: &ServerKey,
    threads: usize,
    n: usize,
) -> Result<(f64, Duration), Error> {
    throughput(client, &CpuBackend::new(server, Some(threads))?, n)
}

fn pbs(
    params: &'static ParameterSet,
    engine: crate::engine::Engine,
    threads: Threads,
    max_batch: usize,
    samples: usize,
    json: JsonOut,
    plot: PlotOut,
) -> Result<(), Error> {
    let threads = threads.resolve()?;
    let (client, server) = generate(params);

    // Latency: hearth, tfhe-rs on the same parameters, tfhe-rs on the
    // unmodified source set, interleaved so drift hits all alike.
    eprintln!("generating tfhe-rs shortint keys (same parameters, and source set)...");
    let twin = ShortintPbs::new(shortint_twin(params));
    let source = ShortintPbs::new(shortint_source(params));
    let mut raw = RawPbs::new(&client, &server)?;
    let (mut ours, mut theirs, mut theirs_source) = (Vec::new(), Vec::new(), Vec::new());
    raw.once();
    twin.once();
    source.once();
    let bar = steps(samples as u64);
    bar.set_message("single-PBS latency");
    for _ in 0..samples {
        ours.push(raw.once());
        theirs.push(twin.once());
        theirs_source.push(source.once());
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (ours, theirs, theirs_source) = (median(ours), median(theirs), median(theirs_source));
    let ratio = ours.as_secs_f64() / theirs.as_secs_f64();
    let ratio_source = ours.as_secs_f64() / theirs_source.as_secs_f64();

    // Throughput through the engine.
    let mut batches = Vec::new();
    let mut n = 1;
    while n <= max_batch {
        batches.push(n);
        n *= 2;
    }
    let gpu = crate::engine::gpu_only(engine, &server)?;
    let bar = steps(batches.len() as u64 + 1);
    let mut rows = Vec::new();
    if let Some(gpu) = &gpu {
        throughput(&client, gpu, 1)?; // warm-up: first launches load the kernels
    }
    for &n in &batches {
        bar.set_message(format!("batch {n} on {threads} threads"));
        let (pbs_s, wall) = cpu_throughput(&client, &server, threads, n)?;
        let on_gpu = match &gpu {
            Some(gpu) => {
                bar.set_message(format!("batch {n} on the gpu"));
                Some(throughput(&client, gpu, n)?)
            }
            None => None,
        };
        rows.push((n, wall, pbs_s, on_gpu));
        bar.inc(1);
    }
    // Speed-up: 1 thread and T threads alternating, median of 3 each, so
    // that noise from the host hits both alike.
    let scale_batch = max_batch.min(32 * threads).max(1);
    bar.set_message(format!("batch {scale_batch}: 1 thread vs {threads}"));
    let (mut ones, mut manys) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        ones.push(cpu_throughput(&client, &server, 1, scale_batch)?.0);
        manys.push(cpu_throughput(&client, &server, threads, scale_batch)?.0);
    }
    ones.sort_by(f64::total_cmp);
    manys.sort_by(f64::total_cmp);
    let (one, many) = (ones[1], manys[1]);
    bar.finish_and_clear();

    let mut lat = Table::new(
        format!(
            "{}: single KS-PBS latency, median of {samples} (1 thread)",
            params.name
        ),
        &[
            "hearth (ms)",
            "tfhe-rs shortint, same parameters (ms)",
            "ratio",
            "tfhe-rs shortint, source set (ms)",
            "ratio",
        ],
    );
    lat.row(vec![
        ms(ours),
        ms(theirs),
        format!("{ratio:.3}"),
        ms(theirs_source),
        format!("{ratio_source:.3}"),
    ]);
    let mut thr = match gpu {
        Some(_) => Table::new(
            format!(
                "{}: throughput, gpu backend beside the cpu backend on {threads} threads (inputs and outputs moved included)",
                params.name
            ),
            &[
                "batch",
                "cpu wall (ms)",
                "cpu PBS/s",
                "gpu wall (ms)",
                "gpu PBS/s",
                "gpu / cpu",
            ],
        ),
        None => Table::new(
            format!("{}: engine throughput on {threads} threads", params.name),
            &["batch", "wall (ms)", "PBS/s"],
        ),
    };
    for (n, wall, p, on_gpu) in &rows {
        let mut row = vec![n.to_string(), ms(*wall), format!("{p:.1}")];
        if let Some((gp, gwall)) = on_gpu {
            row.extend([ms(*gwall), format!("{gp:.1}"), format!("{:.2}", gp / p)]);
        }
        thr.row(row);
    }
    let mut scale = Table::new(
        format!(
            "{}: scaling at batch {scale_batch} (median of 3 alternating runs)",
            params.name
        ),
        &[
            "PBS/s, 1 thread",
            &format!("PBS/s, {threads} threads"),
            "speed-up",
        ],
    );
    scale.row(vec![
        format!("{one:.1}"),
        format!("{many:.1}"),
        format!("{:.2}", many / one),
    ]);
    let value = json!({
        "bench": "pbs",
        "params": params.name,
        "threads": threads,
        "latency_ms": {
            "hearth": ours.as_secs_f64() * 1e3,
            "tfhe_rs_same_params": theirs.as_secs_f64() * 1e3,
            "ratio": ratio,
            "tfhe_rs_source_set": theirs_source.as_secs_f64() * 1e3,
            "ratio_source": ratio_source,
        },
        "throughput": rows.iter().map(|(n, w, p, g)| json!({
            "batch": n,
            "wall_ms": w.as_secs_f64() * 1e3,
            "pbs_per_s": p,
            "gpu_wall_ms": g.map(|(_, gw)| gw.as_secs_f64() * 1e3),
            "gpu_pbs_per_s": g.map(|(gp, _)| gp),
        })).collect::<Vec<_>>(),
        "scaling": {"batch": scale_batch, "one_thread_pbs_per_s": one, "threads_pbs_per_s": many, "speedup": many / one},
    });
    emit(json.json.as_deref(), &value, &[lat, thr, scale])?;
    if let Some(path) = &plot.plot {
        let mut series = vec![crate::plot::Series {
            name: format!("cpu, {}, by batch", crate::plot::threads_word(threads)),
            points: rows.iter().map(|(n, _, p, _)| (*n as f64, *p)).collect(),
        }];
        if rows.iter().any(|r| r.3.is_some()) {
            series.push(crate::plot::Series {
                name: "gpu, by batch".into(),
                points: rows
                    .iter()
                    .filter_map(|(n, _, _, g)| Some((*n as f64, g.as_ref()?.0)))
                    .collect(),
            });
        }
        for (t, v) in [(1, one), (threads, many)] {
            series.push(crate::plot::Series {
                name: format!(
                    "cpu, {}, batch {scale_batch}, median of 3",
                    crate::plot::threads_word(t)
                ),
                points: vec![(scale_batch as f64, v)],
            });
        }
        let title = format!(
            "bench pbs: {} throughput, {threads} threads, {}",
            params.name,
            crate::plot::today()
        );
        crate::plot::save(path, &crate::plot::throughput(&title, &series)?)?;
    }
    Ok(())
}

fn engine(
    params: &'static ParameterSet,
    threads: Threads,
    bootstraps: usize,
    streams: usize,
    seed: u64,
    json: JsonOut,
) -> Result<(), Error> {
    let threads = threads.resolve()?;
    let rc = random_circuit(params, seed, 16, bootstraps, streams)?;
    let stats = rc.circuit.stats();
    let (client, server) = generate(params);
    let mut raw = RawPbs::new(&client, &server)?;
    raw.once();
    // Single-PBS time sampled before and after the run: the host's speed drifts.
    let mut samples: Vec<Duration> = (0..15).map(|_| raw.once()).collect();

    let inputs = rc.encrypt(&client)?;
    let bar = crate::keygen::pbs_bar(stats.pbs);
    bar.set_message(format!("on {threads} threads"));
    let cpu = crate::keygen::cpu_with_bar(&server, threads, &bar)?;
    let (out, report) = cpu.run(&rc.circuit, &inputs)?;
    bar.finish_and_clear();
    samples.extend((0..15).map(|_| raw.once()));
    let single = median(samples);
    let expected = ClearBackend.evaluate(&rc.circuit, &rc.inputs)?;
    let wrong = crate::scale_bench::wrong(&client, &out, &expected)?;

    let bound = single.as_secs_f64() * stats.pbs as f64 / threads as f64;
    let wall = report.wall.as_secs_f64();
    let efficiency = bound / wall;
    let widths = &stats.width_per_level;
    let mut t = Table::new(
        format!(
            "{}: engine on a random circuit ({streams} streams, seed {seed}), {threads} threads",
            params.name
        ),
        &[
            "#PBS",
            "depth",
            "level widths min / median / max",
            "single PBS (ms, median before + after)",
            "bound #PBS x PBS / T (s)",
            "wall (s)",
            "wall / bound",
            "throughput vs bound",
            "peak live (run / level order)",
            "wrong outputs",
        ],
    );
    let mut sorted = widths.clone();
    sorted.sort();
    t.row(vec![
        stats.pbs.to_string(),
        stats.depth.to_string(),
        format!(
            "{} / {} / {}",
            sorted[0],
            sorted[sorted.len() / 2],
            sorted[sorted.len() - 1]
        ),
        ms(single),
        format!("{bound:.2}"),
        format!("{wall:.2}"),
        format!("{:.3}", wall / bound),
        format!("{:.1}%", efficiency * 100.0),
        format!("{} / {}", report.peak_live, stats.peak_live),
        wrong.to_string(),
    ]);
    let value = json!({
        "bench": "engine",
        "params": params.name,
        "threads": threads,
        "seed": seed,
        "streams": streams,
        "stats": stats,
        "single_pbs_ms": single.as_secs_f64() * 1e3,
        "bound_s": bound,
        "wall_s": wall,
        "wall_over_bound": wall / bound,
        "peak_live_run": report.peak_live,
        "wrong_outputs": wrong,
    });
    emit(json.json.as_deref(), &value, &[t])?;
    if wrong > 0 {
        return Err(Error::Config(format!(
            "{wrong} outputs differ from the clear backend"
        )));
    }
    Ok(())
}

fn noise(
    params: &'static ParameterSet,
    (engine, threads): (crate::engine::Engine, Threads),
    count: usize,
    (weight, margin): (Option<u64>, Option<usize>),
    seed: u64,
    json: JsonOut,
) -> Result<(), Error> {
    if engine == crate::engine::Engine::Mpi {
        return Err(Error::Config(
            "bench noise runs on cpu or gpu, not mpi".into(),
        ));
    }
    let threads = threads.resolve()?;
    let level = match margin {
        Some(l) => *Margin::ALL.get(l).ok_or_else(|| {
            Error::Config(format!(
                "margin level {l} is not one of 0..{}",
                Margin::ALL.len()
            ))
        })?,
        None => Margin::ALL
            .into_iter()
            .find(|&m| params.budgets.at(m) > 0)
            .unwrap_or(Margin::Half),
    };
    let budget = params.budgets.at(level);
    let qw = weight.unwrap_or(budget);
    if qw == 0 {
        return Err(Error::Config(format!(
            "{} has no budget at margin {level}",
            params.name
        )));
    }
    let (client, server) = generate(params);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(e.to_string()))?;
    let bar = steps(count as u64);
    bar.set_message(format!("bootstraps at quadratic weight {qw}"));
    let progress = bar.clone();
    let gpu = crate::engine::gpu_only(engine, &server)?;
    let on = match &gpu {
        Some(g) => g.describe(),
        None => format!("cpu, {threads} threads"),
    };
    let r = pool.install(|| {
        measure_on(
            &client,
            &server,
            gpu.as_ref(),
            qw,
            level,
            count,
            seed,
            &move |d| progress.set_position(d as u64),
        )
    })?;
    bar.finish_and_clear();
    let model = NoiseModel::of(params);
    let mut t = Table::new(
        format!(
            "{}: {} bootstraps at quadratic weight {qw}, margin {level} (budget {budget}), on {on}",
            params.name, r.bootstraps
        ),
        &["quantity", "measured", "predicted (tfhe-rs formulas)"],
    );
    let log2 = |x: f64| format!("2^{:.2}", x.log2());
    t.row(vec![
        "wrong decryptions".into(),
        r.wrong.to_string(),
        "0".into(),
    ]);
    t.row(vec![
        "std of a fresh PBS output".into(),
        log2(r.pbs_std_measured),
        log2(r.pbs_std_predicted),
    ]);
    t.row(vec![
        "std at the blind-rotation input".into(),
        log2(r.input_std_measured),
        log2(r.input_std_predicted),
    ]);
    t.row(vec![
        "mean at the blind-rotation input".into(),
        format!(
            "{:.3} / 2N",
            r.input_mean_measured * 2.0 * params.polynomial_size.0 as f64
        ),
        "-".into(),
    ]);
    t.row(vec![
        "log2 p_fail at this weight".into(),
        format!("{:.1} (from measured std)", {
            let m = NoiseModel {
                pbs: 0.0,
                keyswitch: r.input_std_measured.powi(2),
                modulus_switch: 0.0,
            };
            m.log2_p_fail(params.pi - level.log2_spacing(), 0.0)
        }),
        format!(
            "{:.1}",
            model.log2_p_fail(params.pi - level.log2_spacing(), qw as f64)
        ),
    ]);
    t.row(vec![
        "time (s)".into(),
        format!("{:.1}", r.seconds),
        "-".into(),
    ]);
    let value = json!({"bench": "noise", "on": on, "threads": threads, "report": r});
    emit(json.json.as_deref(), &value, &[t])?;
    if r.wrong > 0 {
        return Err(Error::Config(format!("{} wrong decryptions", r.wrong)));
    }
    Ok(())
}
