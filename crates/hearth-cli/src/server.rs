//! `hearth server`: the compute server (`hearth_server`), which runs any
//! program file on bundles for registered server keys, over HTTP or
//! HTTPS; and `hearth server token`, which manages its tenants' tokens.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use hearth::Error;
use hearth_cli::options::{parse_duration, parse_size, BackendArg, Engine, MaxMemory, Threads};
use hearth_server::tenants::{edit, TenantLimits, Tenants};
use hearth_server::{Config, JobBackend, TlsFiles};

/// `hearth server`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct Args {
    #[command(subcommand)]
    command: Option<ServerCommand>,
    /// Address to listen on (HOST:PORT; port 0 picks a free one). The
    /// first line on stdout is `listening on URL`. An address other than
    /// loopback needs tenants (`hearth server token add`) and TLS, or
    /// --insecure.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "HOST:PORT")]
    listen: String,
    /// The data folder: tenants, registered keys, accepted jobs and their
    /// results (created if missing; one server at a time). Jobs found
    /// there at start that had not finished run again.
    #[arg(long, value_name = "DIR", required = true)]
    data: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain (PEM, leaf first; with
    /// --tls-key; default: plain HTTP).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1;
    /// default: none, plain HTTP).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// How long a finished job's result (or failure) is kept, fetched or
    /// not, before it is deleted.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "7d")]
    result_ttl: Duration,
    /// Jobs that waited longer than this in the queue fail as `expired`
    /// instead of running (default: none, they wait for ever).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    queue_ttl: Option<Duration>,
    /// Also serve Prometheus metrics at http://HOST:PORT/metrics (jobs by
    /// state and tenant, queue depth, bootstraps, job durations, refusals,
    /// key-cache hits; loopback unless --insecure; default: none).
    #[arg(long, value_name = "HOST:PORT")]
    metrics_listen: Option<String>,
    #[command(flatten)]
    threads: Threads,
    #[command(flatten)]
    backend: BackendArg,
    /// Refuse jobs whose program runs more bootstraps than this
    /// (`over_cost`).
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    max_pbs: u64,
    /// Jobs whose estimated peak memory on --threads threads is over
    /// --max-memory are refused (`over_cost`).
    #[command(flatten)]
    max_memory: MaxMemory,
    /// Most jobs waiting at once (the running ones aside); more are
    /// refused with `queue_full` until some have run.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_queue: usize,
    /// Most jobs running at once, their bootstraps sharing the --threads
    /// pool; a job starts only while its width (#PBS / depth) and the
    /// running jobs' fit --threads, and their memory estimates
    /// --max-memory (default: --threads).
    #[arg(long, value_name = "N")]
    max_jobs: Option<usize>,
    /// Largest request body: a key upload or a job (program and bundle)
    /// (`too_large`; bytes, or with a unit).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "256MiB")]
    max_body: u64,
    /// Most request bodies received at once (each up to --max-body in
    /// memory); more wait for their turn.
    #[arg(long, value_name = "N", default_value_t = 16)]
    max_uploads: usize,
    /// Most registered server keys (`too_many_keys`).
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_keys: usize,
    /// Server keys kept decompressed in memory (least recently used
    /// dropped first; about 80 to 140 MB each). 0 loads the key for every job.
    #[arg(long, value_name = "N", default_value_t = 4)]
    key_cache: usize,
    /// How long a request body may take to arrive (`timeout`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "300s")]
    body_timeout: Duration,
    /// Log only warnings and errors on stderr (default: also jobs
    /// accepted, started, done and failed, refused requests, keys).
    #[arg(long)]
    quiet: bool,
    /// How the log on stderr is written: text (one line per event) or
    /// json (one object per line, with the request's or job's span).
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Serve on an address other than loopback without tenants or without
    /// TLS (default: refused): anyone who reaches the port could use the
    /// server, or read what crosses the network.
    #[arg(long)]
    insecure: bool,
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

/// Sends the server's `tracing` events to stderr.
fn init_log(format: LogFormat, quiet: bool) {
    let level = if quiet {
        tracing::Level::WARN
    } else {
        tracing::Level::INFO
    };
    let log = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_target(false);
    // A subscriber set already (none in the command) is kept.
    let _ = match format {
        LogFormat::Text => log.try_init(),
        LogFormat::Json => log
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .try_init(),
    };
}

/// `hearth server token ...`.
#[derive(clap::Subcommand)]
enum ServerCommand {
    /// Tenants' API tokens: the server reads them at every request, so a
    /// change takes effect at once, running server or not.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(clap::Subcommand)]
enum TokenCommand {
    /// Make a token for TENANT (the tenant is made if new) and print it on
    /// stdout, once: only its hash is kept.
    Add {
        /// The tenant: 1 to 32 of a-z, 0-9, '-' and '_'.
        tenant: String,
        #[command(flatten)]
        data: DataArg,
        /// Most server keys the tenant may register at once (`key_limit`;
        /// default 8 for a new tenant; set anew if given).
        #[arg(long, value_name = "N")]
        max_keys: Option<usize>,
        /// Most jobs the tenant may have queued or running (`queue_limit`;
        /// default 16).
        #[arg(long, value_name = "N")]
        max_queue: Option<usize>,
        /// Most bootstraps of the tenant's jobs admitted in one UTC day
        /// (`daily_limit`; default 100000000).
        #[arg(long, value_name = "N")]
        max_pbs_per_day: Option<u64>,
    },
    /// List tenants with their limits, and tokens (id, tenant, made,
    /// revoked): never the tokens themselves.
    List {
        #[command(flatten)]
        data: DataArg,
    },
    /// Revoke a token by its id (the 16 hex digits after `hth_`), or
    /// every token of a tenant by its name.
    Revoke {
        /// A token id or a tenant's name.
        name: String,
        #[command(flatten)]
        data: DataArg,
    },
}

#[derive(clap::Args)]
struct DataArg {
    /// The server's data folder.
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
}

fn tenant_err(e: hearth_server::tenants::TenantError) -> Error {
    Error::Config(e.to_string())
}

fn token(cmd: TokenCommand) -> Result<(), Error> {
    match cmd {
        TokenCommand::Add {
            tenant,
            data,
            max_keys,
            max_queue,
            max_pbs_per_day,
        } => {
            let token = edit(&data.data, |t| {
                let given = max_keys.is_some() || max_queue.is_some() || max_pbs_per_day.is_some();
                let limits = given.then(|| {
                    let was = t.tenants.get(&tenant).copied().unwrap_or_default();
                    TenantLimits {
                        max_keys: max_keys.unwrap_or(was.max_keys),
                        max_queue: max_queue.unwrap_or(was.max_queue),
                        max_pbs_per_day: max_pbs_per_day.unwrap_or(was.max_pbs_per_day),
                    }
                });
                t.add_token(&tenant, limits)
            })
            .map_err(tenant_err)?;
            eprintln!("a token for {tenant} (shown once; give it to the tenant):");
            println!("{token}");
        }
        TokenCommand::List { data } => {
            let t = Tenants::load(&data.data).map_err(tenant_err)?;
            if t.is_open() {
                println!("no tenants: the server is open to anyone who reaches it");
            }
            for (name, l) in &t.tenants {
                println!(
                    "tenant {name}: max-keys {}, max-queue {}, max-pbs-per-day {}",
                    l.max_keys, l.max_queue, l.max_pbs_per_day
                );
            }
            for k in &t.tokens {
                let state = match k.revoked {
                    Some(r) => format!("revoked at {r}"),
                    None => "live".into(),
                };
                println!(
                    "token {} of {}: made at {} (Unix s), {state}",
                    k.id, k.tenant, k.created
                );
            }
        }
        TokenCommand::Revoke { name, data } => {
            let n = edit(&data.data, |t| t.revoke(&name)).map_err(tenant_err)?;
            eprintln!("{n} live tokens revoked");
        }
    }
    Ok(())
}

impl Args {
    /// The thread option of every rank when serving with `--backend mpi`
    /// (not for `hearth server token`).
    pub fn mpi_threads(&self) -> Option<Threads> {
        (self.command.is_none() && self.backend.backend == Engine::Mpi).then_some(self.threads)
    }
}

/// `--backend mpi` on rank 0 (the other ranks are in `Cluster::work`, see
/// `cluster::main`).
#[cfg(feature = "mpi")]
fn mpi_backend() -> Result<JobBackend, Error> {
    Ok(JobBackend::Mpi(hearth_server::Ranks(
        crate::cluster::cluster()?,
    )))
}

/// `--backend mpi` in a build without MPI.
#[cfg(not(feature = "mpi"))]
fn mpi_backend() -> Result<JobBackend, Error> {
    Err(crate::cluster::missing())
}

/// `hearth server`: serves until Ctrl-C or SIGTERM; `hearth server token`.
pub fn run(args: Args) -> Result<(), Error> {
    if let Some(ServerCommand::Token(cmd)) = args.command {
        return token(cmd);
    }
    let data = args
        .data
        .ok_or_else(|| Error::Config("--data DIR is needed".into()))?;
    let mut config = Config::new(&data);
    config.threads = args.threads.resolve()?;
    config.max_pbs = args.max_pbs;
    config.max_memory = args.max_memory.bytes();
    config.max_queue = args.max_queue;
    config.max_jobs = args.max_jobs.unwrap_or(config.threads);
    config.backend = match args.backend.backend {
        Engine::Cpu => JobBackend::Cpu,
        // The same fallback as `run`: a GPU that cannot be used is said
        // and the cpu backend serves (an error with HEARTH_REQUIRE_GPU).
        Engine::Gpu => match hearth_server::gpu_unavailable() {
            None => JobBackend::Gpu,
            Some(why) => {
                hearth_cli::backend::require_gpu(why)?;
                eprintln!("hearth server: --backend gpu: {why}; jobs run on the cpu backend");
                JobBackend::Cpu
            }
        },
        Engine::Mpi => mpi_backend()?,
    };
    config.max_body = args.max_body;
    config.max_uploads = args.max_uploads;
    config.max_keys = args.max_keys;
    config.key_cache = args.key_cache;
    config.body_timeout = args.body_timeout;
    config.log = !args.quiet;
    init_log(args.log_format, args.quiet);
    config.insecure = args.insecure;
    config.tls = match (args.tls_cert, args.tls_key) {
        (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
        _ => None,
    };
    config.metrics_listen = args.metrics_listen;
    config.result_ttl = args.result_ttl;
    config.queue_ttl = args.queue_ttl;
    let on = config.backend.describe(config.threads);
    hearth_server::run(config, &args.listen, |url, open| {
        println!("listening on {url}");
        let _ = std::io::stdout().flush();
        eprintln!(
            "hearth server: jobs on {on}, data in {}; Ctrl-C stops (unfinished jobs run again at the next start)",
            data.display()
        );
        if open {
            eprintln!(
                "hearth server: no tenants, so no token is asked for: anyone who reaches {url} \
                 may use it (`hearth server token add NAME --data {}` makes the first)",
                data.display()
            );
        }
    })
    .map_err(|e| Error::Config(e.to_string()))
}
