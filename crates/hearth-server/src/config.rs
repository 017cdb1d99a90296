//! How a server runs: its [`Config`] (the `hearth server` options), where
//! its jobs bootstrap (the library's [`Engine`], [`Config::backend`]), and
//! why it could not start ([`ServerError`]).

use std::net::SocketAddr;
use std::path::PathBuf;
#[cfg(feature = "mpi")]
use std::sync::Arc;
use std::time::Duration;

use hearth::backend::Engine;

use crate::fleet::FleetConfig;
use crate::request::Limits;
use crate::tenants::Tenants;
use crate::tls::TlsFiles;
use crate::wire::ApiError;

/// Rank 0's handle on an MPI launch whose other ranks are in
/// [`hearth::backend::Cluster::work`] ([`Config::ranks`], with
/// [`Config::backend`] `Engine::Mpi`).
///
/// Before each job the job's server key file goes to every rank, once:
/// the ranks keep as many keys as the server's key cache
/// ([`Config::key_cache`]), named by their bytes' digest, so a key used
/// again is named, not sent. A rank that dies ends the launch: `mpirun`
/// ends every rank and names the dead one, and a rank that stops
/// answering for the cluster's timeout makes rank 0 print its number and
/// abort the launch (its messages may be half sent). The running job is
/// on disk like every queued one and runs again when the server starts
/// again.
#[cfg(feature = "mpi")]
#[derive(Clone)]
pub struct Ranks(pub Arc<hearth::backend::Cluster>);

#[cfg(feature = "mpi")]
impl std::fmt::Debug for Ranks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Ranks({} ranks)", self.0.size())
    }
}

