//! `hearth server`: the compute server (`hearth_server`), which runs any
//! program file on bundles for registered server keys, over HTTP or
//! HTTPS; and `hearth server token`, which manages its tenants' tokens.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use hearth::backend::Engine;
use hearth::Error;
use hearth_cli::options::{parse_duration, parse_size, BackendArg, MaxMemory, Threads};
use hearth_server::fleet::{self, Database, FleetConfig};
use hearth_server::tenants::{edit, TenantError, TenantLimits, Tenants};
use hearth_server::{Config, TlsFiles};

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
    /// there at start that had not finished run again (default: none;
    /// needed but with --store postgres://, where it is not used).
    #[arg(long, value_name = "DIR", required_unless_present = "store")]
    data: Option<PathBuf>,
    /// Where the server keeps tenants, keys, jobs and usage: `files` (the
    /// --data folder, this server's alone) or a fleet's database,
    /// postgres://USER@HOST[:PORT]/DB, shared with the fleet's other
    /// servers (with --blobs; any of them answers any request, and a dead
    /// server's jobs finish on another). Its password: HEARTH_STORE_PASSWORD
    /// or --store-password-file, not the URL (the process list shows it).
    #[arg(long, value_name = "STORE", default_value = "files")]
    store: String,
    /// With --store postgres://: the folder of keys, requests and results
    /// every server of the fleet mounts (default: none).
    #[arg(long, value_name = "DIR")]
    blobs: Option<PathBuf>,
    #[command(flatten)]
    store_access: StoreAccess,
    /// With --store postgres://: this server's name in the fleet, unique
    /// (default: its host's name and process id).
    #[arg(long, value_name = "NAME")]
    server_id: Option<String>,
    /// With --store postgres://: how long a job this server runs stays its
    /// own without a heartbeat (a third of it apart); a server that died or
    /// stalled longer has its job run by another.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "30s")]
    lease: Duration,
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
    /// Slowest a request body may arrive after its first 5 s, per second
    /// (bytes, or with a unit; 0: no minimum): a slower one is refused
    /// (`timeout`) and its upload slot freed at once. A client must read
    /// answers that wait for it (a large result) as fast, judged over 5 s,
    /// or its connection is dropped.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64KiB")]
    min_upload_rate: u64,
    /// Most of the --max-uploads slots one tenant (on a server without
    /// tenants, one client address) holds at once; its other uploads wait
    /// for its own slots (default: a quarter of --max-uploads, at least 1).
    #[arg(long, value_name = "N")]
    max_uploads_per_tenant: Option<usize>,
    /// Most connections open at once; more wait to be accepted. The
    /// process's open-file limit is raised to fit them and 256 files more,
    /// or the server does not start.
    #[arg(long, value_name = "N", default_value_t = 512)]
    max_connections: usize,
    /// Most connections open at once from one client address (an IPv6
    /// client: its /64); more are closed at once.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_connections_per_ip: usize,
    /// Longest a connection may take to send a request's line and headers,
    /// and stay idle between requests; then it is closed.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "20s")]
    header_timeout: Duration,
    /// Longest a TLS handshake may take; then the connection is closed.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "10s")]
    handshake_timeout: Duration,
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
    /// How many times a job may be started: a job that was running when
    /// the server died this many times fails as `crashed` instead of
    /// running again, so that it cannot keep the server down.
    #[arg(long, value_name = "N", default_value_t = 2)]
    max_attempts: u32,
    /// Bytes each tenant may keep stored: its keys, queued jobs and kept
    /// results (`storage_limit`; `token add --max-storage` sets one
    /// tenant's).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "16GiB")]
    max_storage: u64,
    /// Free space the data folder's disk keeps: uploads and jobs that would
    /// take it below are refused (`insufficient_storage`).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1GiB")]
    disk_reserve: u64,
    /// Most results sent at once (each streamed from disk); more wait their
    /// turn.
    #[arg(long, value_name = "N", default_value_t = 16)]
    max_downloads: usize,
    /// Most of the --max-downloads slots one tenant (on a server without
    /// tenants, one client address) holds at once; its other downloads wait
    /// for its own slots (default: a quarter of --max-downloads, at least 1).
    #[arg(long, value_name = "N")]
    max_downloads_per_tenant: Option<usize>,
    /// A web page's origin (scheme://host[:port]) whose scripts may call the
    /// API from a browser with their user's token (CORS, for the browser
    /// client; repeat for several). None by default; refused on a server
    /// without tenants.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
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

