//! The server against tenants who try to exhaust it or open it (issue
//! 59), each attack then the limit that stops it, with real keys: a
//! folder that had tenants stays closed when its tenants file goes; a job
//! that was running during crashes fails as `crashed` and the server comes
//! up; storage quotas and the disk reserve refuse before anything is
//! written, zero-bootstrap jobs included; a `DELETE` racing the queue's
//! expiry is never undone; results are streamed and their downloads
//! bounded.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use hearth::api::U8;
use hearth::{ClientKey, CompiledProgram, Program, GATES_128};
use hearth_server::store::Store;
use hearth_server::tenants::{self, edit, reopen};
use hearth_server::{Client, ClientError, ErrorCode, JobId, JobState};
use num_bigint::BigInt;

use crate::{add_program, bundle, code, config, decrypt_one, dir, mul_program, LIMIT};

/// A program of no bootstrap whose result is `copies` copies of a byte:
/// cheap to run, costly to keep.
fn copies_program(copies: usize) -> CompiledProgram {
    let p = Program::new(&GATES_128);
    let a = U8::input(&p);
    let _b = U8::input(&p);
    for _ in 0..copies {
        p.output(&a);
    }
    p.build().unwrap()
}

fn key_bytes(key: &ClientKey) -> Vec<u8> {
    key.compressed_server_key().to_bytes().unwrap()
}

