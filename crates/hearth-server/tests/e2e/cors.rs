//! Cross-origin requests (issue 67, the browser client): off by default;
//! `--allow-origin` answers exactly the named origins' preflights and
//! requests, never another's, and is refused on a server without tenants
//! or with an origin that is not one.

use hearth_server::tenants::edit;

use crate::{config, dir, raw};

/// The answer's headers, lower case, as `(name, value)`.
fn headers(answer: &str) -> Vec<(String, String)> {
    let head = answer.split("\r\n\r\n").next().unwrap_or_default();
    head.lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect()
}

fn header(answer: &str, name: &str) -> Option<String> {
    headers(answer)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn preflight(origin: &str) -> String {
    format!(
        "OPTIONS /v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\n\
         Access-Control-Request-Method: POST\r\n\
         Access-Control-Request-Headers: authorization, content-type\r\nConnection: close\r\n\r\n"
    )
}

fn stats(origin: &str, token: &str) -> String {
    format!(
        "GET /v1/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: {origin}\r\n\
         Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
}

const PAGE: &str = "http://127.0.0.1:8080";
const OTHER: &str = "https://evil.example";

#[test]
fn only_the_allowed_origins_are_answered() {
    let d = dir("cors");
    let mut cfg = config(&d);
    let token = edit(&cfg.data, |t| t.add_token("alice", None)).unwrap();

    // Off by default: no preflight is allowed, no answer is shared.
    let server = hearth_server::start(cfg.clone(), "127.0.0.1:0").unwrap();
    let a = raw(server.addr(), preflight(PAGE).as_bytes());
    assert_eq!(header(&a, "access-control-allow-origin"), None, "{a}");
    let a = raw(server.addr(), stats(PAGE, &token).as_bytes());
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    assert_eq!(header(&a, "access-control-allow-origin"), None, "{a}");
    server.stop().unwrap();

    // Given in any case and with its default port, matched canonically.
    cfg.allow_origins = vec!["HTTP://127.0.0.1:8080/".into()];
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let a = raw(server.addr(), preflight(PAGE).as_bytes());
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    assert_eq!(
        header(&a, "access-control-allow-origin").as_deref(),
        Some(PAGE),
        "{a}"
    );
    let allowed = header(&a, "access-control-allow-headers").unwrap_or_default();
    assert!(
        allowed.contains("authorization") && allowed.contains("content-type"),
        "{a}"
    );
    assert!(header(&a, "access-control-allow-methods")
        .unwrap_or_default()
        .contains("POST"));
    assert_eq!(header(&a, "access-control-allow-credentials"), None, "{a}");
    let a = raw(server.addr(), stats(PAGE, &token).as_bytes());
    assert!(a.starts_with("HTTP/1.1 200"), "{a}");
    assert_eq!(
        header(&a, "access-control-allow-origin").as_deref(),
        Some(PAGE)
    );
    // A token is still needed: the answer is shared, and it is a refusal.
    let a = raw(server.addr(), stats(PAGE, "hth_nope").as_bytes());
    assert!(a.starts_with("HTTP/1.1 401"), "{a}");

    // Another origin, or the same host on another port or scheme: nothing.
    for other in [
        OTHER,
        "http://127.0.0.1:8081",
        "https://127.0.0.1:8080",
        "null",
    ] {
        let a = raw(server.addr(), preflight(other).as_bytes());
        assert_eq!(
            header(&a, "access-control-allow-origin"),
            None,
            "{other}: {a}"
        );
        let a = raw(server.addr(), stats(other, &token).as_bytes());
        assert_eq!(
            header(&a, "access-control-allow-origin"),
            None,
            "{other}: {a}"
        );
    }
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn allowed_origins_need_tenants_and_real_origins() {
    let refusal =
        |cfg: &hearth_server::Config| match hearth_server::start(cfg.clone(), "127.0.0.1:0") {
            Ok(_) => panic!("started with {:?}", cfg.allow_origins),
            Err(e) => e.to_string(),
        };
    let d = dir("cors-refused");
    let mut cfg = config(&d);
    cfg.allow_origins = vec![PAGE.into()];
    let e = refusal(&cfg);
    assert!(e.contains("--allow-origin needs tenants"), "{e}");
    edit(&cfg.data, |t| t.add_token("alice", None)).unwrap();
    for bad in ["*", "127.0.0.1:8080", "http://x/page", "file:///tmp"] {
        cfg.allow_origins = vec![bad.into()];
        let e = refusal(&cfg);
        assert!(e.contains("--allow-origin"), "{bad}: {e}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
