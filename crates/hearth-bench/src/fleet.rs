//! `hearth-bench fleet`: servers sharing one PostgreSQL database (a
//! throwaway cluster started here) and one blob folder, in this process on
//! loopback with real keys (GATES_128), against one server on its own data
//! folder in the same run:
//!
//! * the shared store's cost per job: 8 clients submit tiny jobs (`a + b`
//!   on `U8`, 8 bootstraps), then fetch and check every result, on one
//!   server with the files store and on one in a fleet;
//! * 1, 2 and 3 servers in one fleet, the clients spread over them. On
//!   one machine they share its cores, so besides jobs per second the
//!   table gives the CPU each job took: this process's (servers and
//!   clients) and the database's;
//! * a prediction for servers on separate machines: `n` servers each as
//!   fast as one alone here, bounded by the database's CPU per job on a
//!   database machine of as many cores as this one.
//!
//! Cases alternate round by round, so that the machine's drift falls on
//! all of them; every result is decrypted and checked against Rust.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hearth::{ClientKey, Error, GATES_128};
use hearth_server::fleet::{Database, FleetConfig};
use hearth_server::{Client, Config, JobId, ServerHandle};
use hearth_testkit::postgres::Postgres;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::report::{emit, in_temp_dir, Table};
use crate::serve::{collect, Job, CLIENTS, CLIENT_POLL};

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Config(format!("fleet benchmark, {what}: {e}"))
}

/// One case: a files server, or `n` servers of one fleet.
struct Case {
    name: String,
    servers: Vec<ServerHandle>,
}

impl Case {
    fn start(
        root: &Path,
        pg: &Postgres,
        fleet: Option<usize>,
        threads: usize,
        key: &ClientKey,
    ) -> Result<Case, Error> {
        let config = |data: PathBuf| {
            let mut c = Config::new(data);
            c.threads = threads;
            c.max_queue = 4096;
            c
        };
        let servers = match fleet {
            None => {
                let data = root.join("files");
                let _ = std::fs::remove_dir_all(&data);
                vec![hearth_server::start(config(data), "127.0.0.1:0")
                    .map_err(|e| failed("start", e))?]
            }
            Some(n) => {
                let url = pg.url(&format!("fleet{n}"));
                (0..n)
                    .map(|i| {
                        let mut c = config(root.join(format!("unused-{n}-{i}")));
                        c.fleet = Some(FleetConfig {
                            database: Database::new(url.clone()),
                            blobs: root.join(format!("blobs-{n}")),
                            server_id: format!("bench-{n}-{i}"),
                            lease: Duration::from_secs(30),
                        });
                        hearth_server::start(c, "127.0.0.1:0").map_err(|e| failed("start", e))
                    })
                    .collect::<Result<_, _>>()?
            }
        };
        let case = Case {
            name: match fleet {
                None => "files, 1 server".into(),
                Some(n) => format!("postgres, {n} server{}", if n == 1 { "" } else { "s" }),
            },
            servers,
        };
        let file = key.compressed_server_key().to_bytes()?;
        case.client(0)?
            .upload_key(&file)
            .map_err(|e| failed("key upload", e))?;
        Ok(case)
    }

    fn client(&self, i: usize) -> Result<Client, Error> {
        Client::new(&self.servers[i % self.servers.len()].url()).map_err(|e| failed("client", e))
    }

    fn stop(self) -> Result<(), Error> {
        for s in self.servers {
            s.stop().map_err(|e| failed("stop", e))?;
        }
        Ok(())
    }
}

/// A measured run: its wall time, and the CPU seconds of this process and
/// of the database.
struct Run {
    wall: Duration,
    cpu: f64,
    db_cpu: f64,
}

/// This process's CPU seconds so far (every thread: servers and clients).
fn process_cpu() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the struct; it is read only on success.
    let u = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) != 0 {
            return 0.0;
        }
        u.assume_init()
    };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// 8 clients, each submitting `per_client` tiny jobs through the case's
/// servers in turn, then fetching, checking and deleting them.
fn throughput(
    case: &Case,
    pg: &Postgres,
    (key, tiny): (&ClientKey, &Job),
    per_client: usize,
    seed: u64,
) -> Result<Run, Error> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut work = Vec::new();
    for c in 0..CLIENTS {
        let mut mine = Vec::new();
        for _ in 0..per_client {
            let (a, b): (u8, u8) = (rng.gen(), rng.gen());
            mine.push((tiny.bundle(key, a, b)?, (tiny.op)(a, b)));
        }
        work.push((case.client(c)?, mine));
    }
    let (cpu, db_cpu) = (process_cpu(), pg.cpu_seconds());
    let start = Instant::now();
    std::thread::scope(|s| {
        let clients: Vec<_> = work
            .iter()
            .map(|(api, mine)| {
                s.spawn(move || -> Result<(), Error> {
                    let mut ids: Vec<(JobId, u8)> = Vec::new();
                    for (bundle, want) in mine {
                        let id = api
                            .submit(&tiny.bytes, bundle)
                            .map_err(|e| failed("submit", e))?
                            .job_id;
                        ids.push((id, *want));
                    }
                    for job in ids {
                        collect(api, key, job, CLIENT_POLL)?;
                    }
                    Ok(())
                })
            })
            .collect();
        clients
            .into_iter()
            .try_for_each(|c| c.join().expect("client thread"))
    })?;
    Ok(Run {
        wall: start.elapsed(),
        cpu: process_cpu() - cpu,
        db_cpu: pg.cpu_seconds() - db_cpu,
    })
}