/// Removed, emptied or damaged, a tenants file never opens a folder that
/// had tenants: every request is `closed` (none is parsed), the server
/// does not start on it, and only `reopen` opens it.
#[test]
fn a_folder_that_had_tenants_stays_closed() {
    let d = dir("closed");
    let cfg = config(&d);
    let token = edit(&cfg.data, |t| t.add_token("alice", None)).unwrap();
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let url = server.url();
    let alice = Client::builder(&url).token(&token).build().unwrap();
    let anyone = Client::new(&url).unwrap();
    assert_eq!(alice.stats().unwrap().keys, 0);
    assert_eq!(code(anyone.stats()), ErrorCode::Unauthorized);

    let file = cfg.data.join(tenants::FILE);
    let good = std::fs::read(&file).unwrap();
    let moved = cfg.data.join("moved.json");
    for (what, damage) in [
        ("moved away", None),
        ("emptied", Some(&br#"{"tenants": {}, "tokens": []}"#[..])),
        ("truncated", Some(&b""[..])),
    ] {
        match damage {
            None => std::fs::rename(&file, &moved).unwrap(),
            Some(bytes) => std::fs::write(&file, bytes).unwrap(),
        }
        for api in [&anyone, &alice] {
            assert_eq!(code(api.stats()), ErrorCode::Closed, "{what}");
            // An upload without a token is refused, not parsed.
            assert_eq!(code(api.upload_key(&b"x".to_vec())), ErrorCode::Closed);
        }
        assert!(anyone.info().is_ok(), "{what}: /v1/info needs no tenant");
        if damage.is_none() {
            std::fs::rename(&moved, &file).unwrap();
        }
        std::fs::write(&file, &good).unwrap();
        assert_eq!(alice.stats().unwrap().keys, 0, "{what}: restored");
    }

    // A server does not start on a closed folder, and says why.
    server.stop().unwrap();
    std::fs::remove_file(&file).unwrap();
    let msg = hearth_server::start(cfg.clone(), "127.0.0.1:0")
        .err()
        .expect("refused")
        .to_string();
    assert!(msg.contains("reopen") && msg.contains("missing"), "{msg}");
    // The operator reopens it on purpose: open, no token asked for.
    reopen(&cfg.data).unwrap();
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    assert!(Client::new(&server.url()).unwrap().stats().is_ok());
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// A job that was running when the server died `max_attempts` times (two
/// starts counted on disk, as two crashes leave them) fails as `crashed`
/// at the next start, and the server serves: the other jobs run.
#[test]
fn a_job_that_keeps_crashing_the_server_fails_as_crashed() {
    let d = dir("crashed");
    let mut cfg = config(&d);
    cfg.max_jobs = 1;
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = ClientKey::generate(&GATES_128);
    api.upload_key(&key_bytes(&key)).unwrap();
    let (mul, add) = (mul_program(), add_program(&GATES_128));
    let slow = api
        .submit(&mul.to_bytes().unwrap(), &bundle(&key, &mul, 7, 9))
        .unwrap()
        .job_id;
    let p = add.to_bytes().unwrap();
    let doomed = api.submit(&p, &bundle(&key, &add, 1, 2)).unwrap().job_id;
    let fine = api.submit(&p, &bundle(&key, &add, 3, 4)).unwrap().job_id;
    server.stop().unwrap();
    {
        let store = Store::open(&cfg.data).unwrap();
        assert_eq!(store.attempts(doomed), 0, "it had not started");
        store.start_attempt(doomed).unwrap();
        store.start_attempt(doomed).unwrap();
    }
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    match api.status(doomed).unwrap().state {
        JobState::Failed { code, .. } => assert_eq!(code, "crashed"),
        other => panic!("{other:?}"),
    }
    assert_eq!(code(api.result(doomed)), ErrorCode::JobFailed);
    for (id, want) in [(slow, 63), (fine, 7)] {
        api.wait_timeout(id, Duration::from_millis(20), LIMIT)
            .unwrap();
        assert_eq!(
            decrypt_one(&key, &api.result(id).unwrap()),
            BigInt::from(want)
        );
    }
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// A tenant's stored bytes (keys, queued jobs with their results'
/// reserve, kept results) stay under its quota, and the disk under the
/// reserve: refused before anything is written, zero-bootstrap jobs
/// included; deleting gives the bytes back.
#[test]
fn storage_is_bounded_before_it_is_written() {
    let d = dir("storage");
    let mut cfg = config(&d);
    let key = ClientKey::generate(&GATES_128);
    let kb = key_bytes(&key);
    let copies = copies_program(64);
    let p = copies.to_bytes().unwrap();
    let input = bundle(&key, &copies, 5, 6);
    let job_bytes = (p.len() + input.len()) as u64 + copies.result_bytes();
    assert!(copies.circuit().stats().pbs == 0);
    // Room for the key and two such jobs, not three.
    let quota = kb.len() as u64 + 2 * job_bytes + job_bytes / 2;
    let token = edit(&cfg.data, |t| {
        let token = t.add_token("alice", None)?;
        t.storage.insert("alice".into(), quota);
        Ok(token)
    })
    .unwrap();
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let alice = Client::builder(&server.url())
        .token(&token)
        .build()
        .unwrap();
    alice.upload_key(&kb).unwrap();
    let first = alice.submit(&p, &input).unwrap().job_id;
    let second = alice.submit(&p, &input).unwrap().job_id;
    let jobs = || {
        std::fs::read_dir(cfg.data.join("jobs"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".job")
            })
            .count()
    };
    assert_eq!(code(alice.submit(&p, &input)), ErrorCode::StorageLimit);
    assert_eq!(jobs(), 2, "a refused job wrote nothing");
    alice
        .wait_timeout(first, Duration::from_millis(20), LIMIT)
        .unwrap();
    let out = alice.result(first).unwrap();
    assert!(out.len() as u64 <= copies.result_bytes());
    let values = key
        .decrypt_bundle(&hearth::Bundle::from_bytes(std::path::Path::new("r"), &out).unwrap())
        .unwrap();
    assert_eq!(values.len(), 64);
    assert!(values.iter().all(|(_, v)| v[0] == BigInt::from(5)));
    alice.delete(first).unwrap();
    let third = alice.submit(&p, &input).unwrap().job_id;
    for id in [second, third] {
        alice
            .wait_timeout(id, Duration::from_millis(20), LIMIT)
            .unwrap();
    }
    server.stop().unwrap();

    // The disk's reserve: a server that would have to go under it
    // refuses keys and jobs alike, and writes nothing.
    cfg.disk_reserve = u64::MAX / 2;
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let alice = Client::builder(&server.url())
        .token(&token)
        .build()
        .unwrap();
    let other = ClientKey::generate(&GATES_128);
    assert_eq!(
        code(alice.upload_key(&key_bytes(&other))),
        ErrorCode::InsufficientStorage
    );
    assert_eq!(
        code(alice.submit(&p, &input)),
        ErrorCode::InsufficientStorage
    );
    assert!(alice.key(other.key_id()).unwrap().is_none());
    // Fetching and deleting still work: they free the disk.
    assert!(alice.result(second).is_ok());
    alice.delete(second).unwrap();
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Queued jobs expire (`--queue-ttl`) while their owner deletes them: a
/// deletion that was acknowledged is never undone by the expiry writing
/// the job's failure after it (checked after a restart, on disk). The
/// deletions start the moment the first job is seen expired, while the
/// expiry may still be writing the others' failures, last ones first.
#[test]
fn a_delete_racing_the_queue_expiry_is_not_undone() {
    let d = dir("race");
    let mut cfg = config(&d);
    cfg.max_jobs = 1;
    cfg.queue_ttl = Some(Duration::from_secs(1));
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = ClientKey::generate(&GATES_128);
    api.upload_key(&key_bytes(&key)).unwrap();
    let (mul, add) = (mul_program(), add_program(&GATES_128));
    let m = mul.to_bytes().unwrap();
    // Products keep the one worker busy past the queue's TTL, for (nearly)
    // every job behind them: each expires 1 s after its own submission.
    // On a slow machine the worker may start one of them first: that job
    // refuses deletion as running, and only that, and is deleted once done.
    for i in 0..12 {
        api.submit(&m, &bundle(&key, &mul, i, 3)).unwrap();
    }
    let p = add.to_bytes().unwrap();
    let input = bundle(&key, &add, 1, 1);
    let waiting: Vec<JobId> = (0..48)
        .map(|_| api.submit(&p, &input).unwrap().job_id)
        .collect();
    // Until the first is out of the queue: expired, or (on a loaded machine
    // whose worker reached it before its TTL) run.
    let start = Instant::now();
    while matches!(
        api.status(waiting[0]).unwrap().state,
        JobState::Queued { .. }
    ) {
        assert!(start.elapsed() < LIMIT, "never left the queue");
        std::thread::sleep(Duration::from_millis(2));
    }
    let refused: Vec<(JobId, ErrorCode)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|t| {
                let (api, waiting) = (api.clone(), &waiting);
                s.spawn(move || {
                    waiting
                        .iter()
                        .rev()
                        .skip(t)
                        .step_by(4)
                        .filter_map(|id| match api.delete(*id) {
                            Ok(_) => None,
                            refused => Some((*id, code(refused))),
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (id, why) in &refused {
        assert_eq!(*why, ErrorCode::NotReady, "deleting job {id}");
        let start = Instant::now();
        while matches!(api.status(*id).unwrap().state, JobState::Running { .. }) {
            assert!(start.elapsed() < LIMIT, "job {id} never ended");
            std::thread::sleep(Duration::from_millis(5));
        }
        api.delete(*id).unwrap();
    }
    assert!(
        refused.len() < waiting.len() / 2,
        "the race was not run: {} of {} jobs ran",
        refused.len(),
        waiting.len()
    );
    let deleted = waiting;
    server.stop().unwrap();
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let back: Vec<&JobId> = deleted
        .iter()
        .filter(|id| api.status(**id).is_ok())
        .collect();
    assert!(
        back.is_empty(),
        "{} deleted jobs came back, the first {:?}",
        back.len(),
        back.first()
    );
    let left: Vec<String> = std::fs::read_dir(cfg.data.join("jobs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| deleted.iter().any(|id| n.starts_with(&id.to_string())))
        .collect();
    assert!(left.is_empty(), "files of deleted jobs: {left:?}");
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// A server on `cfg` holding the done job `id` of `big`, whose result
/// (`value` 256 times: 2 048 ciphertexts, 25 MB) is far more than
/// loopback's socket buffers hold.
fn large_result(
    cfg: hearth_server::Config,
    value: u8,
) -> (
    hearth_server::ServerHandle,
    Client,
    ClientKey,
    CompiledProgram,
    JobId,
) {
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = ClientKey::generate(&GATES_128);
    api.upload_key(&key_bytes(&key)).unwrap();
    let big = copies_program(256);
    // Kept unpacked: packed, the result would be a few KiB.
    let unpacked = hearth_server::SubmitOptions {
        unpacked: true,
        ..Default::default()
    };
    let id = api
        .submit_with_options(
            unpacked,
            &big.to_bytes().unwrap(),
            &bundle(&key, &big, value, 1),
        )
        .unwrap()
        .job_id;
    api.wait_timeout(id, Duration::from_millis(20), LIMIT)
        .unwrap();
    (server, api, key, big, id)
}

/// A raw connection that asked for job `id`'s result and reads nothing yet.
fn ask_for_result(server: &hearth_server::ServerHandle, id: JobId) -> TcpStream {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    write!(
        s,
        "GET /v1/jobs/{id}/result HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    s
}

/// Results are streamed from disk, and at most `max_downloads` are sent
/// at once: a reader that does not read holds its permit, the next
/// download waits for it and is then refused (`queue_full`); once read,
/// the slow download is whole and right.
#[test]
fn downloads_are_streamed_and_bounded() {
    let d = dir("downloads");
    let mut cfg = config(&d);
    cfg.max_downloads = 1;
    cfg.body_timeout = Duration::from_secs(1);
    // Slow readers are judged over 30 s here: this one pauses, then reads.
    cfg.upload_grace = Duration::from_secs(30);
    let (server, api, key, _, id) = large_result(cfg, 9);
    let mut slow = ask_for_result(&server, id);
    let mut head = [0u8; 512];
    let n = slow.read(&mut head).unwrap();
    assert!(head[..n].starts_with(b"HTTP/1.1 200"), "{:?}", &head[..n]);
    let t = Instant::now();
    assert_eq!(code(api.result(id)), ErrorCode::QueueFull);
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );
    let mut all = head[..n].to_vec();
    slow.read_to_end(&mut all).unwrap();
    let whole = api.result(id).unwrap();
    assert!(
        all.ends_with(&whole),
        "the slow download is the result: {} bytes read, the result is {}",
        all.len(),
        whole.len()
    );
    let values = key
        .decrypt_bundle(&hearth::Bundle::from_bytes(std::path::Path::new("r"), &whole).unwrap())
        .unwrap();
    assert!(values.iter().all(|(_, v)| v[0] == BigInt::from(9)));
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// The output bomb: a program file of a few MB naming one wide input a
/// million times, its stated cost left small and its header resealed. It
/// is refused as `bad_program` at once (outputs count as work before any
/// is made), and the server keeps serving.
#[test]
fn the_output_bomb_is_refused_before_it_is_built() {
    let d = dir("bomb");
    let cfg = config(&d);
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let key = ClientKey::generate(&GATES_128);
    api.upload_key(&key_bytes(&key)).unwrap();
    let p = Program::new(&GATES_128);
    let wide = hearth::api::U128::input(&p);
    p.output(&wide);
    let one = p.build().unwrap();
    let input = key
        .encrypt_bundle(&one.signature().inputs, &[vec![BigInt::from(1u8) << 100]])
        .unwrap()
        .to_bytes()
        .unwrap();
    let bomb =
        hearth_testkit::forge::program_with_outputs(&one.to_bytes().unwrap(), 1_000_000).unwrap();
    eprintln!("the bomb: {} bytes of program", bomb.len());
    let t = Instant::now();
    let e = api.submit(&bomb, &input).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::BadProgram), "{e}");
    assert!(e.to_string().contains("outputs"), "{e}");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    eprintln!("refused in {:.3} s", t.elapsed().as_secs_f64());
    // The honest program runs.
    let job = api.submit(&one.to_bytes().unwrap(), &input).unwrap().job_id;
    api.wait_timeout(job, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&key, &api.result(job).unwrap()),
        BigInt::from(1u8) << 100
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// A client that asks for a large result and does not read it is
/// dropped within two windows of `upload_grace`, and its download slot
/// goes to the next client. Without the drop the slot would be held for
/// `body_timeout` (60 s here); the bound below leaves a loaded CI
/// machine (two cores, every other test running) room for scheduling
/// delays and the next download itself, and still tells the two apart.
#[test]
fn a_reader_that_stops_reading_is_dropped() {
    let d = dir("stalled");
    let mut cfg = config(&d);
    cfg.max_downloads = 1;
    cfg.upload_grace = Duration::from_secs(1);
    cfg.body_timeout = Duration::from_secs(60);
    let (server, api, _, big, id) = large_result(cfg, 4);
    let mut stalled = ask_for_result(&server, id);
    let t = Instant::now();
    std::thread::sleep(Duration::from_millis(200));
    // The slot is taken until the server drops the reader.
    let whole = api.result(id).unwrap();
    let waited = t.elapsed();
    eprintln!("the next download waited {:.2} s", waited.as_secs_f64());
    assert!(waited < Duration::from_secs(20), "{waited:?}");
    assert_eq!(whole.len() as u64, big.result_bytes());
    // The stalled reader's connection is closed: reading ends short.
    stalled
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    let _ = stalled.read_to_end(&mut got);
    assert!(got.len() < whole.len(), "{} bytes", got.len());
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Token schemes are matched as RFC 9110 says: any case.
#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let d = dir("bearer");
    let cfg = config(&d);
    let token = edit(&cfg.data, |t| t.add_token("alice", None)).unwrap();
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        write!(
            s,
            "GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {scheme} {token}\r\n\
             Connection: close\r\n\r\n"
        )
        .unwrap();
        let mut answer = String::new();
        s.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{scheme}: {answer}");
    }
    let e = Client::builder(&server.url())
        .token("hth_nope")
        .build()
        .unwrap()
        .stats()
        .unwrap_err();
    assert!(matches!(e, ClientError::Api { status: 401, .. }), "{e}");
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}
