//! A compute server for hearth programs, and (re-exported from the crate
//! `hearth-client`, which a client builds without the server) its client.
//!
//! Clients register server keys by id, then submit jobs: a program file
//! and a bundle of encrypted inputs under a registered key. Each job is
//! admitted by cost (#PBS and estimated peak memory, from the program's
//! count statistics) against the operator's limits before anything runs,
//! waits in a bounded queue for its turn among the tenants, runs on the
//! server's one thread pool beside other jobs where they fit, and
//! its result stays on disk until the client deletes it: a client that
//! went away fetches it later by job id, and a server that was killed
//! finds every accepted job again when it starts (see [`server`] and
//! [`store`]). The server holds no client key; `INSECURE` parameter sets
//! are refused.
//!
//! # Tenants, tokens and TLS
//!
//! The operator makes tenants and their API tokens with `hearth server
//! token add NAME --data DIR` ([`tenants`]). Once a data folder has a
//! tenant, every endpoint but `GET /v1/info`, `/v1/health` and
//! `/v1/openapi.json` needs `Authorization: Bearer
//! TOKEN` (`unauthorized` without a live one). Keys and jobs belong to the
//! tenant that made them: another tenant's job is `not_found`, another
//! tenant's key `unknown_key`, exactly as if they did not exist. Each
//! tenant has its own limits on keys (`key_limit`), jobs queued or running
//! (`queue_limit`) and bootstraps a day (`daily_limit`), under the
//! server's own. A folder without tenants is open to anyone who reaches
//! the port, so the server refuses to listen on an address other than
//! loopback unless it has tenants and TLS (`--tls-cert`, `--tls-key`:
//! rustls, [`tls`]), or is told `--insecure`.
//!
//! # HTTP API
//!
//! [`OPENAPI`] is the API's OpenAPI 3.1 document (`openapi.json`, served
//! at `GET /v1/openapi.json`; a test checks it against the routes and the
//! error codes): keys (`/v1/keys`, `/v1/keys/{key_id}`), jobs
//! (`/v1/jobs`, `/v1/jobs/{job_id}`, `/v1/jobs/{job_id}/result`), and
//! `/v1/info`, `/v1/health`, `/v1/stats`. The book's chapter
//! (`docs/server.md`) has the same as tables.
//!
//! `GET /metrics` (Prometheus) is served on an address of its own,
//! `--metrics-listen` ([`metrics`]).
//!
//! Connections are bounded in number (server-wide and per client
//! address) and in how long they may stay silent (a request's head, a TLS
//! handshake, idle between requests); uploads in their type, rate and
//! share of the upload permits; an open server answers only requests
//! addressed to an IP address or `localhost`. The `hearth server` options
//! and the book's limits section say how.
//!
//! Every refusal is `{"code": "...", "message": "..."}` with the status of
//! its [`ErrorCode`]. The job body splits without a separator because
//! each hearth file's header states its payload length
//! ([`request::split_job`]); [`request::parse_job`] is the whole
//! validation, callable on any bytes (a fuzz target).
//!
//! The book's client example (`docs/server.md`, where it runs against a
//! server of its own), compiled here:
//!
//! ```no_run
//! use hearth::api::U8;
//! use hearth::{ClientKey, Program, GATES_128};
//! use hearth_server::Client;
//! use std::path::Path;
//! use std::time::Duration;
//!
//! let p = Program::new(&GATES_128);
//! let (a, b) = (U8::input(&p), U8::input(&p));
//! p.output(&(&a + &b));
//! let prog = p.build()?;
//!
//! let key = ClientKey::generate(&GATES_128);
//! let inputs = key.encrypt_bundle(&prog.signature().inputs, &[vec![200.into()], vec![100.into()]])?;
//! let server = Client::new("http://127.0.0.1:8080")?;
//! key.compressed_server_key().save(Path::new("server.key"))?;
//! server.upload_key(Path::new("server.key"))?;          // or the file's bytes
//! let job = server.submit_with_key(key.key_id(), &prog.to_bytes()?, &inputs.to_bytes()?)?.job_id;
//! server.wait(job, Duration::from_millis(200))?;        // ClientError::JobFailed if it failed
//! let out = key.decrypt_bundle(&server.result_bundle(job)?)?;
//! server.delete(job)?;                                  // now status(job) is not_found
//! assert_eq!(out[0].1[0], 44.into());                   // (200 + 100) mod 256
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod config;
mod conn;
pub mod fleet;
pub mod metrics;
mod refusals;
pub mod request;
mod schedule;
pub mod server;
pub mod store;
pub mod tenants;
pub mod tls;

// The client and the API's types live in hearth-client (a client builds it
// without axum, hyper's server, tokio or tokio-postgres); their paths here
// (`hearth_server::Client`, `hearth_server::wire::JobId`, ...) stay.
pub use hearth_client::{client, wire};

#[cfg(feature = "mpi")]
pub use config::Ranks;
pub use config::{Config, ServerError};
pub use hearth_client::{
    ApiError, Deleted, ErrorCode, JobId, JobState, JobStatus, KeyInfo, ServerInfo, ServerStats,
    Submitted,
};
pub use hearth_client::{Client, ClientBuilder, ClientError, KeySource, SubmitOptions};
pub use request::{parse_job, split_job, JobRequest, Limits};
pub use server::{run, start, Server, ServerHandle, OPENAPI};
pub use tenants::{Tenant, TenantLimits, Tenants};
pub use tls::TlsFiles;
