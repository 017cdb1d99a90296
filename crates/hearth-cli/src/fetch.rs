//! `hearth fetch`: a job's result bundle from a `hearth server`
//! (optionally waiting for it, with progress), then the job forgotten there.

use std::path::PathBuf;
use std::time::Duration;

use hearth::crypto::files::write_atomic;
use hearth::Error;
use hearth_cli::options::parse_duration;
use hearth_cli::progress::pbs_bar;
use hearth_client::JobState;
use indicatif::ProgressBar;

use crate::remote::{client_err, JobArg, UrlArg};

/// `hearth fetch`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    url: UrlArg,
    #[command(flatten)]
    job: JobArg,
    /// The result bundle to write (decrypt it with `hearth decrypt`).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Wait for the job to finish, with a progress bar, instead of
    /// failing with `not_ready`.
    #[arg(long)]
    wait: bool,
    /// Time between two status requests with --wait.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, default_value = "500ms")]
    poll: Duration,
    /// Keep the job on the server after writing the result (default: it
    /// is deleted once the result is safely written).
    #[arg(long)]
    keep: bool,
}

/// `hearth fetch`.
pub fn run(args: Args) -> Result<(), Error> {
    let client = args.url.client()?;
    if args.wait {
        let mut bar: Option<ProgressBar> = None;
        let waited = client.wait_with(
            args.job.job,
            args.poll.max(Duration::from_millis(10)),
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
    let bytes = client.result(args.job.job).map_err(client_err)?;
    write_atomic(&args.out, &bytes, false)?;
    eprintln!("{} written ({} bytes)", args.out.display(), bytes.len());
    if !args.keep {
        client.delete(args.job.job).map_err(client_err)?;
    }
    Ok(())
}
