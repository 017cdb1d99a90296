//! `hearth-bench server-mpi`: jobs per second of `hearth server` on the
//! ranks of an MPI launch beside the cpu backend on the same cores. The
//! servers are `hearth` processes (a build with the `mpi` feature), one
//! per layout, all on DIGITS_128 with one key:
//!
//! * `mpirun -np 2 hearth server --backend mpi --threads 1` (2 ranks x 1);
//! * `hearth server --threads 2` (1 x 2, the cpu backend);
//! * `mpirun -np 1 hearth server --backend mpi --threads 2` (the mpi
//!   server's own cost on one rank).
//!
//! Each rank is bound to cores of its own (`--map-by slot:PE=T --bind-to
//! core`, as docs/mpi.md advises).
//!
//! Each round submits the same number of jobs of the programs benchmark's
//! regression (`programs`' `regression`: 10 `I32`s, a dot product with
//! clear weights) to every server in turn and times the first submission
//! to the last result; every result is decrypted and checked against
//! plain Rust. The first job of each server, which also loads its key
//! (and, on mpi, sends it to the ranks), is timed apart.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use hearth::{ClientKey, CompiledProgram, Error, DIGITS_128};
use hearth_server::{Client, JobId};
use num_bigint::BigInt;
use rand::SeedableRng;
use serde_json::json;

use crate::programs::Spec;
use crate::report::{emit, in_temp_dir, median, Table};

/// How often a job's state is asked for.
const POLL: Duration = Duration::from_millis(5);

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Config(format!("mpi server benchmark, {what}: {e}"))
}

/// One server layout: its name, ranks and threads per rank.
struct Layout {
    name: &'static str,
    ranks: usize,
    threads: usize,
    mpi: bool,
}

const LAYOUTS: [Layout; 3] = [
    Layout {
        name: "mpi, 2 ranks x 1 thread",
        ranks: 2,
        threads: 1,
        mpi: true,
    },
    Layout {
        name: "cpu, 1 process x 2 threads",
        ranks: 1,
        threads: 2,
        mpi: false,
    },
    Layout {
        name: "mpi, 1 rank x 2 threads",
        ranks: 1,
        threads: 2,
        mpi: true,
    },
];

/// A running server process (the `mpirun` of a launch).
struct Running {
    child: Child,
    api: Client,
}

impl Running {
    fn start(hearth: &Path, layout: &Layout, data: &Path) -> Result<Running, Error> {
        let mut cmd = if layout.mpi {
            let mut c = Command::new("mpirun");
            // Each rank on cores of its own (docs/mpi.md): by default
            // Open MPI binds a rank to one core, whatever its threads.
            c.args([
                "--allow-run-as-root",
                "--oversubscribe",
                "--bind-to",
                "core",
            ])
            .arg("--map-by")
            .arg(format!("slot:PE={}", layout.threads))
            .arg("-np")
            .arg(layout.ranks.to_string())
            .arg(hearth)
            .args(["server", "--backend", "mpi"]);
            c
        } else {
            let mut c = Command::new(hearth);
            c.arg("server");
            c
        };
        let mut child = cmd
            .args(["--threads", &layout.threads.to_string()])
            .args(["--listen", "127.0.0.1:0", "--quiet", "--data"])
            .arg(data)
            .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| failed(&format!("starting {}", layout.name), e))?;
        let mut line = String::new();
        let stdout = child.stdout.take().expect("piped");
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| failed("reading the server's address", e))?;
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .ok_or_else(|| failed(layout.name, format!("did not start: {line:?}")))?;
        let api = Client::new(url).map_err(|e| failed("client", e))?;
        Ok(Running { child, api })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // SIGTERM: mpirun passes it on to every rank.
        let _ = Command::new("kill")
            .arg(self.child.id().to_string())
            .status();
        let _ = self.child.wait();
    }
}

/// An encrypted bundle of inputs and plain Rust's outputs for them.
type Case = (Vec<u8>, Vec<i128>);

/// The regression program and encrypted inputs with plain Rust's answers.
struct Work<'a> {
    spec: &'a Spec,
    prog: CompiledProgram,
    bytes: Vec<u8>,
    key: &'a ClientKey,
}

impl Work<'_> {
    /// `n` bundles of random inputs and their expected outputs.
    fn bundles(&self, n: usize, seed: u64) -> Result<Vec<Case>, Error> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..n)
            .map(|_| {
                let x = self.spec.random_inputs(&mut rng);
                let values: Vec<Vec<BigInt>> = x.iter().map(|&v| vec![BigInt::from(v)]).collect();
                let bundle = self
                    .key
                    .encrypt_bundle(&self.prog.signature().inputs, &values)?
                    .to_bytes()?;
                Ok((bundle, self.spec.reference(&x)))
            })
            .collect()
    }

    /// Submits every bundle, then waits for, checks and deletes every
    /// result: the time from the first submission to the last result.
    fn run(&self, api: &Client, bundles: &[Case]) -> Result<Duration, Error> {
        let start = Instant::now();
        let ids: Vec<JobId> = bundles
            .iter()
            .map(|(b, _)| {
                api.submit(&self.bytes, b)
                    .map(|s| s.job_id)
                    .map_err(|e| failed("submit", e))
            })
            .collect::<Result<_, _>>()?;
        let mut results = Vec::new();
        for id in &ids {
            api.wait(*id, POLL).map_err(|e| failed("job", e))?;
            results.push(api.result_bundle(*id).map_err(|e| failed("result", e))?);
        }
        let took = start.elapsed();
        for ((id, out), (_, want)) in ids.iter().zip(results).zip(bundles) {
            api.delete(*id).map_err(|e| failed("delete", e))?;
            let got: Vec<BigInt> = self
                .key
                .decrypt_bundle(&out)?
                .into_iter()
                .flat_map(|(_, v)| v)
                .collect();
            let want: Vec<BigInt> = want.iter().map(|&v| BigInt::from(v)).collect();
            if got != want {
                return Err(failed("result", format!("{got:?}, expected {want:?}")));
            }
        }
        Ok(took)
    }
}

