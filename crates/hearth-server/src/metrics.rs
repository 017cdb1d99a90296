//! The server's Prometheus metrics, served on their own address
//! (`--metrics-listen`, `GET /metrics`): they name tenants and count their
//! jobs, so they stay off the API's port, for the operator's scraper.
//!
//! | metric | kind | labels |
//! |---|---|---|
//! | `hearth_jobs` | gauge | `state` (queued, running, done, failed), `tenant` |
//! | `hearth_queue_depth` | gauge | |
//! | `hearth_running_memory_bytes` | gauge (the running jobs' memory estimates together) | |
//! | `hearth_jobs_accepted_total` | counter | `tenant` |
//! | `hearth_jobs_finished_total` | counter | `tenant`, `outcome` (done, failed) |
//! | `hearth_bootstraps_total` | counter (its `rate()`: bootstraps per second) | |
//! | `hearth_job_seconds` | histogram of run times | |
//! | `hearth_refusals_total` | counter | `code` |
//! | `hearth_key_cache_total` | counter | `result` (hit, miss) |
//! | `hearth_key_transfers_total` | counter | (none; server keys sent to the MPI ranks) |
//! | `hearth_stale_results_total` | counter (in a fleet: results this server computed after its lease on the job was lost, refused) | |
//! | `hearth_leases_lost_total` | counter (in a fleet: running jobs whose lease this server could not renew, stopped) | |
//! | `hearth_connections_open` | gauge | `listener` (api, metrics) |
//! | `hearth_connections_refused_total` | counter (connections the server closed: before any request was served, or whose client stopped reading) | `listener`, `reason` (per_ip, handshake_timeout, handshake_failed, header_timeout; evicted: an unproven connection dropped to make room; send_stalled: a client that did not read its answer) |
//!
//! The tenant of an open server (no tenants) is the empty string. In a
//! fleet ([`crate::fleet`]) `hearth_jobs` and `hearth_queue_depth` are the
//! fleet's, read from its database at each scrape; every other metric is
//! this server's own work.

use prometheus::core::Collector;
use prometheus::{
    Encoder, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};

/// Every metric, registered once.
pub struct Metrics {
    registry: Registry,
    /// Jobs by state and tenant, set at each scrape.
    pub jobs: IntGaugeVec,
    /// Jobs waiting, set at each scrape.
    pub queue_depth: IntGauge,
    /// The running jobs' memory estimates together, set at each scrape.
    pub running_memory: IntGauge,
    /// Jobs accepted, by tenant.
    pub accepted: IntCounterVec,
    /// Jobs run to an end, by tenant and outcome.
    pub finished: IntCounterVec,
    /// Bootstraps of the jobs run (a failed job's up to its failure).
    pub bootstraps: IntCounter,
    /// How long jobs ran.
    pub job_seconds: Histogram,
    /// Refusals by code.
    pub refusals: IntCounterVec,
    /// Server key lookups answered from memory or loaded from disk.
    pub key_cache: IntCounterVec,
    /// Server keys sent to the MPI ranks (`--backend mpi`; a kept key
    /// is not sent again).
    pub key_transfers: IntCounter,
    /// Results refused at commit: the lease was lost (a fleet).
    pub stale_results: IntCounter,
    /// Leases that could not be renewed (a fleet).
    pub leases_lost: IntCounter,
    /// Connections open, by listener (`conn.rs`).
    pub connections: IntGaugeVec,
    /// Connections closed before any request was served, by listener and
    /// reason: over `--max-connections-per-ip`, a TLS handshake that timed
    /// out or failed, no request head within `--header-timeout`.
    pub connections_refused: IntCounterVec,
}

/// `metric` (made from constant options, so valid) registered in
/// `registry`.
fn add<M: Collector + Clone + 'static>(registry: &Registry, metric: prometheus::Result<M>) -> M {
    let m = metric.expect("valid metric");
    registry
        .register(Box::new(m.clone()))
        .expect("registered once");
    m
}

impl Metrics {
    /// A fresh registry with every metric at zero.
    pub fn new() -> Metrics {
        let registry = Registry::new();
        let r = &registry;
        let opts = Opts::new;
        Metrics {
            jobs: add(
                r,
                IntGaugeVec::new(
                    opts("hearth_jobs", "Jobs held, by state and tenant"),
                    &["state", "tenant"],
                ),
            ),
            queue_depth: add(
                r,
                IntGauge::new("hearth_queue_depth", "Jobs waiting to run"),
            ),
            running_memory: add(
                r,
                IntGauge::new(
                    "hearth_running_memory_bytes",
                    "Estimated peak memory of the running jobs together, bytes",
                ),
            ),
            accepted: add(
                r,
                IntCounterVec::new(
                    opts("hearth_jobs_accepted_total", "Jobs accepted, by tenant"),
                    &["tenant"],
                ),
            ),
            finished: add(
                r,
                IntCounterVec::new(
                    opts(
                        "hearth_jobs_finished_total",
                        "Jobs run to an end, by tenant and outcome",
                    ),
                    &["tenant", "outcome"],
                ),
            ),
            bootstraps: add(
                r,
                IntCounter::new("hearth_bootstraps_total", "Bootstraps of the jobs run"),
            ),
            job_seconds: add(
                r,
                Histogram::with_opts(
                    HistogramOpts::new("hearth_job_seconds", "How long jobs ran, seconds").buckets(
                        vec![0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0, 3000.0],
                    ),
                ),
            ),
            refusals: add(
                r,
                IntCounterVec::new(
                    opts("hearth_refusals_total", "Requests refused, by code"),
                    &["code"],
                ),
            ),
            key_cache: add(
                r,
                IntCounterVec::new(
                    opts(
                        "hearth_key_cache_total",
                        "Server key lookups, from memory (hit) or from disk (miss)",
                    ),
                    &["result"],
                ),
            ),
            key_transfers: add(
                r,
                IntCounter::new(
                    "hearth_key_transfers_total",
                    "Server keys sent to the MPI ranks",
                ),
            ),
            stale_results: add(
                r,
                IntCounter::new(
                    "hearth_stale_results_total",
                    "Results refused at commit: this server's lease on the job was lost",
                ),
            ),
            leases_lost: add(
                r,
                IntCounter::new(
                    "hearth_leases_lost_total",
                    "Running jobs whose lease could not be renewed, stopped",
                ),
            ),
            connections: add(
                r,
                IntGaugeVec::new(
                    opts("hearth_connections_open", "Connections open, by listener"),
                    &["listener"],
                ),
            ),
            connections_refused: add(
                r,
                IntCounterVec::new(
                    opts(
                        "hearth_connections_refused_total",
                        "Connections closed before any request was served, by listener and reason",
                    ),
                    &["listener", "reason"],
                ),
            ),
            registry,
        }
    }

    /// Everything, in Prometheus's text format.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Writing to a Vec cannot fail; a metric family that could not be
        // encoded is left out rather than failing the scrape.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut out);
        String::from_utf8(out).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}
