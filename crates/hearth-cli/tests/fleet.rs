//! A fleet under faults: `hearth server` processes on one throwaway
//! PostgreSQL database and one blob folder, tenants made with `hearth
//! server token add --store`, jobs submitted through every server.
//!
//! * Three servers: one is killed (`kill -9`) while it runs a job;
//!   another is paused (`SIGSTOP`) while it runs one, past its lease,
//!   then resumed. Every acknowledged job finishes exactly once (the
//!   database's `job_events`: one commit each), decrypts right (Rust's
//!   integers), and is fetched through a server other than the one that
//!   ran it; the paused server's late result is refused; a tenant at its
//!   daily limit is refused by every server.
//! * Two servers while the database crashes (`pg_ctl stop -m immediate`)
//!   and starts again on its port under load: no job lost, none committed
//!   twice, every result right, both servers serve again.
//! * The database's password given apart (a file, or
//!   `HEARTH_STORE_PASSWORD`) is in neither the process's arguments nor
//!   its log; one in the URL is not in the log either.
//!
//! Small jobs and 1.5 s leases keep the drills to seconds (the counts and
//! times are printed, `--nocapture`). Skipped, saying so, where PostgreSQL
//! is not installed (unless `HEARTH_REQUIRE_POSTGRES`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use hearth::api::U8;
use hearth::{Bundle, ClientKey, CompiledProgram, Program, GATES_128};
use hearth_server::{Client, ErrorCode, JobId};
use hearth_testkit::hostile::ServerProcess;
use hearth_testkit::postgres::Postgres;
use num_bigint::BigInt;

use crate::server::{code, dir, hearth};

const SERVERS: usize = 3;
const TENANTS: usize = 2;
const JOBS_PER_TENANT: usize = 2;
/// Short, so that the faults take seconds: heartbeats every 0.5 s.
const LEASE: &str = "1500ms";
/// Longest wait for anything: a lost job fails the test, not hangs it.
const LIMIT: Duration = Duration::from_secs(240);

/// `a * b + a` on `u8`: 79 bootstraps, about a second of one core: long
/// enough to be caught running.
fn program() -> CompiledProgram {
    let p = Program::new(&GATES_128);
    let (a, b) = (U8::input(&p), U8::input(&p));
    p.output(&(&(&a * &b) + &a));
    p.build().unwrap()
}

fn expected(a: u8, b: u8) -> BigInt {
    BigInt::from(a.wrapping_mul(b).wrapping_add(a))
}

fn bundle(key: &ClientKey, prog: &CompiledProgram, a: u8, b: u8) -> Vec<u8> {
    key.encrypt_bundle(
        &prog.signature().inputs,
        &[vec![BigInt::from(a)], vec![BigInt::from(b)]],
    )
    .unwrap()
    .to_bytes()
    .unwrap()
}

