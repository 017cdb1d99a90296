//! `hearth emu serve`: the emulator's server, over TCP: it runs clients' A32
//! programs with the server key only and asks them to resolve branches.

use std::path::PathBuf;
use std::time::Duration;

use hearth::{Error, ServerKey};
use hearth_cli::options::{parse_duration, parse_size, Threads};

use crate::emu::{emu_err, gates_only};

#[derive(clap::Args)]
pub struct Args {
    /// Address to listen on.
    #[arg(long, value_name = "HOST:PORT", default_value = "127.0.0.1:7878")]
    listen: String,
    /// A folder with server.key (GATES_128). The server never sees the
    /// secret key.
    #[arg(long, value_name = "DIR")]
    keys: PathBuf,
    /// The largest message accepted.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1GiB")]
    max_message: u64,
    /// How long a client may take to answer a branch query.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "600s")]
    timeout: Duration,
    #[command(flatten)]
    threads: Threads,
}

/// `hearth emu serve`: runs clients' programs with the server key only.
pub fn run(args: Args) -> Result<(), Error> {
    let key = ServerKey::load(&args.keys.join("server.key"))?;
    gates_only(key.params())?;
    let listener = std::net::TcpListener::bind(&args.listen)
        .map_err(|e| Error::Config(format!("{}: {e}", args.listen)))?;
    eprintln!(
        "serving on {} (key {}, protocol version {})",
        listener.local_addr().map_err(emu_err)?,
        key.key_id(),
        hearth_emu::remote::VERSION
    );
    let server = hearth_emu::remote::Server {
        key,
        threads: args.threads.get(),
        limit: args.max_message,
        timeout: args.timeout,
    };
    server.serve(&listener, |line| eprintln!("{line}"))
}
