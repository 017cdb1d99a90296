//! Hostile connections and uploads, each beside a legitimate tenant whose
//! job (GATES_128, a real key) must still finish with the right result:
//! half-open connections from one address, plain and over TLS (where the
//! handshake never ends); the server-wide cap; an idle kept-alive
//! connection; one tenant's slow uploads; uploads of another type; and
//! requests for another host on an open server. Loopback only; the
//! timeouts are 1 s so that each test takes seconds. The numbers are
//! printed (`--nocapture`).

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use hearth_server::tenants::edit;
use serde_json::Value;

use super::tenants::certificate;
use super::*;

/// The header, handshake and upload-grace timeouts of these tests.
const SHORT: Duration = Duration::from_secs(1);
/// Connections one client address may have open in these tests.
const PER_IP: usize = 16;
/// Slack on times measured while other tests build keys beside these.
const SLACK: Duration = Duration::from_secs(2);

fn short_config(d: &Path) -> Config {
    let mut c = config(d);
    c.header_timeout = SHORT;
    c.handshake_timeout = SHORT;
    c.upload_grace = SHORT;
    c.max_connections_per_ip = PER_IP;
    c.metrics_listen = Some("127.0.0.1:0".into());
    c
}

/// A legitimate client's key, generated and registered.
fn legit_key(api: &Client) -> ClientKey {
    let key = ClientKey::generate(&GATES_128);
    api.upload_key(&key.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    key
}

/// A legitimate job: `a + b` submitted, waited for, fetched, decrypted,
/// checked and deleted; how long that took.
fn legit_job(api: &Client, key: &ClientKey, a: u8, b: u8) -> Duration {
    let prog = add_program(&GATES_128);
    let (p, input) = (prog.to_bytes().unwrap(), bundle(key, &prog, a, b));
    let t = Instant::now();
    let job = api.submit(&p, &input).unwrap().job_id;
    api.wait_timeout(job, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(key, &api.result(job).unwrap()),
        BigInt::from(a.wrapping_add(b))
    );
    api.delete(job).unwrap();
    t.elapsed()
}

/// A connection to `server` from `source` (127.0.0.2: Linux routes all
/// of 127/8 to the loopback interface, so it is another client address).
fn connect_from(
    rt: &tokio::runtime::Runtime,
    source: &str,
    server: SocketAddr,
) -> std::io::Result<TcpStream> {
    rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(source.parse().unwrap(), 0))?;
        let stream = socket.connect(server).await?.into_std()?;
        stream.set_nonblocking(false)?;
        Ok(stream)
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap()
}

/// Descriptors this process has open (the servers' and the tests' own).
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

/// Connections the server on `port` holds descriptors for: this
/// process's sockets whose local port is `port`, the listener aside.
fn server_sockets(port: u16) -> usize {
    let inodes: HashSet<u64> = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|l| {
            let l = l.to_str()?;
            l.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect();
    let mut n = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f
                .get(1)
                .and_then(|a| a.rsplit(':').next())
                .and_then(|p| u16::from_str_radix(p, 16).ok());
            let listening = f.get(3) == Some(&"0A");
            let ours = f
                .get(9)
                .and_then(|i| i.parse::<u64>().ok())
                .is_some_and(|i| inodes.contains(&i));
            n += usize::from(local_port == Some(port) && !listening && ours);
        }
    }
    n
}

/// The value of the metric line that starts with `line` (name and
/// labels) at `addr`'s `GET /metrics`, 0 if absent.
fn metric(addr: SocketAddr, line: &str) -> f64 {
    let text = raw(
        addr,
        b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    text.lines()
        .find_map(|l| l.strip_prefix(line)?.trim().parse().ok())
        .unwrap_or(0.0)
}

/// Reads one answer (its head, then a `Content-Length` body) from a
/// kept-alive connection: its status and its code, if a refusal.
fn read_answer(s: &mut impl Read) -> std::io::Result<(u16, Option<String>)> {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    let length = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    s.read_exact(&mut body)?;
    Ok((status, code_of(&String::from_utf8_lossy(&body))))
}

fn code_of(body: &str) -> Option<String> {
    serde_json::from_str::<Value>(body)
        .ok()?
        .get("code")?
        .as_str()
        .map(String::from)
}

/// `(status, code)` of `raw`'s whole answer.
fn status_and_code(answer: &str) -> (u16, Option<String>) {
    let status = answer.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0);
    (
        status,
        code_of(answer.split("\r\n\r\n").nth(1).unwrap_or("")),
    )
}

