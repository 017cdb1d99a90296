//! `hearth server` as a separate process under load and faults, with real
//! keys (GATES_128; release mode): the CLI client path (`submit`,
//! `fetch --wait`, `decrypt`), 8 concurrent clients x 4 jobs while
//! another client sends refused requests of every kind and two clients
//! die mid-upload; then 4 tenants x 4 clients x 6 jobs over HTTPS while
//! a spy tries every other tenant's jobs and keys and strangers try
//! without a token, with a wrong one and with a revoked one, and the
//! server is killed (`kill -9`) and restarted twice with jobs queued and
//! running. Every acknowledged job's result is checked against Rust's
//! integers, fetched by its owner, deleted and then gone (`not_found`):
//! none lost, duplicated, wrong or seen by another tenant. The numbers
//! are printed (`--nocapture`).

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use hearth::{ClientKey, GATES_128, INSECURE_TEST_BITS};
use hearth_server::{Client, ClientError, ErrorCode, JobId};
use hearth_testkit::hostile::payloads::{bundle, decrypt_one, Kind};
use hearth_testkit::hostile::ServerProcess;
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
// The MPI test's own.
#[cfg(feature = "mpi")]
use {
    hearth::{Bundle, Program},
    std::io::{BufRead, BufReader},
    std::process::{Child, Stdio},
};

const CLIENTS: usize = 8;
const JOBS_PER_CLIENT: usize = 4;

const TENANTS: usize = 4;
const CLIENTS_PER_TENANT: usize = 4;
const JOBS_PER_TENANT_CLIENT: usize = 6;

/// Longest wait for one job: a lost job fails the test instead of
/// hanging it.
const LIMIT: Duration = Duration::from_secs(120);

pub(crate) fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-cli-server-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `hearth server` as a child process on 2 threads, run from this test
/// binary's `hearth`.
pub(crate) struct Server;

impl Server {
    pub(crate) fn start(data: &Path, log: &Path, extra: &[&str]) -> ServerProcess {
        Self::start_on("127.0.0.1:0", data, log, extra)
    }

    pub(crate) fn start_on(listen: &str, data: &Path, log: &Path, extra: &[&str]) -> ServerProcess {
        let args = [&["--threads", "2"][..], extra].concat();
        let hearth = Path::new(env!("CARGO_BIN_EXE_hearth"));
        ServerProcess::start(hearth, listen, data, log, &args).unwrap_or_else(|e| panic!("{e}"))
    }
}

pub(crate) fn code<T: std::fmt::Debug>(r: Result<T, ClientError>) -> ErrorCode {
    let e = r.expect_err("refused");
    e.code().unwrap_or_else(|| panic!("no code: {e}"))
}

/// Sends the headers of a `len`-byte body, `part` of its bytes, and
/// drops the connection: a client killed mid-upload.
fn die_mid_upload(addr: std::net::SocketAddr, path: &str, body: &[u8], len: usize) {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: localhost\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: {len}\r\n\r\n"
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
        decrypt_one(client, &out).unwrap(),
        BigInt::from(expected),
        "job {id}"
    );
    api.delete(id).unwrap();
    assert_eq!(code(api.status(id)), ErrorCode::NotFound);
    assert_eq!(code(api.result(id)), ErrorCode::NotFound);
}

pub(crate) fn hearth(args: &[&str]) -> String {
    hearth_env(args, &[])
}

fn hearth_env(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "hearth {args:?}: {err}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A self-signed certificate for 127.0.0.1, as PEM files in `d`:
/// (certificate, key).
pub(crate) fn certificate(d: &Path) -> (PathBuf, PathBuf) {
    let ck = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let (cert, key) = (d.join("cert.pem"), d.join("key.pem"));
    std::fs::write(&cert, ck.cert.pem()).unwrap();
    std::fs::write(&key, ck.signing_key.serialize_pem()).unwrap();
    (cert, key)
}

/// The metrics lines of `names`, scraped from `GET /metrics` at `port`
/// (empty while the server is down).
fn scrape(port: u16, names: &[&str]) -> Vec<String> {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return Vec::new();
    };
    let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    let mut out = String::new();
    let _ = std::io::Read::read_to_string(&mut s, &mut out);
    out.lines()
        .filter(|l| names.iter().any(|n| l.starts_with(n)))
        .map(str::to_string)
        .collect()
}