#[cfg(feature = "mpi")]
impl PartialEq for Ranks {
    fn eq(&self, other: &Ranks) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

#[cfg(feature = "mpi")]
impl Eq for Ranks {}

/// How a server runs: its folder, its threads and its limits (the
/// `hearth server` options).
#[derive(Clone, Debug)]
pub struct Config {
    /// The data folder: keys, jobs, results (created if missing); not
    /// used in a fleet ([`Config::fleet`]).
    pub data: PathBuf,
    /// Threads of the pool every job runs on.
    pub threads: usize,
    /// Where jobs bootstrap: `Cpu`, the server's pool; `Gpu`, tfhe-rs's
    /// CUDA bootstrap, one job at a time (the `gpu` feature;
    /// [`Server::open`](crate::Server::open) refuses it where no GPU can be
    /// used: the command line falls back first, by
    /// [`Engine::usable`]); `Mpi`, the ranks of an MPI launch, one job at
    /// a time: rank 0 serves, admits and schedules, and every rank
    /// bootstraps (the `mpi` feature, with `ranks`).
    pub backend: Engine,
    /// The launch's ranks for `backend = Engine::Mpi` (rank 0's handle;
    /// [`Server::open`](crate::Server::open) refuses `Mpi` without them).
    #[cfg(feature = "mpi")]
    pub ranks: Option<Ranks>,
    /// Most bootstraps one job may run.
    pub max_pbs: u64,
    /// Most estimated peak memory of one job on `threads`, bytes.
    pub max_memory: u64,
    /// Most jobs waiting at once (the running ones not counted).
    pub max_queue: usize,
    /// Most jobs running at once (their bootstraps share the pool; their
    /// widths together stay under `threads`, their memory estimates under
    /// `max_memory`: see the module's doc).
    pub max_jobs: usize,
    /// Most bytes in one request body (a key upload or a job).
    pub max_body: u64,
    /// Most request bodies received and checked at once: with
    /// `max_body`, this bounds the memory uploads take. Others wait for
    /// their turn (within `body_timeout`, else `queue_full`).
    pub max_uploads: usize,
    /// Most registered keys.
    pub max_keys: usize,
    /// Server keys kept decompressed in memory, least recently used
    /// dropped first (0: load for every job).
    pub key_cache: usize,
    /// Longest a request body may take to arrive.
    pub body_timeout: Duration,
    /// Slowest a request body may arrive once `upload_grace` has passed,
    /// bytes per second: a body behind `upload_grace + received / rate`
    /// is refused (`timeout`) and its upload permit freed at once, so a
    /// client trickling bytes cannot hold a permit for all of
    /// `body_timeout` (0: no minimum). Answers that wait for the client
    /// to read them (a large result) must go at least as fast, judged
    /// over windows of `upload_grace`, or the connection is dropped.
    pub min_upload_rate: u64,
    /// How long a body may take before `min_upload_rate` applies (a slow
    /// start, a client still reading its file), and the window a slow
    /// reader is judged over.
    pub upload_grace: Duration,
    /// Most of the `max_uploads` permits one tenant holds at once (on an
    /// open server, one client address), so that one tenant's uploads
    /// cannot keep every other tenant's waiting (none: a quarter of
    /// `max_uploads`, at least 1; see [`Config::uploads_per_tenant`]).
    pub max_uploads_per_tenant: Option<usize>,
    /// Most connections open at once: at the cap the server accepts no
    /// more until one ends (new ones wait in the kernel's backlog). The
    /// process's descriptor limit must fit them and a reserve for the data
    /// folder's files: it is raised at start if it can be, else the server
    /// does not start.
    pub max_connections: usize,
    /// Most connections open at once from one client address (an IPv6
    /// client: its /64); more are closed as soon as they are accepted.
    pub max_connections_per_ip: usize,
    /// Longest a connection may take to send a request's head (the
    /// request line and headers), counted from when the server waits for
    /// one: also how long a kept-alive connection may stay idle between
    /// requests.
    pub header_timeout: Duration,
    /// Longest a TLS handshake may take.
    pub handshake_timeout: Duration,
    /// Emit events through [`tracing`]: jobs accepted, started, done and
    /// failed (in a `job` span), refused requests (in a `request` span),
    /// keys registered and deleted. Where they go is the subscriber's
    /// choice (`hearth server` writes them to stderr, as text or JSON).
    pub log: bool,
    /// The certificate chain and private key to serve HTTPS with (PEM);
    /// plain HTTP without.
    pub tls: Option<TlsFiles>,
    /// Where to serve `GET /metrics` (Prometheus; `HOST:PORT`, plain
    /// HTTP, loopback unless `insecure`); none without.
    pub metrics_listen: Option<String>,
    /// How long a finished job's result (or failure) is kept before it is
    /// deleted, fetched or not.
    pub result_ttl: Duration,
    /// How long a job may wait in the queue before it fails as
    /// `expired` (none: for ever).
    pub queue_ttl: Option<Duration>,
    /// Serve on an address other than loopback without tenants (tokens)
    /// or without TLS. Without this, [`start`](crate::start) and [`run`](crate::run) refuse such an
    /// address unless the data folder has tenants and `tls` is set.
    pub insecure: bool,
    /// How many times a job may be started: a job that was running when
    /// the server died this many times fails as `crashed` at the next
    /// start instead of running again (a job that kills the process cannot
    /// keep the server down).
    pub max_attempts: u32,
    /// Bytes one tenant may keep stored (its keys, queued jobs and the
    /// results kept for it), unless its tenants entry says otherwise
    /// (`token add --max-storage`); refused beyond it as `storage_limit`.
    pub max_storage: u64,
    /// Free bytes the data folder's disk keeps: work that would go under
    /// it is refused (`insufficient_storage`) rather than fill the disk.
    pub disk_reserve: u64,
    /// Most results sent at once (each streamed from disk); more wait
    /// their turn up to `body_timeout`, then `queue_full`.
    pub max_downloads: usize,
    /// Most of the `max_downloads` permits one tenant holds at once (on an
    /// open server, one client address), so that one tenant's downloads,
    /// however slowly read, cannot keep every other tenant's waiting
    /// (none: a quarter of `max_downloads`, at least 1; see
    /// [`Config::downloads_per_tenant`]).
    pub max_downloads_per_tenant: Option<usize>,
    /// Web pages, by origin (`https://app.example.com`), whose scripts may
    /// call the API from a browser with their user's token (CORS; the
    /// browser client, `crates/hearth-wasm`). None by default: browsers
    /// then let no other site's page read an answer or upload a file.
    /// Refused on a server without tenants, whose API needs no token.
    pub allow_origins: Vec<String>,
    /// Keep tenants, keys, jobs and usage in a fleet's PostgreSQL
    /// database and its blobs in a shared folder, with the fleet's other
    /// servers ([`crate::fleet`]); none: in [`Config::data`], this
    /// server's own.
    pub fleet: Option<FleetConfig>,
}

/// One tenant's share of `all` permits: `given`, else a quarter, at least
/// 1 and at most `all`.
fn share(all: usize, given: Option<usize>) -> usize {
    let all = all.max(1);
    given.unwrap_or(all / 4).clamp(1, all)
}

impl Config {
    /// Where jobs run, in words (`/v1/info`, the start message).
    pub fn describe_backend(&self) -> String {
        let threads = self.threads;
        match self.backend {
            Engine::Cpu => format!("cpu, {threads} threads"),
            Engine::Gpu => "gpu, one job at a time".into(),
            Engine::Mpi => {
                #[cfg(feature = "mpi")]
                let n = self.ranks.as_ref().map_or(0, |r| r.0.size() as usize);
                #[cfg(not(feature = "mpi"))]
                let n = 0usize;
                let s = |k| if k == 1 { "" } else { "s" };
                format!(
                    "mpi, {n} rank{} x {threads} thread{}, one job at a time",
                    s(n),
                    s(threads)
                )
            }
        }
    }

