//! The order jobs start in (one job per lane in turn) and several jobs at
//! once within `max_jobs` and `max_memory`, with real keys.

use std::time::{Duration, Instant};

use hearth::{ClientKey, CompiledProgram, GATES_128};
use hearth_server::{Client, JobId, JobState};
use num_bigint::BigInt;

use crate::{add_program, bundle, config, decrypt_one, dir, mul_program, LIMIT};

fn state(api: &Client, id: JobId) -> JobState {
    api.status(id).unwrap().state
}

/// On an open server lanes are key ids: one key's single job starts as
/// soon as the other key's running job ends, before its five queued ones.
#[test]
fn a_single_job_waits_for_no_queued_job_of_another_lane() {
    let d = dir("fair");
    let mut cfg = config(&d);
    cfg.max_jobs = 1;
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let (busy, light) = (
        ClientKey::generate(&GATES_128),
        ClientKey::generate(&GATES_128),
    );
    for k in [&busy, &light] {
        api.upload_key(&k.compressed_server_key().to_bytes().unwrap())
            .unwrap();
    }
    let (mul, add) = (mul_program(), add_program(&GATES_128));
    let (m, p) = (mul.to_bytes().unwrap(), add.to_bytes().unwrap());
    let product = |a: u8| api.submit(&m, &bundle(&busy, &mul, a, 3)).unwrap().job_id;
    let first = product(1);
    let start = Instant::now();
    while matches!(state(&api, first), JobState::Queued { .. }) {
        assert!(start.elapsed() < LIMIT, "never started");
        std::thread::sleep(Duration::from_millis(5));
    }
    let queued: Vec<JobId> = (2..7).map(product).collect();
    let single = api.submit(&p, &bundle(&light, &add, 7, 8)).unwrap().job_id;
    let position = |id| match state(&api, id) {
        JobState::Queued { position } => position,
        other => panic!("{other:?}"),
    };
    assert_eq!(position(single), 0, "before the busy key's queue");
    assert_eq!(position(queued[0]), 1);
    assert_eq!(position(queued[4]), 5);

    api.wait_timeout(single, Duration::from_millis(5), LIMIT)
        .unwrap();
    // The busy key's queued jobs were still waiting but the first.
    for &id in &queued[1..] {
        assert!(
            matches!(state(&api, id), JobState::Queued { .. }),
            "{:?}",
            state(&api, id)
        );
    }
    assert_eq!(
        decrypt_one(&light, &api.result(single).unwrap()),
        BigInt::from(15)
    );
    for (a, id) in (1..).zip(std::iter::once(first).chain(queued)) {
        api.wait_timeout(id, Duration::from_millis(20), LIMIT)
            .unwrap();
        assert_eq!(
            decrypt_one(&busy, &api.result(id).unwrap()),
            BigInt::from(a * 3)
        );
    }
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Submits `n` jobs of `prog` (which computes `op`) at once and returns
/// the most seen running at once; checks every result.
fn most_running(
    api: &Client,
    client: &ClientKey,
    (prog, op): (&CompiledProgram, fn(u8, u8) -> u8),
    n: u8,
) -> usize {
    let bytes = prog.to_bytes().unwrap();
    let ids: Vec<(JobId, u8)> = (0..n)
        .map(|a| {
            let id = api
                .submit(&bytes, &bundle(client, prog, a + 10, 5))
                .unwrap()
                .job_id;
            (id, a + 10)
        })
        .collect();
    let start = Instant::now();
    let mut most = 0;
    loop {
        let s = api.stats().unwrap();
        most = most.max(s.running);
        if s.queued + s.running == 0 {
            break;
        }
        assert!(start.elapsed() < LIMIT, "never finished");
        std::thread::sleep(Duration::from_millis(2));
    }
    for (id, a) in ids {
        assert_eq!(
            decrypt_one(client, &api.result(id).unwrap()),
            BigInt::from(op(a, 5))
        );
        api.delete(id).unwrap();
    }
    most
}

/// Narrow jobs (a sum: one bootstrap per level) run side by side, as many
/// as threads, fewer where `max_memory` has no room for them together;
/// jobs that fill the pool (a product) run one at a time.
#[test]
fn narrow_jobs_run_side_by_side_within_max_memory() {
    let d = dir("side-by-side");
    let client = ClientKey::generate(&GATES_128);
    let key = client.compressed_server_key().to_bytes().unwrap();
    let (add, mul) = (add_program(&GATES_128), mul_program());
    let each = add.memory_estimate(2);
    let sum: (&CompiledProgram, fn(u8, u8) -> u8) = (&add, u8::wrapping_add);
    let product: (&CompiledProgram, fn(u8, u8) -> u8) = (&mul, u8::wrapping_mul);
    for (max_memory, job, expected) in [
        (8 << 30, sum, 2),
        (each + each / 2, sum, 1),
        (8 << 30, product, 1),
    ] {
        let mut cfg = config(&d);
        cfg.max_jobs = 4;
        cfg.max_memory = max_memory;
        let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
        let api = Client::new(&server.url()).unwrap();
        api.upload_key(&key).unwrap();
        assert_eq!(api.info().unwrap().max_jobs, 4);
        assert_eq!(
            most_running(&api, &client, job, 8),
            expected,
            "{max_memory} bytes"
        );
        server.stop().unwrap();
    }
    let _ = std::fs::remove_dir_all(&d);
}
