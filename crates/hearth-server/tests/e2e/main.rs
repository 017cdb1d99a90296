//! The server in this process on loopback, with real keys (GATES_128):
//! a compressed key upload, jobs submitted, waited for, fetched and
//! decrypted against Rust's integers, every refusal's code, a full queue,
//! and a restart on the same folder; tenants, tokens and TLS
//! (`tenants`); hostile connections and uploads beside a legitimate
//! job (`connections`); the order jobs start in and jobs side by side
//! (`schedule`); cross-origin requests (`cors`); the log's spans (`logs`); the OpenAPI document against
//! the routes and the book (`openapi`). Run in release mode.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hearth::api::U8;
use hearth::{Bundle, ClientKey, CompiledProgram, Program, GATES_128, INSECURE_TEST_BITS};
use hearth_server::{Client, ClientError, Config, ErrorCode, JobState, SubmitOptions};
use num_bigint::BigInt;

mod connections;
mod cors;
mod fleet;
mod hardening;
mod logs;
mod openapi;
mod schedule;
mod tenants;

/// Longest wait for one job: a lost job fails the test instead of
/// hanging it.
const LIMIT: Duration = Duration::from_secs(120);

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hearth-server-e2e-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn config(data: &Path) -> Config {
    let mut c = Config::new(data.join("data"));
    c.threads = 2;
    c.max_body = 32 << 20;
    c
}

/// `a + b` on bytes: 8 bootstraps.
fn add_program(params: &'static hearth::ParameterSet) -> CompiledProgram {
    let p = Program::new(params);
    let a = U8::input(&p);
    let b = U8::input(&p);
    p.output(&(&a + &b));
    p.build().unwrap()
}

