//! What the compute server's client commands (`submit`, `job-status`,
//! `fetch`) share: `--url`, `--job`, and their errors.

use hearth::Error;
use hearth_server::{Client, ClientError, JobId};

/// `--url`, shared by the client commands.
#[derive(clap::Args, Clone, Debug)]
pub struct UrlArg {
    /// The server's URL, http://HOST:PORT (default: HEARTH_SERVER).
    #[arg(long, env = "HEARTH_SERVER", value_name = "URL")]
    pub url: String,
}

impl UrlArg {
    /// A client of the server at `--url`.
    pub fn client(&self) -> Result<Client, Error> {
        Client::new(&self.url).map_err(client_err)
    }
}

/// `--job ID`.
#[derive(clap::Args, Clone, Debug)]
pub struct JobArg {
    /// The job id `hearth submit` printed.
    #[arg(long, value_name = "ID", value_parser = parse_job_id)]
    pub job: JobId,
}

/// A job id as `hearth submit` prints it.
fn parse_job_id(s: &str) -> Result<JobId, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a job id (32 hex digits)"))
}

/// A client error as the command's error.
pub fn client_err(e: ClientError) -> Error {
    Error::Config(e.to_string())
}