/// Each tenant's client key and its compressed server key's file, made on
/// both cores at once.
fn keys(n: usize) -> Vec<(ClientKey, Vec<u8>)> {
    std::thread::scope(|s| {
        let made: Vec<_> = (0..n)
            .map(|_| {
                s.spawn(|| {
                    let key = ClientKey::generate(&GATES_128);
                    let file = key.compressed_server_key().to_bytes().unwrap();
                    (key, file)
                })
            })
            .collect();
        made.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn start(hearth_bin: &Path, d: &Path, url: &str, i: usize, extra: &[&str]) -> ServerProcess {
    let blobs = d.join("blobs");
    let log = d.join(format!("server-{i}.log"));
    let id = format!("s{i}");
    let args = [
        "--listen",
        "127.0.0.1:0",
        "--store",
        url,
        "--blobs",
        blobs.to_str().unwrap(),
        "--server-id",
        &id,
        "--lease",
        LEASE,
        "--threads",
        "1",
        "--max-jobs",
        "1",
        // A job may be caught by both faults (run on s0, then on s1).
        "--max-attempts",
        "3",
    ];
    ServerProcess::start_with(hearth_bin, &log, &[&args[..], extra].concat())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Submits `program` with `bundle` through `api`, waits for the job and
/// gives its result as `key` decrypts it.
fn run_job(api: &Client, key: &ClientKey, program: &[u8], bundle: &[u8]) -> BigInt {
    let id = api.submit(program, bundle).unwrap().job_id;
    api.wait_timeout(id, Duration::from_millis(20), LIMIT)
        .unwrap();
    let out = api.result(id).unwrap();
    let b = Bundle::from_bytes(Path::new("result"), &out).unwrap();
    key.decrypt_bundle(&b).unwrap()[0].1[0].clone()
}

/// Pauses `server` (named `name`, SIGSTOP) while it runs a job other than
/// `except`, and gives that job's id: a job that ends between the look
/// and the signal (a fast machine) is not taken for one caught running.
fn pause_running(pg: &Postgres, server: &ServerProcess, name: &str, except: &str) -> String {
    let sql = format!(
        "SELECT id FROM jobs WHERE state = 'running' AND owner = '{name}' AND id <> '{except}' \
         LIMIT 1"
    );
    loop {
        wait_row(pg, &sql, &format!("a job running on {name}"));
        server.signal(libc::SIGSTOP);
        match pg.psql("fleet", &sql).lines().next() {
            Some(id) if !id.is_empty() => return id.to_string(),
            _ => server.signal(libc::SIGCONT),
        }
    }
}

/// Waits until `sql` gives a row in the database `fleet`, and gives it.
fn wait_row(pg: &Postgres, sql: &str, what: &str) -> String {
    pg.wait_row("fleet", sql, what, LIMIT)
}

/// A drill's start: a throwaway cluster and its database `fleet`, a
/// fresh folder, the clock; `None` where PostgreSQL is missing.
fn drill(name: &str) -> Option<(Postgres, std::path::PathBuf, String, Instant)> {
    let pg = Postgres::start_or_skip(&format!("cli-{name}"))?;
    let url = pg.url("fleet");
    Some((pg, dir(name), url, Instant::now()))
}

#[test]
fn a_fleet_finishes_every_job_once_through_kill_9_and_a_pause() {
    let Some((pg, d, url, total)) = drill("fleet") else {
        return;
    };
    let hearth_bin = Path::new(env!("CARGO_BIN_EXE_hearth"));
    let prog = program();
    let p = prog.to_bytes().unwrap();
    let pbs = prog.circuit().stats().pbs as u64;

    // Four tenants; the last may run exactly its jobs today.
    let tokens: Vec<String> = (0..TENANTS)
        .map(|t| {
            let name = format!("tenant-{t}");
            let day = (pbs * JOBS_PER_TENANT as u64).to_string();
            let mut args = vec!["server", "token", "add", &name, "--store", &url];
            if t == TENANTS - 1 {
                args.extend(["--max-pbs-per-day", &day]);
            }
            hearth(&args).trim().to_string()
        })
        .collect();
    let listed = hearth(&["server", "token", "list", "--store", &url]);
    assert_eq!(
        listed.matches("tenant tenant-").count(),
        TENANTS,
        "{listed}"
    );

    let mut servers: Vec<Option<ServerProcess>> = (0..SERVERS)
        .map(|i| Some(start(hearth_bin, &d, &url, i, &[])))
        .collect();
    let urls: Vec<String> = servers
        .iter()
        .map(|s| s.as_ref().unwrap().url.clone())
        .collect();
    let api = |t: usize, s: usize| Client::builder(&urls[s]).token(&tokens[t]).build().unwrap();
    for (i, u) in urls.iter().enumerate() {
        // The server's name is told to tenants only.
        let info = Client::builder(u)
            .token(&tokens[0])
            .build()
            .unwrap()
            .info()
            .unwrap();
        assert_eq!(
            (info.store.as_str(), info.server),
            ("postgres", format!("s{i}"))
        );
    }

    // Each tenant's key through one server, its jobs through all three.
    let (keys, files): (Vec<ClientKey>, Vec<Vec<u8>>) = self::keys(TENANTS).into_iter().unzip();
    for (t, file) in files.iter().enumerate() {
        assert!(api(t, t % SERVERS).upload_key(file).unwrap().new);
    }
    let mut jobs: Vec<(usize, JobId, BigInt)> = Vec::new();
    for j in 0..JOBS_PER_TENANT {
        for (t, key) in keys.iter().enumerate() {
            let (a, b) = ((100 + 37 * (t * 7 + j)) as u8, (99 + t * 13 + j) as u8);
            let via = (t + j) % SERVERS;
            let id = api(t, via)
                .submit(&p, &bundle(key, &prog, a, b))
                .unwrap()
                .job_id;
            jobs.push((t, id, expected(a, b)));
        }
    }
    // The last tenant is at its daily limit: every server refuses it.
    let last = TENANTS - 1;
    for s in 0..SERVERS {
        let more = api(last, s).submit(&p, &bundle(&keys[last], &prog, 1, 2));
        assert_eq!(code(more), ErrorCode::DailyLimit, "server s{s}");
    }

    let ready = total.elapsed();
    // s0 dies while it runs a job; s1 stalls while it runs one, past its
    // lease, and comes back.
    let killed = pause_running(&pg, servers[0].as_ref().unwrap(), "s0", "");
    servers[0].take().unwrap().kill9();
    let stalled = pause_running(&pg, servers[1].as_ref().unwrap(), "s1", &killed);
    let taken = wait_row(
        &pg,
        &format!("SELECT owner FROM jobs WHERE id = '{stalled}' AND owner = 's2'"),
        "the stalled job taken by s2",
    );
    assert_eq!(taken, "s2");
    servers[1].as_ref().unwrap().signal(libc::SIGCONT);
    let faulted = total.elapsed();

    // Every job, fetched through a live server that did not run it.
    let live = [1, 2];
    let mut ran_by: BTreeMap<String, usize> = BTreeMap::new();
    for (t, id, want) in &jobs {
        let owner = wait_row(
            &pg,
            &format!("SELECT ran_by FROM jobs WHERE id = '{id}' AND state IN ('done', 'failed')"),
            "every job finished",
        );
        let state = pg.psql(
            "fleet",
            &format!("SELECT state FROM jobs WHERE id = '{id}'"),
        );
        assert_eq!(state.trim(), "done", "job {id}");
        *ran_by.entry(owner.clone()).or_default() += 1;
        let other = live
            .iter()
            .copied()
            .find(|&s| format!("s{s}") != owner)
            .unwrap();
        let fetcher = api(*t, other);
        let out = fetcher.result(*id).unwrap();
        let b = Bundle::from_bytes(Path::new("result"), &out).unwrap();
        assert_eq!(
            &keys[*t].decrypt_bundle(&b).unwrap()[0].1[0],
            want,
            "job {id}"
        );
    }
    let one = |sql: &str| pg.psql("fleet", sql).trim().to_string();
    assert_eq!(
        one("SELECT count(*) FROM job_events WHERE event = 'committed'"),
        jobs.len().to_string(),
        "one commit per job"
    );
    assert_eq!(
        one(
            "SELECT count(*) FROM (SELECT job_id FROM job_events WHERE event = 'committed' \
             GROUP BY job_id HAVING count(*) > 1) twice"
        ),
        "0"
    );
    assert_ne!(
        one(&format!("SELECT ran_by FROM jobs WHERE id = '{killed}'")),
        "s0"
    );
    assert_ne!(
        one(&format!("SELECT ran_by FROM jobs WHERE id = '{stalled}'")),
        "s1"
    );
    // The stalled server's result for the job it lost: refused.
    let refused = wait_row(
        &pg,
        &format!(
            "SELECT count(*) FROM job_events WHERE job_id = '{stalled}' AND server = 's1' \
             AND event = 'refused' HAVING count(*) > 0"
        ),
        "s1's late result refused",
    );
    let requeued = one("SELECT count(*) FROM job_events WHERE event = 'requeued'");
    let claims = one("SELECT count(*) FROM job_events WHERE event = 'claimed'");
    // Deleted through any server, then gone from all.
    for (t, id, _) in &jobs {
        api(*t, 2).delete(*id).unwrap();
        assert_eq!(code(api(*t, 1).status(*id)), ErrorCode::NotFound);
    }
    eprintln!(
        "fleet: {} jobs of {TENANTS} tenants through {SERVERS} servers, {pbs} bootstraps each; \
         ran by {ran_by:?}; {claims} claims, {requeued} leases taken back (s0 killed, s1 \
         paused), {refused} late result refused, one commit per job; the tenant at its daily \
         limit refused by all {SERVERS}; {:.1} s (keys made and jobs in after {:.1} s, the \
         faults over after {:.1} s)",
        jobs.len(),
        total.elapsed().as_secs_f64(),
        ready.as_secs_f64(),
        faulted.as_secs_f64()
    );
}

/// Whether `GET /v1/health` of the server at `addr` says ok.
fn healthy(addr: std::net::SocketAddr) -> bool {
    let get = b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    hearth_testkit::hostile::net::raw(addr, get).is_ok_and(|(status, _)| status == 200)
}

#[test]
fn a_fleet_rides_out_a_database_crash_under_load() {
    let Some((pg, d, url, total)) = drill("fleet-restart") else {
        return;
    };
    let hearth_bin = Path::new(env!("CARGO_BIN_EXE_hearth"));
    let prog = program();
    let p = prog.to_bytes().unwrap();
    let token = hearth(&["server", "token", "add", "kim", "--store", &url])
        .trim()
        .to_string();
    let servers: Vec<ServerProcess> = (0..2)
        .map(|i| start(hearth_bin, &d, &url, i, &[]))
        .collect();
    let api = |s: usize| {
        Client::builder(&servers[s].url)
            .token(&token)
            .build()
            .unwrap()
    };
    let (key, file) = keys(1).pop().unwrap();
    api(0).upload_key(&file).unwrap();
    let mut jobs: Vec<(JobId, BigInt)> = Vec::new();
    for j in 0..3u8 {
        let (a, b) = (200 - 9 * j, 3 + 5 * j);
        let id = api(j as usize % 2)
            .submit(&p, &bundle(&key, &prog, a, b))
            .unwrap()
            .job_id;
        jobs.push((id, expected(a, b)));
    }
    // Both servers run a job when the database crashes.
    wait_row(
        &pg,
        "SELECT count(DISTINCT owner) FROM jobs WHERE state = 'running' HAVING \
         count(DISTINCT owner) = 2",
        "a job running on each server",
    );
    let down = Instant::now();
    pg.stop("immediate");
    // Down until both servers say so (`/v1/health`: their heartbeats went
    // unanswered for a lease), long enough for the running jobs to end and
    // their commits to meet the outage.
    for s in &servers {
        while healthy(s.addr) {
            assert!(
                down.elapsed() < LIMIT,
                "a server healthy without its database"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    pg.start_again();
    let outage = down.elapsed();

    // Every job finishes, once, with its result.
    for (id, want) in &jobs {
        wait_row(
            &pg,
            &format!("SELECT 1 FROM jobs WHERE id = '{id}' AND state IN ('done', 'failed')"),
            "every job finished",
        );
        let state = pg.psql(
            "fleet",
            &format!("SELECT state FROM jobs WHERE id = '{id}'"),
        );
        assert_eq!(state.trim(), "done", "job {id}");
        let out = api(0).result(*id).unwrap();
        let b = Bundle::from_bytes(Path::new("result"), &out).unwrap();
        assert_eq!(&key.decrypt_bundle(&b).unwrap()[0].1[0], want, "job {id}");
    }
    let recovered = down.elapsed();
    let one = |sql: &str| pg.psql("fleet", sql).trim().to_string();
    assert_eq!(
        one("SELECT count(*) FROM job_events WHERE event = 'committed'"),
        jobs.len().to_string(),
        "one commit per job"
    );
    let requeued = one("SELECT count(*) FROM job_events WHERE event = 'requeued'");
    let refused = one("SELECT count(*) FROM job_events WHERE event = 'refused'");
    // Both servers serve again: healthy, and each runs a new job.
    for (s, server) in servers.iter().enumerate() {
        let t = Instant::now();
        while !healthy(server.addr) {
            assert!(t.elapsed() < LIMIT, "s{s} never healthy again");
            std::thread::sleep(Duration::from_millis(50));
        }
        let (a, b) = (11 + s as u8, 12);
        assert_eq!(
            run_job(&api(s), &key, &p, &bundle(&key, &prog, a, b)),
            expected(a, b)
        );
    }
    eprintln!(
        "database crash: down {:.1} s (until both servers said so) under 2 running jobs; all \
         {} jobs done \
         {:.1} s after it went down, one commit each ({requeued} leases taken back, \
         {refused} late results refused); both servers serve again; {:.1} s",
        outage.as_secs_f64(),
        jobs.len(),
        recovered.as_secs_f64(),
        total.elapsed().as_secs_f64()
    );
}

#[test]
fn the_database_password_stays_out_of_arguments_and_logs() {
    let Some(pg) = Postgres::start_or_skip("cli-fleet-password") else {
        return;
    };
    let d = dir("fleet-password");
    let secret = "Tr0ub4dor-8c1e";
    pg.require_password("keeper", secret);
    let _ = pg.url("fleet");
    let url = format!("postgres://keeper@127.0.0.1:{}/fleet", pg.port());
    let run = |args: &[&str], env: &[(&str, &str)]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(args)
            .env_remove("HEARTH_STORE_PASSWORD")
            .env_remove("HEARTH_STORE_PASSWORD_FILE")
            .envs(env.iter().copied())
            .output()
            .unwrap()
    };
    // Without it, the database refuses; from the environment, it works.
    let add = ["server", "token", "add", "lee", "--store", &url];
    let refused = run(&add, &[]);
    assert!(!refused.status.success());
    let token = run(&add, &[("HEARTH_STORE_PASSWORD", secret)]);
    assert!(
        token.status.success(),
        "{}",
        String::from_utf8_lossy(&token.stderr)
    );
    let token = String::from_utf8(token.stdout).unwrap().trim().to_string();

    // From a file: in neither the arguments nor the log; a job runs.
    let file = d.join("pw");
    std::fs::write(&file, format!("{secret}\n")).unwrap();
    let hearth_bin = Path::new(env!("CARGO_BIN_EXE_hearth"));
    let server = start(
        hearth_bin,
        &d,
        &url,
        0,
        &["--store-password-file", file.to_str().unwrap()],
    );
    let args = std::fs::read(format!("/proc/{}/cmdline", server.pid())).unwrap();
    assert!(!String::from_utf8_lossy(&args).contains(secret));
    let api = Client::builder(&server.url).token(&token).build().unwrap();
    let (key, keyfile) = keys(1).pop().unwrap();
    api.upload_key(&keyfile).unwrap();
    let prog = program();
    let got = run_job(
        &api,
        &key,
        &prog.to_bytes().unwrap(),
        &bundle(&key, &prog, 6, 7),
    );
    assert_eq!(got, expected(6, 7));
    drop(server);

    // In the URL, in each of its places: the server starts (and warns),
    // the log never shows it.
    for (i, url) in [
        format!("postgres://keeper:{secret}@127.0.0.1:{}/fleet", pg.port()),
        format!(
            "postgres://keeper@127.0.0.1:{}/fleet?password={secret}",
            pg.port()
        ),
    ]
    .iter()
    .enumerate()
    {
        let server = start(hearth_bin, &d, url, i + 1, &[]);
        assert!(server.client().info().is_ok());
        drop(server);
        let log = std::fs::read_to_string(d.join(format!("server-{}.log", i + 1))).unwrap();
        assert!(
            log.contains("the fleet at postgres://keeper:***@127.0.0.1"),
            "{log}"
        );
        assert!(!log.contains(secret), "the log shows the password: {log}");
    }
    // Given twice, it is refused, saying so without showing it.
    let twice = run(
        &[
            "server",
            "token",
            "list",
            "--store",
            &format!("postgres://keeper:{secret}@127.0.0.1:{}/fleet", pg.port()),
        ],
        &[("HEARTH_STORE_PASSWORD", secret)],
    );
    let err = String::from_utf8_lossy(&twice.stderr);
    assert!(
        !twice.status.success() && err.contains("given twice"),
        "{err}"
    );
    assert!(!err.contains(secret), "{err}");
}