/// `a * b` on bytes: 69 bootstraps.
fn mul_program() -> CompiledProgram {
    let p = Program::new(&GATES_128);
    let a = U8::input(&p);
    let b = U8::input(&p);
    p.output(&(&a * &b));
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

fn code<T: std::fmt::Debug>(r: Result<T, ClientError>) -> ErrorCode {
    let e = r.expect_err("refused");
    e.code().unwrap_or_else(|| panic!("no code: {e}"))
}

fn decrypt_one(client: &ClientKey, bytes: &[u8]) -> BigInt {
    let b = Bundle::from_bytes(Path::new("result"), bytes).unwrap();
    client.decrypt_bundle(&b).unwrap()[0].1[0].clone()
}

/// Sends raw bytes and reads the whole answer (the server closes or
/// answers `Connection: close`).
fn raw(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn jobs_run_end_to_end_and_refusals_are_typed() {
    let d = dir("main");
    let mut cfg = config(&d);
    cfg.max_pbs = 8; // the add program fits, the product does not
    cfg.metrics_listen = Some("127.0.0.1:0".into());
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let health = raw(
        server.addr(),
        b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(
        health.starts_with("HTTP/1.1 200") && health.contains("\"ok\""),
        "{health}"
    );
    let api = Client::new(&server.url()).unwrap();
    let info = api.info().unwrap();
    assert_eq!((info.threads, info.max_pbs), (2, 8));

    let start = Instant::now();
    let client = ClientKey::generate(&GATES_128);
    let key_file = d.join("server.key");
    client.compressed_server_key().save(&key_file).unwrap();
    let registered = api.upload_key(&key_file).unwrap();
    assert!(registered.new && registered.compressed);
    assert_eq!(registered.key_id, client.key_id().to_string());
    assert_eq!(registered.params, "GATES_128");
    let again = api.upload_key(&key_file).unwrap();
    assert!(!again.new);
    assert!(api.key(client.key_id()).unwrap().is_some());
    eprintln!(
        "key generated and uploaded in {:.1} s",
        start.elapsed().as_secs_f64()
    );

    // One job through every state.
    let prog = add_program(&GATES_128);
    let p = prog.to_bytes().unwrap();
    let input = bundle(&client, &prog, 200, 100);
    let t = Instant::now();
    let job = api.submit(&p, &input).unwrap();
    assert_eq!((job.pbs, job.depth), (8, 8));
    let st = api
        .wait_timeout(job.job_id, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert!(matches!(st.state, JobState::Done { .. }), "{st:?}");
    let out = api.result(job.job_id).unwrap();
    eprintln!(
        "one job ({} B request, {} B result, 8 PBS): submitted, run and fetched in {:.0} ms",
        p.len() + input.len(),
        out.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(
        decrypt_one(&client, &out),
        BigInt::from(200u8.wrapping_add(100))
    );
    // Fetched again until deleted, then gone.
    assert_eq!(api.result(job.job_id).unwrap(), out);
    api.delete(job.job_id).unwrap();
    assert_eq!(code(api.status(job.job_id)), ErrorCode::NotFound);
    assert_eq!(code(api.result(job.job_id)), ErrorCode::NotFound);
    assert_eq!(code(api.delete(job.job_id)), ErrorCode::NotFound);

    // Several jobs: the last one is not ready while the first run.
    let inputs: Vec<(u8, u8)> = vec![(1, 2), (255, 255), (17, 240), (128, 128), (99, 7)];
    let jobs: Vec<_> = inputs
        .iter()
        .map(|&(a, b)| {
            api.submit_with_key(client.key_id(), &p, &bundle(&client, &prog, a, b))
                .unwrap()
                .job_id
        })
        .collect();
    assert_eq!(code(api.result(*jobs.last().unwrap())), ErrorCode::NotReady);
    for (&(a, b), &id) in inputs.iter().zip(&jobs) {
        api.wait_timeout(id, Duration::from_millis(20), LIMIT)
            .unwrap();
        let bytes = api.result(id).unwrap();
        assert_eq!(
            decrypt_one(&client, &bytes),
            BigInt::from(a.wrapping_add(b))
        );
        api.delete(id).unwrap();
    }

    // Refusals, each with its code.
    let good = bundle(&client, &prog, 1, 1);
    assert_eq!(code(api.submit(b"garbage", b"")), ErrorCode::BadProgram);
    assert_eq!(code(api.submit(&p, b"garbage")), ErrorCode::BadBundle);
    assert_eq!(code(api.submit(&good, &p)), ErrorCode::BadProgram);
    let mut flipped = good.clone();
    flipped[100] ^= 1;
    assert_eq!(code(api.submit(&p, &flipped)), ErrorCode::BadBundle);
    let other = ClientKey::generate(&GATES_128);
    let foreign = bundle(&other, &prog, 1, 1);
    assert_eq!(code(api.submit(&p, &foreign)), ErrorCode::UnknownKey);
    assert_eq!(
        code(api.submit_with_key(client.key_id(), &p, &foreign)),
        ErrorCode::WrongKey
    );
    assert_eq!(
        code(api.submit_with_key(other.key_id(), &p, &good)),
        ErrorCode::WrongKey
    );
    let mul = mul_program();
    assert_eq!(
        code(api.submit(&mul.to_bytes().unwrap(), &bundle(&client, &mul, 3, 4))),
        ErrorCode::OverCost
    );
    let weak = add_program(&INSECURE_TEST_BITS);
    let weak_client = ClientKey::generate(&INSECURE_TEST_BITS);
    assert_eq!(
        code(api.submit(
            &weak.to_bytes().unwrap(),
            &bundle(&weak_client, &weak, 1, 2)
        )),
        ErrorCode::InsecureParams
    );
    let weak_key = d.join("weak.key");
    weak_client.compressed_server_key().save(&weak_key).unwrap();
    assert_eq!(code(api.upload_key(&weak_key)), ErrorCode::InsecureParams);
    assert_eq!(
        code(api.upload_key(&b"not a key".to_vec())),
        ErrorCode::BadKey
    );
    // A damaged key (another id: a registered id is not uploaded again).
    let other_file = d.join("other.key");
    other.compressed_server_key().save(&other_file).unwrap();
    let mut forged = std::fs::read(&other_file).unwrap();
    let n = forged.len();
    forged[n - 5] ^= 1;
    assert_eq!(code(api.upload_key(&forged)), ErrorCode::BadKey);
    assert!(api.key(other.key_id()).unwrap().is_none());
    assert_eq!(code(api.upload_key(&p)), ErrorCode::BadKey);
    // Over the body limit: refused on Content-Length (the client sends
    // Expect: 100-continue, so the 40 MiB are never sent).
    let huge = vec![0u8; 40 << 20];
    let t = Instant::now();
    assert_eq!(code(api.submit(&p, &huge)), ErrorCode::TooLarge);
    assert_eq!(code(api.upload_key(&huge)), ErrorCode::TooLarge);
    eprintln!(
        "two oversize refusals in {:.3} s",
        t.elapsed().as_secs_f64()
    );
    // A raw client that states a large body and sends none.
    let answer = raw(
        server.addr(),
        b"POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\nContent-Length: 999999999999\r\n\r\n",
    );
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"code\":\"too_large\""), "{answer}");
    // Unknown endpoints, methods and ids.
    let answer = raw(
        server.addr(),
        b"GET /nope HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(
        answer.starts_with("HTTP/1.1 404") && answer.contains("not_found"),
        "{answer}"
    );
    let answer = raw(
        server.addr(),
        b"PUT /v1/jobs HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
    );
    assert!(
        answer.starts_with("HTTP/1.1 400") && answer.contains("bad_request"),
        "{answer}"
    );
    let answer = raw(
        server.addr(),
        b"GET /v1/jobs/xyz%ff HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert!(
        answer.starts_with("HTTP/1.1 404") && answer.contains("not_found"),
        "{answer}"
    );
    let answer = raw(server.addr(), b"POST /v1/jobs?key=zz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
    assert!(answer.contains("bad_request"), "{answer}");
    assert_eq!(
        code(api.status(hearth_server::JobId::random())),
        ErrorCode::NotFound
    );

    // The server still serves, and counted what it refused.
    let stats = api.stats().unwrap();
    assert_eq!(stats.accepted, 6);
    assert_eq!(stats.completed, 6);
    assert_eq!((stats.queued, stats.running, stats.done), (0, 0, 0));
    for c in [
        "bad_program",
        "bad_bundle",
        "unknown_key",
        "wrong_key",
        "over_cost",
    ] {
        assert!(
            stats.refused.get(c).copied().unwrap_or(0) > 0,
            "{c}: {stats:?}"
        );
    }
    eprintln!("refused: {:?}", stats.refused);
    // The same counts in Prometheus's format, on the metrics address.
    let metrics = raw(
        server.metrics_addr().unwrap(),
        b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    for line in [
        "hearth_jobs_accepted_total{tenant=\"\"} 6",
        "hearth_jobs_finished_total{outcome=\"done\",tenant=\"\"} 6",
        "hearth_bootstraps_total 48",
        "hearth_job_seconds_count 6",
        "hearth_queue_depth 0",
        "hearth_refusals_total{code=\"over_cost\"} 1",
        "hearth_key_cache_total{result=\"hit\"} 6",
    ] {
        assert!(metrics.contains(line), "{line} not in\n{metrics}");
    }
    let job = api.submit(&p, &bundle(&client, &prog, 40, 2)).unwrap();
    api.wait_timeout(job.job_id, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(job.job_id).unwrap()),
        BigInt::from(42)
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_full_queue_refuses_and_a_restart_keeps_every_job() {
    let d = dir("queue");
    let mut cfg = config(&d);
    cfg.max_queue = 3;
    cfg.max_body = 128 << 20; // an uncompressed GATES_128 key is 82 MB
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let client = ClientKey::generate(&GATES_128);
    let key_file = d.join("server.key");
    client.server_key().save(&key_file).unwrap();
    let k = api.upload_key(&key_file).unwrap();
    assert!(k.new && !k.compressed);
    let prog = add_program(&GATES_128);
    let p = prog.to_bytes().unwrap();
    let bundles: Vec<(u8, u8, Vec<u8>)> = (0..10u8)
        .map(|i| {
            let (a, b) = (i.wrapping_mul(37), 200 - i);
            (a, b, bundle(&client, &prog, a, b))
        })
        .collect();
    let mut accepted = Vec::new();
    let mut full = 0;
    for (a, b, bytes) in &bundles {
        match api.submit(&p, bytes) {
            Ok(s) => accepted.push((s.job_id, a.wrapping_add(*b))),
            Err(e) if e.code() == Some(ErrorCode::QueueFull) => full += 1,
            Err(e) => panic!("{e}"),
        }
    }
    eprintln!("{} accepted, {full} refused as queue_full", accepted.len());
    assert!(full > 0, "a queue of 3 took 10 jobs submitted at once");
    assert!(accepted.len() >= 3);
    // Stop at once: the running job finishes, the queued ones stay on disk.
    server.stop().unwrap();
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let stats = api.stats().unwrap();
    assert_eq!(stats.queued + stats.running + stats.done, accepted.len());
    assert!(api.key(client.key_id()).unwrap().is_some());
    for (id, expected) in &accepted {
        api.wait_timeout(*id, Duration::from_millis(20), LIMIT)
            .unwrap();
        assert_eq!(
            decrypt_one(&client, &api.result(*id).unwrap()),
            BigInt::from(*expected)
        );
        api.delete(*id).unwrap();
    }
    assert_eq!(api.stats().unwrap().done, 0);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// `stop` returns as soon as the threads notice, even when it comes
/// before they first wait: the stop flag and the wake-up were once sent
/// without the jobs lock, and a wake-up that arrived before the
/// expiry sweeper's first wait was lost (the sweeper slept its full
/// period, a minute by default).
#[test]
fn a_server_stopped_at_once_stops_at_once() {
    let d = dir("stop");
    for round in 0..40 {
        let server = hearth_server::Server::open(config(&d)).unwrap();
        let t = Instant::now();
        server.stop();
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "round {round}: stop took {:?}",
            t.elapsed()
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_stalled_upload_times_out_and_uploads_are_bounded() {
    let d = dir("stall");
    let mut cfg = config(&d);
    cfg.max_uploads = 1;
    cfg.body_timeout = Duration::from_secs(1);
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    // A client that states 1000 bytes and sends 10, then nothing.
    let mut stalled = TcpStream::connect(server.addr()).unwrap();
    stalled
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stalled
        .write_all(
            b"POST /v1/jobs HTTP/1.1\r\nHost: localhost\r\n\
              Content-Type: application/octet-stream\r\nContent-Length: 1000\r\n\r\n0123456789",
        )
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // The one upload slot is taken: another upload waits its turn, up to
    // the body timeout; here the slot frees when the stalled body times
    // out, so it is answered (refused as garbage) rather than queue_full.
    let t = Instant::now();
    let r = api.submit(b"garbage", b"");
    let waited = t.elapsed();
    let c = code(r);
    assert!(
        c == ErrorCode::BadProgram || c == ErrorCode::QueueFull,
        "{c}"
    );
    assert!(waited >= Duration::from_millis(500), "{waited:?}");
    let mut answer = String::new();
    let _ = stalled.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"code\":\"timeout\""), "{answer}");
    // Free again.
    assert_eq!(code(api.submit(b"garbage", b"")), ErrorCode::BadProgram);
    eprintln!(
        "second upload waited {:.2} s for the slot",
        waited.as_secs_f64()
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Results expire after `result_ttl`, at start and while the server runs,
/// with their files; jobs that waited over `queue_ttl` fail as `expired`.
#[test]
fn results_and_queued_jobs_expire_across_a_restart() {
    let d = dir("expiry");
    let mut cfg = config(&d);
    cfg.result_ttl = Duration::from_secs(2);
    // One job at a time, so that jobs wait behind a product below.
    cfg.max_jobs = 1;
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let add = add_program(&GATES_128);
    let p = add.to_bytes().unwrap();
    let mul = mul_program();
    let m = mul.to_bytes().unwrap();
    let jobs_dir = cfg.data.join("jobs");
    let files = |id: hearth_server::JobId| {
        std::fs::read_dir(&jobs_dir)
            .unwrap()
            .filter(|e| {
                let name = e.as_ref().unwrap().file_name();
                name.to_string_lossy().starts_with(&id.to_string())
            })
            .count()
    };

    // Expired at the next start.
    let first = api.submit(&p, &bundle(&client, &add, 1, 2)).unwrap().job_id;
    api.wait_timeout(first, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(files(first), 2, "the job file and its result");
    server.stop().unwrap();
    std::thread::sleep(Duration::from_millis(2100));
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    assert_eq!(code(api.status(first)), ErrorCode::NotFound);
    assert_eq!(files(first), 0, "its files are gone");

    // Expired while the server runs.
    let second = api.submit(&p, &bundle(&client, &add, 3, 4)).unwrap().job_id;
    api.wait_timeout(second, Duration::from_millis(20), LIMIT)
        .unwrap();
    let done = Instant::now();
    while api.status(second).is_ok() {
        assert!(done.elapsed() < Duration::from_secs(10), "never expired");
        std::thread::sleep(Duration::from_millis(100));
    }
    let lived = done.elapsed();
    assert!(lived >= Duration::from_millis(900), "gone after {lived:?}");
    assert_eq!(files(second), 0);

    // A product keeps the worker busy while two sums wait; the server
    // stops with them queued and starts again with a 1 s queue TTL.
    let slow = api.submit(&m, &bundle(&client, &mul, 5, 6)).unwrap().job_id;
    let waiting: Vec<_> = (0..2)
        .map(|i| api.submit(&p, &bundle(&client, &add, i, i)).unwrap().job_id)
        .collect();
    // A key cannot go while jobs under it wait.
    assert_eq!(code(api.delete_key(client.key_id())), ErrorCode::KeyInUse);
    server.stop().unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    let mut patient = cfg.clone();
    patient.result_ttl = Duration::from_secs(3600);
    patient.queue_ttl = Some(Duration::from_secs(1));
    let server = hearth_server::start(patient, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    for id in waiting {
        match api.wait_timeout(id, Duration::from_millis(20), LIMIT) {
            Err(ClientError::JobFailed { code, .. }) => assert_eq!(code, "expired"),
            other => panic!("{other:?}"),
        }
    }
    api.wait_timeout(slow, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(slow).unwrap()),
        BigInt::from(30)
    );
    // Now it can: gone for lookups and jobs, and its file with it.
    let gone = api.delete_key(client.key_id()).unwrap();
    assert_eq!(gone.key_id, client.key_id().to_string());
    assert!(api.key(client.key_id()).unwrap().is_none());
    assert_eq!(
        code(api.submit(&p, &bundle(&client, &add, 1, 1))),
        ErrorCode::UnknownKey
    );
    assert_eq!(code(api.delete_key(client.key_id())), ErrorCode::UnknownKey);
    assert_eq!(std::fs::read_dir(cfg.data.join("keys")).unwrap().count(), 0);
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// A job's result feeds later jobs (`?with=`): each later bundle carries
/// only its own input, the server joins the kept result (posted
/// `?unpacked=true`) before it, and the results, packed, are Rust's.
/// Refused: a packed result (`bad_request`), a deleted job (`not_found`),
/// a bundle that repeats the result's entry (`bad_bundle`).
#[test]
fn a_kept_result_feeds_later_jobs() {
    let d = dir("with");
    let server = hearth_server::start(config(&d), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let client = ClientKey::generate(&GATES_128);
    let key_file = d.join("server.key");
    client.compressed_server_key().save(&key_file).unwrap();
    api.upload_key(&key_file).unwrap();
    let named = |ins: &[(&str, &[usize])], out: &str| {
        add_program(&GATES_128)
            .with_signature(ins, &[(out, &[])])
            .unwrap()
    };
    let done = |job| {
        let st = api
            .wait_timeout(job, Duration::from_millis(20), LIMIT)
            .unwrap();
        assert!(matches!(st.state, JobState::Done { .. }), "{st:?}");
    };
    // Kept on the server: s = a + b.
    let first = named(&[("a", &[]), ("b", &[])], "s");
    let p1 = first.to_bytes().unwrap();
    let unpacked = SubmitOptions {
        unpacked: true,
        ..SubmitOptions::default()
    };
    let kept = api
        .submit_with_options(unpacked, &p1, &bundle(&client, &first, 200, 100))
        .unwrap()
        .job_id;
    done(kept);
    let packed = api
        .submit(&p1, &bundle(&client, &first, 1, 2))
        .unwrap()
        .job_id;
    done(packed);
    // Later jobs upload only c: s + c.
    let later = named(&[("s", &[]), ("c", &[])], "t");
    let p2 = later.to_bytes().unwrap();
    let only_c = |c: u8| {
        let ps = &later.signature().inputs[1..];
        client
            .encrypt_bundle(ps, &[vec![BigInt::from(c)]])
            .unwrap()
            .to_bytes()
            .unwrap()
    };
    for c in [7u8, 250] {
        let job = api
            .submit_after(client.key_id(), kept, &p2, &only_c(c))
            .unwrap()
            .job_id;
        done(job);
        let want = 200u8.wrapping_add(100).wrapping_add(c);
        let result = api.result(job).unwrap();
        assert!(Bundle::from_bytes(Path::new("r"), &result)
            .unwrap()
            .is_packed());
        assert_eq!(decrypt_one(&client, &result), BigInt::from(want));
    }
    assert_eq!(
        code(api.submit_after(client.key_id(), packed, &p2, &only_c(1))),
        ErrorCode::BadRequest
    );
    // The whole bundle again: s twice.
    let both = bundle(&client, &later, 1, 2);
    assert_eq!(
        code(api.submit_after(client.key_id(), kept, &p2, &both)),
        ErrorCode::BadBundle
    );
    api.delete(kept).unwrap();
    assert_eq!(
        code(api.submit_after(client.key_id(), kept, &p2, &only_c(1))),
        ErrorCode::NotFound
    );
}
