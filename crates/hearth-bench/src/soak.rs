//! `hearth-bench soak`: `hearth server` (a child process, loopback only)
//! for a long while under four tenants' normal clients and hostile
//! clients at once, killed with `kill -9` halfway and started again on
//! its folder (issue 59).
//!
//! * **Tenants.** Four, each with its own key and two clients. A client
//!   submits a job of a random kind (`u8` add, product, xor) on random
//!   inputs, waits, fetches, decrypts, checks the value against Rust's
//!   integers and deletes the job, again and again; it retries what the
//!   server refuses for now (`queue_full`, `queue_limit`) and what goes
//!   unanswered while the server is down. Every acknowledged job must be
//!   found again and exact: none lost across the kill, none wrong.
//! * **Attackers.** On 127.0.0.2 to 127.0.0.5 (other client addresses
//!   than the tenants' 127.0.0.1): connections that send half a request
//!   line, and a valid token's headers without their end, all the time;
//!   and in rounds, one tenant's output bombs, compact bundles of 65 536
//!   ciphertexts, key uploads over its `--max-keys`, zero-bootstrap jobs
//!   until its `--max-storage` refuses them, downloads of its results that
//!   never read, and uploads at one byte a second.
//! * **Footprint.** The server's resident memory (and its peak in each
//!   second, `VmHWM` reset every second), open descriptors and data
//!   folder's bytes, every second.
//!
//! Written to `--out`: `samples.json` (the samples and every count),
//! `summary.md`, and `footprint.svg` (memory and descriptors over time,
//! the kill marked). The run fails if a legitimate job was lost or wrong,
//! or an attack was accepted.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use hearth::{ClientKey, CompiledProgram, Error, GATES_128};
use hearth_server::{Client, ClientError, ErrorCode, JobId};
use hearth_testkit::hostile::footprint::{footprint, mib, reset_peak};
use hearth_testkit::hostile::net::{slow_downloads, trickle, Stalled, Stalls};
use hearth_testkit::hostile::payloads::{
    bundle, copies_program, decrypt_one, key_file, output_bomb, wide_bundle, Kind,
};
use hearth_testkit::hostile::ServerProcess;
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use serde_json::json;

use crate::plot::{Panel, Series};

/// Tenants with normal clients.
const TENANTS: usize = 4;
/// Clients of each tenant, each with one job at a time.
const CLIENTS: usize = 2;
/// The server's options: limits small enough for the attacks to reach.
const SERVER_ARGS: &[&str] = &[
    "--threads",
    "2",
    "--max-connections-per-ip",
    "16",
    "--header-timeout",
    "2s",
    "--max-uploads",
    "8",
    "--max-uploads-per-tenant",
    "2",
    "--body-timeout",
    "4s",
    "--max-downloads",
    "4",
    "--quiet",
];
/// Copies in the attacker's zero-bootstrap jobs (a 6 MiB result each).
const COPIES: usize = 64;
/// The attacker's zero-bootstrap jobs its quota holds (with its key).
const FILL_JOBS: u64 = 3;
/// Downloads that never read, and how long they hold on: past the
/// server's `--body-timeout`, so that those waiting for a download permit
/// are refused meanwhile, and past two of its 5 s windows of the minimum
/// rate, after which it drops a reader that takes nothing.
const SLOW_READERS: usize = 16;
const READERS_HOLD: Duration = Duration::from_secs(12);
/// Uploads at one byte a second at once.
const SLOW_UPLOADS: usize = 4;
/// Longest a client retries one request (the server down for a restart,
/// a queue full) or waits for one job.
const PATIENCE: Duration = Duration::from_secs(120);

/// The attackers' addresses, one per kind of attack, so that the limits
/// per client address of one do not stop another: connections that send
/// half a request line, those that send a token's headers without their
/// end, downloads that never read, uploads at one byte a second.
const HALF_LINES: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
const HEADERS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 3);
const READERS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 4);
const UPLOADERS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 5);

/// `hearth-bench soak`'s options.
pub struct Options {
    /// How long to run.
    pub duration: Duration,
    /// The `hearth` binary that serves.
    pub hearth: PathBuf,
    /// Where the samples, the summary and the plot go.
    pub out: PathBuf,
    /// The server's `--key-cache`, where not its default.
    pub key_cache: Option<usize>,
}

