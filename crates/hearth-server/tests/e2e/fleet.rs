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

use hearth_server::fleet::{self, FleetConfig};
use hearth_server::tenants::{edit, TenantLimits};
use hearth_testkit::postgres::Postgres;

use super::*;

fn fleet_config(d: &Path, url: &str, server: &str) -> Config {
    let mut c = config(d);
    c.fleet = Some(FleetConfig {
        url: url.to_string(),
        blobs: d.join("blobs"),
        server_id: server.to_string(),
        lease: Duration::from_secs(3),
        ca_cert: None,
    });
    c
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
    let alice =
        fleet::tenants::edit(&url, None, |t| t.add_token("alice", Some(limits(1, 1000)))).unwrap();
    let bob =
        fleet::tenants::edit(&url, None, |t| t.add_token("bob", Some(limits(4, 10)))).unwrap();
    let carol = fleet::tenants::edit(&url, None, |t| {
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
    // carol's quota is under a key's size, on both servers.
    for u in [&a_url, &b_url] {
        assert_eq!(
            code(as_tenant(u, &carol).upload_key(&key)),
            ErrorCode::StorageLimit
        );
    }
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
    fleet::tenants::edit(&url, None, |t| t.revoke_tenant("bob")).unwrap();
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
    let moved = fleet::migrate::migrate(&cfg.data, &url, None, &d.join("blobs")).unwrap();
    assert_eq!(
        (moved.tenants, moved.keys, moved.finished, moved.queued),
        (1, 1, 1, 0)
    );
    // A second migration into the same fleet is refused, the fleet intact.
    assert!(fleet::migrate::migrate(&cfg.data, &url, None, &d.join("blobs")).is_err());

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
        let refused = fleet::tenants::edit(&url, ca, |t| t.add_token("erin", None)).unwrap_err();
        assert!(refused.to_string().contains("certificate"), "{refused}");
    }
    // A plain connection where TLS is required is refused too.
    let plain_pg = Postgres::start("e2e-no-tls").unwrap();
    let plain_url = format!("{}?sslmode=require", plain_pg.url("x"));
    let e = fleet::tenants::load(&plain_url, Some(&ca)).unwrap_err();
    assert!(e.to_string().contains("TLS"), "{e}");
    // With its CA: tenants edited, a server serving, a job run over TLS.
    let token = fleet::tenants::edit(&url, Some(&ca), |t| t.add_token("erin", None)).unwrap();
    let mut cfg = fleet_config(&d, &url, "tls");
    if let Some(f) = &mut cfg.fleet {
        f.ca_cert = Some(ca.clone());
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