/// The cases on `threads` threads per server, `samples` rounds each.
pub fn fleet(
    threads: usize,
    samples: usize,
    per_client: usize,
    json_path: Option<PathBuf>,
) -> Result<(), Error> {
    if per_client == 0 {
        return Err(Error::Config("--jobs must be positive".into()));
    }
    let pg = Postgres::start("bench-fleet").map_err(|e| failed("PostgreSQL", e))?;
    in_temp_dir("fleet", |root| {
        run(
            root,
            &pg,
            (threads, samples.max(1)),
            per_client,
            json_path.as_deref(),
        )
    })
}

fn run(
    root: &Path,
    pg: &Postgres,
    (threads, samples): (usize, usize),
    per_client: usize,
    json_path: Option<&Path>,
) -> Result<(), Error> {
    eprintln!("generating a GATES_128 key...");
    let key = ClientKey::generate(&GATES_128);
    let tiny = Job::new(|a, b| a + b, u8::wrapping_add)?;
    let stats = tiny.prog.circuit().stats();
    let fleets = [None, Some(1), Some(2), Some(3)];
    let mut runs: Vec<Vec<Run>> = fleets.iter().map(|_| Vec::new()).collect();
    let mut names = Vec::new();
    for round in 0..=samples {
        for (c, &fleet) in fleets.iter().enumerate() {
            let case = Case::start(root, pg, fleet, threads, &key)?;
            if round == 0 {
                // A warm-up round, not counted: each server loads the key.
                names.push(case.name.clone());
                eprintln!("warming up {}...", case.name);
                throughput(&case, pg, (&key, &tiny), 1, 0)?;
            } else {
                eprintln!("round {round}/{samples}, {}...", case.name);
                let r = throughput(&case, pg, (&key, &tiny), per_client, round as u64)?;
                runs[c].push(r);
            }
            case.stop()?;
        }
    }
    let jobs = (CLIENTS * per_client) as f64;
    // Per case: the median run by wall time.
    let medians: Vec<Run> = runs
        .into_iter()
        .map(|mut r| {
            r.sort_by_key(|x| x.wall);
            let mid = r.len() / 2;
            r.swap_remove(mid)
        })
        .collect();
    let rate = |r: &Run| jobs / r.wall.as_secs_f64();
    let files = rate(&medians[0]);
    let mut table = Table::new(
        format!(
            "Tiny jobs through a fleet on one PostgreSQL database, beside one server on its data \
             folder ({threads} threads each, this machine)"
        ),
        &[
            "store",
            "jobs/s",
            "ms per job",
            "vs files",
            "CPU ms per job (servers, clients)",
            "database CPU ms per job",
        ],
    );
    let mut out = Vec::new();
    for (name, r) in names.iter().zip(&medians) {
        table.row(vec![
            name.clone(),
            format!("{:.1}", rate(r)),
            format!("{:.1}", 1e3 / rate(r)),
            format!("{:.2}", rate(r) / files),
            format!("{:.1}", r.cpu * 1e3 / jobs),
            format!("{:.2}", r.db_cpu * 1e3 / jobs),
        ]);
        out.push(json!({
            "case": name,
            "jobs": jobs,
            "seconds": r.wall.as_secs_f64(),
            "jobs_per_s": rate(r),
            "ms_per_job": 1e3 / rate(r),
            "vs_files": rate(r) / files,
            "cpu_ms_per_job": r.cpu * 1e3 / jobs,
            "db_cpu_ms_per_job": r.db_cpu * 1e3 / jobs,
        }));
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    table.note(&format!(
        "tiny: `a + b` on U8 ({} PBS, depth {}); {CLIENTS} clients x {per_client} jobs, \
         submitted then fetched, spread over the case's servers; medians of {samples} rounds \
         (the cases alternate), after a warm-up round. On one {cores}-core machine the servers, \
         the clients and PostgreSQL share the cores.",
        stats.pbs, stats.depth
    ));
    // Servers on machines of their own: each as fast as one alone here,
    // the database on a machine like this one.
    let one = rate(&medians[1]);
    let db_ms = medians[1..]
        .iter()
        .map(|r| r.db_cpu * 1e3 / jobs)
        .fold(0.0, f64::max);
    let db_bound = if db_ms > 0.0 {
        cores as f64 * 1e3 / db_ms
    } else {
        f64::INFINITY
    };
    let mut predicted = Table::new(
        "Predicted: fleet servers on machines of their own, like this one".to_string(),
        &["servers", "jobs/s", "bound by"],
    );
    let mut prediction = Vec::new();
    for n in [1usize, 2, 3, 4, 8, 16] {
        let servers = n as f64 * one;
        let (jobs_s, by) = if servers <= db_bound {
            (servers, "the servers")
        } else {
            (db_bound, "the database")
        };
        predicted.row(vec![n.to_string(), format!("{jobs_s:.0}"), by.into()]);
        prediction.push(json!({"servers": n, "jobs_per_s": jobs_s, "bound_by": by}));
    }
    predicted.note(&format!(
        "n x one fleet server's rate here ({one:.1} jobs/s), at most what a {cores}-core \
         database machine serves at the most database CPU per job measured \
         ({db_ms:.2} ms): {db_bound:.0} jobs/s. A model from the figures above, not a \
         measurement of separate machines."
    ));
    let value = json!({
        "threads": threads,
        "params": GATES_128.name,
        "tiny": {"pbs": stats.pbs, "depth": stats.depth},
        "clients": CLIENTS,
        "jobs_per_client": per_client,
        "samples": samples,
        "cores": cores,
        "runs": out,
        "predicted": prediction,
    });
    emit(json_path, &value, &[table, predicted])
}
