//! `hearth server` as a separate process under load and faults, with real
//! keys (GATES_128; release mode): the CLI client path (`submit`,
//! `fetch --wait`, `decrypt`), 8 concurrent clients x 4 jobs while
//! another client sends refused requests of every kind and two clients
//! die mid-upload, then `kill -9` with jobs queued and restarts on the
//! same data folder. Every accepted job's result is checked against
//! Rust's integers, fetched, deleted and then gone (`not_found`): none
//! lost, duplicated or wrong. The numbers are printed (`--nocapture`).

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hearth::api::U8;
use hearth::{Bundle, ClientKey, CompiledProgram, Program, GATES_128, INSECURE_TEST_BITS};
use hearth_server::{Client, ClientError, ErrorCode, JobId};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};

const CLIENTS: usize = 8;
const JOBS_PER_CLIENT: usize = 4;

/// Longest wait for one job: a lost job fails the test instead of
/// hanging it.
const LIMIT: Duration = Duration::from_secs(120);

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-cli-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A `hearth server` child process.
struct Server {
    child: Child,
    url: String,
    addr: std::net::SocketAddr,
}

impl Server {
    fn start(data: &Path, log: &Path, extra: &[&str]) -> Server {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(["server", "--listen", "127.0.0.1:0", "--threads", "2"])
            .arg("--data")
            .arg(data)
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(log)
            .spawn()
            .expect("hearth starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {line:?}"))
            .to_string();
        let addr = url.trim_start_matches("http://").parse().unwrap();
        Server { child, url, addr }
    }

    fn client(&self) -> Client {
        Client::new(&self.url).unwrap()
    }

    /// SIGKILL: no chance to clean up.
    fn kill9(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn program(params: &'static hearth::ParameterSet, mul: bool) -> CompiledProgram {
    let p = Program::new(params);
    let a = U8::input(&p);
    let b = U8::input(&p);
    p.output(&if mul { &a * &b } else { &a + &b });
    p.build().unwrap()
}

fn bundle(client: &ClientKey, prog: &CompiledProgram, a: u8, b: u8) -> Vec<u8> {
    client
        .encrypt_bundle(
            &prog.signature().inputs,
            &[vec![BigInt::from(a)], vec![BigInt::from(b)]],
        )
        .unwrap()
        .to_bytes()
        .unwrap()
}

fn decrypt_one(client: &ClientKey, bytes: &[u8]) -> BigInt {
    let b = Bundle::from_bytes(Path::new("result"), bytes).unwrap();
    client.decrypt_bundle(&b).unwrap()[0].1[0].clone()
}

fn code<T: std::fmt::Debug>(r: Result<T, ClientError>) -> ErrorCode {
    let e = r.expect_err("refused");
    e.code().unwrap_or_else(|| panic!("no code: {e}"))
}

/// Sends the headers of a `len`-byte body, `part` of its bytes, and
/// drops the connection: a client killed mid-upload.
fn die_mid_upload(addr: std::net::SocketAddr, path: &str, body: &[u8], len: usize) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len}\r\n\r\n"
    )
    .unwrap();
    s.write_all(body).unwrap();
    s.flush().unwrap();
    drop(s);
}

/// Fetches, checks, deletes and checks the job is gone: exactly once.
fn collect(api: &Client, client: &ClientKey, id: JobId, expected: u8) {
    api.wait_timeout(id, Duration::from_millis(50), LIMIT)
        .unwrap();
    let out = api.result(id).unwrap();
    assert_eq!(
        decrypt_one(client, &out),
        BigInt::from(expected),
        "job {id}"
    );
    api.delete(id).unwrap();
    assert_eq!(code(api.status(id)), ErrorCode::NotFound);
    assert_eq!(code(api.result(id)), ErrorCode::NotFound);
}

