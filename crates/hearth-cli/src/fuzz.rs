//! `hearth tool fuzz-programs`: random programs of the typed integer API,
//! checked against `BigInt` arithmetic on the clear backend with the
//! `DIGITS_128` circuit rules (in parallel, no keys needed),
//! or encrypted on `DIGITS_128` against the clear backend digit for digit.
//! A failing program is shrunk to a minimal one and printed.

use std::time::Instant;

use hearth::backend::{resolve_threads, CpuBackend};
use hearth::testing::programs::{Limits, ProgramSpec};
use hearth::{Error, DIGITS_128};
use rand::SeedableRng;
use rayon::prelude::*;

use crate::keygen::{generate, steps};

/// Program `i` of a run with seed `seed`.
fn spec(seed: u64, i: u64, shape: &Limits) -> ProgramSpec {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    ProgramSpec::random(&mut rng, shape)
}

/// What `fuzz-programs` runs.
#[derive(clap::Args)]
pub struct FuzzArgs {
    /// Number of programs.
    #[arg(long, default_value_t = 10_000)]
    count: u64,
    /// Seed of the run (program i uses the seed and i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run small programs encrypted on DIGITS_128 (cpu backend).
    #[arg(long)]
    encrypted: bool,
    /// Worker threads (default: HEARTH_THREADS or all cores).
    #[arg(long, env = "HEARTH_THREADS")]
    threads: Option<usize>,
    /// Longest input, in digits (default 16; 8 with --encrypted).
    #[arg(long)]
    max_input_len: Option<usize>,
    /// Most operations per program (default 10; 6 with --encrypted).
    #[arg(long)]
    max_ops: Option<usize>,
    /// Longest value, in digits; bigger operations become negations
    /// (default 48; 24 with --encrypted).
    #[arg(long)]
    max_len: Option<usize>,
}

pub fn fuzz_programs(args: FuzzArgs) -> Result<(), Error> {
    let mut shape = if args.encrypted {
        Limits::small()
    } else {
        Limits::default()
    };
    shape.max_input_len = args.max_input_len.unwrap_or(shape.max_input_len);
    shape.max_ops = args.max_ops.unwrap_or(shape.max_ops);
    shape.max_len = args.max_len.unwrap_or(shape.max_len);
    let (count, seed) = (args.count, args.seed);
    if args.encrypted {
        return fuzz_encrypted(count, seed, args.threads, &shape);
    }
    let threads = resolve_threads(args.threads)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Config(format!("thread pool: {e}")))?;
    pool.install(|| fuzz_clear(count, seed, &shape))
}

fn fuzz_clear(count: u64, seed: u64, shape: &Limits) -> Result<(), Error> {
    let params = &DIGITS_128;
    let t = Instant::now();
    let bar = steps(count);
    let chunk = 10_000u64;
    let (mut values, mut pbs) = (0usize, 0usize);
    for start in (0..count).step_by(chunk as usize) {
        let end = (start + chunk).min(count);
        let results: Vec<(u64, Result<_, _>)> = (start..end)
            .into_par_iter()
            .map(|i| (i, spec(seed, i, shape).check(params)))
            .collect();
        for (i, r) in results {
            match r {
                Ok(c) => {
                    values += c.values;
                    pbs += c.pbs;
                }
                Err(e) => {
                    bar.finish_and_clear();
                    let s = spec(seed, i, shape);
                    let small = s.shrink(|c| c.check(params).is_err());
                    let why = small.check(params).err().map(|e| e.to_string());
                    println!("program {i} (seed {seed}) fails: {e}\n{s}");
                    println!("shrunk: {}\n{small}", why.unwrap_or_default());
                    return Err(Error::Config(format!("program {i} of seed {seed} fails")));
                }
            }
        }
        bar.set_position(end);
    }
    bar.finish_and_clear();
    println!(
        "{count} random programs (seed {seed}, {shape:?}) on the clear backend: 0 failures; \
         {values} values checked against BigInt, {pbs} bootstraps evaluated, {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}

fn fuzz_encrypted(
    count: u64,
    seed: u64,
    threads: Option<usize>,
    shape: &Limits,
) -> Result<(), Error> {
    let (client, server) = generate(&DIGITS_128);
    let cpu = CpuBackend::new(&server, threads)?;
    let t = Instant::now();
    let bar = steps(count);
    let (mut values, mut pbs) = (0usize, 0usize);
    for i in 0..count {
        let s = spec(seed, i, shape);
        match s.check_encrypted(&client, &cpu) {
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
        "{count} random programs (seed {seed}, {shape:?}) encrypted on DIGITS_128: 0 failures; \
         {values} values equal the clear backend digit for digit, {pbs} bootstraps, {:.1} s",
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
