//! The OpenAPI document (`openapi.json`) against the server: every
//! documented operation is routed and answers only with its documented
//! statuses and codes, every other method on a documented path is refused
//! as such, the error codes and statuses are the server's, and the HTTP
//! API tables of `docs/server.md` say the same.

use std::collections::BTreeSet;

use hearth_server::{ErrorCode, JobId, OPENAPI};
use serde_json::Value;

use crate::{config, dir, raw};

const METHODS: [&str; 5] = ["get", "post", "put", "patch", "delete"];

fn doc() -> Value {
    serde_json::from_str(OPENAPI).expect("openapi.json is JSON")
}

/// Every (method, path) the document has, methods in upper case.
fn operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut ops = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in METHODS {
            if item.get(m).is_some() {
                ops.insert((m.to_uppercase(), path.clone()));
            }
        }
    }
    ops
}

#[test]
fn the_error_codes_are_the_servers() {
    let doc = doc();
    assert_eq!(doc["openapi"], "3.1.0");
    let code = &doc["components"]["schemas"]["Error"]["properties"]["code"];
    let listed: Vec<&str> = code["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    let all: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(listed, all);
    for c in ErrorCode::ALL {
        assert_eq!(code["x-status"][c.as_str()], c.status(), "{c}");
    }
    // Each operation's codes have their statuses among its responses, and
    // every error status it lists comes from one of its codes.
    for (path, item) in doc["paths"].as_object().unwrap() {
        for m in METHODS {
            let Some(op) = item.get(m) else { continue };
            let codes: Vec<ErrorCode> = op["x-error-codes"]
                .as_array()
                .unwrap_or_else(|| panic!("{m} {path}: no x-error-codes"))
                .iter()
                .map(|c| ErrorCode::parse(c.as_str().unwrap()).unwrap())
                .collect();
            let statuses: BTreeSet<u16> = op["responses"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| k.parse().unwrap())
                .collect();
            let from_codes: BTreeSet<u16> = codes.iter().map(|c| c.status()).collect();
            let errors: BTreeSet<u16> = statuses.iter().copied().filter(|s| *s >= 400).collect();
            assert_eq!(errors, from_codes, "{m} {path}");
        }
    }
}

/// `(status, code)` of an answer to `method path` with an empty body.
fn ask(addr: std::net::SocketAddr, method: &str, path: &str) -> (u16, Option<String>) {
    let answer = raw(
        addr,
        format!(
            "{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\
             Content-Type: application/octet-stream\r\nConnection: close\r\n\r\n"
        )
        .as_bytes(),
    );
    let status = answer[9..12].parse().unwrap();
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    let code = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["code"].as_str().map(String::from));
    (status, code)
}

#[test]
fn every_documented_operation_is_routed_and_answers_as_documented() {
    let d = dir("openapi");
    let server = hearth_server::start(config(&d), "127.0.0.1:0").unwrap();
    let doc = doc();
    // The document the server serves is this one.
    let (status, _) = ask(server.addr(), "GET", "/v1/openapi.json");
    assert_eq!(status, 200);
    let job = JobId::random().to_string();
    for (path, item) in doc["paths"].as_object().unwrap() {
        let url = path
            .replace("{key_id}", "0123456789abcdef")
            .replace("{job_id}", &job);
        for m in METHODS {
            let (status, code) = ask(server.addr(), &m.to_uppercase(), &url);
            let Some(op) = item.get(m) else {
                assert_eq!(
                    (status, code.as_deref()),
                    (400, Some("bad_request")),
                    "{m} {path} is not documented but answered"
                );
                continue;
            };
            assert!(
                op["responses"].get(status.to_string()).is_some(),
                "{m} {path}: undocumented status {status} ({code:?})"
            );
            if let Some(code) = code {
                let listed = op["x-error-codes"].as_array().unwrap();
                assert!(
                    listed.iter().any(|c| c == code.as_str()),
                    "{m} {path}: undocumented code {code}"
                );
            }
        }
    }
    assert_eq!(
        ask(server.addr(), "GET", "/v1/nothing"),
        (404, Some("not_found".into()))
    );
    server.stop().unwrap();
    let _ = std::fs::remove_dir_all(&d);
}

/// The `| ... |` rows of the table under `heading` in `text`, as cells.
fn table<'a>(text: &'a str, header: &str) -> Vec<Vec<&'a str>> {
    let start = text
        .find(header)
        .unwrap_or_else(|| panic!("no table {header}"));
    text[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect()
}

#[test]
fn the_books_api_tables_match_the_document() {
    let text = include_str!("../../../../docs/server.md");
    let doc = doc();
    let documented: BTreeSet<(String, String)> =
        table(text, "| method and path | request body | answer |")
            .iter()
            .map(|row| {
                let cell = row[0].trim_matches('`');
                let (m, p) = cell.split_once(' ').unwrap();
                let p = p.split('[').next().unwrap();
                (m.to_string(), p.to_string())
            })
            .collect();
    assert_eq!(documented, operations(&doc));
    let codes: Vec<(String, u16)> = table(text, "| code | status | when |")
        .iter()
        .map(|row| {
            (
                row[0].trim_matches('`').to_string(),
                row[1].parse().unwrap(),
            )
        })
        .collect();
    let mut all: Vec<(String, u16)> = ErrorCode::ALL
        .iter()
        .map(|c| (c.as_str().to_string(), c.status()))
        .collect();
    let mut codes_sorted = codes.clone();
    codes_sorted.sort();
    all.sort();
    assert_eq!(codes_sorted, all);
}
