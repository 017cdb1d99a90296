//! A fleet in this process: two servers on one throwaway PostgreSQL
//! database and one blob folder. A key uploaded through one is used
//! through the other; jobs submitted through one are fetched, counted and
//! deleted through the other; each tenant's key, storage and daily
//! limits hold across both; a token revoked in the database is refused
//! by both at the next request; `/v1/info` names the store and the
//! server. Then a data folder with tenants, a key and finished jobs is
//! migrated into a fleet: its results are fetched through the fleet with
//! the old token, and its key runs a new job. Skipped, saying so, where
//! PostgreSQL is not installed (unless `HEARTH_REQUIRE_POSTGRES`).

use hearth_server::fleet::{self, Database, FleetConfig};
use hearth_server::tenants::{edit, TenantLimits};
use hearth_testkit::postgres::{Postgres, Proxy};

use super::*;

fn fleet_config(d: &Path, url: &str, server: &str) -> Config {
    let mut c = config(d);
    c.fleet = Some(FleetConfig {
        database: Database::new(url),
        blobs: d.join("blobs"),
        server_id: server.to_string(),
        lease: Duration::from_secs(3),
    });
    c
}

/// The database at `url`, its certificate checked against `ca`.
fn with_ca(url: &str, ca: &Path) -> Database {
    Database {
        ca_cert: Some(ca.to_path_buf()),
        ..Database::new(url)
    }
}

fn as_tenant(url: &str, token: &str) -> Client {
    Client::builder(url).token(token).build().unwrap()
}

fn limits(max_keys: usize, max_pbs_per_day: u64) -> TenantLimits {
    TenantLimits {
        max_keys,
        max_queue: 16,
        max_pbs_per_day,
    }
}

