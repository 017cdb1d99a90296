//! `hearth decrypt`: a bundle to clear values, with the client key (the
//! client side).

use std::path::{Path, PathBuf};

use hearth::{Bundle, ClientKey, Error};
use hearth_cli::options::Format;

/// `hearth decrypt`.
#[derive(clap::Args)]
pub struct Args {
    /// The client key (client.key).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The bundle to decrypt (from `hearth run`).
    #[arg(long, value_name = "FILE")]
    bundle: PathBuf,
    /// Write here: FILE.json (one object by name), or a folder with
    /// --format npy|csv (one file per output). Default: JSON on stdout.
    #[arg(long, value_name = "PATH")]
    out: Option<PathBuf>,
    /// json: one object by name; npy or csv: one file per output in the
    /// folder --out (int64 values only).
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "json")]
    format: Format,
}

/// `hearth decrypt`.
pub fn run(args: Args) -> Result<(), Error> {
    let out = match (args.out, args.format) {
        (None, Format::Json) => DecryptOut::Stdout,
        (Some(p), Format::Json) => DecryptOut::Json(p),
        (Some(p), f) => DecryptOut::Tables(p, f.name()),
        (None, f) => {
            return Err(Error::Config(format!(
                "--format {} writes files: give --out FOLDER",
                f.name()
            )))
        }
    };
    decrypt(&args.key, &args.bundle, out)
}

/// Where `hearth decrypt` writes.
enum DecryptOut {
    /// Stdout, JSON.
    Stdout,
    /// One JSON file.
    Json(PathBuf),
    /// One `.npy` or `.csv` file per entry in a folder.
    Tables(PathBuf, &'static str),
}

/// Decrypts `bundle` with the key in `key`, writing to `out`.
fn decrypt(key: &Path, bundle: &Path, out: DecryptOut) -> Result<(), Error> {
    let client = ClientKey::load(key)?;
    let b = Bundle::load(bundle)?;
    let entries = client.decrypt_bundle(&b)?;
    match out {
        DecryptOut::Stdout => {
            println!("{}", crate::values::to_json_object(&entries));
        }
        DecryptOut::Json(path) => {
            crate::values::write_json(&path, &entries)?;
            eprintln!("{} entries written to {}", entries.len(), path.display());
        }
        DecryptOut::Tables(dir, ext) => {
            for f in crate::values::write_tables(&dir, ext, &entries)? {
                eprintln!("wrote {}", f.display());
            }
        }
    }
    Ok(())
}
