//! `hearth-bench`: hearth's benchmarks, each beside tfhe-rs or the
//! papers' figures in the same run: markdown tables on stdout, `--json`
//! and `--plot` files. Each benchmark is in the module named for it; the
//! options, backends and progress bars are the `hearth` command's
//! (`hearth_cli`). `hearth bench ARGS` runs this binary.

// Without the feature `tfhe-rs` (the test command's build) the helpers of
// the comparisons (ratio plots, references, timing options) go unused.
#![cfg_attr(not(feature = "tfhe-rs"), allow(dead_code))]

mod backends;
mod bits_ops;
mod budgets;
mod catalog;
mod emu;
mod engine;
mod fleet;
mod fuzz_programs;
mod kernels;
mod noise;
mod ops;
mod packing;
mod params;
mod pbs;
mod pbs_cpu;
mod pke;
mod plot;
mod programs;
mod radix;
mod report;
mod scale;
mod serve;
mod serve_mpi;
#[cfg(target_os = "linux")]
mod soak;
mod tfhe;
#[cfg(feature = "tfhe-pbs-stats")]
mod tfhe_pbs;
mod transcipher;
mod uploads;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use hearth::backend::Engine;
use hearth::Error;
use hearth_cli::cluster;
use hearth_cli::options::{engine_parser, parse_duration, Family, ParamsArg, Threads};

use crate::plot::PlotOut;
use crate::report::JsonOut;

#[derive(Parser)]
#[command(
    name = "hearth-bench",
    version,
    about = "hearth's benchmarks (markdown tables on stdout; --json FILE also writes JSON, `-` for stdout)"
)]
struct Cli {
    #[command(subcommand)]
    which: Which,
}

