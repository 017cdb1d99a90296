//! A server's life: its ledger opened (its data folder recovered, or its
//! fleet joined), its workers and sweeper started, served, stopped.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use hearth::backend::CpuBackend;

use super::caches::{KeyCache, ProgramCache, PROGRAMS_KEPT};
use super::folder::DataFolder;
use super::ledger::Ledger;
use super::lock::lock;
use super::routes::*;
use super::slots::Slots;
use super::state::{Jobs, Shared};
use crate::config::{Config, ServerError};
use crate::conn;
use crate::fleet::Fleet;
use crate::metrics::Metrics;
use crate::tls::Tls;
use hearth::backend::Engine;

/// Request bodies and results are buffers of up to `--max-body` bytes,
/// freed when their request ends. glibc's allocator would keep them for
/// reuse once one was freed (its threshold for giving memory back to the
/// system rises with the largest block freed), so that a burst of large
/// uploads left the process holding their memory for good. Fixed
/// thresholds keep blocks of 1 MiB or more in mappings of their own,
/// given back as soon as they are freed. Process-wide; elsewhere than
/// glibc, nothing.
fn give_back_large_buffers() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's parameters.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 4 << 20);
    }
}

/// The OpenAPI document of this API (`openapi.json` beside the crate's
/// manifest; a test checks it against the routes and the error codes).
pub const OPENAPI: &str = include_str!("../../openapi.json");

/// A server on its data folder: jobs and keys recovered, the workers
/// started. Serve it with [`Server::serve`].
pub struct Server {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    sweeper: Option<JoinHandle<()>>,
    tls: Option<Tls>,
}