/// Calls `f` until the server answers: it is down between a kill and its
/// restart.
fn answered<T>(
    what: &str,
    mut f: impl FnMut() -> Result<T, ClientError>,
) -> Result<T, ClientError> {
    let start = Instant::now();
    loop {
        match f() {
            Err(ClientError::Transport(e)) if start.elapsed() < LIMIT => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(ClientError::Transport(e)) => panic!("{what}: no answer for {LIMIT:?}: {e}"),
            r => return r,
        }
    }
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
    let add = Kind::Add.program(&GATES_128);
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

    let mul = Kind::Mul.program(&GATES_128);
    let weak = Kind::Add.program(&INSECURE_TEST_BITS);
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

    // -------------------- tenants over TLS, kill -9 and restart, twice
    let fourth = ClientKey::generate(&GATES_128);
    tenants_over_tls_with_kill_9(&d, &log, [&client, &other, &stranger, &fourth]);
    eprintln!("whole test: {:.1} s", total.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&d);
}

/// What the spy and the strangers were refused, by kind.
#[derive(Default, Debug)]
struct Refusals {
    by_kind: BTreeMap<&'static str, usize>,
}

impl Refusals {
    fn expect<T: std::fmt::Debug>(
        &mut self,
        kind: &'static str,
        want: ErrorCode,
        r: Result<T, ClientError>,
    ) {
        match r {
            // The server is down for a restart: nothing to learn.
            Err(ClientError::Transport(_)) => {}
            r => {
                assert_eq!(code(r), want, "{kind}");
                self.count(kind);
            }
        }
    }

    fn count(&mut self, kind: &'static str) {
        *self.by_kind.entry(kind).or_default() += 1;
    }
}

