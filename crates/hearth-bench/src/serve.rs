//! `hearth-bench server`: the compute server under load, in this process
//! on loopback with real keys (GATES_128), each case beside one job at a
//! time (`max_jobs = 1`) in the same run:
//!
//! * throughput: 8 clients submit 20 tiny jobs each (`a + b` on `U8`,
//!   8 bootstraps in a chain of 8), then fetch every result;
//! * fairness: one key's single tiny job submitted behind another key's
//!   20 large ones (`a * b` on `U8`), against the same job alone;
//! * efficiency: 8 jobs that each fill the pool (the product), all
//!   submitted at once.
//!
//! Bundles are encrypted before the clock starts; every result is
//! decrypted and checked against Rust's `u8` arithmetic after it stops.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hearth::api::U8;
use hearth::{ClientKey, CompiledProgram, Error, Program, GATES_128};
use hearth_server::{Client, Config, JobId, ServerHandle};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::{emit, in_temp_dir, median, ms, Table};

pub(crate) const CLIENTS: usize = 8;

/// How many jobs each case runs (`--jobs`, `--large`).
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// Tiny jobs per client in the throughput case (20).
    pub jobs: usize,
    /// Large jobs queued ahead of the tiny one (20); the efficiency case
    /// runs at most 8 of them at once.
    pub large: usize,
}

impl Sizes {
    fn wide(self) -> usize {
        self.large.min(8)
    }
}
/// How often clients ask for their jobs' states.
const POLL: Duration = Duration::from_millis(2);
/// How often each of the 8 throughput clients asks (8 x 40 requests a second).
pub(crate) const CLIENT_POLL: Duration = Duration::from_millis(25);

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Config(format!("server benchmark, {what}: {e}"))
}

/// A program of two `U8` inputs and one output, and the Rust it computes.
pub(crate) struct Job {
    pub(crate) prog: CompiledProgram,
    pub(crate) bytes: Vec<u8>,
    pub(crate) op: fn(u8, u8) -> u8,
}

impl Job {
    pub(crate) fn new(
        f: for<'p> fn(&U8<'p>, &U8<'p>) -> U8<'p>,
        op: fn(u8, u8) -> u8,
    ) -> Result<Job, Error> {
        let p = Program::new(&GATES_128);
        let (a, b) = (U8::input(&p), U8::input(&p));
        p.output(&f(&a, &b));
        let prog = p.build()?;
        let bytes = prog.to_bytes()?;
        Ok(Job { prog, bytes, op })
    }

    pub(crate) fn bundle(&self, key: &ClientKey, a: u8, b: u8) -> Result<Vec<u8>, Error> {
        let inputs = [vec![BigInt::from(a)], vec![BigInt::from(b)]];
        key.encrypt_bundle(&self.prog.signature().inputs, &inputs)?
            .to_bytes()
    }
}

/// A server on a fresh folder under `root` with both keys registered.
struct Bench {
    handle: ServerHandle,
    api: Client,
    max_jobs: usize,
}

impl Bench {
    fn start(
        root: &Path,
        (threads, max_jobs): (usize, usize),
        sizes: Sizes,
        keys: &[&ClientKey],
    ) -> Result<Bench, Error> {
        let data = root.join(format!("data-{max_jobs}"));
        let _ = std::fs::remove_dir_all(&data);
        let mut config = Config::new(&data);
        config.threads = threads;
        config.max_jobs = max_jobs;
        config.max_queue = CLIENTS * sizes.jobs + sizes.large;
        let handle = hearth_server::start(config, "127.0.0.1:0").map_err(|e| failed("start", e))?;
        let api = Client::new(&handle.url()).map_err(|e| failed("client", e))?;
        for k in keys {
            let key = k.compressed_server_key().to_bytes()?;
            api.upload_key(&key).map_err(|e| failed("key upload", e))?;
        }
        Ok(Bench {
            handle,
            api,
            max_jobs,
        })
    }

    fn submit(&self, job: &Job, bundle: &[u8]) -> Result<JobId, Error> {
        Ok(self
            .api
            .submit(&job.bytes, bundle)
            .map_err(|e| failed("submit", e))?
            .job_id)
    }

    fn stop(self) -> Result<(), Error> {
        self.handle.stop().map_err(|e| failed("stop", e))
    }
}

/// Waits for `id` (asking every `poll`), fetches it, deletes it and
/// checks it against `expected`.
pub(crate) fn collect(
    api: &Client,
    key: &ClientKey,
    (id, expected): (JobId, u8),
    poll: Duration,
) -> Result<(), Error> {
    api.wait(id, poll).map_err(|e| failed("job", e))?;
    let out = api.result_bundle(id).map_err(|e| failed("result", e))?;
    api.delete(id).map_err(|e| failed("delete", e))?;
    let got = key.decrypt_bundle(&out)?[0].1[0].clone();
    if got != BigInt::from(expected) {
        return Err(failed("result", format!("{got}, expected {expected}")));
    }
    Ok(())
}