#[test]
fn two_servers_share_tenants_keys_jobs_and_limits() {
    let Some(pg) = Postgres::start_or_skip("e2e-fleet") else {
        return;
    };
    let d = dir("fleet");
    let url = pg.url("fleet");
    // alice: one key; bob: 10 bootstraps a day (one `a + b` job); carol: 1
    // KiB of storage (less than a key).
    let alice = fleet::tenants::edit(&Database::new(&url), |t| {
        t.add_token("alice", Some(limits(1, 1000)))
    })
    .unwrap();
    let bob = fleet::tenants::edit(&Database::new(&url), |t| {
        t.add_token("bob", Some(limits(4, 10)))
    })
    .unwrap();
    let carol = fleet::tenants::edit(&Database::new(&url), |t| {
        let token = t.add_token("carol", None)?;
        t.storage.insert("carol".into(), 1024);
        Ok(token)
    })
    .unwrap();
    // Blobs a server left when it died between writing them and naming
    // them in the database: the old ones go when a server starts, a young
    // one (maybe about to be named) stays.
    let blobs = d.join("blobs");
    let stray = |name: &str, age: Duration| {
        let path = blobs.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"left over").unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(std::time::SystemTime::now() - age).unwrap();
        path
    };
    let old = [
        stray("results/0123.1.out", Duration::from_secs(7200)),
        stray("jobs/0123.req", Duration::from_secs(7200)),
        stray(
            "keys/alice/0000000000000001-ff.key",
            Duration::from_secs(7200),
        ),
    ];
    let young = stray("results/4567.1.out", Duration::from_secs(60));
    let a = hearth_server::start(fleet_config(&d, &url, "server-a"), "127.0.0.1:0").unwrap();
    for p in &old {
        assert!(!p.exists(), "{} was left", p.display());
    }
    assert!(young.exists());
    let b = hearth_server::start(fleet_config(&d, &url, "server-b"), "127.0.0.1:0").unwrap();
    let (a_url, b_url) = (a.url(), b.url());
    for (u, name) in [(&a_url, "server-a"), (&b_url, "server-b")] {
        let info = as_tenant(u, &alice).info().unwrap();
        assert_eq!(
            (info.store.as_str(), info.server.as_str()),
            ("postgres", name)
        );
        // A stranger is not told which server answered.
        assert_eq!(Client::new(u).unwrap().info().unwrap().server, "");
    }
    let (alice_a, alice_b) = (as_tenant(&a_url, &alice), as_tenant(&b_url, &alice));
    let (bob_a, bob_b) = (as_tenant(&a_url, &bob), as_tenant(&b_url, &bob));

    // A key uploaded through a is there through b; a second key is over
    // alice's limit on either.
    let client = ClientKey::generate(&GATES_128);
    let key = client.compressed_server_key().to_bytes().unwrap();
    assert!(alice_a.upload_key(&key).unwrap().new);
    assert!(!alice_b.upload_key(&key).unwrap().new, "the fleet has it");
    assert!(alice_b.key(client.key_id()).unwrap().is_some());
    assert_eq!(alice_b.stats().unwrap().keys, 1);
    let other = ClientKey::generate(&GATES_128);
    let other_key = other.compressed_server_key().to_bytes().unwrap();
    assert_eq!(code(alice_b.upload_key(&other_key)), ErrorCode::KeyLimit);
    assert_eq!(code(alice_a.upload_key(&other_key)), ErrorCode::KeyLimit);
    // carol's quota is under a key's size, on both servers; the key is
    // refused before it is decoded (a compressed key is expanded), as
    // fast as alice's over her key limit.
    let timed = |api: &Client, want: ErrorCode| {
        let t = Instant::now();
        assert_eq!(code(api.upload_key(&other_key)), want);
        t.elapsed()
    };
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (mut storage, mut count) = (Vec::new(), Vec::new());
    for u in [&a_url, &b_url, &a_url, &b_url, &a_url] {
        storage.push(timed(&as_tenant(u, &carol), ErrorCode::StorageLimit));
        count.push(timed(&as_tenant(u, &alice), ErrorCode::KeyLimit));
    }
    let t = Instant::now();
    let _ = hearth::ServerKey::from_bytes(Path::new("key"), &other_key).unwrap();
    let decode = t.elapsed();
    let (storage, count) = (median(storage), median(count));
    eprintln!(
        "a key refused: over the storage quota {storage:?}, over the key limit {count:?}; \
         decoding it takes {decode:?}"
    );
    assert!(
        storage < count + decode / 2,
        "the key over carol's quota was decoded before it was refused"
    );
    // bob sees none of alice's keys.
    assert!(bob_b.key(client.key_id()).unwrap().is_none());

    // Jobs through a, fetched and deleted through b.
    let prog = add_program(&GATES_128);
    let p = prog.to_bytes().unwrap();
    let mut jobs = Vec::new();
    for (i, (x, y)) in [(200u8, 100u8), (7, 9), (255, 1), (13, 200)]
        .into_iter()
        .enumerate()
    {
        let via = if i % 2 == 0 { &alice_a } else { &alice_b };
        jobs.push((
            via.submit(&p, &bundle(&client, &prog, x, y))
                .unwrap()
                .job_id,
            x.wrapping_add(y),
        ));
    }
    for &(id, want) in &jobs {
        alice_b
            .wait_timeout(id, Duration::from_millis(20), LIMIT)
            .unwrap();
        let out = alice_a.result(id).unwrap();
        assert_eq!(decrypt_one(&client, &out), BigInt::from(want), "job {id}");
        assert_eq!(
            code(bob_a.status(id)),
            ErrorCode::NotFound,
            "another tenant's job"
        );
    }
    let st = alice_a.stats().unwrap();
    assert_eq!((st.done, st.queued, st.running), (4, 0, 0));
    for &(id, _) in &jobs {
        alice_b.delete(id).unwrap();
        assert_eq!(code(alice_a.status(id)), ErrorCode::NotFound);
        assert_eq!(code(alice_a.result(id)), ErrorCode::NotFound);
    }
    // A key with no job left can go, through either server.
    assert_eq!(
        alice_a.delete_key(client.key_id()).unwrap().key_id,
        client.key_id().to_string()
    );
    assert!(alice_b.key(client.key_id()).unwrap().is_none());
    // Every byte went back: alice can register the other key now.
    assert!(alice_b.upload_key(&other_key).unwrap().new);

    // bob's day: one 8-bootstrap job through a, then every server
    // refuses the next.
    bob_a.upload_key(&key).unwrap();
    let first = bob_a
        .submit(&p, &bundle(&client, &prog, 1, 2))
        .unwrap()
        .job_id;
    for api in [&bob_a, &bob_b] {
        assert_eq!(
            code(api.submit(&p, &bundle(&client, &prog, 1, 2))),
            ErrorCode::DailyLimit
        );
    }
    bob_b
        .wait_timeout(first, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &bob_b.result(first).unwrap()),
        BigInt::from(3)
    );
    // A key under a finished job that is kept may go; one under a
    // queued job may not (checked by the key's own test on one server).

    // A token revoked in the database is refused by both servers.
    fleet::tenants::edit(&Database::new(&url), |t| t.revoke_tenant("bob")).unwrap();
    assert_eq!(code(bob_a.stats()), ErrorCode::Unauthorized);
    assert_eq!(code(bob_b.status(first)), ErrorCode::Unauthorized);
    // Without a token, nothing but the open routes.
    assert_eq!(
        code(Client::new(&b_url).unwrap().stats()),
        ErrorCode::Unauthorized
    );

    // The database holds one committed result per job run, each by the
    // server that claimed it.
    let commits = pg.psql(
        "fleet",
        "SELECT count(*) FROM job_events WHERE event = 'committed'",
    );
    assert_eq!(commits.trim(), "1", "bob's job is the one left");
    a.stop().unwrap();
    b.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_data_folder_migrates_into_a_fleet() {
    let Some(pg) = Postgres::start_or_skip("e2e-migrate") else {
        return;
    };
    let d = dir("migrate");
    let cfg = config(&d);
    let token = edit(&cfg.data, |t| t.add_token("dana", None)).unwrap();
    let client = ClientKey::generate(&GATES_128);
    let prog = add_program(&GATES_128);
    let p = prog.to_bytes().unwrap();
    let done = {
        let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
        let api = as_tenant(&server.url(), &token);
        api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
            .unwrap();
        let done = api
            .submit(&p, &bundle(&client, &prog, 40, 2))
            .unwrap()
            .job_id;
        let gone = api
            .submit(&p, &bundle(&client, &prog, 1, 1))
            .unwrap()
            .job_id;
        for id in [done, gone] {
            api.wait_timeout(id, Duration::from_millis(20), LIMIT)
                .unwrap();
        }
        api.delete(gone).unwrap();
        done
    };
    let url = pg.url("migrated");
    let moved = fleet::migrate::migrate(&cfg.data, &Database::new(&url), &d.join("blobs")).unwrap();
    assert_eq!(
        (moved.tenants, moved.keys, moved.finished, moved.queued),
        (1, 1, 1, 0)
    );
    // A second migration into the same fleet is refused, the fleet intact.
    assert!(fleet::migrate::migrate(&cfg.data, &Database::new(&url), &d.join("blobs")).is_err());

    let server = hearth_server::start(fleet_config(&d, &url, "after"), "127.0.0.1:0").unwrap();
    let api = as_tenant(&server.url(), &token);
    assert_eq!(
        decrypt_one(&client, &api.result(done).unwrap()),
        BigInt::from(42)
    );
    assert!(api.key(client.key_id()).unwrap().is_some());
    let next = api
        .submit(&p, &bundle(&client, &prog, 250, 10))
        .unwrap()
        .job_id;
    api.wait_timeout(next, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(next).unwrap()),
        BigInt::from(4)
    );
    assert_eq!(api.stats().unwrap().done, 2);
    // The fleet is closed to anyone without a token, as the folder was.
    assert_eq!(
        code(Client::new(&server.url()).unwrap().stats()),
        ErrorCode::Unauthorized
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_database_is_reached_over_tls_and_its_certificate_checked() {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let (cert, key) = (ck.cert.pem(), ck.signing_key.serialize_pem());
    let Some(pg) = Postgres::start_tls_or_skip("e2e-tls", &cert, &key) else {
        return;
    };
    let d = dir("fleet-tls");
    let ca = d.join("ca.pem");
    std::fs::write(&ca, ck.cert.pem()).unwrap();
    let url = format!("{}?sslmode=require", pg.url("tls"));
    // The certificate is checked: the system's roots do not know it, nor
    // does another CA.
    let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".into()]).unwrap();
    let other_ca = d.join("other.pem");
    std::fs::write(&other_ca, other.cert.pem()).unwrap();
    for ca in [None, Some(other_ca.as_path())] {
        let db = Database {
            ca_cert: ca.map(Path::to_path_buf),
            ..Database::new(&url)
        };
        let refused = fleet::tenants::edit(&db, |t| t.add_token("erin", None)).unwrap_err();
        assert!(refused.to_string().contains("certificate"), "{refused}");
    }
    // A plain connection where TLS is required is refused too; with a CA
    // file, TLS is required whatever the URL says (an attacker on the
    // path cannot strip it), and a URL that declines it is refused.
    let plain_pg = Postgres::start("e2e-no-tls").unwrap();
    let plain_url = format!("{}?sslmode=require", plain_pg.url("x"));
    let e = fleet::tenants::load(&with_ca(&plain_url, &ca)).unwrap_err();
    assert!(e.to_string().contains("TLS"), "{e}");
    for (url, says) in [
        (plain_pg.url("x"), "TLS"),
        (format!("{}?sslmode=prefer", plain_pg.url("x")), "TLS"),
        (
            format!("{}?sslmode=disable", plain_pg.url("x")),
            "sslmode=disable",
        ),
    ] {
        let mut cfg = fleet_config(&d, &url, "stripped");
        if let Some(f) = &mut cfg.fleet {
            f.database.ca_cert = Some(ca.clone());
        }
        let e = hearth_server::start(cfg, "127.0.0.1:0")
            .err()
            .unwrap_or_else(|| {
                panic!("{url}: a server with a CA file used a database without TLS")
            });
        assert!(e.to_string().contains(says), "{url}: {e}");
    }
    // With its CA: tenants edited, a server serving, a job run over TLS.
    let token = fleet::tenants::edit(&with_ca(&url, &ca), |t| t.add_token("erin", None)).unwrap();
    let mut cfg = fleet_config(&d, &url, "tls");
    if let Some(f) = &mut cfg.fleet {
        f.database.ca_cert = Some(ca.clone());
    }
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = as_tenant(&server.url(), &token);
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let prog = add_program(&GATES_128);
    let id = api
        .submit(&prog.to_bytes().unwrap(), &bundle(&client, &prog, 3, 4))
        .unwrap()
        .job_id;
    api.wait_timeout(id, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(id).unwrap()),
        BigInt::from(7)
    );
    // Every connection of the server's is encrypted.
    let plain = pg.psql(
        "postgres",
        "SELECT count(*) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
         WHERE a.datname = 'tls' AND NOT s.ssl",
    );
    assert_eq!(plain.trim(), "0", "a connection without TLS");
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// Each test's start: a throwaway cluster with a database `name`, a fresh
/// folder, and a token of `tenant` (of `limits`, or the defaults) there.
/// `None`: PostgreSQL is missing and the test skips.
fn fleet_of(
    name: &str,
    tenant: &str,
    limits: Option<TenantLimits>,
) -> Option<(Postgres, PathBuf, String, String)> {
    let pg = Postgres::start_or_skip(&format!("e2e-{name}"))?;
    let d = dir(&format!("fleet-{name}"));
    let url = pg.url(name);
    let token =
        fleet::tenants::edit(&Database::new(&url), |t| t.add_token(tenant, limits)).unwrap();
    Some((pg, d, url, token))
}

/// Submits `program` with `bundle` through `api` and waits for the job.
fn run_job(api: &Client, program: &[u8], bundle: &[u8]) -> hearth_server::JobId {
    let id = api.submit(program, bundle).unwrap().job_id;
    api.wait_timeout(id, Duration::from_millis(20), LIMIT)
        .unwrap();
    id
}

/// `a * b * a` on `u16`: two products, seconds of one core (several
/// leases of 1.5 s even on a machine a few times faster).
fn long_program() -> CompiledProgram {
    use hearth::api::U16;
    let p = Program::new(&GATES_128);
    let (a, b) = (U16::input(&p), U16::input(&p));
    p.output(&(&(&a * &b) * &a));
    p.build().unwrap()
}

fn long_bundle(client: &ClientKey, prog: &CompiledProgram, a: u16, b: u16) -> Vec<u8> {
    let inputs = [a, b].map(|v| vec![BigInt::from(v)]);
    let bundle = client.encrypt_bundle(&prog.signature().inputs, &inputs);
    bundle.unwrap().to_bytes().unwrap()
}

/// The files under `dir` (recursively).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn a_commit_whose_answer_is_lost_keeps_what_it_committed() {
    let Some((pg, d, _, token)) = fleet_of("lost", "fay", None) else {
        return;
    };
    // The server reaches its database through a proxy that can cut a
    // connection right after the database committed, before the answer.
    let proxy = Proxy::start(pg.port());
    let server =
        hearth_server::start(fleet_config(&d, &proxy.url("lost"), "lossy"), "127.0.0.1:0").unwrap();
    let api = as_tenant(&server.url(), &token);
    let client = ClientKey::generate(&GATES_128);
    let key = client.compressed_server_key().to_bytes().unwrap();

    // The key's registration commits; its answer is lost: the upload is
    // refused (the server cannot tell), but the key is registered, and
    // its file must still be there.
    proxy.lose_commit_reply("INSERT INTO keys");
    assert_eq!(code(api.upload_key(&key)), ErrorCode::Internal);
    assert_eq!(proxy.lost(), 1);
    assert!(
        !api.upload_key(&key).unwrap().new,
        "registered all the same"
    );
    let key_files = files_under(&d.join("blobs/keys"));
    assert_eq!(key_files.len(), 1, "the key's file: {key_files:?}");

    // A job's result commits; the answer is lost: the commit is tried
    // again, found done, and the result is kept.
    proxy.lose_commit_reply("UPDATE jobs SET state = 'done'");
    let prog = add_program(&GATES_128);
    let id = run_job(
        &api,
        &prog.to_bytes().unwrap(),
        &bundle(&client, &prog, 90, 9),
    );
    assert_eq!(proxy.lost(), 2, "the commit's answer was lost");
    assert_eq!(
        decrypt_one(&client, &api.result(id).unwrap()),
        BigInt::from(99)
    );
    let events = pg.psql(
        "lost",
        &format!("SELECT event FROM job_events WHERE job_id = '{id}' ORDER BY at"),
    );
    assert_eq!(
        events.split_whitespace().collect::<Vec<_>>(),
        ["claimed", "committed"],
        "one claim, one commit, nothing refused"
    );
    eprintln!(
        "lost commit answers: {} (key registration, result); the key's file and the result \
         kept",
        proxy.lost()
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_blocked_sweeper_costs_no_running_job_its_lease() {
    let Some((pg, d, url, token)) = fleet_of("sweep", "gus", None) else {
        return;
    };
    let lease = Duration::from_millis(1500);
    let mut cfg = fleet_config(&d, &url, "sweeper");
    if let Some(f) = &mut cfg.fleet {
        f.lease = lease;
    }
    // Results are kept 2 s: a finished job's row the sweeper must delete
    // soon, held locked by another session, stops the sweeper there.
    cfg.result_ttl = Duration::from_secs(2);
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    pg.psql(
        "sweep",
        "INSERT INTO jobs (id, tenant, lane, key_id, pbs, depth, memory, result_max, held, \
         state, submitted_ms, finished_s) VALUES ('locked', 'gus', 'tenant:gus', \
         '0000000000000001', 1, 1, 0, 0, 0, 'done', 0, extract(epoch from now())::bigint)",
    );
    let locker = pg.session(
        "sweep",
        "BEGIN; SELECT 1 FROM jobs WHERE id = 'locked' FOR UPDATE; SELECT pg_sleep(120);",
    );
    let blocked = || {
        pg.psql(
            "sweep",
            "SELECT count(*) FROM pg_stat_activity WHERE datname = 'sweep' \
             AND wait_event_type = 'Lock' AND query LIKE '%DELETE FROM jobs%'",
        )
        .trim()
            != "0"
    };
    let t = Instant::now();
    while !blocked() {
        assert!(t.elapsed() < LIMIT, "the sweeper never waited on the lock");
        std::thread::sleep(Duration::from_millis(20));
    }

    // A job of several leases runs while the sweeper waits.
    let api = as_tenant(&server.url(), &token);
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let prog = long_program();
    let id = api
        .submit(
            &prog.to_bytes().unwrap(),
            &long_bundle(&client, &prog, 300, 7),
        )
        .unwrap()
        .job_id;
    let job = format!("'{id}'");
    pg.wait_row(
        "sweep",
        &format!("SELECT 1 FROM jobs WHERE id = {job} AND state = 'running'"),
        "the job running",
        LIMIT,
    );
    let started = Instant::now();
    let (mut looks, mut lapsed) = (0, 0);
    // How long the sweeper was seen waiting while the job ran. Its
    // statement gives up after the statement timeout (30 s) and the next
    // sweep waits again, so on a loaded machine there are gaps: what
    // counts is that the job ran leases while the sweeper waited.
    let (mut waited, mut last) = (Duration::ZERO, Instant::now());
    loop {
        let state = pg.psql(
            "sweep",
            &format!("SELECT state, lease_until < now() FROM jobs WHERE id = {job}"),
        );
        let state = state.trim();
        if !state.starts_with("running") {
            break;
        }
        looks += 1;
        if state.ends_with("|t") {
            lapsed += 1;
        }
        let now = Instant::now();
        if blocked() {
            waited += now - last;
        }
        last = now;
        assert!(started.elapsed() < LIMIT, "the job never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    let ran = started.elapsed();
    api.wait_timeout(id, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(id).unwrap()),
        BigInt::from(300u16.wrapping_mul(7).wrapping_mul(300))
    );
    eprintln!(
        "sweeper blocked: the job ran {:.1} s ({:.1} leases), {:.1} s of them with the sweeper \
         waiting; its lease seen lapsed {lapsed} times of {looks}",
        ran.as_secs_f64(),
        ran.as_secs_f64() / lease.as_secs_f64(),
        waited.as_secs_f64()
    );
    assert!(
        waited > lease * 3 / 2,
        "the job ran {ran:?}, {waited:?} of it beside a waiting sweeper: too briefly to tell \
         (a lease is {lease:?})"
    );
    assert_eq!(
        lapsed, 0,
        "the running job's lease lapsed while the sweeper waited"
    );
    let commits = pg.psql(
        "sweep",
        &format!("SELECT count(*) FROM job_events WHERE job_id = {job} AND event = 'committed'"),
    );
    assert_eq!(commits.trim(), "1");
    locker.end();
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn requests_without_a_valid_token_cost_the_database_nothing() {
    let Some((pg, d, url, token)) = fleet_of("flood", "hal", None) else {
        return;
    };
    let server = hearth_server::start(fleet_config(&d, &url, "flooded"), "127.0.0.1:0").unwrap();
    let api = as_tenant(&server.url(), &token);
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    pg.log_statements();
    // The statements a request's authentication or `/v1/health` sends.
    let counted = || pg.statements("flood", "FROM fleet") + pg.statements("flood", ": SELECT 1");
    let before = counted();
    // A legitimate job runs meanwhile; its client's requests are counted.
    let prog = add_program(&GATES_128);
    let id = api
        .submit(&prog.to_bytes().unwrap(), &bundle(&client, &prog, 17, 25))
        .unwrap()
        .job_id;
    let mut legit = 1;
    let bad = Client::builder(&server.url())
        .token("hth_0123456789abcdef_notavalidsecret")
        .build()
        .unwrap();
    let none = Client::new(&server.url()).unwrap();
    let t = Instant::now();
    for i in 0..1000 {
        let who = if i % 2 == 0 { &bad } else { &none };
        assert_eq!(code(who.stats()), ErrorCode::Unauthorized);
        let health = raw(
            server.addr(),
            b"GET /v1/health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
        );
        assert!(health.starts_with("HTTP/1.1 200"), "{health}");
        if i % 100 == 0 {
            legit += 1;
            let _ = api.status(id).unwrap();
        }
    }
    let flood = t.elapsed();
    let sent = counted() - before;
    api.wait_timeout(id, Duration::from_millis(50), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(id).unwrap()),
        BigInt::from(42)
    );
    // One look at the tenants for each legitimate request (a revoked token
    // is refused at once); for the flood, at most one per TOKEN_CACHE.
    let allowed = legit + 1 + (flood.as_secs_f64() / 2.0).ceil() as usize;
    eprintln!(
        "1000 requests with a bad or no token and 1000 health checks in {:.2} s, {legit} \
         legitimate requests: {sent} queries of the tenants or health ({allowed} allowed)",
        flood.as_secs_f64()
    );
    assert!(
        sent <= allowed,
        "{sent} queries for 2000 requests that needed none and {legit} that need one each"
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_admission_left_by_a_dead_server_frees_its_slot_at_once() {
    // ida may have one job queued or running.
    let one = TenantLimits {
        max_keys: 4,
        max_queue: 1,
        max_pbs_per_day: 1000,
    };
    let Some((pg, d, url, token)) = fleet_of("admit", "ida", Some(one)) else {
        return;
    };
    let server = hearth_server::start(fleet_config(&d, &url, "alive"), "127.0.0.1:0").unwrap();
    let api = as_tenant(&server.url(), &token);
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let stored = |pg: &Postgres| {
        pg.psql(
            "admit",
            "SELECT stored_bytes FROM usage WHERE tenant = 'ida'",
        )
        .trim()
        .parse::<u64>()
        .unwrap()
    };
    let before = stored(&pg);
    // A server died admitting one of ida's jobs (`kill -9` between the
    // admission's first transaction and the job being queued): its row
    // holds ida's one slot and 1000 of her bytes, and its heartbeats
    // stopped a minute ago.
    pg.psql(
        "admit",
        "INSERT INTO servers (id, seen, lease_ms) VALUES ('dead', now() - interval '1 minute', \
         3000)",
    );
    pg.psql(
        "admit",
        "BEGIN; UPDATE usage SET stored_bytes = stored_bytes + 1000 WHERE tenant = 'ida'; \
         INSERT INTO jobs (id, tenant, lane, key_id, pbs, depth, memory, result_max, held, state, \
         submitted_ms, admitted_by) VALUES ('left', 'ida', 'tenant:ida', '0000000000000001', 8, \
         1, 0, 0, 1000, 'admitting', 0, 'dead'); COMMIT;",
    );
    let prog = add_program(&GATES_128);
    let p = prog.to_bytes().unwrap();
    let t = Instant::now();
    let mut refused = 0;
    let id = loop {
        match api.submit(&p, &bundle(&client, &prog, 120, 3)) {
            Ok(s) => break s.job_id,
            Err(e) => {
                assert_eq!(e.code(), Some(ErrorCode::QueueLimit), "{e}");
                refused += 1;
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(15),
            "the dead server's admission still holds the slot after {:?}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let freed = t.elapsed();
    api.wait_timeout(id, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&client, &api.result(id).unwrap()),
        BigInt::from(123)
    );
    let left = pg.psql("admit", "SELECT count(*) FROM jobs WHERE id = 'left'");
    assert_eq!(left.trim(), "0");
    // The dead admission's bytes are given back (the job's result is
    // what ida holds beside her key now).
    let result_bytes: u64 = pg
        .psql("admit", &format!("SELECT held FROM jobs WHERE id = '{id}'"))
        .trim()
        .parse()
        .unwrap();
    assert_eq!(stored(&pg), before + result_bytes);
    eprintln!(
        "a dead server's admission held the slot {:.2} s ({refused} submissions refused), \
         then was given back",
        freed.as_secs_f64()
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// `client`'s own key's file with its id replaced by `id`: another key
/// that claims the id of one deleted.
fn client_key_with_id(client: &ClientKey, id: hearth::KeyId) -> ClientKey {
    let mut bytes = client.to_bytes().unwrap();
    let old = client.key_id().0.to_le_bytes();
    // The header is 36 bytes; the payload holds the id again.
    let header = 36;
    let at = bytes[header..]
        .windows(8)
        .position(|w| w == old)
        .expect("the key id in the payload")
        + header;
    bytes[16..24].copy_from_slice(&id.0.to_le_bytes());
    bytes[at..at + 8].copy_from_slice(&id.0.to_le_bytes());
    assert!(hearth::crypto::files::reseal(&mut bytes));
    ClientKey::from_bytes(Path::new("forged"), &bytes).unwrap()
}

/// A counter of `/metrics`, as a number.
fn metric(server: &hearth_server::ServerHandle, line: &str) -> u64 {
    let text = raw(
        server.metrics_addr().unwrap(),
        b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    text.lines()
        .find_map(|l| l.strip_prefix(line)?.trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn a_key_deleted_through_one_server_leaves_the_others_caches() {
    let Some((pg, d, url, token)) = fleet_of("stale", "jo", None) else {
        return;
    };
    let mut cfg = fleet_config(&d, &url, "b");
    cfg.metrics_listen = Some("127.0.0.1:0".into());
    // b alone first: it runs a job under jo's key, and keeps the key.
    let b = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let via_b = as_tenant(&b.url(), &token);
    let first = ClientKey::generate(&GATES_128);
    via_b
        .upload_key(&first.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let prog = add_program(&GATES_128);
    let p = prog.to_bytes().unwrap();
    let id = run_job(&via_b, &p, &bundle(&first, &prog, 5, 6));
    assert_eq!(
        decrypt_one(&first, &via_b.result(id).unwrap()),
        BigInt::from(11)
    );
    via_b.delete(id).unwrap();
    let hit = "hearth_key_cache_total{result=\"hit\"}";
    let miss = "hearth_key_cache_total{result=\"miss\"}";
    let (hits, misses) = (metric(&b, hit), metric(&b, miss));

    // Through a: the key is deleted, and another key registered under
    // its id (a tenant may reuse an id; its jobs must run under the key
    // registered now).
    let a = hearth_server::start(fleet_config(&d, &url, "a"), "127.0.0.1:0").unwrap();
    let via_a = as_tenant(&a.url(), &token);
    via_a.delete_key(first.key_id()).unwrap();
    let second = client_key_with_id(&ClientKey::generate(&GATES_128), first.key_id());
    assert!(
        via_a
            .upload_key(&second.compressed_server_key().to_bytes().unwrap())
            .unwrap()
            .new
    );
    a.stop().unwrap();

    // b runs the next job: under the key registered now, not its copy of
    // the deleted one.
    let id = run_job(&via_b, &p, &bundle(&second, &prog, 70, 7));
    let ran_by = pg.psql(
        "stale",
        &format!("SELECT ran_by FROM jobs WHERE id = '{id}'"),
    );
    assert_eq!(ran_by.trim(), "b");
    let (hits, misses) = (metric(&b, hit) - hits, metric(&b, miss) - misses);
    eprintln!("the job after the key was deleted and registered again: {hits} cache hits, {misses} misses on b");
    assert_eq!(
        decrypt_one(&second, &via_b.result(id).unwrap()),
        BigInt::from(77),
        "the job ran with the deleted key"
    );
    assert_eq!((hits, misses), (0, 1), "b loaded the key registered now");
    b.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}
