//! `hearth seal`: a data owner's bytes under AES-128 in counter mode or
//! Kreyvium, for transciphering: the sealed bytes go to the server in the
//! clear (`hearth encrypt --clear`), with the counter block or IV, and a
//! program turns them into encrypted words under FHE.

use std::path::{Path, PathBuf};

use hearth::symmetric::aes::{counter_after, AesCtr, BLOCK};
use hearth::symmetric::kreyvium::Kreyvium;
use hearth::{Error, FileError};
use num_bigint::BigInt;

/// The most bytes sealed at once (a program's clear input expands to one
/// ciphertext per bit on the server).
const MAX_BYTES: u64 = 1 << 20;

/// `--cipher`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cipher {
    /// AES-128 in counter mode (RustCrypto's `aes` and `ctr`).
    Aes,
    /// Kreyvium.
    Kreyvium,
}

/// `hearth seal`.
#[derive(clap::Args)]
pub struct Args {
    /// The cipher.
    #[arg(long, value_enum, value_name = "NAME")]
    cipher: Cipher,
    /// The symmetric key: a file of 16 bytes (`head -c 16 /dev/urandom >
    /// aes-key.bin`). Keep it; send it once, encrypted (`hearth
    /// seal-key`).
    #[arg(long, value_name = "FILE")]
    symmetric_key: PathBuf,
    /// AES: the first counter block; Kreyvium: the IV. 32 hex digits.
    /// Never use one twice under a key: the output names the next free
    /// AES counter block.
    #[arg(long, value_name = "HEX")]
    nonce: String,
    /// The bytes to seal (sealed bytes unseal the same way).
    #[arg(long = "in", value_name = "FILE")]
    input: PathBuf,
    /// The sealed bytes.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Also write the values of the program's two clear inputs, for
    /// `hearth encrypt --clear NONCE,SEALED --values FILE.json`: the nonce
    /// as a U128 (the AES counter block read big-endian, the Kreyvium IV
    /// little-endian) and the sealed bytes as one word (little-endian)
    /// (default: none).
    #[arg(long, value_name = "FILE.json")]
    values_out: Option<PathBuf>,
    /// The input names in --values-out: the nonce's, then the sealed
    /// bytes'.
    #[arg(long, value_name = "NAME", value_delimiter = ',', num_args = 2, default_values = ["counter", "sealed"])]
    names: Vec<String>,
}

impl Cipher {
    fn of_key(self) -> hearth::formats::Cipher {
        match self {
            Cipher::Aes => hearth::formats::Cipher::Aes128,
            Cipher::Kreyvium => hearth::formats::Cipher::Kreyvium,
        }
    }
}

/// `hearth seal-key`.
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("encryption key").required(true).args(["key", "public_key"]))]
pub struct KeyArgs {
    /// The cipher the key is for.
    #[arg(long, value_enum, value_name = "NAME")]
    cipher: Cipher,
    /// The symmetric key: a file of 16 bytes (as `hearth seal`).
    #[arg(long, value_name = "FILE")]
    symmetric_key: PathBuf,
    /// The public key (public.key) to encrypt it with: a device needs
    /// only it (default: none; give it or --key).
    #[arg(long, value_name = "FILE")]
    public_key: Option<PathBuf>,
    /// The client key (client.key) to encrypt it with (default: none;
    /// give it or --public-key).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// The transciphering key file to write (send it once; `hearth
    /// combine NAME=FILE` gives it to a program as its input NAME).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// The 16 bytes of a key file.
fn read_key(path: &Path) -> Result<[u8; BLOCK], Error> {
    let key = std::fs::read(path).map_err(io(path))?;
    key.as_slice().try_into().map_err(|_| {
        Error::Config(format!(
            "--symmetric-key {}: {} bytes, a key is 16",
            path.display(),
            key.len()
        ))
    })
}

/// `hearth seal-key`.
pub fn run_key(args: KeyArgs) -> Result<(), Error> {
    let key = read_key(&args.symmetric_key)?;
    let by = crate::encrypt::Encryptor::load(args.key.as_deref(), args.public_key.as_deref())?;
    crate::describe::secure(by.params())?;
    let tkey = by.transcipher_key(args.cipher.of_key(), &key)?;
    tkey.save(&args.out)?;
    println!(
        "{} key encrypted {} {} to {} ({} bytes)",
        tkey.cipher(),
        by.named(),
        by.key_id(),
        args.out.display(),
        crate::describe::file_len(&args.out)
    );
    Ok(())
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| {
        FileError::Io {
            path: path.to_path_buf(),
            source,
        }
        .into()
    }
}

/// 32 hex digits as 16 bytes.
fn parse_nonce(hex: &str) -> Result<[u8; BLOCK], Error> {
    if hex.len() != 2 * BLOCK || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::Config(format!(
            "--nonce {hex:?}: expected 32 hex digits (16 bytes)"
        )));
    }
    Ok(u128::from_str_radix(hex, 16)
        .expect("32 hex digits fit 128 bits")
        .to_be_bytes())
}

/// `hearth seal`.
pub fn run(args: Args) -> Result<(), Error> {
    let key = read_key(&args.symmetric_key)?;
    let nonce = parse_nonce(&args.nonce)?;
    let len = std::fs::metadata(&args.input)
        .map_err(io(&args.input))?
        .len();
    if len > MAX_BYTES {
        return Err(Error::TooLarge {
            what: format!("--in {}", args.input.display()),
            size: len,
            limit: MAX_BYTES,
        });
    }
    let mut data = std::fs::read(&args.input).map_err(io(&args.input))?;
    let (name, nonce_value, next) = match args.cipher {
        Cipher::Aes => {
            AesCtr::new(&key, &nonce).apply(&mut data);
            let blocks = data.len().div_ceil(BLOCK) as u64;
            let next = counter_after(&nonce, blocks);
            let hex: String = next.iter().map(|b| format!("{b:02x}")).collect();
            (
                "AES-128-CTR",
                u128::from_be_bytes(nonce),
                format!("; the next message starts at counter block {hex}"),
            )
        }
        Cipher::Kreyvium => {
            Kreyvium::new(&key, &nonce).apply(&mut data);
            (
                "Kreyvium",
                u128::from_le_bytes(nonce),
                "; the next message needs a new IV".to_string(),
            )
        }
    };
    std::fs::write(&args.out, &data).map_err(io(&args.out))?;
    if let Some(json) = &args.values_out {
        let sealed = BigInt::from_bytes_le(num_bigint::Sign::Plus, &data);
        let values = serde_json::json!({
            &args.names[0]: nonce_value.to_string(),
            &args.names[1]: sealed.to_string(),
        });
        std::fs::write(json, values.to_string() + "\n").map_err(io(json))?;
    }
    println!(
        "{} bytes sealed with {name} to {}{next}",
        data.len(),
        args.out.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_32_hex_digits() {
        assert_eq!(
            parse_nonce("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff").unwrap()[15],
            0xff
        );
        for bad in ["f0", "zz".repeat(16).as_str(), &"é".repeat(16)] {
            assert!(parse_nonce(bad).is_err(), "{bad}");
        }
    }
}