fn hearth(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hearth {args:?}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_server_under_load_faults_and_kill_9() {
    let total = Instant::now();
    let d = dir("load");
    let log = d.join("server.log");
    let t = Instant::now();
    let client = ClientKey::generate(&GATES_128);
    let other = ClientKey::generate(&GATES_128);
    let stranger = ClientKey::generate(&GATES_128);
    let key_file = d.join("server.key");
    client.compressed_server_key().save(&key_file).unwrap();
    let other_key = d.join("other.key");
    other.compressed_server_key().save(&other_key).unwrap();
    client.save(&d.join("client.key")).unwrap();
    eprintln!(
        "3 GATES_128 key pairs in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let add = program(&GATES_128, false);
    let p = add.to_bytes().unwrap();
    add.save(&d.join("add.hprog")).unwrap();

    // ------------------------------------------------ load and faults
    let server = Server::start(
        &d.join("data"),
        &log,
        &[
            "--max-pbs",
            "8",
            "--max-queue",
            "1000",
            "--max-body",
            "32MiB",
        ],
    );
    let api = server.client();

    // The command-line client: submit (uploads the compressed key), fetch
    // --wait (deletes the job), decrypt.
    std::fs::write(d.join("in.hb"), bundle(&client, &add, 250, 9)).unwrap();
    let url = server.url.as_str();
    let d_str = |name: &str| d.join(name).to_str().unwrap().to_string();
    let job = hearth(&[
        "submit",
        "--url",
        url,
        "--server-key",
        &d_str("server.key"),
        "--program",
        &d_str("add.hprog"),
        "--bundle",
        &d_str("in.hb"),
    ]);
    let job = job.trim().to_string();
    assert_eq!(job.len(), 32, "{job}");
    hearth(&[
        "fetch",
        "--url",
        url,
        "--job",
        &job,
        "--out",
        &d_str("out.hb"),
        "--wait",
        "--poll",
        "50ms",
    ]);
    let values = hearth(&[
        "decrypt",
        "--key",
        &d_str("client.key"),
        "--bundle",
        &d_str("out.hb"),
    ]);
    let values: serde_json::Value = serde_json::from_str(&values).unwrap();
    assert_eq!(
        values["y0"],
        serde_json::json!(250u8.wrapping_add(9)),
        "{values}"
    );
    assert_eq!(code(api.status(job.parse().unwrap())), ErrorCode::NotFound);
    assert!(api.upload_key(&other_key).unwrap().new);

    let mul = program(&GATES_128, true);
    let weak = program(&INSECURE_TEST_BITS, false);
    let weak_client = ClientKey::generate(&INSECURE_TEST_BITS);
    let faults: Vec<(&str, ErrorCode, Vec<u8>, Option<hearth::KeyId>)> = vec![
        (
            "garbage",
            ErrorCode::BadProgram,
            b"GET me a result".to_vec(),
            None,
        ),
        (
            "a truncated bundle",
            ErrorCode::BadBundle,
            [p.clone(), bundle(&client, &mul, 1, 2)[..100].to_vec()].concat(),
            None,
        ),
        (
            "an unregistered key",
            ErrorCode::UnknownKey,
            [p.clone(), bundle(&stranger, &add, 1, 2)].concat(),
            None,
        ),
        (
            "another registered key than named",
            ErrorCode::WrongKey,
            [p.clone(), bundle(&other, &add, 1, 2)].concat(),
            Some(client.key_id()),
        ),
        (
            "71 PBS over --max-pbs 8",
            ErrorCode::OverCost,
            [mul.to_bytes().unwrap(), bundle(&client, &mul, 3, 4)].concat(),
            None,
        ),
        (
            "INSECURE parameters",
            ErrorCode::InsecureParams,
            [weak.to_bytes().unwrap(), bundle(&weak_client, &weak, 3, 4)].concat(),
            None,
        ),
        ("40 MiB", ErrorCode::TooLarge, vec![7u8; 40 << 20], None),
    ];

    let load = Instant::now();
    let results: Mutex<Vec<(JobId, u8, usize)>> = Mutex::new(Vec::new());
    let refused: Mutex<BTreeMap<&str, usize>> = Mutex::new(BTreeMap::new());
    let retries = Mutex::new(0usize);
    std::thread::scope(|s| {
        for c in 0..CLIENTS {
            let (results, retries, client, add, p) = (&results, &retries, &client, &add, &p);
            let url = server.url.clone();
            s.spawn(move || {
                let api = Client::new(&url).unwrap();
                let mut rng = rand::rngs::StdRng::seed_from_u64(c as u64);
                let mut mine = Vec::new();
                for _ in 0..JOBS_PER_CLIENT {
                    let (a, b): (u8, u8) = (rng.gen(), rng.gen());
                    let bytes = bundle(client, add, a, b);
                    let job = loop {
                        match api.submit_with_key(client.key_id(), p, &bytes) {
                            Ok(j) => break j,
                            Err(e) if e.code() == Some(ErrorCode::QueueFull) => {
                                *retries.lock().unwrap() += 1;
                                std::thread::sleep(Duration::from_millis(100));
                            }
                            Err(e) => panic!("client {c}: {e}"),
                        }
                    };
                    assert_eq!((job.pbs, job.depth), (8, 8));
                    mine.push((job.job_id, a.wrapping_add(b)));
                }
                for &(id, expected) in &mine {
                    collect(&api, client, id, expected);
                }
                results
                    .lock()
                    .unwrap()
                    .extend(mine.into_iter().map(|(id, e)| (id, e, c)));
            });
        }
        // Refused requests, and clients dying mid-upload, while the load runs.
        let (faults, refused, p, key_file) = (&faults, &refused, &p, &key_file);
        let (url, addr) = (server.url.clone(), server.addr);
        s.spawn(move || {
            let api = Client::new(&url).unwrap();
            let key = std::fs::read(key_file).unwrap();
            for round in 0..3 {
                for (what, expected, body, named) in faults {
                    let r = match named {
                        Some(k) => api.submit_with_key(*k, body, &[]),
                        None => api.submit(body, &[]),
                    };
                    assert_eq!(code(r), *expected, "{what}");
                    *refused
                        .lock()
                        .unwrap()
                        .entry(expected.as_str())
                        .or_default() += 1;
                }
                die_mid_upload(addr, "/v1/jobs", &p[..p.len() / 2], 1 << 20);
                die_mid_upload(addr, "/v1/keys", &key[..key.len() / 3], key.len());
                let bogus = JobId::random();
                assert_eq!(code(api.status(bogus)), ErrorCode::NotFound);
                assert_eq!(code(api.delete(bogus)), ErrorCode::NotFound);
                *refused.lock().unwrap().entry("not_found").or_default() += 2;
                std::thread::sleep(Duration::from_millis(200 * round));
            }
        });
    });
    let wall = load.elapsed();
    let results = results.into_inner().unwrap();
    let ids: HashSet<JobId> = results.iter().map(|r| r.0).collect();
    assert_eq!(results.len(), CLIENTS * JOBS_PER_CLIENT);
    assert_eq!(ids.len(), results.len(), "duplicate job ids");
    let stats = api.stats().unwrap();
    assert_eq!(stats.accepted as usize, CLIENTS * JOBS_PER_CLIENT + 1);
    assert_eq!(stats.completed, stats.accepted);
    assert_eq!(
        (stats.queued, stats.running, stats.done, stats.failed),
        (0, 0, 0, 0)
    );
    let refused = refused.into_inner().unwrap();
    for (c, n) in &refused {
        assert!(
            stats.refused.get(*c).copied().unwrap_or(0) >= *n as u64,
            "{c}: {stats:?}"
        );
    }
    // The two dead uploads per round: the body never completed.
    assert!(
        stats.refused.get("bad_request").copied().unwrap_or(0) >= 6,
        "{stats:?}"
    );
    eprintln!(
        "load: {} jobs from {CLIENTS} clients in {:.1} s ({:.1} jobs/s, 8 PBS each on 2 threads); \
         {} submissions retried on queue_full",
        results.len(),
        wall.as_secs_f64(),
        results.len() as f64 / wall.as_secs_f64(),
        retries.into_inner().unwrap()
    );
    eprintln!("refused by the fault client: {refused:?}");
    eprintln!("server's refusal counts: {:?}", stats.refused);
    drop(server);

    // ------------------------------------------------ kill -9 and restart
    let data = d.join("data2");
    let mut server = Server::start(&data, &log, &["--max-queue", "12"]);
    assert!(server.client().upload_key(&key_file).unwrap().new);
    let mut rng = rand::rngs::StdRng::seed_from_u64(99);
    let bundles: Vec<(u8, Vec<u8>)> = (0..30)
        .map(|_| {
            let (a, b): (u8, u8) = (rng.gen(), rng.gen());
            (a.wrapping_add(b), bundle(&client, &add, a, b))
        })
        .collect();
    let mut accepted: Vec<(JobId, u8)> = Vec::new();
    let mut full = 0;
    let mut kills = 0;
    let mut recovered = 0;
    for chunk in bundles.chunks(10) {
        let api = server.client();
        for (expected, bytes) in chunk {
            match api.submit(&p, bytes) {
                Ok(j) => accepted.push((j.job_id, *expected)),
                Err(e) if e.code() == Some(ErrorCode::QueueFull) => full += 1,
                Err(e) => panic!("{e}"),
            }
        }
        let before = api.stats().unwrap();
        assert!(before.queued > 0, "nothing queued to lose: {before:?}");
        server.kill9();
        kills += 1;
        server = Server::start(&data, &log, &["--max-queue", "12"]);
        let api = server.client();
        let after = api.stats().unwrap();
        // Everything unfinished is queued again (the one that was running
        // too), and nothing else.
        assert!(after.recovered > 0, "{before:?} {after:?}");
        assert_eq!(
            after.queued + after.running + after.done,
            before.queued + before.running + before.done
        );
        recovered += after.recovered;
        // Let a few run before the next round of submissions and kill.
        let t = Instant::now();
        while api.stats().unwrap().done < after.done + 3 && t.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let api = server.client();
    for &(id, expected) in &accepted {
        collect(&api, &client, id, expected);
    }
    let end = api.stats().unwrap();
    assert_eq!(
        (end.queued, end.running, end.done, end.failed),
        (0, 0, 0, 0)
    );
    eprintln!(
        "kill -9: {} jobs accepted ({full} refused as queue_full), {kills} kills, \
         {recovered} recoveries of unfinished jobs from disk (a job queued at two kills counts twice); all {} results correct, \
         fetched once, then not_found",
        accepted.len(),
        accepted.len()
    );
    drop(server);
    eprintln!("whole test: {:.1} s", total.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&d);
}