    /// Defaults for `data`: all cores, 10 million bootstraps, 8 GiB, 64
    /// queued jobs, as many running jobs as threads, 256 MiB bodies,
    /// 16 uploads at once, 64 keys, 4 cached, 5 minutes per body; 2 starts
    /// per job, 16 GiB stored per tenant, 1 GiB of disk kept free, 16
    /// downloads at once, a quarter of them for one tenant.
    ///
    /// Connections: 512 open, 64 from one address, 20 s for a request's
    /// head (and between requests), 10 s for a TLS handshake. Uploads:
    /// at least 64 KiB/s after 5 s, a quarter of the upload permits for
    /// one tenant.
    pub fn new(data: impl Into<PathBuf>) -> Config {
        let threads = hearth::backend::default_threads().unwrap_or(1);
        Config {
            data: data.into(),
            threads,
            backend: Engine::Cpu,
            #[cfg(feature = "mpi")]
            ranks: None,
            max_pbs: 10_000_000,
            max_memory: 8 << 30,
            max_queue: 64,
            max_jobs: threads,
            max_body: 256 << 20,
            max_uploads: 16,
            max_keys: 64,
            key_cache: 4,
            body_timeout: Duration::from_secs(300),
            min_upload_rate: 64 << 10,
            upload_grace: Duration::from_secs(5),
            max_uploads_per_tenant: None,
            max_connections: 512,
            max_connections_per_ip: 64,
            header_timeout: Duration::from_secs(20),
            handshake_timeout: Duration::from_secs(10),
            log: false,
            tls: None,
            metrics_listen: None,
            result_ttl: Duration::from_secs(7 * 86_400),
            queue_ttl: None,
            insecure: false,
            max_attempts: 2,
            max_storage: 16 << 30,
            disk_reserve: 1 << 30,
            max_downloads: 16,
            max_downloads_per_tenant: None,
            allow_origins: Vec::new(),
            fleet: None,
        }
    }

    /// Refuses `addr` unless it is a loopback address, or the data folder
    /// has tenants and TLS is set, or `insecure` is set (see
    /// [`Config::insecure`]).
    pub(crate) fn check_exposure(&self, addr: SocketAddr) -> Result<(), ServerError> {
        if addr.ip().is_loopback() || self.insecure {
            return Ok(());
        }
        let tenants = match &self.fleet {
            None => Tenants::load(&self.data),
            Some(f) => crate::fleet::tenants::load(&f.database),
        }
        .map_err(|e| ServerError::Config(e.to_string()))?;
        let mut missing = Vec::new();
        if tenants.is_open() {
            missing.push(format!(
                "no tenant has a token, so anyone who reaches the port could register keys and \
                 run jobs (`hearth server token add NAME --data {}`)",
                self.data.display()
            ));
        }
        if self.tls.is_none() {
            missing.push(
                "no TLS, so tokens, keys and ciphertexts would cross the network in the clear \
                 (--tls-cert and --tls-key)"
                    .to_string(),
            );
        }
        if missing.is_empty() {
            return Ok(());
        }
        Err(ServerError::Config(format!(
            "refusing to serve on {addr}, not a loopback address: {}. Pass --insecure \
             (`Config::insecure` in Rust) to serve anyway",
            missing.join("; and ")
        )))
    }

    /// Most upload permits one tenant holds at once:
    /// `max_uploads_per_tenant`, else a quarter of `max_uploads`, at
    /// least 1 and at most `max_uploads`.
    pub fn uploads_per_tenant(&self) -> usize {
        share(self.max_uploads, self.max_uploads_per_tenant)
    }

    /// Most download permits one tenant holds at once:
    /// `max_downloads_per_tenant`, else a quarter of `max_downloads`, at
    /// least 1 and at most `max_downloads`.
    pub fn downloads_per_tenant(&self) -> usize {
        share(self.max_downloads, self.max_downloads_per_tenant)
    }

    /// The limits one job is admitted against.
    pub fn limits(&self) -> Limits {
        Limits {
            max_body: self.max_body,
            max_pbs: self.max_pbs,
            max_memory: self.max_memory,
            threads: self.threads,
        }
    }
}

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A setting that cannot be used.
    #[error("configuration: {0}")]
    Config(String),
    /// The data folder could not be opened or read.
    #[error("data folder: {0}")]
    Data(ApiError),
    /// The address could not be bound, or the runtime not started.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}