/// What an [`Attack`] saw.
#[derive(Debug, Default)]
struct Seen {
    /// How long each connection the server ended had lived.
    lifetimes: Vec<Duration>,
    /// Most connections the server held on its port at once.
    peak_sockets: usize,
    /// Most descriptors this process had open at once.
    peak_fds: usize,
}

impl Seen {
    /// The connections the server held until a timeout: those that lived
    /// over half of [`SHORT`] (the others were closed as soon as they
    /// were accepted).
    fn held(&self) -> usize {
        self.lifetimes.iter().filter(|l| **l > SHORT / 2).count()
    }
}

/// Hostile clients on 127.0.0.2 that keep `n` connections open to a
/// server, each sending `greeting` and then nothing. A connection the
/// server ends is opened again 250 ms later (not at once: those closed
/// at once would spin), until [`Attack::stop`].
struct Attack {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Seen>,
}

enum Slot {
    Open(TcpStream, Instant),
    Closed(Instant),
}

impl Attack {
    fn start(server: SocketAddr, n: usize, greeting: &'static [u8]) -> Attack {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::spawn(move || {
            let rt = runtime();
            let open = || {
                let Ok(mut s) = connect_from(&rt, "127.0.0.2", server) else {
                    return Slot::Closed(Instant::now());
                };
                // Refused already, maybe: the end is seen below.
                let _ = s.write_all(greeting);
                s.set_nonblocking(true).unwrap();
                Slot::Open(s, Instant::now())
            };
            let mut slots: Vec<Slot> = (0..n).map(|_| open()).collect();
            let mut seen = Seen::default();
            let mut buf = [0u8; 256];
            while !stopped.load(Ordering::Relaxed) {
                for slot in &mut slots {
                    let reopen = match slot {
                        Slot::Open(s, since) => match s.read(&mut buf) {
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
                            // An answer (none is expected): read on to the end.
                            Ok(n) if n > 0 => false,
                            _ => {
                                seen.lifetimes.push(since.elapsed());
                                *slot = Slot::Closed(Instant::now());
                                false
                            }
                        },
                        Slot::Closed(at) => at.elapsed() >= Duration::from_millis(250),
                    };
                    if reopen {
                        *slot = open();
                    }
                }
                seen.peak_sockets = seen.peak_sockets.max(server_sockets(server.port()));
                seen.peak_fds = seen.peak_fds.max(open_fds());
                std::thread::sleep(Duration::from_millis(20));
            }
            seen
        });
        Attack { stop, thread }
    }

    fn stop(self) -> Seen {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// Checks what the server did to an attack from one address: it never
/// held more than [`PER_IP`] of its connections (and a few of the
/// legitimate client's), it held some until the timeout, and none longer.
fn check_capped(what: &str, seen: &Seen) {
    let longest = seen.lifetimes.iter().max().copied().unwrap_or_default();
    eprintln!(
        "{what}: {} connections ended by the server ({} lived over half the timeout, the \
         longest {:.2} s); peak {} connections held on the port, peak {} descriptors in the \
         process",
        seen.lifetimes.len(),
        seen.held(),
        longest.as_secs_f64(),
        seen.peak_sockets,
        seen.peak_fds
    );
    assert!(
        seen.held() > 0,
        "{what}: none held until the timeout ({} ended at once)",
        seen.lifetimes.len()
    );
    assert!(longest < SHORT + SLACK, "{what}: one lived {longest:?}");
    assert!(
        seen.peak_sockets <= PER_IP + 4,
        "{what}: the server held {} connections",
        seen.peak_sockets
    );
}

/// 200 connections from 127.0.0.2 that send half a request line and
/// wait: without a header timeout and a cap they were held for ever, and
/// enough of them use up the descriptors. Now 16 are held (the cap per
/// address), each for the header timeout, while a client from 127.0.0.1
/// is served.
#[test]
fn half_open_connections_are_capped_per_address_and_timed_out() {
    let d = dir("conn-half-open");
    let server = hearth_server::start(short_config(&d), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = legit_key(&api);
    let alone = legit_job(&api, &key, 1, 2);
    let port = server.addr().port();
    let (fds_before, sockets_before) = (open_fds(), server_sockets(port));

    let attack = Attack::start(server.addr(), 200, b"GET /v1/info HT");
    std::thread::sleep(SHORT / 2);
    let during = legit_job(&api, &key, 200, 100);
    // Long enough for the held ones to time out and be replaced.
    std::thread::sleep(SHORT * 2);
    let seen = attack.stop();
    check_capped("half-open", &seen);
    std::thread::sleep(SHORT / 2);
    let (fds_after, sockets_after) = (open_fds(), server_sockets(port));
    eprintln!(
        "half-open: descriptors {fds_before} before, peak {} during, {fds_after} after; server \
         connections {sockets_before} before, {sockets_after} after; the job took {:.0} ms \
         alone, {:.0} ms during the attack",
        seen.peak_fds,
        alone.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    assert!(sockets_after <= sockets_before + 1, "{sockets_after}");
    let metrics = server.metrics_addr().unwrap();
    let refused = |reason: &str| {
        metric(
            metrics,
            &format!("hearth_connections_refused_total{{listener=\"api\",reason=\"{reason}\"}}"),
        )
    };
    assert!(refused("per_ip") > 0.0 && refused("header_timeout") > 0.0);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// The same over TLS, with handshakes that never end (a record header
/// that promises 512 bytes, then nothing): the handshake runs under the
/// caps and its own timeout, while a tenant with a token is served.
#[test]
fn tls_handshakes_never_completed_are_capped_and_timed_out() {
    let d = dir("conn-tls");
    let mut cfg = short_config(&d);
    let tls = certificate(&d);
    cfg.tls = Some(tls.clone());
    let token = edit(&cfg.data, |t| t.add_token("legit", None)).unwrap();
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::builder(&server.url())
        .ca_cert(&tls.cert)
        .token(token)
        .build()
        .unwrap();
    let key = legit_key(&api);
    let alone = legit_job(&api, &key, 3, 4);

    let attack = Attack::start(server.addr(), 200, b"\x16\x03\x01\x02\x00");
    std::thread::sleep(SHORT / 2);
    let during = legit_job(&api, &key, 250, 10);
    std::thread::sleep(SHORT * 2);
    let seen = attack.stop();
    check_capped("tls", &seen);
    eprintln!(
        "tls: the job took {:.0} ms alone, {:.0} ms during the attack",
        alone.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    let metrics = server.metrics_addr().unwrap();
    let refused = |reason: &str| {
        metric(
            metrics,
            &format!("hearth_connections_refused_total{{listener=\"api\",reason=\"{reason}\"}}"),
        )
    };
    assert!(refused("per_ip") > 0.0 && refused("handshake_timeout") > 0.0);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// At `--max-connections`, a connection that has not passed
/// authentication gives way: a new connection is served at once, and the
/// one dropped is the oldest of the address holding the most. When every
/// place is held by a proven connection (one whose request passed
/// authentication: on an open server, any API request), a new connection
/// waits in the kernel's backlog until one ends, then is served.
#[test]
fn at_the_server_wide_cap_unproven_connections_give_way() {
    let d = dir("conn-cap");
    let mut cfg = short_config(&d);
    cfg.max_connections = 4;
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = legit_key(&api);
    let alone = legit_job(&api, &key, 5, 6);
    // The client's kept-alive connection goes first: the cap counts it.
    std::thread::sleep(SHORT + SHORT / 2);
    let info = b"GET /v1/info HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";

    let rt = runtime();
    let mut hostile: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect_from(&rt, "127.0.0.2", server.addr()).unwrap();
            s.write_all(b"GET /v1/info HT").unwrap();
            std::thread::sleep(Duration::from_millis(20));
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    let answer = raw(server.addr(), info);
    let waited = t.elapsed();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        waited < SHORT / 2,
        "waited {waited:?} beside unproven connections"
    );
    // The oldest hostile connection was dropped, the newest kept.
    let mut buf = [0u8; 64];
    hostile[0]
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    assert!(
        matches!(hostile[0].read(&mut buf), Ok(0)),
        "the oldest was dropped"
    );
    hostile[3]
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let kept = hostile[3].read(&mut buf);
    assert!(
        matches!(&kept, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "the newest is still waiting: {kept:?}"
    );
    drop(hostile);

    // Four proven connections, kept alive: a fifth waits for one to end
    // (the header timeout closes them when idle).
    std::thread::sleep(Duration::from_millis(200));
    let stats = b"GET /v1/stats HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let proven: Vec<TcpStream> = (0..4)
        .map(|_| {
            let mut s = connect_from(&rt, "127.0.0.3", server.addr()).unwrap();
            s.write_all(stats).unwrap();
            assert_eq!(read_answer(&mut s).unwrap().0, 200);
            s
        })
        .collect();
    let t = Instant::now();
    let answer = raw(server.addr(), info);
    let waited = t.elapsed();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let during = legit_job(&api, &key, 7, 8);
    eprintln!(
        "cap: a connection waited {:.2} s for a place held by proven ones; the job took {:.0} \
         ms alone, {:.0} ms after",
        waited.as_secs_f64(),
        alone.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    assert!(
        waited >= SHORT / 2 && waited < SHORT + SLACK,
        "waited {waited:?}"
    );
    drop(proven);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// A kept-alive connection stays open between requests for the header
/// timeout, then is closed; and neither an idle nor a half-open
/// connection holds up a server's stop (with the default 20 s timeout).
#[test]
fn an_idle_kept_alive_connection_is_closed_after_the_header_timeout() {
    let d = dir("conn-idle");
    let server = hearth_server::start(short_config(&d), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = legit_key(&api);
    let alone = legit_job(&api, &key, 9, 10);

    let rt = runtime();
    let mut idle = connect_from(&rt, "127.0.0.2", server.addr()).unwrap();
    let ask = b"GET /v1/info HTTP/1.1\r\nHost: localhost\r\n\r\n";
    idle.write_all(ask).unwrap();
    assert_eq!(read_answer(&mut idle).unwrap().0, 200);
    // Kept alive: a second request within the timeout is served.
    std::thread::sleep(SHORT / 2);
    idle.write_all(ask).unwrap();
    assert_eq!(read_answer(&mut idle).unwrap().0, 200);
    let t = Instant::now();
    let (during, closed) = std::thread::scope(|s| {
        let job = s.spawn(|| legit_job(&api, &key, 11, 12));
        idle.set_read_timeout(Some(SHORT * 10)).unwrap();
        let closed = idle.read_to_end(&mut Vec::new()).map(|_| t.elapsed());
        (job.join().unwrap(), closed)
    });
    eprintln!(
        "idle: closed after {closed:?} idle; the job took {:.0} ms alone, {:.0} ms beside it",
        alone.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    let closed = closed.unwrap();
    assert!(
        closed >= SHORT * 8 / 10 && closed < SHORT + SLACK,
        "{closed:?}"
    );
    server.stop().unwrap();

    // The default timeouts: the stop does not wait for them.
    let server = hearth_server::start(config(&d), "127.0.0.1:0").unwrap();
    let mut idle = connect_from(&rt, "127.0.0.2", server.addr()).unwrap();
    idle.write_all(ask).unwrap();
    assert_eq!(read_answer(&mut idle).unwrap().0, 200);
    let mut half = connect_from(&rt, "127.0.0.2", server.addr()).unwrap();
    half.write_all(b"GET /v1/in").unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let t = Instant::now();
    server.stop().unwrap();
    let stop = t.elapsed();
    eprintln!(
        "idle: a server with an idle and a half-open connection stopped in {:.0} ms",
        stop.as_secs_f64() * 1e3
    );
    assert!(stop < Duration::from_secs(3), "{stop:?}");
    let _ = std::fs::remove_dir_all(&d);
}

/// One upload of tenant `a`, sent at 1 byte a second (its token, a
/// 1000-byte body announced): the answer's status and code, and when it
/// came.
fn trickle(addr: SocketAddr, token: &str) -> (u16, Option<String>, Duration) {
    let t = Instant::now();
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\n"
    )
    .unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    while t.elapsed() < Duration::from_secs(60) {
        // Refused already, maybe: the answer is read below.
        let _ = s.write_all(b"x");
        match read_answer(&mut s) {
            Ok((status, code)) => return (status, code, t.elapsed()),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(e) => panic!("{e}"),
        }
    }
    panic!("no answer in 60 s");
}

/// Tenant `a` sends `--max-uploads` uploads at 1 byte a second: once they
/// held every upload permit for `--body-timeout`, and every other
/// tenant's upload got `queue_full`. Now `a` holds at most its share
/// (here 2 of 8), tenant `b` uploads at once, and each of `a`'s uploads
/// ends as `timeout` after the grace (`--min-upload-rate`).
#[test]
fn one_tenants_slow_uploads_leave_another_tenant_room() {
    let d = dir("conn-slow");
    let mut cfg = short_config(&d);
    cfg.max_uploads = 8;
    cfg.body_timeout = Duration::from_secs(120);
    // Longer than the others, to tell a permit at once from one freed by
    // the grace.
    cfg.upload_grace = SHORT * 2;
    let slow = edit(&cfg.data, |t| t.add_token("slow", None)).unwrap();
    let legit = edit(&cfg.data, |t| t.add_token("legit", None)).unwrap();
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::builder(&server.url()).token(legit).build().unwrap();
    let key = ClientKey::generate(&GATES_128);
    let key_bytes = key.compressed_server_key().to_bytes().unwrap();

    let addr = server.addr();
    let uploads: Vec<_> = (0..8)
        .map(|_| {
            let token = slow.clone();
            std::thread::spawn(move || trickle(addr, &token))
        })
        .collect();
    std::thread::sleep(SHORT / 2);
    // The legitimate tenant's uploads get permits at once.
    let t = Instant::now();
    assert_eq!(code(api.submit(b"garbage", b"")), ErrorCode::BadProgram);
    let first = t.elapsed();
    let t = Instant::now();
    assert!(api.upload_key(&key_bytes).unwrap().new);
    let key_upload = t.elapsed();
    let during = legit_job(&api, &key, 13, 14);
    let ended: Vec<_> = uploads.into_iter().map(|u| u.join().unwrap()).collect();
    let alone = legit_job(&api, &key, 15, 16);
    let times: Vec<String> = ended
        .iter()
        .map(|(_, _, t)| format!("{:.1}", t.as_secs_f64()))
        .collect();
    eprintln!(
        "slow uploads: the other tenant's first upload answered in {:.0} ms, its key in {:.0} \
         ms; the slow ones ended after [{}] s; the job took {:.0} ms beside them, {:.0} ms \
         alone",
        first.as_secs_f64() * 1e3,
        key_upload.as_secs_f64() * 1e3,
        times.join(", "),
        during.as_secs_f64() * 1e3,
        alone.as_secs_f64() * 1e3
    );
    // Without the shares it waited for the first of a's to time out.
    assert!(first < SHORT, "waited {first:?} for a permit");
    for (status, code, after) in &ended {
        assert_eq!((*status, code.as_deref()), (408, Some("timeout")));
        assert!(*after >= SHORT * 2 * 9 / 10, "ended after {after:?}");
    }
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// An upload that is not `application/octet-stream` (none, text/plain, a
/// form: what a web page may send anywhere without asking) is refused
/// before its body is read.
#[test]
fn uploads_need_octet_stream() {
    let d = dir("conn-type");
    let server = hearth_server::start(short_config(&d), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = legit_key(&api);
    let alone = legit_job(&api, &key, 17, 18);
    let post = |path: &str, content_type: &str| {
        // 1000 bytes announced, none sent: a refusal comes at once.
        status_and_code(&raw(
            server.addr(),
            format!(
                "POST {path} HTTP/1.1\r\nHost: localhost\r\n{content_type}Content-Length: 1000\r\n\
                 Connection: close\r\n\r\n"
            )
            .as_bytes(),
        ))
    };
    let refused = (415, Some("unsupported_media_type".to_string()));
    let t = Instant::now();
    for path in ["/v1/jobs", "/v1/keys"] {
        for content_type in [
            "",
            "Content-Type: text/plain\r\n",
            "Content-Type: application/x-www-form-urlencoded\r\n",
            "Content-Type: multipart/form-data; boundary=x\r\n",
        ] {
            assert_eq!(post(path, content_type), refused, "{path} {content_type:?}");
        }
    }
    let refusals = t.elapsed();
    // The type in any case, with parameters: read (and refused as the
    // body it is).
    let ok = "Content-Type: Application/Octet-Stream; x=y\r\n";
    let body = |path: &str| {
        status_and_code(&raw(
            server.addr(),
            format!(
                "POST {path} HTTP/1.1\r\nHost: localhost\r\n{ok}Content-Length: 3\r\n\
                 Connection: close\r\n\r\nabc"
            )
            .as_bytes(),
        ))
    };
    assert_eq!(body("/v1/jobs"), (400, Some("bad_program".into())));
    assert_eq!(body("/v1/keys"), (400, Some("bad_key".into())));
    let during = legit_job(&api, &key, 19, 20);
    eprintln!(
        "content type: 8 refusals in {:.0} ms; the job took {:.0} ms alone, {:.0} ms after",
        refusals.as_secs_f64() * 1e3,
        alone.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    assert!(refusals < SHORT, "{refusals:?}: a body was waited for");
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// An open server answers only requests addressed to an IP address or
/// `localhost`: a page that rebinds its own name to 127.0.0.1 sends its
/// name. A server with tenants serves any name to a valid token.
#[test]
fn an_open_server_answers_only_addresses_and_localhost() {
    let d = dir("conn-host");
    let server = hearth_server::start(short_config(&d), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = legit_key(&api);
    let alone = legit_job(&api, &key, 21, 22);
    let port = server.addr().port();
    let ask = |addr: SocketAddr, request: String| status_and_code(&raw(addr, request.as_bytes()));
    let get = |host: &str| {
        ask(
            server.addr(),
            format!("GET /v1/stats HTTP/1.1\r\n{host}Connection: close\r\n\r\n"),
        )
    };
    let misdirected = (421, Some("misdirected".to_string()));
    for host in [
        "Host: evil.example\r\n".to_string(),
        format!("Host: evil.example:{port}\r\n"),
        format!("Host: 127.0.0.1.nip.io:{port}\r\n"),
        format!("Host: localhost:{port}\r\nHost: evil.example\r\n"),
    ] {
        assert_eq!(get(&host), misdirected, "{host}");
    }
    // Every route, uploads and the open ones alike.
    let post = "POST /v1/jobs HTTP/1.1\r\nHost: evil.example\r\n\
                Content-Type: application/octet-stream\r\nContent-Length: 3\r\n\
                Connection: close\r\n\r\nabc";
    assert_eq!(ask(server.addr(), post.into()), misdirected);
    let info = "GET /v1/info HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n";
    assert_eq!(ask(server.addr(), info.into()), misdirected);
    for host in [
        format!("Host: 127.0.0.1:{port}\r\n"),
        format!("Host: localhost:{port}\r\n"),
        format!("Host: LOCALHOST.:{port}\r\n"),
        format!("Host: [::1]:{port}\r\n"),
        String::new(),
    ] {
        assert_eq!(get(&host), (200, None), "{host:?}");
    }
    let old = "GET /v1/stats HTTP/1.0\r\n\r\n";
    assert_eq!(ask(server.addr(), old.into()).0, 200);
    let during = legit_job(&api, &key, 23, 24);
    server.stop().unwrap();

    // With tenants, a token is the check: any name is served. The
    // metrics address has no token: it is checked all the same.
    let mut cfg = short_config(&d);
    cfg.data = d.join("tenants");
    cfg.metrics_listen = Some("127.0.0.1:0".into());
    let token = edit(&cfg.data, |t| t.add_token("named", None)).unwrap();
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let metrics = server.metrics_addr().unwrap();
    let scrape = |host: &str| {
        ask(
            metrics,
            format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"),
        )
    };
    assert_eq!(scrape("evil.example"), misdirected);
    assert_eq!(scrape("127.0.0.1").0, 200);
    let named = ask(
        server.addr(),
        format!(
            "GET /v1/stats HTTP/1.1\r\nHost: evil.example\r\nAuthorization: Bearer {token}\r\n\
             Connection: close\r\n\r\n"
        ),
    );
    assert_eq!(named, (200, None));
    eprintln!(
        "host: the job took {:.0} ms alone, {:.0} ms after the refusals",
        alone.as_secs_f64() * 1e3,
        during.as_secs_f64() * 1e3
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}
