//! Tenants, tokens and TLS: a server on HTTPS (a certificate made here)
//! with two tenants. Every request without a live token is refused; each
//! tenant's keys and jobs are invisible to the other; each limit refuses
//! with its own code; a revoked token is refused at its next request.

use hearth_server::tenants::{edit, TenantLimits};
use hearth_server::{JobId, TlsFiles};

use super::*;

/// A self-signed certificate for `localhost` and 127.0.0.1, as PEM files
/// in `d`.
pub(crate) fn certificate(d: &Path) -> TlsFiles {
    let ck =
        rcgen::generate_simple_self_signed(vec!["localhost".into(), "127.0.0.1".into()]).unwrap();
    let files = TlsFiles {
        cert: d.join("cert.pem"),
        key: d.join("key.pem"),
    };
    std::fs::write(&files.cert, ck.cert.pem()).unwrap();
    std::fs::write(&files.key, ck.signing_key.serialize_pem()).unwrap();
    files
}

fn client(url: &str, ca: &Path, token: Option<&str>) -> Client {
    let b = Client::builder(url).ca_cert(ca);
    match token {
        Some(t) => b.token(t),
        None => b,
    }
    .build()
    .unwrap()
}

#[test]
fn tenants_own_their_keys_and_jobs_over_tls() {
    let d = dir("tenants");
    let mut cfg = config(&d);
    let tls = certificate(&d);
    cfg.tls = Some(tls.clone());
    // alice: one key, two jobs queued or running, 160 bootstraps a day.
    let alice_limits = TenantLimits {
        max_keys: 1,
        max_queue: 2,
        max_pbs_per_day: 160,
    };
    let alice_token = edit(&cfg.data, |t| t.add_token("alice", Some(alice_limits))).unwrap();
    let bob_token = edit(&cfg.data, |t| t.add_token("bob", None)).unwrap();
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let url = server.url();
    assert!(url.starts_with("https://"), "{url}");

    // The certificate is checked: the system's roots do not know it.
    let e = Client::new(&url).unwrap().info().unwrap_err();
    assert!(matches!(e, ClientError::Transport(_)), "{e}");
    // Nor does a CA file of another certificate.
    let other = d.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let stranger = certificate(&other);
    let e = client(&url, &stranger.cert, None).info().unwrap_err();
    assert!(matches!(e, ClientError::Transport(_)), "{e}");
    // A CA file without a certificate is refused before any request.
    assert!(matches!(
        Client::builder(&url).ca_cert(&tls.key).build(),
        Err(ClientError::Config(_))
    ));

    // GET /v1/info needs no token; everything else does.
    let anyone = client(&url, &tls.cert, None);
    assert_eq!(anyone.info().unwrap().threads, 2);
    let some_job = JobId::random();
    assert_eq!(code(anyone.stats()), ErrorCode::Unauthorized);
    assert_eq!(code(anyone.status(some_job)), ErrorCode::Unauthorized);
    assert_eq!(code(anyone.result(some_job)), ErrorCode::Unauthorized);
    assert_eq!(code(anyone.delete(some_job)), ErrorCode::Unauthorized);
    assert_eq!(code(anyone.submit(b"x", b"y")), ErrorCode::Unauthorized);
    assert_eq!(
        code(anyone.upload_key(&b"x".to_vec())),
        ErrorCode::Unauthorized
    );
    let mut wrong = alice_token.clone();
    let last = wrong.pop().unwrap();
    wrong.push(if last == '0' { '1' } else { '0' });
    assert_eq!(
        code(client(&url, &tls.cert, Some(&wrong)).stats()),
        ErrorCode::Unauthorized
    );
    // The raw answer names the scheme.
    let e = anyone.stats().unwrap_err();
    assert!(e.to_string().contains("401"), "{e}");

    let alice = client(&url, &tls.cert, Some(&alice_token));
    let bob = client(&url, &tls.cert, Some(&bob_token));
    // Which machine answers is told to tenants only: a stranger, or a
    // wrong token, learns nothing of its host's name or process id.
    let told = alice.info().unwrap().server;
    assert!(
        told.ends_with(&format!("-{}", std::process::id())),
        "{told}"
    );
    assert_eq!(anyone.info().unwrap().server, "");
    assert_eq!(
        client(&url, &tls.cert, Some(&wrong)).info().unwrap().server,
        ""
    );
    let alice_key = ClientKey::generate(&GATES_128);
    let key_file = d.join("alice.key");
    alice_key.compressed_server_key().save(&key_file).unwrap();
    assert!(alice.upload_key(&key_file).unwrap().new);
    let second = ClientKey::generate(&GATES_128);
    let second_file = d.join("second.key");
    second.compressed_server_key().save(&second_file).unwrap();
    assert_eq!(code(alice.upload_key(&second_file)), ErrorCode::KeyLimit);

    let add = add_program(&GATES_128);
    let p = add.to_bytes().unwrap();
    let job = alice
        .submit(&p, &bundle(&alice_key, &add, 200, 99))
        .unwrap();
    alice
        .wait_timeout(job.job_id, Duration::from_millis(20), LIMIT)
        .unwrap();
    let id = job.job_id;

    // bob sees none of it, exactly as if it did not exist.
    assert!(bob.key(alice_key.key_id()).unwrap().is_none());
    assert_eq!(
        code(bob.delete_key(alice_key.key_id())),
        ErrorCode::UnknownKey
    );
    assert_eq!(code(bob.status(id)), ErrorCode::NotFound);
    assert_eq!(code(bob.result(id)), ErrorCode::NotFound);
    assert_eq!(code(bob.delete(id)), ErrorCode::NotFound);
    let stolen = bundle(&alice_key, &add, 1, 2);
    assert_eq!(code(bob.submit(&p, &stolen)), ErrorCode::UnknownKey);
    assert_eq!(
        code(bob.submit_with_key(alice_key.key_id(), &p, &stolen)),
        ErrorCode::UnknownKey
    );
    let bob_stats = bob.stats().unwrap();
    assert_eq!((bob_stats.done, bob_stats.keys), (0, 0), "{bob_stats:?}");
    // The same key file uploaded by bob is bob's own, and new to him.
    assert!(bob.upload_key(&key_file).unwrap().new);
    let own = bob.submit(&p, &stolen).unwrap().job_id;
    bob.wait_timeout(own, Duration::from_millis(20), LIMIT)
        .unwrap();
    assert_eq!(
        decrypt_one(&alice_key, &bob.result(own).unwrap()),
        BigInt::from(3)
    );
    assert_eq!(code(alice.status(own)), ErrorCode::NotFound);
    // alice's job is untouched by all that.
    assert_eq!(
        decrypt_one(&alice_key, &alice.result(id).unwrap()),
        BigInt::from(200u8.wrapping_add(99))
    );
    let alice_stats = alice.stats().unwrap();
    assert_eq!(
        (alice_stats.done, alice_stats.keys),
        (1, 1),
        "{alice_stats:?}"
    );

    // alice's queue: two products (69 PBS each) fill it; a third waits.
    let mul = mul_program();
    let m = mul.to_bytes().unwrap();
    let mut products = Vec::new();
    for (a, b) in [(3u8, 5u8), (17, 19)] {
        products.push((
            alice
                .submit(&m, &bundle(&alice_key, &mul, a, b))
                .unwrap()
                .job_id,
            a.wrapping_mul(b),
        ));
    }
    assert_eq!(
        code(alice.submit(&m, &bundle(&alice_key, &mul, 1, 1))),
        ErrorCode::QueueLimit
    );
    // bob's queue is his own.
    let bob_job = bob.submit(&p, &stolen).unwrap().job_id;
    for (j, want) in products {
        alice
            .wait_timeout(j, Duration::from_millis(20), LIMIT)
            .unwrap();
        assert_eq!(
            decrypt_one(&alice_key, &alice.result(j).unwrap()),
            BigInt::from(want)
        );
    }
    // 8 + 69 + 69 = 146 bootstraps today; one more add (154) fits, the
    // next (162) is over 160. A refusal for the queue was not counted.
    alice.submit(&p, &bundle(&alice_key, &add, 1, 1)).unwrap();
    assert_eq!(
        code(alice.submit(&p, &bundle(&alice_key, &add, 1, 1))),
        ErrorCode::DailyLimit
    );
    // The day's count survives a restart (usage.json).
    bob.wait_timeout(bob_job, Duration::from_millis(20), LIMIT)
        .unwrap();
    server.stop().unwrap();
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let url = server.url();
    let alice = client(&url, &tls.cert, Some(&alice_token));
    assert_eq!(
        code(alice.submit(&p, &bundle(&alice_key, &add, 1, 1))),
        ErrorCode::DailyLimit
    );
    assert!(
        alice.key(alice_key.key_id()).unwrap().is_some(),
        "keys survive a restart"
    );
    let bob = client(&url, &tls.cert, Some(&bob_token));
    assert_eq!(code(bob.status(id)), ErrorCode::NotFound);
    assert!(bob.status(bob_job).is_ok());

    // Revoking takes effect at the next request, on a running server.
    let revoked = edit(&cfg.data, |t| t.revoke("alice")).unwrap();
    assert_eq!(revoked, 1);
    assert_eq!(code(alice.status(id)), ErrorCode::Unauthorized);
    assert!(bob.status(bob_job).is_ok());
    // A tenants file that cannot be read lets no one in.
    let file = cfg.data.join(hearth_server::tenants::FILE);
    let good = std::fs::read(&file).unwrap();
    std::fs::write(&file, b"{ not json").unwrap();
    assert_eq!(code(bob.status(bob_job)), ErrorCode::Closed);
    std::fs::write(&file, &good).unwrap();
    assert!(bob.status(bob_job).is_ok());
    // A new token for alice sees her jobs again.
    let fresh = edit(&cfg.data, |t| t.add_token("alice", None)).unwrap();
    let alice = client(&url, &tls.cert, Some(&fresh));
    assert!(alice.status(id).is_ok());
    eprintln!("alice at the end: {:?}", alice.stats().unwrap());
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// An address other than loopback needs tenants and TLS, or `insecure`;
/// the refusal names what is missing and the flag.
#[test]
fn a_non_loopback_address_needs_tenants_and_tls() {
    let d = dir("exposed");
    let cfg = config(&d);
    let refused = |cfg: &Config| {
        hearth_server::start(cfg.clone(), "0.0.0.0:0")
            .err()
            .expect("refused")
            .to_string()
    };
    let msg = refused(&cfg);
    assert!(
        msg.contains("--insecure")
            && msg.contains("0.0.0.0")
            && msg.contains("token add")
            && msg.contains("--tls-cert"),
        "{msg}"
    );
    assert!(!cfg.data.exists(), "the data folder was created");
    // Metrics name tenants: loopback only, too.
    let mut exposed = cfg.clone();
    exposed.metrics_listen = Some("0.0.0.0:0".into());
    let msg = hearth_server::start(exposed, "127.0.0.1:0")
        .err()
        .expect("refused")
        .to_string();
    assert!(
        msg.contains("metrics") && msg.contains("--insecure"),
        "{msg}"
    );
    // Loopback needs nothing (IPv4 here; `localhost` resolves to it too).
    hearth_server::start(cfg.clone(), "localhost:0")
        .unwrap()
        .stop()
        .unwrap();
    // Tenants alone, or TLS alone, are not enough.
    edit(&cfg.data, |t| t.add_token("a", None)).unwrap();
    let msg = refused(&cfg);
    assert!(
        msg.contains("--tls-cert") && !msg.contains("token add"),
        "{msg}"
    );
    let mut both = cfg.clone();
    both.tls = Some(certificate(&d));
    let server = hearth_server::start(both, "0.0.0.0:0").unwrap();
    assert!(server.url().starts_with("https://"));
    server.stop().unwrap();
    let mut open = cfg;
    open.insecure = true;
    let server = hearth_server::start(open, "0.0.0.0:0").unwrap();
    assert!(server.addr().ip().is_unspecified());
    server.stop().unwrap();
    // A certificate that is not one is refused at start.
    let mut bad = config(&d);
    bad.tls = Some(TlsFiles {
        cert: d.join("nothing.pem"),
        key: d.join("nothing.pem"),
    });
    std::fs::write(d.join("nothing.pem"), "not pem").unwrap();
    let msg = hearth_server::start(bad, "127.0.0.1:0")
        .err()
        .expect("refused")
        .to_string();
    assert!(msg.contains("nothing.pem"), "{msg}");
    let _ = std::fs::remove_dir_all(&d);
}