/// `hearth server token ...`, `hearth server reopen`.
#[derive(clap::Subcommand)]
enum ServerCommand {
    /// Tenants' API tokens: the server reads them at every request, so a
    /// change takes effect at once, running server or not.
    #[command(subcommand)]
    Token(TokenCommand),
    /// Remove every tenant and token, and open the folder to anyone who
    /// reaches the server (loopback only, unless --insecure). A folder that
    /// has had tenants never opens otherwise: a missing or emptied
    /// tenants.json closes it.
    Reopen {
        #[command(flatten)]
        data: StoreArg,
        /// Say it on purpose: every tenant's token stops working.
        #[arg(long)]
        yes: bool,
    },
    /// Move a data folder's tenants and tokens, keys, jobs (finished ones
    /// with their results, unfinished ones queued) and the day's usage
    /// into a fleet that holds none yet. No server may run on the folder
    /// meanwhile; the folder is left as it was.
    Migrate {
        /// The data folder to move.
        #[arg(long, value_name = "DIR")]
        data: PathBuf,
        /// The fleet's database: postgres://USER@HOST[:PORT]/DB.
        #[arg(long, value_name = "STORE")]
        store: String,
        /// The fleet's blob folder.
        #[arg(long, value_name = "DIR")]
        blobs: PathBuf,
        #[command(flatten)]
        store_access: StoreAccess,
    },
}

#[derive(clap::Subcommand)]
enum TokenCommand {
    /// Make a token for TENANT (the tenant is made if new) and print it on
    /// stdout, once: only its hash is kept.
    Add {
        /// The tenant: 1 to 32 of a-z, 0-9, '-' and '_'.
        tenant: String,
        #[command(flatten)]
        data: StoreArg,
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
        /// Bytes the tenant may keep stored: keys, queued jobs, kept
        /// results (`storage_limit`; default: the server's --max-storage).
        #[arg(long, value_name = "SIZE", value_parser = parse_size)]
        max_storage: Option<u64>,
    },
    /// List tenants with their limits, and tokens (id, tenant, made,
    /// revoked): never the tokens themselves.
    List {
        #[command(flatten)]
        data: StoreArg,
    },
    /// Revoke a token by its id (the 16 hex digits after `hth_`), or
    /// every token of a tenant by its name.
    #[command(group = clap::ArgGroup::new("which").required(true))]
    Revoke {
        /// A token id or a tenant's name (refused when it is both: use
        /// --token-id or --tenant).
        #[arg(group = "which")]
        name: Option<String>,
        /// The token with this id (default: none; NAME, or --tenant).
        #[arg(long, value_name = "TOKEN-ID", group = "which")]
        token_id: Option<String>,
        /// Every token of this tenant (default: none; NAME, or --token-id).
        #[arg(long, value_name = "NAME", group = "which")]
        tenant: Option<String>,
        #[command(flatten)]
        data: StoreArg,
    },
}

/// How the fleet's database is reached: the CA of its certificate, its
/// password.
#[derive(clap::Args)]
#[group(skip)]
struct StoreAccess {
    /// The CA (PEM) of the fleet's database's TLS certificate (default:
    /// HEARTH_STORE_CA_CERT, else none). With one, every connection is TLS
    /// with the certificate checked against it, or none is made (a URL
    /// saying sslmode=disable is refused). Without, TLS where the database
    /// offers it, or as the URL's sslmode says (require, disable), checked
    /// against the system's roots.
    #[arg(long, value_name = "FILE", env = "HEARTH_STORE_CA_CERT")]
    store_ca_cert: Option<PathBuf>,
    /// A file holding the fleet's database's password (its first line),
    /// kept out of the URL and so out of the process list (default:
    /// HEARTH_STORE_PASSWORD_FILE; else HEARTH_STORE_PASSWORD, the
    /// password itself; else none, or the URL's).
    #[arg(long, value_name = "FILE", env = "HEARTH_STORE_PASSWORD_FILE")]
    store_password_file: Option<PathBuf>,
}