impl Options {
    /// The server's command-line options: [`SERVER_ARGS`], then
    /// `--key-cache` where set.
    fn server_args(&self) -> Vec<String> {
        let mut args: Vec<String> = SERVER_ARGS.iter().map(|a| a.to_string()).collect();
        if let Some(n) = self.key_cache {
            args.extend(["--key-cache".to_string(), n.to_string()]);
        }
        args
    }
}

fn failed(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Config(format!("soak, {what}: {e}"))
}

/// What the tenants' clients saw.
#[derive(Default)]
struct Ledger {
    /// Jobs acknowledged (a job id received).
    acked: usize,
    /// Acknowledged before the kill.
    acked_before_kill: usize,
    /// Jobs whose result decrypted to Rust's value.
    exact: usize,
    /// Jobs whose result did not (job id, what came).
    wrong: Vec<String>,
    /// Acknowledged jobs not found again, failed, or whose result could
    /// not be fetched (job id, why).
    lost: Vec<String>,
    /// Refusals retried, by request and code (`submit queue_full`), and
    /// requests unanswered while the server was down (`... no answer`).
    retried: BTreeMap<String, u64>,
    /// Submissions sent again after no answer: a first copy may have been
    /// accepted (the tenant's own, left on the server).
    resent: usize,
    /// Seconds from submission to the check, by kind.
    seconds: BTreeMap<&'static str, Vec<f64>>,
}

/// One sample of the server's footprint.
#[derive(Clone, Copy, Debug)]
struct Sample {
    t: f64,
    rss: u64,
    peak: u64,
    fds: usize,
    disk: u64,
}

/// The kill halfway, and the restart.
#[derive(Clone, Debug, Default)]
struct Kill {
    at: f64,
    pending: u64,
    recovered: u64,
    down: f64,
}

/// What the hostile clients send, made once.
struct Arsenal {
    bomb: (Vec<u8>, Vec<u8>),
    add: Vec<u8>,
    wide: Vec<u8>,
    spare_key: Vec<u8>,
    copies: Vec<u8>,
    copies_input: Vec<u8>,
}

/// Everything the soak's threads share.
struct Soak {
    hearth: PathBuf,
    /// The server's options (at the start and the restart).
    server_args: Vec<String>,
    url: String,
    addr: SocketAddr,
    start: Instant,
    end: Instant,
    /// The server's process id (it changes at the restart).
    pid: AtomicU32,
    data: PathBuf,
    tokens: Vec<String>,
    attacker: String,
    keys: Vec<ClientKey>,
    programs: Vec<(Kind, CompiledProgram, Vec<u8>)>,
    ledger: Mutex<Ledger>,
    /// Attacks by kind: what the server answered, counted.
    attacks: Mutex<BTreeMap<&'static str, BTreeMap<String, u64>>>,
    /// Set once the kill is done: jobs acknowledged later count after it.
    killed: AtomicBool,
    /// Clients still running (the sampler stops after them).
    running: AtomicUsize,
}

/// A client thread counted in [`Soak::running`] until it ends, panic
/// or not (the sampler waits for the count to reach 0).
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What an answer was, in the attack counts: its code, or `accepted`.
fn outcome<T>(r: &Result<T, ClientError>) -> String {
    match r {
        Ok(_) => "accepted".into(),
        Err(ClientError::Transport(_)) => "no answer".into(),
        Err(e) => e
            .code()
            .map_or_else(|| e.to_string(), |c| c.as_str().into()),
    }
}

impl Soak {
    fn client(&self, token: &str) -> Client {
        Client::builder(&self.url)
            .token(token)
            .build()
            .expect("the URL is http")
    }

    fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    fn count(&self, attack: &'static str, what: impl Into<String>) {
        *lock(&self.attacks)
            .entry(attack)
            .or_default()
            .entry(what.into())
            .or_default() += 1;
    }