/// Runs the benchmark (see the module doc): `jobs` per round, `samples`
/// rounds, `hearth` the binary to serve with.
pub fn server_mpi(
    hearth: &Path,
    jobs: usize,
    samples: usize,
    json_path: Option<PathBuf>,
) -> Result<(), Error> {
    if jobs == 0 || samples == 0 {
        return Err(Error::Config(
            "--jobs and --samples must be positive".into(),
        ));
    }
    in_temp_dir("mpi", |root| {
        run(hearth, root, (jobs, samples), json_path.as_deref())
    })
}

fn run(
    hearth: &Path,
    root: &Path,
    (jobs, samples): (usize, usize),
    json_path: Option<&Path>,
) -> Result<(), Error> {
    let specs = crate::programs::nine();
    let spec = specs
        .iter()
        .find(|s| s.key == "regression")
        .expect("the programs benchmark has the regression");
    eprintln!("generating a DIGITS_128 key...");
    let key = ClientKey::generate(&DIGITS_128);
    let prog = spec.program(&DIGITS_128, 2)?;
    let stats = prog.circuit().stats();
    let work = Work {
        spec,
        bytes: prog.to_bytes()?,
        prog,
        key: &key,
    };
    let compressed = key.compressed_server_key().to_bytes()?;
    let mut servers = Vec::new();
    let mut first = Vec::new();
    for (i, layout) in LAYOUTS.iter().enumerate() {
        eprintln!("starting {}...", layout.name);
        let s = Running::start(hearth, layout, &root.join(format!("data-{i}")))?;
        s.api
            .upload_key(&compressed)
            .map_err(|e| failed("key upload", e))?;
        first.push(work.run(&s.api, &work.bundles(1, 99)?)?);
        // Only one server works at a time: the others' idle ranks poll
        // a thousand times a second, which costs little.
        servers.push(s);
    }
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); LAYOUTS.len()];
    for round in 0..samples {
        let bundles = work.bundles(jobs, round as u64)?;
        for (i, s) in servers.iter().enumerate() {
            eprintln!("round {}/{samples}: {}...", round + 1, LAYOUTS[i].name);
            times[i].push(work.run(&s.api, &bundles)?);
        }
    }
    drop(servers);

    let medians: Vec<Duration> = times.iter().map(|t| median(t.clone())).collect();
    let rate = |d: Duration| jobs as f64 / d.as_secs_f64();
    let cpu = rate(medians[1]);
    let mut table = Table::new(
        format!(
            "hearth server: {jobs} regression jobs ({} #PBS, depth {}, DIGITS_128) per round, medians of {samples}",
            stats.pbs, stats.depth
        ),
        &[
            "server",
            "ranks x threads",
            "round (s)",
            "jobs/s",
            "vs cpu 1 x 2",
            "first job, key loaded (s)",
        ],
    );
    let mut rows = Vec::new();
    for (i, layout) in LAYOUTS.iter().enumerate() {
        let r = rate(medians[i]);
        table.row(vec![
            layout.name.to_string(),
            format!("{} x {}", layout.ranks, layout.threads),
            format!("{:.2}", medians[i].as_secs_f64()),
            format!("{r:.3}"),
            format!("{:.2}", r / cpu),
            format!("{:.2}", first[i].as_secs_f64()),
        ]);
        rows.push(json!({
            "server": layout.name,
            "ranks": layout.ranks,
            "threads": layout.threads,
            "backend": if layout.mpi { "mpi" } else { "cpu" },
            "round_s": times[i].iter().map(Duration::as_secs_f64).collect::<Vec<_>>(),
            "median_s": medians[i].as_secs_f64(),
            "jobs_per_s": r,
            "vs_cpu": r / cpu,
            "first_job_s": first[i].as_secs_f64(),
        }));
    }
    table.note(
        "Every result decrypted and checked against plain Rust. Rounds alternate between the servers; \
         jobs run one at a time on each (the regression fills 2 threads).",
    );
    let doc = json!({
        "benchmark": "server-mpi",
        "program": spec.name,
        "params": "DIGITS_128",
        "pbs": stats.pbs,
        "depth": stats.depth,
        "jobs_per_round": jobs,
        "samples": samples,
        "servers": rows,
    });
    emit(json_path, &doc, &[table])
}