/// 4 tenants x 4 clients x 6 jobs over HTTPS, tokens made and one
/// revoked with `hearth server token`, the server killed and restarted
/// twice while jobs are queued and running; a spy and strangers try what
/// they may not all along.
fn tenants_over_tls_with_kill_9(d: &Path, log: &Path, keys: [&ClientKey; TENANTS]) {
    let started = Instant::now();
    let data = d.join("tenants");
    std::fs::create_dir_all(&data).unwrap();
    let data_s = data.to_str().unwrap().to_string();
    let (cert, tls_key) = certificate(d);
    let tokens: Vec<String> = (0..TENANTS)
        .map(|t| {
            let name = format!("tenant-{t}");
            let out = hearth(&[
                "server",
                "token",
                "add",
                &name,
                "--data",
                &data_s,
                "--max-queue",
                "8",
            ]);
            out.trim().to_string()
        })
        .collect();
    let revoked = hearth(&["server", "token", "add", "tenant-0", "--data", &data_s])
        .trim()
        .to_string();
    hearth(&[
        "server",
        "token",
        "revoke",
        &revoked[4..20],
        "--data",
        &data_s,
    ]);
    let listed = hearth(&["server", "token", "list", "--data", &data_s]);
    assert!(
        listed.contains("revoked at") && listed.contains("tenant-3"),
        "{listed}"
    );
    assert!(
        tokens.iter().all(|t| !listed.contains(&t[21..])),
        "a secret was listed"
    );

    // The same port across restarts: the clients keep their URL.
    let port = crate::free_port();
    let listen = format!("127.0.0.1:{port}");
    let (cert_s, key_s) = (cert.to_str().unwrap(), tls_key.to_str().unwrap());
    let metrics_port = crate::free_port();
    let metrics_at = format!("127.0.0.1:{metrics_port}");
    let tls = [
        "--tls-cert",
        cert_s,
        "--tls-key",
        key_s,
        "--metrics-listen",
        &metrics_at,
    ];
    let server = Server::start_on(&listen, &data, log, &tls);
    assert!(server.url.starts_with("https://"), "{}", server.url);
    let url = server.url.clone();
    let api = |token: Option<&str>| {
        let b = Client::builder(&url).ca_cert(&cert);
        match token {
            Some(t) => b.token(t),
            None => b,
        }
        .build()
        .unwrap()
    };
    let xor = Kind::Xor.program(&GATES_128);
    let p = xor.to_bytes().unwrap();
    for (t, key) in keys.iter().enumerate() {
        let file = d.join(format!("tenant-{t}.key"));
        key.compressed_server_key().save(&file).unwrap();
        assert!(api(Some(&tokens[t])).upload_key(&file).unwrap().new);
    }

    // The command-line client with a token (flag, then HEARTH_TOKEN) and
    // the certificate; without the token it is refused.
    std::fs::write(d.join("t0.hb"), bundle(keys[0], &xor, 0xf0, 0x3c)).unwrap();
    xor.save(&d.join("xor.hprog")).unwrap();
    let d_str = |name: &str| d.join(name).to_str().unwrap().to_string();
    let submit = [
        "submit",
        "--url",
        &url,
        "--ca-cert",
        cert_s,
        "--server-key",
        &d_str("tenant-0.key"),
        "--program",
        &d_str("xor.hprog"),
        "--bundle",
        &d_str("t0.hb"),
    ];
    let refused = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(submit)
        .env_remove("HEARTH_TOKEN")
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("unauthorized"),
        "{refused:?}"
    );
    let job = hearth(&[&submit[..], &["--token", &tokens[0]]].concat());
    hearth_env(
        &[
            "fetch",
            "--url",
            &url,
            "--ca-cert",
            cert_s,
            "--job",
            job.trim(),
            "--out",
            &d_str("t0.out.hb"),
            "--wait",
            "--poll",
            "50ms",
        ],
        &[("HEARTH_TOKEN", &tokens[0])],
    );
    let out = std::fs::read(d.join("t0.out.hb")).unwrap();
    assert_eq!(
        decrypt_one(keys[0], &out).unwrap(),
        BigInt::from(0xf0u8 ^ 0x3c)
    );

    let acked = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    // Every acknowledged job: (tenant, id).
    let ledger: Mutex<Vec<(usize, JobId)>> = Mutex::new(Vec::new());
    let results: Mutex<Vec<(usize, JobId)>> = Mutex::new(Vec::new());
    let retried = AtomicUsize::new(0);
    let mut refusals = Refusals::default();
    let total_jobs = TENANTS * CLIENTS_PER_TENANT * JOBS_PER_TENANT_CLIENT;
    let (server, kills, recovered) = std::thread::scope(|s| {
        for t in 0..TENANTS {
            for c in 0..CLIENTS_PER_TENANT {
                let (acked, done, ledger, results, retried) =
                    (&acked, &done, &ledger, &results, &retried);
                let (api, key, p, xor, tokens) = (&api, keys[t], &p, &xor, &tokens);
                s.spawn(move || {
                    let api = api(Some(&tokens[t]));
                    let mut rng = rand::rngs::StdRng::seed_from_u64((100 + t * 10 + c) as u64);
                    let mut mine = Vec::new();
                    for _ in 0..JOBS_PER_TENANT_CLIENT {
                        let (a, b): (u8, u8) = (rng.gen(), rng.gen());
                        let bytes = bundle(key, xor, a, b);
                        let job = loop {
                            match answered("submit", || {
                                api.submit_with_key(key.key_id(), p, &bytes)
                            }) {
                                Ok(j) => break j,
                                Err(e)
                                    if matches!(
                                        e.code(),
                                        Some(ErrorCode::QueueLimit | ErrorCode::QueueFull)
                                    ) =>
                                {
                                    retried.fetch_add(1, Ordering::Relaxed);
                                    std::thread::sleep(Duration::from_millis(200));
                                }
                                Err(e) => panic!("tenant {t} client {c}: {e}"),
                            }
                        };
                        assert_eq!(job.pbs, 8);
                        mine.push((job.job_id, a ^ b));
                        ledger.lock().unwrap().push((t, job.job_id));
                        acked.fetch_add(1, Ordering::Relaxed);
                    }
                    for (id, want) in mine {
                        answered("wait", || {
                            api.wait_timeout(id, Duration::from_millis(50), LIMIT)
                        })
                        .unwrap();
                        let out = answered("result", || api.result(id)).unwrap();
                        assert_eq!(
                            decrypt_one(key, &out).unwrap(),
                            BigInt::from(want),
                            "tenant {t} job {id}"
                        );
                        // A delete whose answer was lost to a kill is
                        // answered not_found when sent again.
                        let mut sent = false;
                        match answered("delete", || {
                            let r = api.delete(id);
                            sent = true;
                            r
                        }) {
                            Ok(()) => {}
                            Err(e) if sent && e.code() == Some(ErrorCode::NotFound) => {}
                            Err(e) => panic!("delete {id}: {e}"),
                        }
                        assert_eq!(
                            code(answered("status", || api.status(id))),
                            ErrorCode::NotFound
                        );
                        results.lock().unwrap().push((t, id));
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                });
            }
        }
        // The spy: each tenant tries the others' jobs and keys; strangers
        // try without a token, with a wrong one and with a revoked one.
        let spy = {
            let (done, ledger, api, tokens, keys, p, xor, revoked) =
                (&done, &ledger, &api, &tokens, &keys, &p, &xor, &revoked);
            s.spawn(move || {
                let mut r = Refusals::default();
                let clients: Vec<Client> = tokens.iter().map(|t| api(Some(t))).collect();
                let nobody = api(None);
                let mut wrong_token = tokens[1].clone();
                wrong_token.replace_range(
                    30..31,
                    if &wrong_token[30..31] == "0" {
                        "1"
                    } else {
                        "0"
                    },
                );
                let wrong = api(Some(&wrong_token));
                let gone = api(Some(revoked));
                let foreign: Vec<Vec<u8>> = keys.iter().map(|k| bundle(k, xor, 1, 2)).collect();
                while done.load(Ordering::Relaxed) < total_jobs {
                    let seen: Vec<(usize, JobId)> = ledger
                        .lock()
                        .unwrap()
                        .iter()
                        .rev()
                        .take(4)
                        .copied()
                        .collect();
                    for &(owner, id) in &seen {
                        let thief = (owner + 1) % TENANTS;
                        let c = &clients[thief];
                        r.expect(
                            "status of another tenant's job",
                            ErrorCode::NotFound,
                            c.status(id),
                        );
                        r.expect(
                            "result of another tenant's job",
                            ErrorCode::NotFound,
                            c.result(id),
                        );
                        r.expect(
                            "delete of another tenant's job",
                            ErrorCode::NotFound,
                            c.delete(id),
                        );
                        r.expect(
                            "job under another tenant's key",
                            ErrorCode::UnknownKey,
                            c.submit_with_key(keys[owner].key_id(), p, &foreign[owner]),
                        );
                        match c.key(keys[owner].key_id()) {
                            Ok(None) => r.count("another tenant's key id"),
                            Ok(Some(k)) => panic!("tenant {thief} sees key {}", k.key_id),
                            Err(ClientError::Transport(_)) => {}
                            Err(e) => panic!("{e}"),
                        }
                        r.expect("no token", ErrorCode::Unauthorized, nobody.status(id));
                        r.expect("wrong token", ErrorCode::Unauthorized, wrong.result(id));
                        r.expect("revoked token", ErrorCode::Unauthorized, gone.delete(id));
                    }
                    r.expect(
                        "no token",
                        ErrorCode::Unauthorized,
                        nobody.submit(p, &foreign[0]),
                    );
                    r.expect("revoked token", ErrorCode::Unauthorized, gone.stats());
                    std::thread::sleep(Duration::from_millis(400));
                }
                r
            })
        };
        // The killer: twice, once some jobs are acknowledged and queued.
        let killer = {
            let (acked, api, tokens) = (&acked, &api, &tokens);
            let (listen, data, tls) = (listen.clone(), data.clone(), tls);
            s.spawn(move || {
                let mut server = server;
                let mut recovered = 0;
                for round in 1..=2 {
                    while acked.load(Ordering::Relaxed) < round * total_jobs / 3 {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    let pending: usize = tokens
                        .iter()
                        .map(|t| api(Some(t)).stats().map(|s| s.queued + s.running).unwrap_or(0))
                        .sum();
                    assert!(pending > 1, "nothing queued to lose at kill {round}");
                    let seen = scrape(
                        metrics_port,
                        &["hearth_queue_depth", "hearth_jobs{", "hearth_bootstraps_total"],
                    );
                    assert!(!seen.is_empty(), "no metrics before kill {round}");
                    eprintln!("metrics before kill {round}: {seen:?}");
                    server.kill9();
                    server = Server::start_on(&listen, &data, log, &tls);
                    let after = api(Some(&tokens[0])).stats().unwrap();
                    assert!(after.recovered > 0, "{after:?}");
                    recovered += after.recovered;
                    eprintln!("kill {round}: {pending} jobs queued or running, {} queued again after the restart", after.recovered);
                }
                (server, 2, recovered)
            })
        };
        refusals = spy.join().unwrap();
        killer.join().unwrap()
    });
    let results = results.into_inner().unwrap();
    let ids: HashSet<JobId> = results.iter().map(|r| r.1).collect();
    assert_eq!(results.len(), total_jobs);
    assert_eq!(ids.len(), total_jobs, "duplicate job ids");
    let end = scrape(
        metrics_port,
        &[
            "hearth_jobs_accepted_total",
            "hearth_jobs_finished_total",
            "hearth_bootstraps_total",
            "hearth_job_seconds_sum",
            "hearth_job_seconds_count",
            "hearth_refusals_total",
            "hearth_key_cache_total",
        ],
    );
    eprintln!("metrics since the last restart: {end:?}");
    assert!(
        end.iter()
            .any(|l| l.starts_with("hearth_refusals_total{code=\"unauthorized\"}")),
        "{end:?}"
    );
    // Jobs whose acknowledgment a kill cut off were sent again: the
    // first copies are the tenants' own, left on the server.
    let mut orphans = 0;
    for token in &tokens {
        let st = api(Some(token)).stats().unwrap();
        assert_eq!((st.queued, st.running, st.failed), (0, 0, 0), "{st:?}");
        orphans += st.done;
    }
    eprintln!(
        "tenants: {total_jobs} acknowledged jobs from {TENANTS} tenants x {CLIENTS_PER_TENANT} clients over TLS, \
         all decrypted right by their owners, fetched, deleted, then not_found; {kills} kills, {recovered} unfinished \
         jobs queued again from disk, {} submissions retried on queue_limit / queue_full, {orphans} unacknowledged \
         copies left; {:.1} s",
        retried.into_inner(),
        started.elapsed().as_secs_f64()
    );
    eprintln!("refused: {:?}", refusals.by_kind);
    for kind in [
        "status of another tenant's job",
        "result of another tenant's job",
        "delete of another tenant's job",
        "job under another tenant's key",
        "another tenant's key id",
        "no token",
        "wrong token",
        "revoked token",
    ] {
        assert!(
            refusals.by_kind.get(kind).copied().unwrap_or(0) > 0,
            "never tried: {kind}"
        );
    }
    drop(server);
}

/// `hearth server --backend gpu` where no GPU can be used falls back to
/// the cpu backend as `run` does, saying why, and serves jobs there; with
/// `HEARTH_REQUIRE_GPU` it does not start. In a build without MPI,
/// `--backend mpi` is refused, saying how to get it.
#[test]
fn the_gpu_backend_falls_back_as_run_does() {
    if hearth::backend::no_gpu_reason().is_none() {
        eprintln!("a GPU is usable here: the fallback is not exercised");
        return;
    }
    let d = dir("gpu-fallback");
    let log = d.join("server.log");
    let server = Server::start(&d.join("data"), &log, &["--backend", "gpu"]);
    let api = server.client();
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let add = Kind::Add.program(&GATES_128);
    let job = api
        .submit(&add.to_bytes().unwrap(), &bundle(&client, &add, 250, 9))
        .unwrap()
        .job_id;
    collect(&api, &client, job, 250u8.wrapping_add(9));
    drop(server);
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.contains("--backend gpu: this build has no GPU backend")
            && said.contains("jobs run on the cpu backend"),
        "{said}"
    );
    let mut refused = vec![(
        Some(("HEARTH_REQUIRE_GPU", "1")),
        "gpu",
        "no fallback to the cpu backend",
    )];
    if cfg!(not(feature = "mpi")) {
        refused.push((None, "mpi", "this build has no MPI backend"));
    }
    for (env, backend, why) in refused {
        let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
            .args(["server", "--listen", "127.0.0.1:0", "--backend", backend])
            .arg("--data")
            .arg(d.join("data"))
            .envs(env)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(why),
            "{backend}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `hearth server --backend mpi` on 2 ranks of 1 thread under `mpirun`:
/// jobs under two keys, alternating, decrypt to Rust's `u8` products, and
/// each key travels to rank 1 once (`hearth_key_transfers_total`). Then
/// rank 1 is killed (`kill -9`) mid-job: the launch ends naming it, and
/// the job, kept on disk, runs again on a server started after it.
#[cfg(feature = "mpi")]
#[test]
fn the_server_on_two_ranks_and_a_dead_rank() {
    if Command::new("mpirun").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("HEARTH_REQUIRE_MPI").is_none(),
            "HEARTH_REQUIRE_MPI is set and mpirun is missing"
        );
        eprintln!("skipped: no mpirun (install openmpi-bin)");
        return;
    }
    let d = dir("mpi");
    let data = d.join("data");
    let metrics_port = crate::free_port();
    let metrics = format!("127.0.0.1:{metrics_port}");
    // Killed if the test fails first (mpirun then ends its ranks).
    struct Launch(Child);
    impl Drop for Launch {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let launch = Command::new("mpirun")
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "2"])
        .arg(env!("CARGO_BIN_EXE_hearth"))
        .args(["server", "--backend", "mpi", "--threads", "1"])
        // Quiet: stderr is read only at the end, so the logs must not
        // fill its pipe meanwhile.
        .args([
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            &metrics,
            "--quiet",
        ])
        .arg("--data")
        .arg(&data)
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut launch = Launch(launch);
    let mut out = BufReader::new(launch.0.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_string();
    let api = Client::new(&url).unwrap();
    let info = api.info().unwrap();
    assert_eq!(
        (info.backend.as_str(), info.max_jobs),
        ("mpi, 2 ranks x 1 thread, one job at a time", 1)
    );
    let keys: Vec<ClientKey> = (0..2).map(|_| ClientKey::generate(&GATES_128)).collect();
    for k in &keys {
        api.upload_key(&k.compressed_server_key().to_bytes().unwrap())
            .unwrap();
    }
    let mul = Kind::Mul.program(&GATES_128);
    let mul_bytes = mul.to_bytes().unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(41);
    for i in 0..5 {
        let key = &keys[i % 2];
        let (a, b): (u8, u8) = (rng.gen(), rng.gen());
        let job = api
            .submit(&mul_bytes, &bundle(key, &mul, a, b))
            .unwrap()
            .job_id;
        collect(&api, key, job, a.wrapping_mul(b));
    }
    assert_eq!(
        scrape(metrics_port, &["hearth_key_transfers_total"]),
        ["hearth_key_transfers_total 2"],
        "each key sent to the ranks once"
    );

    // A job long enough to be running when rank 1 dies: a u16 product.
    let p = Program::new(&GATES_128);
    let (a, b) = (hearth::api::U16::input(&p), hearth::api::U16::input(&p));
    p.output(&(&a * &b));
    let long = p.build().unwrap();
    let inputs = [vec![BigInt::from(51_234u32)], vec![BigInt::from(4_321u32)]];
    let long_bundle = keys[0]
        .encrypt_bundle(&long.signature().inputs, &inputs)
        .unwrap()
        .to_bytes()
        .unwrap();
    let job = api
        .submit(&long.to_bytes().unwrap(), &long_bundle)
        .unwrap()
        .job_id;
    let start = Instant::now();
    while !matches!(
        api.status(job).unwrap().state,
        hearth_server::JobState::Running { done, .. } if done > 0
    ) {
        assert!(start.elapsed() < LIMIT, "the long job never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let rank1 = rank_pid(&data, 1).expect("rank 1 of the launch is running");
    Command::new("kill")
        .args(["-9", &rank1.to_string()])
        .status()
        .unwrap();
    let ended = Instant::now();
    let status = launch.0.wait().unwrap();
    let mut said = String::new();
    std::io::Read::read_to_string(&mut launch.0.stderr.take().unwrap(), &mut said).unwrap();
    std::io::Read::read_to_string(&mut out, &mut said).unwrap();
    eprintln!(
        "launch ended {:?} after the kill, saying:\n{}",
        ended.elapsed(),
        said.lines()
            .filter(|l| l.contains("rank") || l.contains("PID"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(!status.success(), "the launch ends when a rank dies");
    assert!(
        said.contains("rank 1") || said.contains(&format!("PID {rank1}")),
        "the dead rank is named: {said}"
    );
    // The job is on disk: a server started again runs it.
    let server = Server::start(&data, &d.join("after.log"), &[]);
    let api = server.client();
    answered("wait", || {
        api.wait_timeout(job, Duration::from_millis(50), LIMIT)
    })
    .unwrap();
    let out = api.result(job).unwrap();
    let got = Bundle::from_bytes(Path::new("result"), &out).unwrap();
    assert_eq!(
        keys[0].decrypt_bundle(&got).unwrap()[0].1[0],
        BigInt::from(51_234u16.wrapping_mul(4_321))
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&d);
}

/// The pid of rank `rank` of a `hearth server` launch serving `data`
/// (Open MPI tells each rank its number in `OMPI_COMM_WORLD_RANK`).
#[cfg(feature = "mpi")]
fn rank_pid(data: &Path, rank: u32) -> Option<u32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    let data = data.to_str()?;
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let environ = std::fs::read(e.path().join("environ")).ok()?;
        let has = |bytes: &[u8], s: &str| bytes.split(|&b| b == 0).any(|w| w == s.as_bytes());
        (has(&cmdline, "server") && has(&cmdline, data) && has(&environ, &want)).then_some(pid)
    })
}