/// 8 clients x 20 tiny jobs: the seconds from the first submission to the
/// last result fetched.
fn throughput(
    bench: &Bench,
    key: &ClientKey,
    tiny: &Job,
    per_client: usize,
) -> Result<Duration, Error> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut work = Vec::new();
    for _ in 0..CLIENTS {
        let mut mine = Vec::new();
        for _ in 0..per_client {
            let (a, b): (u8, u8) = (rng.gen(), rng.gen());
            mine.push((tiny.bundle(key, a, b)?, (tiny.op)(a, b)));
        }
        work.push(mine);
    }
    let url = bench.api.url().to_string();
    let start = Instant::now();
    std::thread::scope(|s| {
        let clients: Vec<_> = work
            .iter()
            .map(|mine| {
                let url = &url;
                s.spawn(move || -> Result<(), Error> {
                    let api = Client::new(url).map_err(|e| failed("client", e))?;
                    let mut ids = Vec::new();
                    for (bundle, expected) in mine {
                        let id = api
                            .submit(&tiny.bytes, bundle)
                            .map_err(|e| failed("submit", e))?
                            .job_id;
                        ids.push((id, *expected));
                    }
                    for (id, expected) in ids {
                        collect(&api, key, (id, expected), CLIENT_POLL)?;
                    }
                    Ok(())
                })
            })
            .collect();
        clients
            .into_iter()
            .try_for_each(|c| c.join().expect("client thread"))
    })?;
    Ok(start.elapsed())
}

/// How long `id`, submitted now, takes to finish: submission to done.
fn latency(bench: &Bench, job: &Job, key: &ClientKey, (a, b): (u8, u8)) -> Result<Duration, Error> {
    let bundle = job.bundle(key, a, b)?;
    let start = Instant::now();
    let id = bench.submit(job, &bundle)?;
    bench.api.wait(id, POLL).map_err(|e| failed("job", e))?;
    let took = start.elapsed();
    collect(&bench.api, key, (id, (job.op)(a, b)), POLL)?;
    Ok(took)
}

/// Submits `n` jobs of `job` at once and waits for all: the seconds from
/// the first submission to the last done.
fn batch(bench: &Bench, job: &Job, key: &ClientKey, n: usize) -> Result<Duration, Error> {
    let bundles: Vec<_> = (0..n as u8)
        .map(|a| Ok((job.bundle(key, a, 7)?, (job.op)(a, 7))))
        .collect::<Result<_, Error>>()?;
    let start = Instant::now();
    let ids: Vec<_> = bundles
        .iter()
        .map(|(b, e)| Ok((bench.submit(job, b)?, *e)))
        .collect::<Result<_, Error>>()?;
    for (id, _) in &ids {
        bench.api.wait(*id, POLL).map_err(|e| failed("job", e))?;
    }
    let took = start.elapsed();
    for (id, expected) in ids {
        collect(&bench.api, key, (id, expected), POLL)?;
    }
    Ok(took)
}

/// The three cases on `threads` threads, each the median of `samples`
/// runs that alternate between the two servers.
pub fn server(
    threads: usize,
    samples: usize,
    sizes: Sizes,
    json_path: Option<PathBuf>,
) -> Result<(), Error> {
    if sizes.jobs == 0 || sizes.large == 0 || sizes.large > 255 {
        return Err(Error::Config(
            "--jobs must be positive, --large from 1 to 255".into(),
        ));
    }
    in_temp_dir("server", |root| {
        run(root, (threads, samples.max(1)), sizes, json_path.as_deref())
    })
}