impl Server {
    /// Opens the data folder (refused if another server holds it),
    /// recovers its keys and jobs (unfinished jobs are queued again, in
    /// submission order), and starts the job workers.
    pub fn open(config: Config) -> Result<Server, ServerError> {
        give_back_large_buffers();
        if config.threads == 0 {
            return Err(ServerError::Config("--threads must be positive".into()));
        }
        if config.max_jobs == 0 {
            return Err(ServerError::Config("--max-jobs must be positive".into()));
        }
        conn::prepare(&config)?;
        if config.max_attempts == 0 {
            return Err(ServerError::Config(
                "--max-attempts must be positive".into(),
            ));
        }
        let mut config = config;
        match config.backend {
            Engine::Cpu => {}
            Engine::Gpu => {
                if let Some(why) = hearth::backend::no_gpu_reason() {
                    return Err(ServerError::Config(format!("--backend gpu: {why}")));
                }
                // One device stream: jobs take turns on it.
                config.max_jobs = 1;
            }
            #[cfg(feature = "mpi")]
            Engine::Mpi => {
                let Some(ranks) = &config.ranks else {
                    return Err(ServerError::Config(
                        "--backend mpi: the ranks of a launch are needed (Config::ranks)".into(),
                    ));
                };
                if ranks.0.rank() != 0 {
                    return Err(ServerError::Config(format!(
                        "--backend mpi: rank 0 serves; rank {} bootstraps (Cluster::work)",
                        ranks.0.rank()
                    )));
                }
                // Rank 0 keeps as many keys decompressed as the cache; the
                // workers keep as many (at least the one in use).
                ranks
                    .0
                    .keep_keys(config.key_cache)
                    .map_err(|e| ServerError::Config(e.to_string()))?;
                // The ranks' bootstrap slots serve one circuit at a time.
                config.max_jobs = 1;
            }
            #[cfg(not(feature = "mpi"))]
            Engine::Mpi => {
                return Err(ServerError::Config(
                    "--backend mpi: this server is built without the feature `mpi`".into(),
                ))
            }
        }
        let tls = match &config.tls {
            Some(files) => Some(Tls::load(files).map_err(|e| ServerError::Config(e.to_string()))?),
            None => None,
        };
        let (ledger, jobs, counts, recovered): (Arc<dyn Ledger>, _, _, _) = match &config.fleet {
            None => {
                let (folder, jobs, counts, recovered) = DataFolder::open(&config)?;
                (Arc::new(folder), jobs, counts, recovered)
            }
            Some(fleet) => {
                // A fleet's database connections: the job workers, the
                // sweeper and requests in flight.
                let fleet = Fleet::open(fleet, config.max_jobs + 8).map_err(ServerError::Config)?;
                (Arc::new(fleet), Jobs::default(), HashMap::new(), 0)
            }
        };
        // A closed folder (or fleet) does not start: the operator sees
        // why at once.
        let tenants = ledger
            .load_tenants()
            .map_err(|e| ServerError::Config(e.to_string()))?;
        config.allow_origins = super::cors::check(&config.allow_origins, &tenants)?;
        let pool =
            CpuBackend::pool(config.threads).map_err(|e| ServerError::Config(e.to_string()))?;
        let name = match &config.fleet {
            Some(f) => f.server_id.clone(),
            None => crate::fleet::default_server_id(),
        };
        let shared = Arc::new(Shared {
            limits: config.limits(),
            heavy: Slots::new(
                "rebuilds and key decompressions",
                "half of --threads",
                config.threads,
                (config.threads / 2).max(1),
            ),
            uploads: Slots::new(
                "uploads",
                "--max-uploads-per-tenant",
                config.max_uploads,
                config.uploads_per_tenant(),
            ),
            cache: Mutex::new(KeyCache::new(config.key_cache)),
            programs: Mutex::new(ProgramCache::new(PROGRAMS_KEPT)),
            downloads: Slots::new(
                "downloads",
                "--max-downloads-per-tenant",
                config.max_downloads,
                config.downloads_per_tenant(),
            ),
            name,
            ledger,
            listening: Mutex::new(None),
            metrics: Metrics::new(),
            #[cfg(feature = "gpu")]
            gpu_keys: Mutex::new(HashMap::new()),
            jobs: Mutex::new(jobs),
            wake: Condvar::new(),
            pool: Arc::new(pool),
            stop: AtomicBool::new(false),
            counts: Mutex::new(counts),
            config,
        });
        if recovered > 0 {
            shared.log(|| format!("{recovered} unfinished jobs queued again"));
        }
        shared
            .ledger
            .attach(&shared, &tenants)
            .map_err(ServerError::Config)?;
        shared
            .tenants()
            .map_err(|e| ServerError::Config(e.message))?;
        shared.ledger.expire(&shared);
        let workers = (0..shared.config.max_jobs)
            .map(|i| {
                let s = shared.clone();
                std::thread::Builder::new()
                    .name(format!("hearth-job-{i}"))
                    .spawn(move || s.ledger.work(&s))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let shortest = match shared.config.queue_ttl {
            Some(q) => q.min(shared.config.result_ttl),
            None => shared.config.result_ttl,
        };
        let mut every = (shortest / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
        if let Some(upkeep) = shared.ledger.upkeep_every() {
            every = every.min(upkeep);
        }
        let s = shared.clone();
        let sweeper = std::thread::Builder::new()
            .name("hearth-expiry".into())
            .spawn(move || s.sweep(every))?;
        Ok(Server {
            shared,
            workers,
            sweeper: Some(sweeper),
            tls,
        })
    }

    /// Whether the data folder has no tenants: every request is served
    /// without a token.
    pub fn is_open(&self) -> bool {
        self.shared.tenants().map(|t| t.is_open()).unwrap_or(false)
    }

    /// Whether it serves HTTPS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// The HTTP routes (see the crate doc), with the server as state.
    /// Every route but `GET /v1/info`, `/v1/health` and `/v1/openapi.json`
    /// authenticates its caller; on an open server, every route checks the
    /// `Host` (`host.rs`). The limits per client address need each
    /// request's [`axum::extract::ConnectInfo`], which [`Server::serve`]
    /// gives it.
    pub fn router(&self) -> Router {
        let cors = super::cors::layer(&self.shared, &self.shared.config.allow_origins);
        let tenant_routes = Router::new()
            .route("/v1/stats", get(get_stats))
            .route("/v1/keys", post(post_key))
            .route("/v1/keys/{key_id}", get(get_key).delete(delete_key))
            .route("/v1/jobs", post(post_job))
            .route("/v1/jobs/{job_id}", get(get_job).delete(delete_job))
            .route("/v1/jobs/{job_id}/result", get(get_result))
            .route_layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                authenticate,
            ));
        let router = Router::new()
            .route("/v1/info", get(get_info))
            .route("/v1/health", get(get_health))
            .route("/v1/openapi.json", get(get_openapi))
            .merge(tenant_routes)
            .fallback(no_route)
            .method_not_allowed_fallback(no_method)
            .layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                super::host::check_host,
            ))
            .layer(axum::middleware::from_fn_with_state(
                self.shared.clone(),
                observe,
            ));
        // Outermost: preflights are answered before the routes and checks.
        match cors {
            Some(cors) => router.layer(cors),
            None => router,
        }
        .with_state(self.shared.clone())
    }

    /// The metrics address's routes: `GET /metrics`.
    pub fn metrics_router(&self) -> Router {
        Router::new()
            .route("/metrics", get(get_metrics))
            .fallback(no_route)
            .layer(axum::middleware::from_fn(super::host::check_metrics_host))
            .with_state(self.shared.clone())
    }

    /// Serves on `listener` within the connection limits (`conn.rs`)
    /// until `shutdown` completes (requests in flight are finished; idle
    /// connections and those without a whole request are closed at once),
    /// then stops the workers: a running job finishes first when
    /// [`Server::stop`] is called, or runs again at the next start when
    /// the process ends.
    pub async fn serve(
        &self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        *lock(&self.shared.listening) = Some(listener.local_addr()?);
        let config = &self.shared.config;
        conn::serve(
            listener,
            self.tls.as_ref().map(Tls::acceptor),
            self.router(),
            conn::Limits::api(config),
            conn::Counters::new(&self.shared.metrics, "api"),
            shutdown,
        )
        .await;
        self.shared.halt();
        Ok(())
    }

    /// Stops the workers (each after its running job, if any) and waits
    /// for them.
    pub fn stop(mut self) {
        self.shared.halt();
        for t in self.workers.drain(..).chain(self.sweeper.take()) {
            let _ = t.join();
        }
    }
}

