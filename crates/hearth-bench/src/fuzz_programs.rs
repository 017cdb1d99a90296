//! `hearth-bench fuzz-programs`: random programs of the typed API, checked
//! on the clear backend against plain arithmetic (in parallel, no keys
//! needed): `Int` programs against `BigInt` (`--family int`, the
//! `DIGITS_128` rules), word programs against Rust's wrapping integers
//! (`--family words`, alternately on the rules of `GATES_128` and of
//! `DIGITS_128`, the key words share with `Int`, and planned alternately
//! for 2 and 16 threads). With `--encrypted`, small programs run on real keys and
//! must equal the clear backend ciphertext for ciphertext. A failing
//! program is shrunk to a minimal one and printed.

use std::fmt::Display;
use std::time::Instant;

use hearth::{ClientKey, Error, ParameterSet, DIGITS_128, GATES_128};
use hearth_testkit::programs::{Checked, Failure, Limits, ProgramSpec};
use hearth_testkit::word_programs::WordSpec;
use rand::SeedableRng;
use rayon::prelude::*;

use hearth::backend::Evaluator;
use hearth_cli::options::{BackendArg, Family, FamilyArg, Threads};
use hearth_cli::progress::{generate, steps};

/// What `fuzz-programs` runs.
#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Number of programs.
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    count: u64,
    /// Seed of the run (program i uses the seed and i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    #[command(flatten)]
    family: FamilyArg,
    /// Run small programs encrypted (on `--backend`).
    #[arg(long)]
    encrypted: bool,
    #[command(flatten)]
    backend: BackendArg,
    #[command(flatten)]
    threads: Threads,
    /// Digits: longest input (default 16; 8 with --encrypted).
    #[arg(long, value_name = "N")]
    max_input_len: Option<usize>,
    /// Most operations per program (default: digits 10, bits 8; with
    /// --encrypted 6 and 3).
    #[arg(long, value_name = "N")]
    max_ops: Option<usize>,
    /// Digits: longest value; bigger operations become negations (default
    /// 48; 24 with --encrypted).
    #[arg(long, value_name = "N")]
    max_len: Option<usize>,
}

/// A random program of one family.
trait Spec: Display + Sized + Send + Sync {
    fn make(seed: u64, i: u64, args: &FuzzArgs) -> Self;
    fn check(&self) -> Result<Checked, Failure>;
    fn check_encrypted(&self, client: &ClientKey, on: &Evaluator) -> Result<Checked, Failure>;
    fn shrunk(&self) -> Self;
    /// The parameter sets whose rules the clear backend checks.
    const RULES: &'static str;
}

fn rng(seed: u64, i: u64) -> rand::rngs::StdRng {
    rand::rngs::StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

fn limits(args: &FuzzArgs) -> Limits {
    let mut l = if args.encrypted {
        Limits::small()
    } else {
        Limits::default()
    };
    l.max_input_len = args.max_input_len.unwrap_or(l.max_input_len);
    l.max_ops = args.max_ops.unwrap_or(l.max_ops);
    l.max_len = args.max_len.unwrap_or(l.max_len);
    l
}

impl Spec for ProgramSpec {
    const RULES: &'static str = "DIGITS_128";
    fn make(seed: u64, i: u64, args: &FuzzArgs) -> Self {
        ProgramSpec::random(&mut rng(seed, i), &limits(args))
    }
    fn check(&self) -> Result<Checked, Failure> {
        ProgramSpec::check(self, &DIGITS_128)
    }
    fn check_encrypted(&self, client: &ClientKey, on: &Evaluator) -> Result<Checked, Failure> {
        ProgramSpec::check_encrypted(self, client, on)
    }
    fn shrunk(&self) -> Self {
        self.shrink(|c| Spec::check(c).is_err())
    }
}

/// Word programs alternate between planning for 2 and 16 threads (other
/// algorithms), by the parity of their first input.
fn word_threads(spec: &WordSpec) -> usize {
    if spec.inputs.first().is_some_and(|x| x % 2 == 1) {
        16
    } else {
        2
    }
}

/// On the clear backend word programs alternate between GATES_128 and
/// DIGITS_128 (the key they share with `Int`: other gate forms, packed
/// comparisons), by the parity of their last input.
fn word_params(spec: &WordSpec) -> &'static ParameterSet {
    if spec.inputs.last().is_some_and(|x| (x >> 1) % 2 == 1) {
        &DIGITS_128
    } else {
        &GATES_128
    }
}

