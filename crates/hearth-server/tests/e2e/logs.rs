//! The server's `tracing` events, as JSON lines: one span per request and
//! per job, with the fields an operator filters on.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth::{ClientKey, GATES_128};
use hearth_server::{Client, JobId};
use serde_json::Value;

use crate::{add_program, bundle, code, config, dir, LIMIT};

/// Where the subscriber writes: a buffer the test reads.
#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Buffer {
    type Writer = Buffer;
    fn make_writer(&'a self) -> Buffer {
        self.clone()
    }
}

/// The one event whose message is `message` and that `pick` accepts.
fn event<'a>(events: &'a [Value], message: &str, pick: impl Fn(&Value) -> bool) -> &'a Value {
    let found: Vec<&Value> = events
        .iter()
        .filter(|e| e["fields"]["message"] == message && pick(e))
        .collect();
    assert_eq!(found.len(), 1, "`{message}` in {events:#?}");
    found[0]
}

#[test]
fn requests_and_jobs_log_in_their_spans() {
    let out = Buffer::default();
    // The only subscriber of this test binary; the other tests' servers
    // run without `log`.
    let subscriber = tracing_subscriber::fmt()
        .with_writer(out.clone())
        .with_max_level(tracing::Level::DEBUG)
        .json()
        .with_current_span(true)
        .with_span_list(false)
        .finish();
    tracing::subscriber::set_global_default(subscriber).unwrap();

    let d = dir("logs");
    let mut cfg = config(&d);
    cfg.log = true;
    let server = hearth_server::start(cfg, "127.0.0.1:0").unwrap();
    let api = Client::new(&server.url()).unwrap();
    let client = ClientKey::generate(&GATES_128);
    api.upload_key(&client.compressed_server_key().to_bytes().unwrap())
        .unwrap();
    let add = add_program(&GATES_128);
    let job = api
        .submit(&add.to_bytes().unwrap(), &bundle(&client, &add, 1, 2))
        .unwrap()
        .job_id;
    api.wait_timeout(job, Duration::from_millis(20), LIMIT)
        .unwrap();
    let bogus = JobId::random();
    assert_eq!(code(api.status(bogus)), hearth_server::ErrorCode::NotFound);
    server.stop().unwrap();

    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let id = job.to_string();
    let accepted = event(&events, "job accepted", |e| e["fields"]["job"] == id);
    assert_eq!(accepted["level"], "INFO");
    assert_eq!(accepted["span"]["name"], "request");
    assert_eq!(accepted["span"]["method"], "POST");
    assert_eq!(accepted["span"]["path"], "/v1/jobs");
    assert_eq!(accepted["fields"]["pbs"], 8);
    for message in ["job started", "job done"] {
        let e = event(&events, message, |e| e["span"]["job"] == id);
        assert_eq!(e["span"]["name"], "job");
        assert_eq!(e["span"]["pbs"], 8);
        assert_eq!(e["span"]["depth"], 8);
        assert_eq!(e["span"]["key"], client.key_id().to_string());
    }
    let path = format!("/v1/jobs/{bogus}");
    let refused = event(&events, "refused", |e| e["span"]["path"] == path.as_str());
    assert_eq!(refused["fields"]["code"], "not_found");
    assert_eq!(refused["fields"]["status"], 404);
    assert_eq!(refused["span"]["method"], "GET");
    // Polls are answered at debug level, each in its own span.
    let path = format!("/v1/jobs/{job}");
    let polls = events
        .iter()
        .filter(|e| e["fields"]["message"] == "answered" && e["span"]["path"] == path.as_str())
        .count();
    assert!(polls >= 1, "{events:#?}");
    assert!(events.iter().all(|e| e["level"] != "ERROR"), "{events:#?}");
    let _ = std::fs::remove_dir_all(&d);
}