fn runtime(threads: usize) -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.clamp(1, 4))
        .thread_name("hearth-http")
        .enable_all()
        .build()
}

/// A server running on a thread of its own ([`start`]).
pub struct ServerHandle {
    addr: SocketAddr,
    metrics_addr: Option<SocketAddr>,
    scheme: &'static str,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl ServerHandle {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Where `GET /metrics` is served ([`Config::metrics_listen`]).
    pub fn metrics_addr(&self) -> Option<SocketAddr> {
        self.metrics_addr
    }

    /// `http://ADDR`, or `https://ADDR` when serving TLS.
    pub fn url(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Stops serving, lets the running job finish, and releases the data
    /// folder (another server may then open it).
    pub fn stop(mut self) -> std::io::Result<()> {
        self.halt()
    }

    fn halt(&mut self) -> std::io::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the server thread panicked"))),
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}

/// Opens the server on `config` and serves on `listen` (`HOST:PORT`;
/// port 0 picks a free one) from a background thread, until
/// [`ServerHandle::stop`] or drop. An address other than loopback is
/// refused unless [`Config::insecure`] is set.
pub fn start(config: Config, listen: &str) -> Result<ServerHandle, ServerError> {
    let rt = runtime(config.threads)?;
    let listener = rt.block_on(tokio::net::TcpListener::bind(listen))?;
    let addr = listener.local_addr()?;
    config.check_exposure(addr)?;
    let metrics = bind_metrics(&rt, &config)?;
    let server = Server::open(config)?;
    let metrics_addr = serve_metrics(&rt, &server, metrics)?;
    let scheme = if server.is_tls() { "https" } else { "http" };
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("hearth-server".into())
        .spawn(move || {
            let r = rt.block_on(server.serve(listener, async {
                let _ = rx.await;
            }));
            server.stop();
            drop(rt);
            r
        })?;
    Ok(ServerHandle {
        addr,
        metrics_addr,
        scheme,
        stop: Some(tx),
        thread: Some(thread),
    })
}

/// Opens the server on `config`, serves on `listen` and calls `ready`
/// with its URL (`http://ADDR` or `https://ADDR`) and whether it is open
/// (no tenants); returns on Ctrl-C or SIGTERM without waiting for a
/// running job (it runs again at the next start).
pub fn run(
    config: Config,
    listen: &str,
    ready: impl FnOnce(&str, bool),
) -> Result<(), ServerError> {
    let rt = runtime(config.threads)?;
    let listener = rt.block_on(tokio::net::TcpListener::bind(listen))?;
    config.check_exposure(listener.local_addr()?)?;
    let metrics = bind_metrics(&rt, &config)?;
    let log = config.log;
    let server = Server::open(config)?;
    if let Some(addr) = serve_metrics(&rt, &server, metrics)? {
        if log {
            eprintln!("hearth server: metrics on http://{addr}/metrics");
        }
    }
    rt.block_on(async {
        let scheme = if server.is_tls() { "https" } else { "http" };
        ready(
            &format!("{scheme}://{}", listener.local_addr()?),
            server.is_open(),
        );
        server.serve(listener, shutdown_signal()).await
    })?;
    Ok(())
}

/// Binds [`Config::metrics_listen`], if set: loopback only unless
/// [`Config::insecure`] (the metrics name tenants and count their jobs).
fn bind_metrics(
    rt: &tokio::runtime::Runtime,
    config: &Config,
) -> Result<Option<tokio::net::TcpListener>, ServerError> {
    let Some(at) = &config.metrics_listen else {
        return Ok(None);
    };
    let listener = rt.block_on(tokio::net::TcpListener::bind(at))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() && !config.insecure {
        return Err(ServerError::Config(format!(
            "refusing to serve metrics on {addr}, not a loopback address: they name tenants and \
             count their jobs, and have no token. Scrape them on 127.0.0.1, or pass --insecure"
        )));
    }
    Ok(Some(listener))
}

/// Serves `GET /metrics` on `listener` until the runtime ends, within
/// limits of its own (a few connections: `conn::Limits::metrics`).
fn serve_metrics(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    listener: Option<tokio::net::TcpListener>,
) -> Result<Option<SocketAddr>, ServerError> {
    let Some(listener) = listener else {
        return Ok(None);
    };
    let addr = listener.local_addr()?;
    let config = &server.shared.config;
    rt.spawn(conn::serve(
        listener,
        None,
        server.metrics_router(),
        conn::Limits::metrics(config),
        conn::Counters::new(&server.shared.metrics, "metrics"),
        std::future::pending(),
    ));
    Ok(Some(addr))
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => ctrl_c.await,
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}
