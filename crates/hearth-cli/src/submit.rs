//! `hearth submit`: a program and a bundle to a `hearth server`, its
//! server key uploaded first if the server lacks it.

use std::path::{Path, PathBuf};

use hearth::Error;

use crate::remote::{client_err, UrlArg};

/// `hearth submit`.
#[derive(clap::Args)]
pub struct Args {
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
    /// A finished job whose result the server joins before the bundle's
    /// entries (inputs it keeps between jobs, such as AES round keys)
    /// (default: none).
    #[arg(long = "with", value_name = "ID")]
    with_job: Option<String>,
    /// Keep the result with every ciphertext in full, for later jobs'
    /// `--with` (results leave the server packed otherwise).
    #[arg(long)]
    unpacked: bool,
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
pub fn run(args: Args) -> Result<(), Error> {
    let client = args.url.client()?;
    let key = client.ensure_key(&args.server_key).map_err(client_err)?;
    if key.new {
        eprintln!(
            "server key {} ({}) registered ({} bytes)",
            key.key_id, key.params, key.bytes
        );
    }
    let key_id = hearth_client::parse_key_id(&key.key_id)
        .ok_or_else(|| Error::Config(format!("the server answered key id {:?}", key.key_id)))?;
    let program = read(&args.program)?;
    let bundle = read(&args.bundle)?;
    let with = match &args.with_job {
        None => None,
        Some(earlier) => Some(
            earlier
                .parse()
                .map_err(|_| Error::Config(format!("--with {earlier:?}: not a job id")))?,
        ),
    };
    let options = hearth_client::SubmitOptions {
        key: Some(key_id),
        with,
        unpacked: args.unpacked,
    };
    let job = client
        .submit_with_options(options, &program, &bundle)
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
