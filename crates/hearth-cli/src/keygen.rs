//! `hearth keygen`: a client key, its public key and a server key into a
//! folder.

use std::path::{Path, PathBuf};

use hearth::{ClientKey, CompressedServerKey, Error, PublicKey, ServerKey};
use hearth_cli::options::ParamsArg;
use hearth_cli::progress::steps;

/// `hearth keygen`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    params: ParamsArg,
    /// Folder to write client.key (mode 0600), public.key and server.key
    /// into. public.key lets data owners encrypt without the client key
    /// (`hearth encrypt --public-key`); GATES_128 has none (its
    /// dimension is not a power of two), so none is written there.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// Write server.key compressed: tfhe-rs seeded keys, which store
    /// ciphertext bodies and the seeds of their masks (DIGITS_128
    /// 30 MB instead of 135 MB, GATES_128 13 MB instead of 82 MB).
    /// Every command that reads server.key decompresses it on load
    /// (about 0.1 s more on 2 cores). Default: uncompressed, which
    /// loads fastest.
    #[arg(long)]
    compressed: bool,
}

/// `hearth keygen`: keys for `--params` written into `--out`; with
/// `--compressed`, server.key holds the seeded (compressed) form. The
/// public key is written where the set has one; where it has none, the
/// command says why and still succeeds.
pub fn run(args: Args) -> Result<(), Error> {
    let (params, out, compressed) = (args.params.params, args.out.as_path(), args.compressed);
    std::fs::create_dir_all(out).map_err(|source| hearth::FileError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let bar = steps(3);
    bar.set_message(format!("{}: secret keys", params.name));
    let client = ClientKey::generate(params);
    bar.inc(1);
    bar.set_message(format!("{}: public key", params.name));
    let public = match client.public_key() {
        Ok(k) => Ok(k),
        Err(e @ Error::NoPublicKey { .. }) => Err(e),
        Err(e) => return Err(e),
    };
    bar.inc(1);
    bar.set_message(format!("{}: bootstrap and key-switch keys", params.name));
    let server = if compressed {
        Written::Compressed(client.compressed_server_key())
    } else {
        Written::Plain(client.server_key())
    };
    bar.inc(1);
    bar.finish_and_clear();
    let bar = steps(3);
    bar.set_message("writing client.key");
    client.save(&out.join("client.key"))?;
    bar.inc(1);
    bar.set_message("writing public.key");
    let public_path = out.join("public.key");
    write_public(&public, &public_path)?;
    bar.inc(1);
    bar.set_message("writing server.key");
    let server_path = out.join("server.key");
    match &server {
        Written::Plain(k) => k.save(&server_path)?,
        Written::Compressed(k) => k.save(&server_path)?,
    }
    bar.finish_and_clear();
    let size = std::fs::metadata(&server_path)
        .map(|m| m.len())
        .unwrap_or_default();
    println!(
        "{}: key {} written to {} (client.key{}, server.key: {} bytes{})",
        params.name,
        client.key_id(),
        out.display(),
        if public.is_ok() { ", public.key" } else { "" },
        size,
        if compressed { ", compressed" } else { "" }
    );
    match &public {
        Ok(_) => println!(
            "public.key: for data owners, who encrypt with it (`hearth encrypt --public-key`) \
             and cannot decrypt"
        ),
        Err(why) => println!("no public.key: {why}"),
    }
    Ok(())
}

/// Writes the public key to `path`, or, for a set without one, removes a
/// public.key an earlier `keygen` left there: it belongs to a key this
/// command has just replaced.
fn write_public(public: &Result<PublicKey, Error>, path: &Path) -> Result<(), Error> {
    match public {
        Ok(k) => k.save(path),
        Err(_) => match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(hearth::FileError::Io {
                path: path.to_path_buf(),
                source,
            }
            .into()),
        },
    }
}

/// The server key `hearth keygen` writes.
enum Written {
    Plain(ServerKey),
    Compressed(CompressedServerKey),
}