#[derive(Subcommand)]
enum Which {
    /// Check random programs of the typed integer API against BigInt
    /// arithmetic and Rust's integers (clear backend), or encrypted
    /// against the clear backend. A failure is shrunk and printed.
    FuzzPrograms(fuzz_programs::FuzzArgs),
    /// The compute server under load, in this process on loopback: tiny
    /// jobs per second from 8 clients, a small job's latency behind
    /// another key's 20 large ones, and jobs that each fill the pool; the
    /// scheduler (--max-jobs = --threads) beside one job at a time.
    Server {
        #[command(flatten)]
        threads: Threads,
        /// Runs of every case on each server; the tables show the medians.
        #[arg(long, value_name = "N", default_value_t = 3)]
        samples: usize,
        /// Tiny jobs per client (8 clients) in the throughput case.
        #[arg(long, value_name = "N", default_value_t = 20)]
        jobs: usize,
        /// Large jobs queued ahead of the tiny one (1 to 255); at most 8 of
        /// them are the pool-filling jobs run at once.
        #[arg(long, value_name = "N", default_value_t = 20)]
        large: usize,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Servers sharing one PostgreSQL database (a throwaway cluster,
    /// needs PostgreSQL installed) and one blob folder, in this process:
    /// tiny jobs per second and the CPU per job on one server with the
    /// files store and on fleets of 1, 2 and 3 servers; and a prediction
    /// for servers on machines of their own.
    Fleet {
        #[command(flatten)]
        threads: Threads,
        /// Rounds of every case; the tables show the medians.
        #[arg(long, value_name = "N", default_value_t = 3)]
        samples: usize,
        /// Tiny jobs per client (8 clients).
        #[arg(long, value_name = "N", default_value_t = 10)]
        jobs: usize,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Jobs per second of `hearth server --backend mpi` on 2 ranks x 1
    /// thread beside the cpu backend on 1 x 2 (and mpi on 1 x 2): rounds
    /// of regression jobs on DIGITS_128, alternating between the servers.
    /// Needs mpirun and a `hearth` built with `--features mpi`.
    ServerMpi {
        /// The `hearth` binary to serve with (built with the `mpi`
        /// feature).
        #[arg(long, value_name = "FILE", default_value = "target/release/hearth")]
        hearth: std::path::PathBuf,
        /// Jobs per round on each server.
        #[arg(long, value_name = "N", default_value_t = 4)]
        jobs: usize,
        /// Rounds; the table shows the medians.
        #[arg(long, value_name = "N", default_value_t = 3)]
        samples: usize,
        #[command(flatten)]
        json: JsonOut,
    },
    /// `hearth server` for a long while (a child process, loopback only)
    /// under 4 tenants' clients, whose every result is checked against
    /// Rust's integers, and hostile clients at once (stalled connections,
    /// output bombs, compact-bundle and key amplification, zero-bootstrap
    /// fills, downloads never read, uploads at 1 byte/s); killed with
    /// `kill -9` halfway and restarted on its folder. Writes samples.json,
    /// summary.md and footprint.svg (memory and descriptors over time)
    /// into --out. Linux only (it reads /proc).
    Soak {
        /// How long to run, in minutes (fractions allowed: 0.5 is 30 s).
        #[arg(long, value_name = "N", default_value_t = 20.0)]
        minutes: f64,
        /// The `hearth` binary that serves (default: the one beside this
        /// program).
        #[arg(long, value_name = "FILE")]
        hearth: Option<std::path::PathBuf>,
        /// The folder to write the results into (made if missing).
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
        /// The server's `--key-cache` (default: the server's own, 4): with
        /// 5 tenants' keys, a cache of 4 decompresses keys again and again.
        #[arg(long, value_name = "N")]
        key_cache: Option<usize>,
    },
    /// Single-PBS latency beside tfhe-rs shortint, and batch throughput.
    ///
    /// `--plot`: bootstraps per second against the batch size for each
    /// backend measured, and the two points of the 1-thread / T-thread
    /// scaling run.
    Pbs {
        #[command(flatten)]
        params: ParamsArg,
        /// gpu: throughput of the gpu backend beside the cpu backend's.
        #[arg(long, value_parser = engine_parser(), default_value = "cpu")]
        backend: Engine,
        #[command(flatten)]
        threads: Threads,
        /// Largest batch (powers of two from 1).
        #[arg(long, value_name = "N", default_value_t = 1024)]
        max_batch: usize,
        /// Latency samples per side.
        #[arg(long, value_name = "N", default_value_t = 30)]
        samples: usize,
        #[command(flatten)]
        json: JsonOut,
        #[command(flatten)]
        plot: PlotOut,
    },
    /// One KS-PBS on a CPU thread by parts (key switch, modulus switch,
    /// rotation: decomposition, transforms, products; extraction), alone
    /// and with a second thread bootstrapping at once; then bootstraps per
    /// second when groups of m inputs share one pass over the keys, beside
    /// m standard bootstraps, on 1 and 2 threads (outputs checked bit for
    /// bit). docs/results/bootstrap-cpu.md.
    PbsCpu {
        /// Parameter set (a classical one with k = 1 and one level).
        #[arg(
            long = "params",
            value_name = "NAME",
            default_value = "DIGITS_KS32_128",
            value_parser = hearth_cli::options::ParamsParser
        )]
        params: &'static hearth::ParameterSet,
        /// Group sizes m (comma-separated).
        #[arg(
            long,
            value_name = "N",
            value_delimiter = ',',
            default_value = "1,2,4,8"
        )]
        groups: Vec<usize>,
        /// Batch sizes of independent bootstraps for the cpu backend's
        /// table (comma-separated).
        #[arg(
            long,
            value_name = "N",
            value_delimiter = ',',
            default_value = "4,8,16,64"
        )]
        batches: Vec<usize>,
        /// Alternating rounds; the tables show medians.
        #[arg(long, value_name = "N", default_value_t = 7)]
        rounds: usize,
        /// Repetitions of each part per profile round.
        #[arg(long, value_name = "N", default_value_t = 3)]
        reps: usize,
        #[command(flatten)]
        json: JsonOut,
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
        #[arg(long, value_name = "N", default_value_t = 10_000)]
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
        #[arg(long, value_parser = engine_parser(), default_value = "cpu")]
        backend: Engine,
        /// With mpi: cores that all ranks share (one host, oversubscribed),
        /// for the prediction; default a core per thread.
        #[arg(long, value_name = "N")]
        cores: Option<usize>,
        /// With mpi: skip the cpu backend's run on rank 0 (when ranks are
        /// bound to their cores, rank 0 alone cannot use them all; time
        /// `bench engine --backend cpu` apart instead).
        #[arg(long)]
        no_cpu: bool,
        /// Bootstraps in the random circuit.
        #[arg(long, value_name = "N", default_value_t = 2000)]
        bootstraps: usize,
        /// Independent computations interleaved in the circuit.
        #[arg(long, value_name = "N", default_value_t = 8)]
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
        #[arg(long, value_name = "CIRCUIT", default_value = "mul32")]
        circuit: Vec<String>,
        /// Rank counts to predict for.
        #[arg(
            long,
            value_name = "N",
            value_delimiter = ',',
            default_value = "1,2,4,8,16,32,64"
        )]
        ranks: Vec<usize>,
        /// Threads of each rank.
        #[arg(long, value_name = "N", default_value_t = 16)]
        threads_per_rank: usize,
        /// Time of one bootstrap with every thread busy (default: measured
        /// here, one thread, DIGITS_128).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        pbs: Option<Duration>,
        /// Time to move one ciphertext between ranks (the default is 16.4
        /// KB at 10 Gb/s).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "13us")]
        transfer: Duration,
        /// Time added to each remote bootstrap (the backend's polls).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "400us")]
        latency: Duration,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Every digits operation: on the count backend beside PARMESAN, or
    /// encrypted beside tfhe-rs's FheInt.
    ///
    /// `--params` is the digits family's set for the timed comparison
    /// (DIGITS_KS32_128: the 32-bit key switch, faster on CPUs); `--family
    /// words` runs the words on GATES_128 beside tfhe-rs's FheUint, and on
    /// the count backend also on `--params` (the key words share with
    /// `Int`).
    ///
    /// `--plot`: on cpu, hearth / tfhe-rs time per operation and width
    /// (bars from 1.0, log scale); on count, the bootstraps ready at each
    /// level of a few operations at the largest width (seconds to draw).
    Ops {
        /// count: #PBS, depth and level widths (no keys, seconds); cpu:
        /// encrypted and timed beside tfhe-rs; gpu: on the gpu backend
        /// beside tfhe-rs's CUDA integer API (`CudaServerKey`).
        #[arg(long, value_parser = crate::ops::OpsBackend::parser(), default_value = "cpu")]
        backend: crate::ops::OpsBackend,
        #[command(flatten)]
        threads: Threads,
        /// Operand sizes (default: 4,8,16,32 for count, 8,16,32 for cpu;
        /// words: 8,16,32,64 and 16,32).
        #[arg(long, value_delimiter = ',')]
        bits: Vec<usize>,
        /// int (`Int`, DIGITS_128 beside PARMESAN and FheInt) or words
        /// (`U8` .. `I128`, GATES_128 beside FheUint and the one key).
        #[arg(long, value_enum, default_value = "int")]
        family: Family,
        /// How the digits family's operands are encrypted for the timed
        /// comparison: two's complement (like FheInt's) or signed-binary
        /// digits (PARMESAN's). The count backend shows both.
        #[arg(long, value_name = "KIND", value_enum, default_value = "twos")]
        inputs: crate::ops::InputsArg,
        /// Timed runs of each side per operation (cpu backend), alternating
        /// hearth and tfhe-rs; the tables show the medians.
        #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
        samples: u32,
        #[command(flatten)]
        params: ParamsArg,
        /// Only these operations, by their names in the table or those
        /// names' words joined by `-` (`eq,lt,mul-wrapping` for words,
        /// `mul-wrapping,square,scalar-mul-x805` for `Int`). Default: every
        /// one.
        #[arg(long, value_name = "NAME", value_delimiter = ',')]
        ops: Vec<String>,
        #[command(flatten)]
        json: JsonOut,
        #[command(flatten)]
        plot: PlotOut,
    },
    /// Candidate parameter sets side by side: budgets and KS-PBS latency.
    Params {
        /// Latency samples per set.
        #[arg(long, value_name = "N", default_value_t = 30)]
        samples: usize,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Transciphering beside tfhe-rs's `transciphering` module (both of
    /// its CPU sets): each side's set-up once (Kreyvium's warm-up, AES's
    /// key schedule), then one unit of the owner's ciphertext (Kreyvium:
    /// 64 bits; AES-128: a 16-byte block) turned into encrypted data bits
    /// per sample, alternating, outputs checked; #PBS, depth, bytes per
    /// second.
    Transcipher {
        /// The cipher.
        #[arg(long, value_enum, value_name = "NAME", default_value = "kreyvium")]
        cipher: crate::transcipher::Cipher,
        /// cpu: encrypted and timed beside tfhe-rs; count: hearth's
        /// bootstraps and depth only, its circuits checked on the clear
        /// backend (seconds, no keys).
        #[arg(long, value_enum, default_value = "cpu")]
        backend: crate::transcipher::Run,
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        threads: Threads,
        /// Timed samples of each side, alternating; the table shows the
        /// medians.
        #[arg(long, value_name = "N", default_value_t = 3)]
        samples: usize,
        /// Seed of the key, the IV and the data.
        #[arg(long, default_value_t = 85)]
        seed: u64,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Results as they leave the server, in full and packed, beside
    /// tfhe-rs's `CompressedCiphertextList`: sizes, pack and decrypt
    /// times (one u8, one u32, the regression's output, `--values` u32s).
    Packing {
        /// How many u32 in the last row, 1 to 2000.
        #[arg(long, value_name = "N", default_value_t = 1000)]
        values: usize,
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        threads: Threads,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Upload sizes for `--bytes` of data: full LWE, the client key's
    /// seeded list, the public key's compact list, transciphered (the
    /// AES-128-CTR ciphertext in the clear), and the one-time key.
    Uploads {
        /// Bytes of data (u8 values), 1 to 8192.
        #[arg(long, value_name = "N", default_value_t = 1024)]
        bytes: usize,
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Issue 84's study of cheaper bootstraps: each circuit's bootstraps
    /// by the margin and weight they need, second keys under the main
    /// key's GLWE key (budgets, one KS-PBS each, alternating), and the
    /// time predicted on 2 threads with the bootstraps that fit on each.
    Budgets {
        /// KS-PBS samples per set (1 thread, alternating); the medians
        /// are used.
        #[arg(long, value_name = "N", default_value_t = 11)]
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
        #[arg(long, value_parser = crate::ops::OpsBackend::parser(), default_value = "cpu")]
        backend: crate::ops::OpsBackend,
        #[command(flatten)]
        threads: Threads,
        /// Kernels to run, comma-separated (default: all).
        #[arg(long, value_name = "CASE", value_enum, value_delimiter = ',')]
        cases: Vec<crate::kernels::Case>,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Whole programs (a sum, a dot product, a polynomial, an argmax, a
    /// sort, a mixing round, a CRC-16, the diabetes regression, a Hamming
    /// distance; with --suite t2, T2's TFHE benchmarks; with --suite apps,
    /// tfhe-rs's ERC7984 transfer) in hearth's words beside tfhe-rs's
    /// high-level API on both of its CPU sets, every output of both
    /// checked against plain Rust.
    Programs {
        /// count: #PBS, depth, widest level and the simulator's times for
        /// 16 and 64 threads (no keys); cpu / gpu: also encrypted on that
        /// backend beside tfhe-rs, timed.
        #[arg(long, value_parser = crate::ops::OpsBackend::parser(), default_value = "count")]
        backend: crate::ops::OpsBackend,
        #[command(flatten)]
        threads: Threads,
        /// The programs: nine (a sum, a dot product, ... a Hamming
        /// distance), t2 (T2's TFHE benchmark suite, at its word widths),
        /// apps (tfhe-rs's application benchmark: the ERC7984 transfer on
        /// u64, tfhe-rs in each of its published forms) or all.
        #[arg(long, value_enum, value_name = "NAME", default_value = "nine")]
        suite: crate::programs::Suite,
        /// Programs to run, comma-separated, of the suite (default: all of
        /// it). nine: sum, dot, horner, argmax, sort, chacha, crc16,
        /// regression, hamming. t2: t2-chi2, t2-crc8, t2-crc32, t2-hamming,
        /// t2-manhattan, t2-batcher, t2-isort, t2-jenkins, t2-mmult,
        /// t2-nn10, t2-pir8, t2-fib20, t2-euclid64. apps: erc7984.
        #[arg(long, value_name = "CASE", value_delimiter = ',')]
        cases: Vec<String>,
        /// Encrypted runs per program and library, alternating, each on new
        /// random inputs; the median is shown.
        #[arg(long, value_name = "N", default_value_t = 3)]
        samples: usize,
        /// One bootstrap's time on one thread for the predicted columns
        /// (default: measured when encrypting, else 11.5ms).
        #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
        pbs: Option<Duration>,
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        json: JsonOut,
        #[command(flatten)]
        plot: crate::plot::PlotOut,
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
        #[arg(long, value_parser = engine_parser(), default_value = "cpu")]
        backend: Engine,
        #[command(flatten)]
        threads: Threads,
        /// Bootstraps to run.
        #[arg(long, value_name = "N", default_value_t = 20_000)]
        count: usize,
        /// Quadratic weight of every bootstrap input (default: the budget).
        #[arg(long, value_name = "N")]
        weight: Option<u64>,
        /// Margin level: values 2^level units apart, margin 2^level / 2
        /// (default: the lowest level with a nonzero budget).
        #[arg(long, value_name = "N")]
        margin: Option<usize>,
        /// Seed of the inputs.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        #[command(flatten)]
        json: JsonOut,
    },
    /// Public-key encryption beside tfhe-rs's compact public key: key
    /// sizes, encryption one value at a time and as one compact list, bytes
    /// sent per value, the server's expansion. `--noise N` instead: N
    /// bootstraps of public-key inputs at the full budget, their noise
    /// measured beside the model's. Writes pke-PARAMS or noise-PARAMS
    /// (.md, .json) into --out.
    Pke {
        #[command(flatten)]
        params: ParamsArg,
        #[command(flatten)]
        threads: Threads,
        /// Value widths: hearth's unsigned words beside tfhe-rs's FheUint
        /// of each (8, 16, 32, 64).
        #[arg(
            long,
            value_name = "BITS",
            value_delimiter = ',',
            default_value = "8,32"
        )]
        bits: Vec<usize>,
        /// Values in the compact list each side encrypts.
        #[arg(long, value_name = "N", default_value_t = 1000)]
        values: usize,
        /// Timed runs of each side, alternating; the tables show the
        /// medians.
        #[arg(long, value_name = "N", default_value_t = 5)]
        samples: usize,
        /// Instead of the timings: N bootstraps of public-key inputs whose
        /// weights square to the set's budget, on the cpu backend (default
        /// without N: 2 000; the record's run: 100 000).
        #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "2000")]
        noise: Option<usize>,
        /// Seed of the values, weights and constants.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// The folder the results are written into (made if missing).
        #[arg(long, value_name = "DIR", default_value = "docs/results/pke")]
        out: std::path::PathBuf,
    },
}

fn run(which: Which) -> Result<(), Error> {
    match which {
        Which::FuzzPrograms(args) => fuzz_programs::fuzz_programs(args),
        Which::PbsCpu {
            params,
            groups,
            batches,
            rounds,
            reps,
            json,
        } => crate::pbs_cpu::pbs_cpu(params, &groups, &batches, rounds, reps, json),
        Which::Pbs {
            params,
            backend,
            threads,
            max_batch,
            samples,
            json,
            plot,
        } => crate::pbs::pbs(
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
        } => crate::backends::compare(
            params.params,
            threads.resolve()?,
            bootstraps,
            seed,
            json.json,
        ),
        Which::Engine {
            params,
            threads,
            backend: Engine::Mpi,
            cores,
            no_cpu,
            bootstraps,
            streams,
            seed,
            json,
        } => crate::scale::mpi_engine(
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
        } => crate::engine::engine(params.params, threads, bootstraps, streams, seed, json),
        Which::Simulate {
            circuit,
            ranks,
            threads_per_rank,
            pbs,
            transfer,
            latency,
            json,
        } => crate::scale::simulate_table(
            &circuit,
            &ranks,
            threads_per_rank,
            pbs.map(|d| d.as_secs_f64() * 1e3),
            transfer.as_secs_f64() * 1e6,
            latency.as_secs_f64() * 1e6,
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
        } => crate::noise::noise(
            params.params,
            (backend, threads),
            count,
            (weight, margin),
            seed,
            json,
        ),
        Which::Pke {
            params,
            threads,
            bits,
            values,
            samples,
            noise,
            seed,
            out,
        } => crate::pke::pke(crate::pke::Options {
            params: params.params,
            threads,
            bits,
            values,
            samples,
            noise,
            seed,
            out,
        }),
        Which::Server {
            threads,
            samples,
            jobs,
            large,
            json,
        } => crate::serve::server(
            threads.resolve()?,
            samples,
            crate::serve::Sizes { jobs, large },
            json.json,
        ),
        Which::Fleet {
            threads,
            samples,
            jobs,
            json,
        } => crate::fleet::fleet(threads.resolve()?, samples, jobs, json.json),
        Which::ServerMpi {
            hearth,
            jobs,
            samples,
            json,
        } => crate::serve_mpi::server_mpi(&hearth, jobs, samples, json.json),
        Which::Soak {
            minutes,
            hearth,
            out,
            key_cache,
        } => soak(minutes, hearth, out, key_cache),
        Which::Params { samples, json } => crate::params::params(samples, json.json),
        Which::Transcipher {
            cipher,
            backend,
            params,
            threads,
            samples,
            seed,
            json,
        } => crate::transcipher::transcipher(&crate::transcipher::Options {
            cipher,
            run: backend,
            params: params.params,
            threads: threads.resolve()?,
            samples,
            seed,
            json: json.json,
        }),
        Which::Uploads {
            bytes,
            params,
            json,
        } => crate::uploads::uploads(params.params, bytes, json.json.as_deref()),
        Which::Packing {
            values,
            params,
            threads,
            json,
        } => crate::packing::packing(
            params.params,
            threads.resolve()?,
            values,
            json.json.as_deref(),
        ),
        Which::Budgets { samples, json } => crate::budgets::budgets(samples, json.json),
        Which::Emu { threads, json } => crate::emu::emu(threads.resolve()?, json.json),
        Which::Kernels {
            backend,
            threads,
            cases,
            json,
        } => crate::kernels::kernels(backend.engine(), threads.resolve()?, &cases, json.json),
        Which::Radix { bits, json } => crate::radix::radix(&bits, json.json),
        Which::Programs {
            suite,
            backend,
            threads,
            cases,
            samples,
            pbs,
            params,
            json,
            plot,
        } => crate::programs::programs(crate::programs::Options {
            suite,
            engine: backend.engine(),
            params: params.params,
            threads: threads.resolve()?,
            cases: &cases,
            samples,
            pbs,
            json: json.json.as_deref(),
            plot: plot.plot.as_deref(),
        }),
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
                    "this build has no tfhe-rs PBS counter: run `cargo run --release -p \
                     hearth-bench --features tfhe-pbs-stats -- tfhe-pbs`"
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
            ops,
            json,
            plot,
        } => {
            use crate::ops::OpsBackend;
            let bits = match (bits.is_empty(), backend, family) {
                (false, _, _) => bits,
                (true, OpsBackend::Count, Family::Int) => vec![4, 8, 16, 32],
                (true, _, Family::Int) => vec![8, 16, 32],
                (true, OpsBackend::Count, Family::Words) => vec![8, 16, 32, 64],
                (true, _, Family::Words) => vec![16, 32],
            };
            let timing = crate::ops::Timing {
                engine: backend.engine().unwrap_or_default(),
                threads: threads.resolve()?,
                samples: samples as usize,
            };
            match family {
                Family::Int => {
                    let only = crate::catalog::Op::named(&ops)?;
                    let ints = crate::ops::Ints {
                        bits: &bits,
                        only: &only,
                        inputs,
                        params: params.params,
                    };
                    crate::ops::ops(backend, timing, ints, json, plot)
                }
                Family::Words => {
                    let only = crate::bits_ops::BitsOp::named(&ops)?;
                    let words = crate::bits_ops::Words {
                        bits: &bits,
                        ops: &only,
                        one_key: params.params,
                    };
                    crate::bits_ops::ops(backend, timing, words, json, plot)
                }
            }
        }
    }
}

/// `hearth-bench soak`: the options checked, `hearth` found.
#[cfg(target_os = "linux")]
fn soak(
    minutes: f64,
    hearth: Option<std::path::PathBuf>,
    out: std::path::PathBuf,
    key_cache: Option<usize>,
) -> Result<(), Error> {
    let duration = Duration::try_from_secs_f64(minutes * 60.0)
        .ok()
        .filter(|d| *d >= Duration::from_secs(10))
        .ok_or_else(|| {
            Error::Config(format!(
                "--minutes {minutes}: at least 10 s (0.17) is needed"
            ))
        })?;
    let hearth = match hearth {
        Some(h) => h,
        None => std::env::current_exe()
            .map_err(|e| Error::Config(format!("where this program is: {e}")))?
            .with_file_name("hearth"),
    };
    crate::soak::soak(&crate::soak::Options {
        duration,
        hearth,
        out,
        key_cache,
    })
}

/// `hearth-bench soak` elsewhere.
#[cfg(not(target_os = "linux"))]
fn soak(
    _: f64,
    _: Option<std::path::PathBuf>,
    _: std::path::PathBuf,
    _: Option<usize>,
) -> Result<(), Error> {
    Err(Error::Config("the soak reads /proc: Linux only".into()))
}

impl Which {
    /// The thread option of a benchmark run with `--backend mpi`.
    fn mpi_threads(&self) -> Option<Threads> {
        match self {
            Which::Engine {
                backend: Engine::Mpi,
                threads,
                ..
            } => Some(*threads),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cluster::main(cli.which.mpi_threads(), || run(cli.which))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use clap::CommandFactory;

    /// The whole tree as compiled (`tfhe-pbs` and `--backend gpu` are in
    /// every build): every benchmark and option has help, in the `hearth`
    /// command's vocabulary.
    #[test]
    fn every_option_keeps_the_vocabulary() {
        hearth_cli::help::assert_vocabulary(&Cli::command());
    }

    #[test]
    fn shared_options_parse_once_for_every_command() {
        let cli = Cli::try_parse_from([
            "hearth-bench",
            "ops",
            "--threads",
            "3",
            "--params",
            "digits_ks32_128",
            "--json",
            "-",
            "--plot",
            "ops.svg",
        ])
        .unwrap();
        let Which::Ops {
            threads,
            params,
            json,
            plot,
            ..
        } = cli.which
        else {
            panic!("parsed as another command");
        };
        assert_eq!(threads.get(), Some(3));
        assert_eq!(params.params.name, "DIGITS_KS32_128");
        assert_eq!(json.json, Some(PathBuf::from("-")));
        assert_eq!(plot.plot, Some(PathBuf::from("ops.svg")));
        for args in [
            &["hearth-bench", "noise", "--params", "insecure_test_bits"][..],
            &["hearth-bench", "pbs", "--params", "INSECURE_TEST_DIGITS"],
            &["hearth-bench", "pke", "--params", "insecure_test_digits"],
        ] {
            let e = Cli::try_parse_from(args)
                .err()
                .expect("refused")
                .to_string();
            assert!(e.contains("INSECURE") && e.contains("--params"), "{e}");
        }
        let e = Cli::try_parse_from(["hearth-bench", "pbs", "--plot", "pbs.png"])
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("*.svg"), "{e}");
    }
}
