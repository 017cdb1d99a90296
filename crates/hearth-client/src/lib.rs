//! The blocking client of hearth's compute server (`hearth server`, the
//! crate `hearth-server`), and what travels over its HTTP API: job ids,
//! the JSON bodies of the answers and the typed refusals ([`wire`]).
//!
//! This crate is what a client builds: the core of hearth (key ids,
//! bundles, file headers), JSON and ureq (rustls for `https://`), without
//! the server's HTTP stack, async runtime or database driver. The server
//! re-exports all of it (`hearth_server::Client` is this [`Client`]).
//!
//! ```no_run
//! use hearth_client::{Client, JobState};
//! use std::time::Duration;
//!
//! let server = Client::builder("https://hearth.example:8443").token("TOKEN").build()?;
//! let info = server.info()?;                            // the server's limits
//! println!("{} threads, at most {} bootstraps a job", info.threads, info.max_pbs);
//! # let job = "00000000000000000000000000000000".parse()?;
//! let st = server.wait(job, Duration::from_millis(200))?;
//! assert!(matches!(st.state, JobState::Done { .. }));
//! let bundle = server.result_bundle(job)?;              // decrypt with the client key
//! server.delete(job)?;
//! # drop(bundle);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The server's crate documentation has the whole round trip (a key, a
//! program, its inputs, the result decrypted).

pub mod client;
pub mod wire;

pub use client::{Client, ClientBuilder, ClientError, KeySource, SubmitOptions, MAX_IDLE};
pub use wire::{
    parse_key_id, ApiError, Deleted, ErrorBody, ErrorCode, JobId, JobState, JobStatus, KeyInfo,
    ServerInfo, ServerStats, Submitted,
};
