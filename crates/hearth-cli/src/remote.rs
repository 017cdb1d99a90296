//! What the compute server's client commands (`submit`, `job-status`,
//! `fetch`) share: `--url`, `--token`, `--ca-cert`, `--job`, and their
//! errors.

use std::path::PathBuf;

use hearth::Error;
use hearth_client::{Client, ClientError, JobId};

/// `--url`, `--token` and `--ca-cert`, shared by the client commands.
#[derive(clap::Args, Clone, Debug)]
pub struct UrlArg {
    /// The server's URL, http://HOST:PORT or https://HOST:PORT (default:
    /// HEARTH_SERVER).
    #[arg(long, env = "HEARTH_SERVER", value_name = "URL")]
    pub url: String,
    /// The API token the server's operator gave you (`hearth server token
    /// add`; default: HEARTH_TOKEN). A server without tenants needs none.
    #[arg(
        long,
        env = "HEARTH_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<String>,
    /// Trust only the certificates in this PEM file for https:// (the
    /// server's own, or its private CA; default: HEARTH_CA_CERT, else the
    /// system's roots).
    #[arg(long, env = "HEARTH_CA_CERT", value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
}

impl UrlArg {
    /// A client of the server at `--url`, with the token and CA given.
    pub fn client(&self) -> Result<Client, Error> {
        let mut b = Client::builder(&self.url);
        if let Some(t) = &self.token {
            b = b.token(t);
        }
        if let Some(c) = &self.ca_cert {
            b = b.ca_cert(c);
        }
        b.build().map_err(client_err)
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