    /// Calls `f` until it is answered with other than a refusal for now
    /// (`queue_full`, `queue_limit`) or no answer at all, each retry
    /// counted under `what`; gives up after [`PATIENCE`].
    fn retry<T>(
        &self,
        what: &str,
        mut f: impl FnMut() -> Result<T, ClientError>,
    ) -> Result<T, ClientError> {
        let t = Instant::now();
        loop {
            let r = f();
            let why = match &r {
                Err(ClientError::Transport(_)) => "no answer",
                Err(e) if e.code() == Some(ErrorCode::QueueFull) => "queue_full",
                Err(e) if e.code() == Some(ErrorCode::QueueLimit) => "queue_limit",
                _ => return r,
            };
            if t.elapsed() > PATIENCE {
                return r;
            }
            *lock(&self.ledger)
                .retried
                .entry(format!("{what} {why}"))
                .or_default() += 1;
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// One tenant's client: jobs one after another until the end.
    fn tenant(&self, tenant: usize, seed: u64) {
        let _running = Running(&self.running);
        let api = self.client(&self.tokens[tenant]);
        let key = &self.keys[tenant];
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        while Instant::now() < self.end {
            let (kind, program, bytes) = &self.programs[rng.gen_range(0..self.programs.len())];
            let (a, b): (u8, u8) = (rng.gen(), rng.gen());
            let input = bundle(key, program, a, b);
            let t = Instant::now();
            let mut sent = 0;
            let submitted = self.retry("submit", || {
                sent += 1;
                api.submit(bytes, &input)
            });
            let id = match submitted {
                Ok(j) => j.job_id,
                // Time's up, or a refusal a client cannot wait out.
                Err(_) => continue,
            };
            {
                let mut l = lock(&self.ledger);
                l.acked += 1;
                if !self.killed.load(Ordering::Relaxed) {
                    l.acked_before_kill += 1;
                }
                l.resent += usize::from(sent > 1);
            }
            let verdict = self.collect(&api, key, id, kind.expected(a, b));
            let mut l = lock(&self.ledger);
            match verdict {
                Ok(()) => {
                    l.exact += 1;
                    l.seconds
                        .entry(kind.name())
                        .or_default()
                        .push(t.elapsed().as_secs_f64());
                }
                Err(Verdict::Wrong(w)) => l.wrong.push(format!("{id}: {w}")),
                Err(Verdict::Lost(w)) => l.lost.push(format!("{id}: {w}")),
            }
        }
    }

    /// Waits for job `id`, fetches it, checks it decrypts to `want`, and
    /// deletes it (a delete whose answer a kill cut off is answered
    /// `not_found` when sent again).
    fn collect(&self, api: &Client, key: &ClientKey, id: JobId, want: u8) -> Result<(), Verdict> {
        let lost = |e: ClientError| Verdict::Lost(e.to_string());
        self.retry("wait", || {
            api.wait_timeout(id, Duration::from_millis(20), PATIENCE)
        })
        .map_err(lost)?;
        let out = self.retry("result", || api.result(id)).map_err(lost)?;
        let got = decrypt_one(key, &out).map_err(|e| Verdict::Wrong(e.to_string()))?;
        let mut sent = 0;
        match self.retry("delete", || {
            sent += 1;
            api.delete(id)
        }) {
            Ok(()) => {}
            Err(e) if sent > 1 && e.code() == Some(ErrorCode::NotFound) => {}
            Err(e) => return Err(lost(e)),
        }
        if got != BigInt::from(want) {
            return Err(Verdict::Wrong(format!("{got}, Rust says {want}")));
        }
        Ok(())
    }

    /// The hostile tenant's rounds until the end.
    fn hostile(&self, arms: &Arsenal) {
        let _running = Running(&self.running);
        let api = self.client(&self.attacker);
        while Instant::now() < self.end {
            let r = api.submit(&arms.bomb.0, &arms.bomb.1);
            self.count("output bomb", outcome(&r));
            if matches!(r, Err(ClientError::Transport(_))) {
                // The server is down (the kill): a round would be answered
                // by nothing at once, again and again.
                std::thread::sleep(Duration::from_millis(250));
                continue;
            }
            let r = api.submit(&arms.add, &arms.wide);
            self.count("compact bundle of 65 536 ciphertexts", outcome(&r));
            for _ in 0..3 {
                let r = api.upload_key(&arms.spare_key);
                self.count("key upload over --max-keys", outcome(&r));
            }
            self.fill_and_read_slowly(&api, arms);
            self.slow_uploads();
        }
    }

    /// Zero-bootstrap jobs until the quota refuses one, downloads of one
    /// of their results that never read, then the jobs deleted (room for
    /// the next round).
    fn fill_and_read_slowly(&self, api: &Client, arms: &Arsenal) {
        let mut kept = Vec::new();
        for _ in 0..2 * FILL_JOBS {
            let r = api.submit(&arms.copies, &arms.copies_input);
            self.count("zero-bootstrap fill", outcome(&r));
            match r {
                Ok(j) => kept.push(j.job_id),
                Err(_) => break,
            }
        }
        let done = |id: &JobId| {
            self.retry("attacker's wait", || {
                api.wait_timeout(*id, Duration::from_millis(20), PATIENCE)
            })
            .is_ok()
        };
        if let Some(id) = kept.iter().find(|id| done(id)) {
            let path = format!("/v1/jobs/{id}/result");
            let answers = slow_downloads(
                self.addr,
                READERS,
                &path,
                Some(&self.attacker),
                SLOW_READERS,
                READERS_HOLD,
            );
            for d in answers {
                let what = match (d.status, d.code) {
                    (200, _) if d.dropped => "sent, dropped as too slow".to_string(),
                    (200, _) => "sent, kept to the end".to_string(),
                    (0, _) => "no answer".to_string(),
                    (_, Some(code)) => code,
                    (s, None) => format!("HTTP {s}"),
                };
                self.count("download that never reads", what);
            }
        }
        for id in kept {
            let _ = self.retry("attacker's delete", || api.delete(id));
        }
    }

    /// Uploads at one byte a second, at once.
    fn slow_uploads(&self) {
        std::thread::scope(|s| {
            let uploads: Vec<_> = (0..SLOW_UPLOADS)
                .map(|_| {
                    s.spawn(|| {
                        trickle(
                            self.addr,
                            UPLOADERS,
                            "/v1/jobs",
                            Some(&self.attacker),
                            PATIENCE / 4,
                        )
                    })
                })
                .collect();
            for u in uploads {
                let what = match u.join().expect("a trickle does not panic") {
                    Ok(Some((_, Some(code), _))) => code,
                    Ok(Some((status, None, _))) => format!("HTTP {status}"),
                    Ok(None) => "no answer".into(),
                    Err(e) => format!("{:?}", e.kind()),
                };
                self.count("upload at 1 byte/s", what);
            }
        });
    }

    /// The server's footprint every second until the clients are done,
    /// its peak memory reset after each sample.
    fn sample(&self) -> Vec<Sample> {
        let mut samples = Vec::new();
        while self.running.load(Ordering::Relaxed) > 0 {
            std::thread::sleep(Duration::from_secs(1));
            let pid = self.pid.load(Ordering::Relaxed);
            if let Some(f) = footprint(pid, &self.data) {
                reset_peak(pid);
                samples.push(Sample {
                    t: self.seconds(),
                    rss: f.rss,
                    peak: f.hwm.max(f.rss),
                    fds: f.fds,
                    disk: f.disk,
                });
            }
        }
        samples
    }
}

/// Why an acknowledged job did not count as exact.
enum Verdict {
    Wrong(String),
    Lost(String),
}

/// `hearth server token add NAME --data DATA LIMITS`: the token.
fn token(hearth: &Path, data: &Path, name: &str, limits: &[&str]) -> Result<String, Error> {
    let out = std::process::Command::new(hearth)
        .args(["server", "token", "add", name, "--data"])
        .arg(data)
        .args(limits)
        .output()
        .map_err(|e| failed("token add", e))?;
    if !out.status.success() {
        return Err(failed(
            "token add",
            String::from_utf8_lossy(&out.stderr).trim(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A loopback port free now (the server keeps it across its restart).
fn free_port() -> Result<u16, Error> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| failed("a free port", e))
}

/// Runs the soak (see the module doc).
pub fn soak(o: &Options) -> Result<(), Error> {
    if !o.hearth.is_file() {
        return Err(failed(
            "--hearth",
            format!(
                "no `hearth` binary at {} (cargo build --release -p hearth-cli, or name it)",
                o.hearth.display()
            ),
        ));
    }
    std::fs::create_dir_all(&o.out).map_err(|e| failed("--out", e))?;
    let work = std::env::temp_dir().join(format!("hearth-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let data = work.join("data");
    std::fs::create_dir_all(&data).map_err(|e| failed("the data folder", e))?;
    let log = work.join("server.log");
    let result = run(o, &data, &log);
    let _ = std::fs::remove_dir_all(&work);
    result
}

fn run(o: &Options, data: &Path, log: &Path) -> Result<(), Error> {
    let t = Instant::now();
    let keys: Vec<ClientKey> = (0..TENANTS)
        .map(|_| ClientKey::generate(&GATES_128))
        .collect();
    let attacker_key = ClientKey::generate(&GATES_128);
    let copies = copies_program(COPIES);
    let copies_input = bundle(&attacker_key, &copies, 1, 2);
    let arms = Arsenal {
        bomb: output_bomb(&attacker_key),
        add: Kind::Add.program(&GATES_128).to_bytes()?,
        wide: wide_bundle(&attacker_key),
        spare_key: key_file(&ClientKey::generate(&GATES_128)),
        copies: copies.to_bytes()?,
        copies_input,
    };
    let attacker_key_file = key_file(&attacker_key);
    let job_bytes = (arms.copies.len() + arms.copies_input.len()) as u64 + copies.result_bytes();
    let quota = attacker_key_file.len() as u64 + FILL_JOBS * job_bytes + job_bytes / 2;
    let tokens = (0..TENANTS)
        .map(|t| {
            token(
                &o.hearth,
                data,
                &format!("tenant-{t}"),
                &["--max-queue", "8"],
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let attacker = token(
        &o.hearth,
        data,
        "attacker",
        &["--max-keys", "1", "--max-storage", &quota.to_string()],
    )?;
    eprintln!(
        "soak: {} keys and the attacks' files in {:.1} s",
        TENANTS + 2,
        t.elapsed().as_secs_f64()
    );

    let listen = format!("127.0.0.1:{}", free_port()?);
    let server_args = o.server_args();
    let args: Vec<&str> = server_args.iter().map(String::as_str).collect();
    let server = ServerProcess::start(&o.hearth, &listen, data, log, &args)
        .map_err(|e| failed("starting the server", e))?;
    let mut soak = Soak {
        hearth: o.hearth.clone(),
        server_args: server_args.clone(),
        url: server.url.clone(),
        addr: server.addr,
        // Set again once the keys are registered.
        start: Instant::now(),
        end: Instant::now() + o.duration,
        pid: AtomicU32::new(server.pid()),
        data: data.to_path_buf(),
        tokens,
        attacker,
        programs: Kind::ALL
            .iter()
            .map(|k| {
                let p = k.program(&GATES_128);
                let bytes = p.to_bytes().expect("a program serializes");
                (*k, p, bytes)
            })
            .collect(),
        keys,
        ledger: Mutex::default(),
        attacks: Mutex::default(),
        killed: AtomicBool::new(false),
        running: AtomicUsize::new(TENANTS * CLIENTS + 1),
    };
    for (t, key) in soak.keys.iter().enumerate() {
        soak.client(&soak.tokens[t])
            .upload_key(&key_file(key))
            .map_err(|e| failed("a tenant's key", e))?;
    }
    soak.client(&soak.attacker)
        .upload_key(&attacker_key_file)
        .map_err(|e| failed("the attacker's key", e))?;
    soak.start = Instant::now();
    soak.end = soak.start + o.duration;

    let (samples, kill, finals, stalls) = std::thread::scope(|s| {
        let soak = &soak;
        let sampler = s.spawn(|| soak.sample());
        let half = Stalled::start(soak.addr, HALF_LINES, 64, b"GET /v1/info HT".to_vec());
        let headers = format!(
            "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/octet-stream\r\n",
            soak.attacker
        );
        let slow = Stalled::start(soak.addr, HEADERS, 32, headers.into_bytes());
        for t in 0..TENANTS {
            for c in 0..CLIENTS {
                s.spawn(move || soak.tenant(t, (t * CLIENTS + c) as u64));
            }
        }
        s.spawn(|| soak.hostile(&arms));
        let restarted = kill_halfway(soak, server, &listen, data, log);
        let samples = sampler.join().expect("the sampler does not panic");
        // The tenants' jobs left on the server: none but the first copies
        // of submissions sent again.
        let finals: Vec<_> = soak
            .tokens
            .iter()
            .map(|t| soak.client(t).stats().ok())
            .collect();
        let kill = restarted.map(|(kill, _server)| kill);
        (samples, kill, finals, [half.stop(), slow.stop()])
    });
    let report = Report {
        o,
        soak: &soak,
        samples: &samples,
        kill: &kill?,
        finals: &finals,
        stalls: &stalls,
        quota,
        log: &ServerLog::read(log),
    };
    report.write()?;
    report.verdict()
}

/// Waits for half the run and for the tenants to have jobs pending (up
/// to three quarters of the run), kills the server with SIGKILL and
/// starts it again on the same folder and port: what was pending, what
/// came back, how long it was down; and the server.
fn kill_halfway(
    soak: &Soak,
    server: ServerProcess,
    listen: &str,
    data: &Path,
    log: &Path,
) -> Result<(Kill, ServerProcess), Error> {
    let halfway = soak.start + (soak.end - soak.start) / 2;
    std::thread::sleep(halfway.saturating_duration_since(Instant::now()));
    let stats = |f: fn(&hearth_server::ServerStats) -> u64| -> u64 {
        soak.tokens
            .iter()
            .filter_map(|t| soak.client(t).stats().ok())
            .map(|st| f(&st))
            .sum()
    };
    // The kill comes once the tenants have jobs queued or running (they
    // may all be fetching results for a while), three quarters into the
    // run at the latest.
    let latest = soak.start + (soak.end - soak.start) * 3 / 4;
    let pending_now = || stats(|st| (st.queued + st.running) as u64);
    let mut pending = pending_now();
    while pending == 0 && Instant::now() < latest {
        std::thread::sleep(Duration::from_millis(50));
        pending = pending_now();
    }
    let at = soak.seconds();
    server.kill9();
    soak.killed.store(true, Ordering::Relaxed);
    let t = Instant::now();
    let args: Vec<&str> = soak.server_args.iter().map(String::as_str).collect();
    let server = ServerProcess::start(&soak.hearth, listen, data, log, &args)
        .map_err(|e| failed("the restart", e))?;
    let down = t.elapsed().as_secs_f64();
    soak.pid.store(server.pid(), Ordering::Relaxed);
    let recovered = stats(|st| st.recovered);
    eprintln!(
        "soak: killed at {at:.0} s with {pending} of the tenants' jobs queued or running; up \
         again in {:.0} ms, {recovered} queued again from disk",
        down * 1e3
    );
    let kill = Kill {
        at,
        pending,
        recovered,
        down,
    };
    Ok((kill, server))
}

/// The median and the 95th percentile of `v`.
fn quantiles(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v.get(((v.len() as f64 - 1.0) * q).round() as usize);
    (
        at(0.5).copied().unwrap_or(0.0),
        at(0.95).copied().unwrap_or(0.0),
    )
}

/// One decimal.
fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// What the soak found, written out.
struct Report<'a> {
    o: &'a Options,
    soak: &'a Soak,
    samples: &'a [Sample],
    kill: &'a Kill,
    finals: &'a [Option<hearth_server::ServerStats>],
    stalls: &'a [Stalls; 2],
    quota: u64,
    log: &'a ServerLog,
}

/// What the server logged (`--quiet`: warnings and errors only).
struct ServerLog {
    warnings: usize,
    errors: usize,
    /// The first few error lines.
    first_errors: Vec<String>,
}

impl ServerLog {
    fn read(path: &Path) -> ServerLog {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let errors: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("ERROR") || l.contains("panicked"))
            .collect();
        ServerLog {
            warnings: text.lines().filter(|l| l.contains("WARN")).count(),
            errors: errors.len(),
            first_errors: errors.iter().take(5).map(|l| l.to_string()).collect(),
        }
    }
}

/// The peaks and medians of some samples.
struct Summary {
    peak_rss: u64,
    median_rss: u64,
    peak_fds: usize,
    peak_disk: u64,
}

impl Summary {
    fn of<'s>(samples: impl Iterator<Item = &'s Sample>) -> Summary {
        let samples: Vec<&Sample> = samples.collect();
        let mut rss: Vec<u64> = samples.iter().map(|s| s.rss).collect();
        rss.sort_unstable();
        Summary {
            peak_rss: samples.iter().map(|s| s.peak).max().unwrap_or(0),
            median_rss: rss.get(rss.len() / 2).copied().unwrap_or(0),
            peak_fds: samples.iter().map(|s| s.fds).max().unwrap_or(0),
            peak_disk: samples.iter().map(|s| s.disk).max().unwrap_or(0),
        }
    }
}

/// Names of the stalled connections' two kinds.
const STALLS: [&str; 2] = [
    "half a request line, no token (64 kept open)",
    "a token's headers without their end (32 kept open)",
];

impl Report<'_> {
    fn write(&self) -> Result<(), Error> {
        let save = |name: &str, text: &str| {
            let path = self.o.out.join(name);
            std::fs::write(&path, text).map_err(|e| failed(&path.display().to_string(), e))
        };
        let json = serde_json::to_string(&self.json()).expect("JSON values serialize");
        save("samples.json", &(json + "\n"))?;
        let md = self.markdown();
        print!("{md}");
        save("summary.md", &md)?;
        save("footprint.svg", &self.plot()?)?;
        eprintln!("soak: written to {}", self.o.out.display());
        Ok(())
    }

    fn json(&self) -> serde_json::Value {
        let l = lock(&self.soak.ledger);
        let column =
            |f: &dyn Fn(&Sample) -> f64| -> Vec<f64> { self.samples.iter().map(f).collect() };
        json!({
            "date": crate::plot::today(),
            "seconds": r1(self.o.duration.as_secs_f64()),
            "server_args": self.o.server_args(),
            "tenants": TENANTS,
            "clients_per_tenant": CLIENTS,
            "attacker_max_storage": self.quota,
            "server_log": {
                "warnings": self.log.warnings,
                "errors": self.log.errors,
                "first_errors": self.log.first_errors,
            },
            "samples": {
                "t_s": column(&|s| r1(s.t)),
                "rss_mib": column(&|s| r1(mib(s.rss))),
                "peak_rss_mib": column(&|s| r1(mib(s.peak))),
                "fds": column(&|s| s.fds as f64),
                "disk_mib": column(&|s| r1(mib(s.disk))),
            },
            "kill": {
                "at_s": r1(self.kill.at),
                "pending": self.kill.pending,
                "recovered": self.kill.recovered,
                "down_s": (self.kill.down * 1e3).round() / 1e3,
            },
            "jobs": {
                "acknowledged": l.acked,
                "acknowledged_before_kill": l.acked_before_kill,
                "exact": l.exact,
                "wrong": l.wrong,
                "lost": l.lost,
                "resent": l.resent,
                "retried": l.retried,
                "seconds": l.seconds.iter().map(|(k, v)| {
                    let (median, p95) = quantiles(v);
                    let ms = |x: f64| (x * 1e3).round() / 1e3;
                    (k.to_string(), json!({"n": v.len(), "median": ms(median), "p95": ms(p95)}))
                }).collect::<serde_json::Map<_, _>>(),
            },
            "attacks": *lock(&self.soak.attacks),
            "stalled": STALLS.iter().zip(self.stalls).map(|(name, s)| json!({
                "kind": name,
                "opened": s.opened,
                "ended_by_server": s.lifetimes.len(),
                "longest_s": s.longest().as_secs_f64(),
            })).collect::<Vec<_>>(),
        })
    }

    fn markdown(&self) -> String {
        let l = lock(&self.soak.ledger);
        let mut md = format!(
            "# Server soak, {}\n\n`hearth-bench soak --minutes {}`: `hearth server {}` on \
             loopback ({} cores), {TENANTS} tenants x {CLIENTS} clients, one attacker tenant \
             (`--max-keys 1 --max-storage {}`) and attackers without a token; `kill -9` halfway, \
             restarted on the same folder.\n\n",
            crate::plot::today(),
            r1(self.o.duration.as_secs_f64() / 60.0),
            self.o.server_args().join(" "),
            std::thread::available_parallelism().map_or(1, |n| n.get()),
            self.quota
        );
        md += "## Legitimate jobs\n\n| | |\n|---|---|\n";
        md += &format!(
            "| acknowledged | {} ({} before the kill) |\n| exact (decrypted = Rust's) | {} |\n\
             | wrong | {} |\n| lost | {} |\n| submissions sent again after no answer | {} |\n",
            l.acked,
            l.acked_before_kill,
            l.exact,
            l.wrong.len(),
            l.lost.len(),
            l.resent
        );
        for (kind, v) in &l.seconds {
            let (median, p95) = quantiles(v);
            md += &format!(
                "| {kind}: {} jobs, seconds from submission to check | median {median:.2}, p95 \
                 {p95:.2} |\n",
                v.len()
            );
        }
        let left: usize = self.finals.iter().flatten().map(|st| st.done).sum();
        let stuck: usize = self
            .finals
            .iter()
            .flatten()
            .map(|st| st.queued + st.running + st.failed)
            .sum();
        md += &format!(
            "| left on the server at the end: results of first copies / queued, running or \
             failed | {left} / {stuck} |\n"
        );
        md += "\nRetried by the tenants' clients (a refusal for now, or no answer while the \
               server was down):\n\n| request and why | times |\n|---|---|\n";
        for (what, n) in &l.retried {
            md += &format!("| {what} | {n} |\n");
        }
        md += "\n## Attacks\n\n| attack | answers |\n|---|---|\n";
        for (attack, answers) in lock(&self.soak.attacks).iter() {
            let a: Vec<String> = answers.iter().map(|(k, v)| format!("{k} {v}")).collect();
            md += &format!("| {attack} | {} |\n", a.join(", "));
        }
        for (name, s) in STALLS.iter().zip(self.stalls) {
            md += &format!(
                "| {name} | {} opened, {} ended by the server, the longest held {:.1} s |\n",
                s.opened,
                s.lifetimes.len(),
                s.longest().as_secs_f64()
            );
        }
        let at = self.kill.at;
        let parts = [
            (
                "before the kill",
                Summary::of(self.samples.iter().filter(|s| s.t < at)),
            ),
            (
                "after the restart",
                Summary::of(self.samples.iter().filter(|s| s.t >= at)),
            ),
            ("whole run", Summary::of(self.samples.iter())),
        ];
        md += &format!(
            "\n## Footprint ({} samples, one a second)\n\n| | {} |\n|---|---|---|---|\n",
            self.samples.len(),
            parts.iter().map(|p| p.0).collect::<Vec<_>>().join(" | ")
        );
        let row = |name: &str, f: &dyn Fn(&Summary) -> String| {
            let cells: Vec<String> = parts.iter().map(|p| f(&p.1)).collect();
            format!("| {name} | {} |\n", cells.join(" | "))
        };
        md += &row("peak RSS (MiB)", &|s| format!("{:.0}", mib(s.peak_rss)));
        md += &row("median RSS (MiB)", &|s| format!("{:.0}", mib(s.median_rss)));
        md += &row("peak open fds", &|s| s.peak_fds.to_string());
        md += &row("peak data folder (MiB)", &|s| {
            format!("{:.0}", mib(s.peak_disk))
        });
        md += &format!(
            "\n## The kill\n\n`kill -9` at {:.0} s with {} of the tenants' jobs queued or \
             running; up again in {:.0} ms on the same folder, jobs queued again from disk: {}. \
             Of {} jobs acknowledged before the kill and {} after, {} were found again and \
             exact, {} lost, {} wrong.\n\nThe server's log (`--quiet`): {} warnings, {} \
             errors.\n\nFiles: `samples.json` (the samples and every count), `footprint.svg` \
             (memory and descriptors over time).\n",
            self.kill.at,
            self.kill.pending,
            self.kill.down * 1e3,
            self.kill.recovered,
            l.acked_before_kill,
            l.acked - l.acked_before_kill,
            l.exact,
            l.lost.len(),
            l.wrong.len(),
            self.log.warnings,
            self.log.errors
        );
        for e in &self.log.first_errors {
            md += &format!("\n    {e}");
        }
        md
    }

    fn plot(&self) -> Result<String, Error> {
        let minutes = |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> {
            self.samples.iter().map(|s| (s.t / 60.0, f(s))).collect()
        };
        let series = |name: &str, points| Series {
            name: name.into(),
            points,
        };
        let panels = [
            Panel {
                y_desc: "server memory (MiB)".into(),
                series: vec![
                    series("resident (RSS)", minutes(&|s| mib(s.rss))),
                    series("peak in each second (VmHWM)", minutes(&|s| mib(s.peak))),
                ],
            },
            Panel {
                y_desc: "open file descriptors".into(),
                series: vec![series("open descriptors", minutes(&|s| s.fds as f64))],
            },
        ];
        crate::plot::over_time(
            &format!(
                "hearth server under {TENANTS} tenants and hostile clients, {}",
                crate::plot::today()
            ),
            "minutes",
            &panels,
            &[(self.kill.at / 60.0, "kill -9".into())],
        )
    }

    /// An error if a legitimate job was lost or wrong, or an attack was
    /// accepted.
    fn verdict(&self) -> Result<(), Error> {
        let l = lock(&self.soak.ledger);
        if !l.wrong.is_empty() || !l.lost.is_empty() {
            return Err(failed(
                "legitimate jobs",
                format!("wrong: {:?}; lost: {:?}", l.wrong, l.lost),
            ));
        }
        if l.exact == 0 {
            return Err(failed("legitimate jobs", "none was checked"));
        }
        let attacks = lock(&self.soak.attacks);
        let accepted: Vec<&str> = attacks
            .iter()
            .filter(|(a, answers)| **a != "zero-bootstrap fill" && answers.contains_key("accepted"))
            .map(|(a, _)| *a)
            .collect();
        if !accepted.is_empty() {
            return Err(failed("attacks accepted", accepted.join(", ")));
        }
        Ok(())
    }
}