fn run(
    root: &Path,
    (threads, samples): (usize, usize),
    sizes: Sizes,
    json_path: Option<&Path>,
) -> Result<(), Error> {
    eprintln!("generating two GATES_128 keys...");
    let (mine, theirs) = (
        ClientKey::generate(&GATES_128),
        ClientKey::generate(&GATES_128),
    );
    let tiny = Job::new(|a, b| a + b, u8::wrapping_add)?;
    let large = Job::new(|a, b| a * b, u8::wrapping_mul)?;
    let shape = |j: &Job| {
        let s = j.prog.circuit().stats();
        (s.pbs, s.depth)
    };
    // Both servers stay up (an idle pool costs nothing) and every case
    // alternates between them, so that the machine's drift falls on both.
    let benches = [
        Bench::start(root, (threads, 1), sizes, &[&mine, &theirs])?,
        Bench::start(root, (threads, threads), sizes, &[&mine, &theirs])?,
    ];
    let mut times: [[Vec<Duration>; 5]; 2] = Default::default();
    for round in 0..samples {
        for (b, bench) in benches.iter().enumerate() {
            let max_jobs = bench.max_jobs;
            eprintln!("round {}/{samples}, max_jobs {max_jobs}...", round + 1);
            let t = &mut times[b];
            t[0].push(throughput(bench, &mine, &tiny, sizes.jobs)?);
            t[1].push(latency(bench, &tiny, &theirs, (round as u8, 9))?);
            t[2].push(latency(bench, &large, &mine, (round as u8, 9))?);
            let queue: Vec<_> = (0..sizes.large as u8)
                .map(|a| Ok((large.bundle(&mine, a, 3)?, a.wrapping_mul(3))))
                .collect::<Result<_, Error>>()?;
            let queued: Vec<_> = queue
                .iter()
                .map(|(b, e)| Ok((bench.submit(&large, b)?, *e)))
                .collect::<Result<_, Error>>()?;
            t[3].push(latency(bench, &tiny, &theirs, (200, 100))?);
            for (id, expected) in queued {
                collect(&bench.api, &mine, (id, expected), POLL)?;
            }
            t[4].push(batch(bench, &large, &mine, sizes.wide())?);
        }
    }
    let mut rows = Vec::new();
    for (bench, t) in benches.into_iter().zip(times) {
        let [tput, alone, large_alone, behind, wide] = t.map(median);
        rows.push((bench.max_jobs, tput, alone, large_alone, behind, wide));
        bench.stop()?;
    }

    let jobs = (CLIENTS * sizes.jobs) as f64;
    let rate = |d: Duration| jobs / d.as_secs_f64();
    let (t_pbs, t_depth) = shape(&tiny);
    let (l_pbs, l_depth) = shape(&large);
    let base = rows[0];
    let mut table = Table::new(
        format!("The compute server on {threads} threads (GATES_128): one job at a time beside the scheduler"),
        &[
            "max_jobs",
            "tiny jobs/s",
            "vs one at a time",
            "tiny alone (ms)",
            "large alone (ms)",
            "tiny behind the large (ms)",
            "bound 2 x alone + large (ms)",
            "pool-filling jobs at once (ms)",
            "efficiency",
        ],
    );
    let mut out = Vec::new();
    for &(max_jobs, tput, alone, large_alone, behind, wide) in &rows {
        let bound = 2 * alone + large_alone;
        let efficiency = base.5.as_secs_f64() / wide.as_secs_f64();
        table.row(vec![
            max_jobs.to_string(),
            format!("{:.1}", rate(tput)),
            format!("{:.2}", rate(tput) / rate(base.1)),
            ms(alone),
            ms(large_alone),
            ms(behind),
            ms(bound),
            ms(wide),
            format!("{efficiency:.2}"),
        ]);
        out.push(json!({
            "max_jobs": max_jobs,
            "tiny_jobs": CLIENTS * sizes.jobs,
            "tiny_jobs_per_s": rate(tput),
            "throughput_ratio": rate(tput) / rate(base.1),
            "tiny_alone_ms": alone.as_secs_f64() * 1e3,
            "large_alone_ms": large_alone.as_secs_f64() * 1e3,
            "tiny_behind_large_ms": behind.as_secs_f64() * 1e3,
            "fairness_bound_ms": bound.as_secs_f64() * 1e3,
            "fair": behind <= bound,
            "wide_jobs_ms": wide.as_secs_f64() * 1e3,
            "efficiency": efficiency,
        }));
    }
    table.note(&format!(
        "tiny: `a + b` on U8 ({t_pbs} PBS, depth {t_depth}); large: `a * b` on U8 ({l_pbs} PBS, \
         depth {l_depth}, fills {threads} threads). Throughput: {CLIENTS} clients x \
         {} tiny jobs, submitted then fetched. Fairness: one key's tiny job \
         submitted behind another key's {} large ones. Every time is the median of \
         {samples} runs, alternating between the two servers. Efficiency: {} large jobs at once, one job at a time's time / this row's. \
         Every result decrypted and checked against Rust's u8 arithmetic.",
        sizes.jobs,
        sizes.large,
        sizes.wide()
    ));
    let value = json!({
        "threads": threads,
        "params": GATES_128.name,
        "tiny": {"pbs": t_pbs, "depth": t_depth},
        "large": {"pbs": l_pbs, "depth": l_depth},
        "samples": samples,
        "runs": out,
    });
    emit(json_path, &value, &[table])
}
