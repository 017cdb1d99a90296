//! The compute server and its client commands: `hearth server` (serves
//! any program for registered server keys, `hearth_server`), `hearth
//! submit` (uploads the key if needed, submits a program and a bundle,
//! prints the job id), `hearth job-status` and `hearth fetch` (waits,
//! writes the result bundle, forgets the job).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth::crypto::files::write_atomic;
use hearth::Error;
use hearth_server::{Client, ClientError, Config, JobId, JobState};
use indicatif::ProgressBar;

use crate::deploy::parse_size;
use crate::keygen::pbs_bar;
use crate::options::Threads;

/// `hearth server`.
#[derive(clap::Args)]
pub struct ServerArgs {
    /// Address to listen on (HOST:PORT; port 0 picks a free one). The
    /// first line on stdout is `listening on http://ADDR`.
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "HOST:PORT")]
    listen: String,
    /// The data folder: registered keys, accepted jobs and their results
    /// (created if missing; one server at a time). Jobs found there at
    /// start that had not finished run again.
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    #[command(flatten)]
    threads: Threads,
    /// Refuse jobs whose program runs more bootstraps than this
    /// (`over_cost`).
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    max_pbs: u64,
    /// Refuse jobs whose estimated peak memory on --threads threads is
    /// over this size (`over_cost`; bytes, or 512MiB, 8GiB).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "8GiB")]
    max_memory: u64,
    /// Most jobs waiting at once (the running one aside); more are
    /// refused with `queue_full` until some have run.
    #[arg(long, value_name = "N", default_value_t = 64)]
    max_queue: usize,
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
    /// Seconds a request body may take to arrive (`timeout`).
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    body_timeout: u64,
    /// Do not log accepted, finished and failed jobs on stderr.
    #[arg(long)]
    quiet: bool,
}

fn client_err(e: ClientError) -> Error {
    Error::Config(e.to_string())
}

/// `hearth server`: serves until Ctrl-C or SIGTERM.
pub fn server(args: ServerArgs) -> Result<(), Error> {
    let mut config = Config::new(&args.data);
    config.threads = args.threads.resolve()?;
    config.max_pbs = args.max_pbs;
    config.max_memory = args.max_memory;
    config.max_queue = args.max_queue;
    config.max_body = args.max_body;
    config.max_uploads = args.max_uploads;
    config.max_keys = args.max_keys;
    config.key_cache = args.key_cache;
    config.body_timeout = Duration::from_secs(args.body_timeout);
    config.log = !args.quiet;
    let threads = config.threads;
    let data = args.data.clone();
    hearth_server::run(config, &args.listen, |addr| {
        println!("listening on http://{addr}");
        let _ = std::io::stdout().flush();
        eprintln!(
            "hearth server: {threads} threads, data in {}; Ctrl-C stops (unfinished jobs run again at the next start)",
            data.display()
        );
    })
    .map_err(|e| Error::Config(e.to_string()))
}

/// `--url`, shared by the client commands.
#[derive(clap::Args, Clone, Debug)]
pub struct UrlArg {
    /// The server's URL, http://HOST:PORT (default: HEARTH_SERVER).
    #[arg(long, env = "HEARTH_SERVER", value_name = "URL")]
    url: String,
}

/// `hearth submit`.
#[derive(clap::Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    url: UrlArg,
    /// The server key (compressed or not) the bundle is under: uploaded
    /// first unless the server has its id already.
    #[arg(long, value_name = "FILE")]
    server_key: PathBuf,
    /// The program file.
    #[arg(long, value_name = "FILE")]
    program: PathBuf,
    /// The bundle of encrypted inputs (from `hearth encrypt`).
    #[arg(long, value_name = "FILE")]
    bundle: PathBuf,
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| {
        hearth::FileError::Io {
            path: path.to_path_buf(),
            source,
        }
        .into()
    })
}

/// `hearth submit`: prints the job id on stdout.
pub fn submit(args: SubmitArgs) -> Result<(), Error> {
    let client = Client::new(&args.url.url).map_err(client_err)?;
    let key = client.ensure_key(&args.server_key).map_err(client_err)?;
    if key.new {
        eprintln!(
            "server key {} ({}) registered ({} bytes)",
            key.key_id, key.params, key.bytes
        );
    }
    let key_id = hearth_server::api::parse_key_id(&key.key_id)
        .ok_or_else(|| Error::Config(format!("the server answered key id {:?}", key.key_id)))?;
    let program = read(&args.program)?;
    let bundle = read(&args.bundle)?;
    let job = client
        .submit_with_key(key_id, &program, &bundle)
        .map_err(client_err)?;
    eprintln!(
        "accepted: {} PBS, depth {}, estimated memory {} MiB",
        job.pbs,
        job.depth,
        job.memory >> 20
    );
    println!("{}", job.job_id);
    Ok(())
}

/// `--job ID`.
fn parse_job_id(s: &str) -> Result<JobId, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a job id (32 hex digits)"))
}

/// `hearth job-status`.
#[derive(clap::Args)]
pub struct StatusArgs {
    #[command(flatten)]
    url: UrlArg,
    /// The job id `hearth submit` printed.
    #[arg(long, value_name = "ID", value_parser = parse_job_id)]
    job: JobId,
}

/// `hearth job-status`: the status as JSON on stdout.
pub fn status(args: StatusArgs) -> Result<(), Error> {
    let client = Client::new(&args.url.url).map_err(client_err)?;
    let st = client.status(args.job).map_err(client_err)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&st).map_err(|e| Error::Config(e.to_string()))?
    );
    Ok(())
}

/// `hearth fetch`.
#[derive(clap::Args)]
pub struct FetchArgs {
    #[command(flatten)]
    url: UrlArg,
    /// The job id `hearth submit` printed.
    #[arg(long, value_name = "ID", value_parser = parse_job_id)]
    job: JobId,
    /// The result bundle to write (decrypt it with `hearth decrypt`).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Wait for the job to finish, with a progress bar, instead of
    /// failing with `not_ready`.
    #[arg(long)]
    wait: bool,
    /// Milliseconds between two status requests with --wait.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    poll_ms: u64,
    /// Keep the job on the server after writing the result (default: it
    /// is deleted once the result is safely written).
    #[arg(long)]
    keep: bool,
}

/// `hearth fetch`.
pub fn fetch(args: FetchArgs) -> Result<(), Error> {
    let client = Client::new(&args.url.url).map_err(client_err)?;
    if args.wait {
        let mut bar: Option<ProgressBar> = None;
        let waited = client.wait_with(
            args.job,
            Duration::from_millis(args.poll_ms.max(10)),
            None,
            |st| match st.state {
                JobState::Running { done, total } => {
                    let b = bar.get_or_insert_with(|| pbs_bar(total as usize));
                    b.set_position(done);
                }
                JobState::Queued { position } if bar.is_none() => {
                    eprint!("\rqueued: {position} jobs before it ");
                }
                _ => {}
            },
        );
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        waited.map_err(client_err)?;
    }
    let bytes = client.result(args.job).map_err(client_err)?;
    write_atomic(&args.out, &bytes, false)?;
    eprintln!("{} written ({} bytes)", args.out.display(), bytes.len());
    if !args.keep {
        client.delete(args.job).map_err(client_err)?;
    }
    Ok(())
}
