//! `hearth job-status`: a job's state on a `hearth server`, as JSON.

use hearth::Error;

use crate::remote::{client_err, JobArg, UrlArg};

/// `hearth job-status`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    url: UrlArg,
    #[command(flatten)]
    job: JobArg,
}

/// `hearth job-status`: the status as JSON on stdout.
pub fn run(args: Args) -> Result<(), Error> {
    let client = args.url.client()?;
    let st = client.status(args.job.job).map_err(client_err)?;
    println!(
        "{}",
        serde_json::to_string_pretty(&st).map_err(|e| Error::Config(e.to_string()))?
    );
    Ok(())
}
