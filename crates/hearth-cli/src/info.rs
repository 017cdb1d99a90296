//! `hearth info`: what a hearth file holds, and whether it reads whole.

use std::path::{Path, PathBuf};

use hearth::crypto::files::{load_ciphertexts, read_info, FileKind};
use hearth::{
    Bundle, ClientKey, CompiledProgram, CompressedServerKey, Error, ServerKey, ServerKeySizes,
};

use crate::describe::{describe_bundle, describe_program};

/// `hearth info`.
#[derive(clap::Args)]
pub struct Args {
    /// The file: client.key, public.key, server.key (compressed or not),
    /// a ciphertext file, a program or a bundle.
    file: PathBuf,
}

/// `hearth info`: the header of any hearth file, then the file read fully
/// (so damage is reported).
pub fn run(args: Args) -> Result<(), Error> {
    let file: &Path = &args.file;
    let info = read_info(file)?;
    let p = info.params.params();
    println!("file:        {}", file.display());
    println!("kind:        {}", info.kind.name());
    println!("format:      version {}", info.version);
    println!("parameters:  {} ({})", p.name, p.source);
    println!("key id:      {}", info.key_id);
    let size = std::fs::metadata(file)
        .map_err(|source| hearth::FileError::Io {
            path: file.to_path_buf(),
            source,
        })?
        .len();
    println!(
        "size:        {size} bytes (payload {} bytes)",
        info.payload_len
    );
    // Read it fully, so corruption is reported here too.
    match info.kind {
        FileKind::ClientKey => drop(ClientKey::load(file)?),
        FileKind::ServerKey => {
            drop(ServerKey::load(file)?);
            let sizes = ServerKeySizes::of(p);
            println!(
                "compressed:  {} bytes of keys with `keygen --compressed` ({:.1}x smaller)",
                sizes.compressed(),
                sizes.decompressed() as f64 / sizes.compressed() as f64
            );
        }
        FileKind::CompressedServerKey => {
            let sizes = CompressedServerKey::load(file)?.sizes();
            println!(
                "keys:        bootstrap key {} bytes, key switch {} bytes, packing key {} bytes \
                 (ciphertext bodies; masks as 128-bit seeds)",
                sizes.bootstrap_compressed, sizes.keyswitch_compressed, sizes.packing_compressed
            );
            println!(
                "expands to:  a server key of {} bytes (bootstrap key {}, key switch {}, \
                 packing key {}), {:.1}x; every command that reads server.key decompresses it on load",
                sizes.decompressed(),
                sizes.bootstrap,
                sizes.keyswitch,
                sizes.packing,
                sizes.decompressed() as f64 / sizes.compressed() as f64
            );
        }
        FileKind::Ciphertexts => {
            println!("ciphertexts: {}", load_ciphertexts(file, None)?.len());
        }
        FileKind::Program => describe_program(&CompiledProgram::load(file)?, None),
        FileKind::Bundle => describe_bundle(&Bundle::load(file)?),
        FileKind::PublicKey => {
            let key = hearth::PublicKey::load(file)?;
            println!(
                "public key:  {} (tfhe-rs compact public key, dimension {}); encrypts for \
                 key id {} without decrypting (`hearth encrypt --public-key`)",
                if key.is_compressed() {
                    "compressed (seed and body)"
                } else {
                    "whole"
                },
                p.big_lwe_dimension().0,
                key.key_id()
            );
        }
        FileKind::TranscipherKey => {
            let key = hearth::formats::TranscipherKey::load(file)?;
            println!(
                "transciphering key: {} key of 128 bits, encrypted for key id {} (a program's U128 \
                 key input: `hearth combine NAME=FILE ...`)",
                key.cipher(),
                key.key_id()
            );
        }
    }
    println!("status:      ok");
    Ok(())
}