impl Spec for WordSpec {
    const RULES: &'static str = "GATES_128 and DIGITS_128";
    fn make(seed: u64, i: u64, args: &FuzzArgs) -> Self {
        let ops = args.max_ops.unwrap_or(if args.encrypted { 3 } else { 8 });
        let mut s = WordSpec::random(&mut rng(seed, i), ops);
        if args.encrypted {
            s.bits = 8;
            s.inputs.iter_mut().for_each(|x| *x &= 0xff);
        }
        s
    }
    fn check(&self) -> Result<Checked, Failure> {
        WordSpec::check(self, word_params(self), word_threads(self))
    }
    fn check_encrypted(&self, client: &ClientKey, on: &Evaluator) -> Result<Checked, Failure> {
        WordSpec::check_encrypted(self, client, on, word_threads(self))
    }
    fn shrunk(&self) -> Self {
        self.shrink(|c| Spec::check(c).is_err())
    }
}

pub fn fuzz_programs(args: FuzzArgs) -> Result<(), Error> {
    match args.family.family {
        Family::Int => run::<ProgramSpec>(&args, &DIGITS_128),
        Family::Words => run::<WordSpec>(&args, &GATES_128),
    }
}

fn run<S: Spec>(args: &FuzzArgs, params: &'static ParameterSet) -> Result<(), Error> {
    if args.encrypted {
        return fuzz_encrypted::<S>(args, params);
    }
    let threads = args.threads.resolve()?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("thread pool: {e}")))?;
    pool.install(|| fuzz_clear::<S>(args))
}

fn fail<S: Spec>(args: &FuzzArgs, i: u64, e: &Failure) -> Error {
    let s = S::make(args.seed, i, args);
    let small = s.shrunk();
    let why = small
        .check()
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    println!("program {i} (seed {}) fails: {e}\n{s}", args.seed);
    println!("shrunk: {why}\n{small}");
    Error::Config(format!("program {i} of seed {} fails", args.seed))
}

fn fuzz_clear<S: Spec>(args: &FuzzArgs) -> Result<(), Error> {
    let (count, seed) = (args.count, args.seed);
    let t = Instant::now();
    let bar = steps(count);
    // Without a terminal (no bar) a line per chunk on stderr says how far
    // the run got, so that a run stopped by a time limit still counts.
    let checkpoints = bar.is_hidden();
    let chunk = 1_000u64;
    let (mut values, mut pbs) = (0usize, 0usize);
    for start in (0..count).step_by(chunk as usize) {
        let end = (start + chunk).min(count);
        let results: Vec<(u64, Result<Checked, Failure>)> = (start..end)
            .into_par_iter()
            .map(|i| (i, S::make(seed, i, args).check()))
            .collect();
        for (i, r) in results {
            match r {
                Ok(c) => {
                    values += c.values;
                    pbs += c.pbs;
                }
                Err(e) => {
                    bar.finish_and_clear();
                    return Err(fail::<S>(args, i, &e));
                }
            }
        }
        bar.set_position(end);
        if checkpoints && end < count {
            eprintln!(
                "programs 0..{end} of {count} (seed {seed}): 0 failures, {values} values, \
                 {pbs} bootstraps, {:.1} s",
                t.elapsed().as_secs_f64()
            );
        }
    }
    bar.finish_and_clear();
    println!(
        "{count} random {} programs (seed {seed}, {} rules) on the clear backend: 0 failures; \
         {values} values checked against plain arithmetic, {pbs} bootstraps evaluated, {:.1} s",
        args.family.family,
        S::RULES,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn fuzz_encrypted<S: Spec>(args: &FuzzArgs, params: &'static ParameterSet) -> Result<(), Error> {
    let (count, seed) = (args.count, args.seed);
    let (client, server) = generate(params);
    if args.backend.backend == hearth::backend::Engine::Mpi {
        return Err(Error::Config(
            "fuzz-programs --encrypted runs on cpu or gpu, not mpi".into(),
        ));
    }
    let on = hearth_cli::backend::evaluator(args.backend.backend, &server, args.threads.get())?;
    let t = Instant::now();
    let bar = steps(count);
    let (mut values, mut pbs) = (0usize, 0usize);
    for i in 0..count {
        let s = S::make(seed, i, args);
        match s.check_encrypted(&client, &on) {
            Ok(c) => {
                values += c.values;
                pbs += c.pbs;
            }
            Err(e) => {
                bar.finish_and_clear();
                println!("program {i} (seed {seed}) fails encrypted: {e}\n{s}");
                return Err(Error::Config(format!("program {i} of seed {seed} fails")));
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    println!(
        "{count} random {} programs (seed {seed}) encrypted on {} ({}): 0 failures; {values} values \
         equal the clear backend ciphertext for ciphertext, {pbs} bootstraps, {:.1} s",
        args.family.family,
        params.name,
        on.describe(),
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
