//! `hearth server`: the compute server (`hearth_server`), which runs any
//! program file on bundles for registered server keys, over HTTP.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use hearth::Error;
use hearth_cli::options::{parse_duration, parse_size, MaxMemory, Threads};
use hearth_server::Config;

/// `hearth server`.
#[derive(clap::Args)]
pub struct Args {
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
    /// Jobs whose estimated peak memory on --threads threads is over
    /// --max-memory are refused (`over_cost`).
    #[command(flatten)]
    max_memory: MaxMemory,
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
    /// How long a request body may take to arrive (`timeout`).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "300s")]
    body_timeout: Duration,
    /// Do not log accepted, finished and failed jobs on stderr.
    #[arg(long)]
    quiet: bool,
    /// Serve on an address other than loopback (default: refused). The
    /// server has no access tokens and no TLS yet: anyone who reaches the
    /// port could register keys and run jobs.
    #[arg(long)]
    insecure: bool,
}

/// `hearth server`: serves until Ctrl-C or SIGTERM.
pub fn run(args: Args) -> Result<(), Error> {
    let mut config = Config::new(&args.data);
    config.threads = args.threads.resolve()?;
    config.max_pbs = args.max_pbs;
    config.max_memory = args.max_memory.bytes();
    config.max_queue = args.max_queue;
    config.max_body = args.max_body;
    config.max_uploads = args.max_uploads;
    config.max_keys = args.max_keys;
    config.key_cache = args.key_cache;
    config.body_timeout = args.body_timeout;
    config.log = !args.quiet;
    config.insecure = args.insecure;
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