impl StoreAccess {
    /// The database at `url`, with the password and CA given apart.
    fn database(&self, url: &str) -> Result<Database, Error> {
        let url = fleet_url(url)?;
        let from_env = std::env::var("HEARTH_STORE_PASSWORD")
            .ok()
            .filter(|p| !p.is_empty());
        let password = match (&self.store_password_file, from_env) {
            (Some(_), Some(_)) => {
                return Err(Error::Config(
                    "the database's password is given twice: HEARTH_STORE_PASSWORD and \
                     --store-password-file (or HEARTH_STORE_PASSWORD_FILE); give one"
                        .into(),
                ))
            }
            (Some(file), None) => {
                let text = std::fs::read_to_string(file).map_err(|e| {
                    Error::Config(format!("--store-password-file {}: {e}", file.display()))
                })?;
                let line = text.lines().next().unwrap_or_default().to_string();
                if line.is_empty() {
                    return Err(Error::Config(format!(
                        "--store-password-file {}: its first line is empty",
                        file.display()
                    )));
                }
                Some(line)
            }
            (None, p) => p,
        };
        let db = Database {
            url: url.to_string(),
            password,
            ca_cert: self.store_ca_cert.clone(),
        };
        if db.password.is_none() && db.password_in_url() {
            eprintln!(
                "hearth: the database URL holds its password, which the process list shows: \
                 give it with HEARTH_STORE_PASSWORD or --store-password-file"
            );
        }
        Ok(db)
    }
}

/// Where the tenants are: a data folder, or a fleet's database.
#[derive(clap::Args)]
#[group(skip)]
struct StoreArg {
    /// The server's data folder (default: none; or --store).
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "store",
        conflicts_with = "store"
    )]
    data: Option<PathBuf>,
    /// A fleet's database, postgres://USER@HOST[:PORT]/DB (default: none;
    /// or --data).
    #[arg(long, value_name = "STORE")]
    store: Option<String>,
    #[command(flatten)]
    store_access: StoreAccess,
}

impl StoreArg {
    /// Changes the tenants where they are, under that store's lock.
    fn edit<T>(&self, f: impl FnOnce(&mut Tenants) -> Result<T, TenantError>) -> Result<T, Error> {
        match (&self.data, &self.store) {
            (_, Some(url)) => fleet::tenants::edit(&self.store_access.database(url)?, f),
            (Some(d), None) => edit(d, f),
            (None, None) => unreachable!("clap requires one"),
        }
        .map_err(tenant_err)
    }

    fn load(&self) -> Result<Tenants, Error> {
        match (&self.data, &self.store) {
            (_, Some(url)) => fleet::tenants::load(&self.store_access.database(url)?),
            (Some(d), None) => Tenants::load(d),
            (None, None) => unreachable!("clap requires one"),
        }
        .map_err(tenant_err)
    }

    fn reopen(&self) -> Result<Vec<String>, Error> {
        match (&self.data, &self.store) {
            (_, Some(url)) => fleet::tenants::reopen(&self.store_access.database(url)?),
            (Some(d), None) => hearth_server::tenants::reopen(d),
            (None, None) => unreachable!("clap requires one"),
        }
        .map_err(tenant_err)
    }

    /// How the store is named to the operator.
    fn describe(&self) -> String {
        match (&self.data, &self.store) {
            (_, Some(url)) => fleet::redacted(url),
            (Some(d), None) => d.display().to_string(),
            (None, None) => String::new(),
        }
    }
}

