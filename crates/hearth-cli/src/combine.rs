//! `hearth combine`: the bundles of several data owners, each a run of a
//! program's inputs (`hearth encrypt --only`), joined into the program's
//! bundle.

use std::path::{Path, PathBuf};

use hearth::formats::TranscipherKey;
use hearth::{Bundle, Error};

use crate::describe::{file_len, load_program, secure};

/// `hearth combine`.
#[derive(clap::Args)]
pub struct Args {
    /// The bundles to join, in the order of the program's inputs (from
    /// `hearth encrypt --only`, with the public key or the client key;
    /// all under one key). NAME=FILE gives a transciphering key (`hearth
    /// seal-key`) as the program's input NAME.
    #[arg(value_name = "FILE", required = true)]
    bundles: Vec<PathBuf>,
    /// Check the joined bundle against this program's inputs (default:
    /// none; `hearth run` and the server check it anyway).
    #[arg(long, value_name = "FILE")]
    program: Option<PathBuf>,
    /// The bundle to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// A bundle file, or `NAME=FILE` of a transciphering key as the input
/// NAME (a file whose own name holds `=` is read as a bundle).
fn load_part(arg: &Path) -> Result<Bundle, Error> {
    let text = arg.to_string_lossy();
    match text.split_once('=') {
        Some((name, file)) if !arg.exists() && !name.is_empty() => {
            TranscipherKey::load(Path::new(file))?.as_input(name)
        }
        _ => Bundle::load(arg),
    }
}

/// `hearth combine`: the entries of every bundle, in the order given,
/// under their one key (`Bundle::combine`, whose error refuses bundles
/// under different keys or parameter sets; the first such file is named
/// on stderr).
pub fn run(args: Args) -> Result<(), Error> {
    let mut bundles = Vec::with_capacity(args.bundles.len());
    for path in &args.bundles {
        let b = load_part(path)?;
        secure(b.params().params())?;
        bundles.push(b);
    }
    if let (Some(first), Some((path, other))) = (
        bundles.first(),
        args.bundles
            .iter()
            .zip(&bundles)
            .find(|(_, b)| b.key_id() != bundles[0].key_id() || b.params() != bundles[0].params()),
    ) {
        eprintln!(
            "{} is under key {} ({}), {} under key {} ({})",
            path.display(),
            other.key_id(),
            other.params().params().name,
            args.bundles[0].display(),
            first.key_id(),
            first.params().params().name
        );
    }
    let joined = Bundle::combine(bundles)?;
    if let Some(program) = &args.program {
        let prog = load_program(program)?;
        prog.check_bundle(&joined).map_err(|e| match e {
            Error::Dimensions(why) => Error::Dimensions(format!(
                "{why} (give the bundles in the order of the program's inputs)"
            )),
            e => e,
        })?;
    }
    let out = &args.out;
    joined.save(out)?;
    let entries: Vec<String> = joined.signature().into_iter().map(|p| p.name).collect();
    println!(
        "{} bundles joined under key {}: inputs {} to {} ({} bytes)",
        args.bundles.len(),
        joined.key_id(),
        entries.join(", "),
        out.display(),
        file_len(out)
    );
    Ok(())
}