/// `url` if it names a PostgreSQL database (the error shows it without
/// its password).
fn fleet_url(url: &str) -> Result<&str, Error> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(url)
    } else {
        Err(Error::Config(format!(
            "--store {}: not a database URL (postgres://USER@HOST[:PORT]/DB)",
            if url.contains('=') {
                fleet::redacted(url)
            } else {
                format!("{url:?}")
            }
        )))
    }
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
            max_storage,
        } => {
            let token = data.edit(|t| {
                let given = max_keys.is_some() || max_queue.is_some() || max_pbs_per_day.is_some();
                let limits = given.then(|| {
                    let was = t.tenants.get(&tenant).copied().unwrap_or_default();
                    TenantLimits {
                        max_keys: max_keys.unwrap_or(was.max_keys),
                        max_queue: max_queue.unwrap_or(was.max_queue),
                        max_pbs_per_day: max_pbs_per_day.unwrap_or(was.max_pbs_per_day),
                    }
                });
                let token = t.add_token(&tenant, limits)?;
                if let Some(bytes) = max_storage {
                    t.storage.insert(tenant.clone(), bytes);
                }
                Ok(token)
            })?;
            eprintln!("a token for {tenant} (shown once; give it to the tenant):");
            println!("{token}");
        }
        TokenCommand::List { data } => {
            let t = data.load()?;
            if t.is_open() {
                println!("no tenants: the server is open to anyone who reaches it");
            }
            for (name, l) in &t.tenants {
                let storage = match t.max_storage(name) {
                    Some(b) => b.to_string(),
                    None => "the server's".into(),
                };
                println!(
                    "tenant {name}: max-keys {}, max-queue {}, max-pbs-per-day {}, max-storage {storage}",
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
        TokenCommand::Revoke {
            name,
            token_id,
            tenant,
            data,
        } => {
            let n = data.edit(|t| match (&token_id, &tenant) {
                (Some(id), _) => t.revoke_token(id),
                (_, Some(who)) => t.revoke_tenant(who),
                _ => t.revoke(name.as_deref().unwrap_or_default()),
            })?;
            eprintln!("{n} live tokens revoked");
        }
    }
    Ok(())
}

/// `hearth server reopen`.
fn reopen(data: &StoreArg, yes: bool) -> Result<(), Error> {
    if !yes {
        return Err(Error::Config(
            "reopening removes every tenant and token, and serves anyone who reaches the \
             server: add --yes to do it"
                .into(),
        ));
    }
    let removed = data.reopen()?;
    eprintln!(
        "{} tenants removed; {} is open: no token is asked for (loopback only unless --insecure)",
        removed.len(),
        data.describe()
    );
    Ok(())
}

/// `hearth server migrate`.
fn migrate(
    data: &std::path::Path,
    store: &str,
    access: &StoreAccess,
    blobs: &std::path::Path,
) -> Result<(), Error> {
    let db = access.database(store)?;
    let url = db.url.as_str();
    let m = fleet::migrate::migrate(data, &db, blobs).map_err(Error::Config)?;
    for n in &m.notes {
        eprintln!("hearth server migrate: {n}");
    }
    eprintln!(
        "moved {} into {}: {} tenants, {} keys, {} finished jobs, {} queued",
        data.display(),
        fleet::redacted(url),
        m.tenants,
        m.keys,
        m.finished,
        m.queued
    );
    Ok(())
}

impl Args {
    /// The thread option of every rank when serving with `--backend mpi`
    /// (not for `hearth server token`).
    pub fn mpi_threads(&self) -> Option<Threads> {
        (self.command.is_none() && self.backend.backend == Engine::Mpi).then_some(self.threads)
    }
}

/// `--backend mpi` on rank 0: the launch's ranks (the other ranks are in
/// `Cluster::work`, see `cluster::main`).
#[cfg(feature = "mpi")]
fn mpi_ranks(config: &mut Config) -> Result<(), Error> {
    config.ranks = Some(hearth_server::Ranks(crate::cluster::cluster()?));
    Ok(())
}

/// `--backend mpi` in a build without MPI.
#[cfg(not(feature = "mpi"))]
fn mpi_ranks(_: &mut Config) -> Result<(), Error> {
    Err(crate::cluster::missing())
}

/// `hearth server`: serves until Ctrl-C or SIGTERM; `hearth server token`.
pub fn run(args: Args) -> Result<(), Error> {
    match args.command {
        Some(ServerCommand::Token(cmd)) => return token(cmd),
        Some(ServerCommand::Reopen { data, yes }) => return reopen(&data, yes),
        Some(ServerCommand::Migrate {
            data,
            store,
            blobs,
            store_access,
        }) => return migrate(&data, &store, &store_access, &blobs),
        None => {}
    }
    let (mut config, at) = match (args.store.as_str(), args.data) {
        ("files", Some(data)) => {
            let at = format!("data in {}", data.display());
            (Config::new(data), at)
        }
        ("files", None) => return Err(Error::Config("--data DIR is needed".into())),
        (url, data) => {
            let database = args.store_access.database(url)?;
            if data.is_some() {
                return Err(Error::Config(
                    "--data is a server's own folder; a fleet's servers keep everything in \
                     --store and --blobs"
                        .into(),
                ));
            }
            let blobs = args.blobs.ok_or_else(|| {
                Error::Config("--store postgres://...: --blobs DIR is needed too".into())
            })?;
            let server_id = args.server_id.unwrap_or_else(fleet::default_server_id);
            let at = format!(
                "the fleet at {} as {server_id}, blobs in {}",
                fleet::redacted(url),
                blobs.display()
            );
            let mut config = Config::new(&blobs);
            config.fleet = Some(FleetConfig {
                database,
                blobs,
                server_id,
                lease: args.lease,
            });
            (config, at)
        }
    };
    config.threads = args.threads.resolve()?;
    config.max_pbs = args.max_pbs;
    config.max_memory = args.max_memory.bytes();
    config.max_queue = args.max_queue;
    config.max_jobs = args.max_jobs.unwrap_or(config.threads);
    // The library's rule, as `run`'s: a GPU that cannot be used is said
    // and the cpu backend serves (an error with HEARTH_REQUIRE_GPU).
    let (engine, fallback) = args.backend.backend.usable()?;
    if let Some(why) = fallback {
        eprintln!("hearth server: --backend gpu: {why}; jobs run on the cpu backend");
    }
    if engine == Engine::Mpi {
        mpi_ranks(&mut config)?;
    }
    config.backend = engine;
    config.max_body = args.max_body;
    config.max_uploads = args.max_uploads;
    config.max_keys = args.max_keys;
    config.key_cache = args.key_cache;
    config.body_timeout = args.body_timeout;
    config.min_upload_rate = args.min_upload_rate;
    config.max_uploads_per_tenant = args.max_uploads_per_tenant;
    config.max_connections = args.max_connections;
    config.max_connections_per_ip = args.max_connections_per_ip;
    config.header_timeout = args.header_timeout;
    config.handshake_timeout = args.handshake_timeout;
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
    config.max_attempts = args.max_attempts;
    config.max_storage = args.max_storage;
    config.disk_reserve = args.disk_reserve;
    config.max_downloads = args.max_downloads;
    config.max_downloads_per_tenant = args.max_downloads_per_tenant;
    config.allow_origins = args.allow_origins;
    let on = config.describe_backend();
    hearth_server::run(config, &args.listen, |url, open| {
        println!("listening on {url}");
        let _ = std::io::stdout().flush();
        eprintln!(
            "hearth server: jobs on {on}, {at}; Ctrl-C stops (unfinished jobs run again at the next start)"
        );
        if open {
            eprintln!(
                "hearth server: no tenants, so no token is asked for: anyone who reaches {url} \
                 may use it (`hearth server token add NAME` makes the first)"
            );
        }
    })
    .map_err(|e| Error::Config(e.to_string()))
}
