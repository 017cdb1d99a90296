//! `hearth encrypt`: clear values for a program's inputs into a bundle,
//! under the client key or with its public key (the client side, or a
//! data owner who holds only public.key and the program file); with
//! `--only`, one data owner's run of the inputs, for `hearth combine`.

use std::path::{Path, PathBuf};

use hearth::formats::param::{names, run_of};
use hearth::formats::{Cipher, TranscipherKey};
use hearth::{Bundle, ClientKey, Error, FileError, KeyId, Param, ParameterSet, PublicKey};
use num_bigint::BigInt;

use crate::describe::{file_len, load_program, secure};

/// `NAME=FILE` of `--input`.
fn parse_named_file(s: &str) -> Result<(String, PathBuf), String> {
    let (name, file) = s
        .split_once('=')
        .ok_or_else(|| format!("expected NAME=FILE, found {s:?}"))?;
    if name.is_empty() || file.is_empty() {
        return Err(format!("expected NAME=FILE, found {s:?}"));
    }
    Ok((name.to_string(), PathBuf::from(file)))
}

/// `hearth encrypt`.
#[derive(clap::Args)]
#[command(group = clap::ArgGroup::new("encryption key").required(true).args(["key", "public_key"]))]
pub struct Args {
    /// The client key (client.key) to encrypt with (default: none; give
    /// it or --public-key, not both).
    #[arg(long, value_name = "FILE")]
    key: Option<PathBuf>,
    /// The public key (public.key from `hearth keygen`) to encrypt with:
    /// a data owner needs only it and the program file, and cannot
    /// decrypt (default: none; give it or --key, not both).
    #[arg(long, value_name = "FILE")]
    public_key: Option<PathBuf>,
    /// The program file the values are for (its signature names the inputs).
    #[arg(long, value_name = "FILE")]
    program: PathBuf,
    /// Encrypt only these inputs, comma-separated: a run of consecutive
    /// inputs in the program's order (one data owner's part; join the
    /// parts with `hearth combine`). Default: every input.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    only: Vec<String>,
    /// Send these inputs in the clear, comma-separated: public values such
    /// as a symmetric ciphertext and its counter or IV (transciphering),
    /// one value's bytes each; the server reads them as trivial
    /// ciphertexts. Default: none (every input encrypted).
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    clear: Vec<String>,
    /// A JSON object of inputs by name: a number (or decimal string) per
    /// scalar, nested arrays per tensor (default: none; every input then
    /// comes from --input).
    #[arg(long, value_name = "FILE.json")]
    values: Option<PathBuf>,
    /// One input from its own file: NAME=FILE.npy (int64, the input's
    /// dims), NAME=FILE.csv (a header line, then rows), NAME=FILE.json or
    /// NAME=FILE.bin (raw bytes: each value little-endian in its type's
    /// bytes, as `hearth seal` writes sealed bytes). Repeat for each input
    /// (default: none).
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_named_file)]
    inputs: Vec<(String, PathBuf)>,
    /// The bundle to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// The key `hearth encrypt` (and `hearth seal-key`) encrypts with.
pub(crate) enum Encryptor {
    Client(ClientKey),
    Public(PublicKey),
}

impl Encryptor {
    /// The key of `--key` or `--public-key`; a file of the other kind is
    /// refused, naming the option it belongs to.
    pub(crate) fn load(key: Option<&Path>, public_key: Option<&Path>) -> Result<Self, Error> {
        match (key, public_key) {
            (Some(path), None) => ClientKey::load(path)
                .map(Encryptor::Client)
                .map_err(|e| hint(e, "public key", "--public-key")),
            (None, Some(path)) => PublicKey::load(path)
                .map(Encryptor::Public)
                .map_err(|e| hint(e, "client key", "--key")),
            // clap refuses both and neither; kept for callers of `run`.
            _ => Err(Error::Config(
                "give the client key (--key) or the public key (--public-key), not both".into(),
            )),
        }
    }

    pub(crate) fn params(&self) -> &'static ParameterSet {
        match self {
            Encryptor::Client(k) => k.params(),
            Encryptor::Public(k) => k.params(),
        }
    }

    pub(crate) fn key_id(&self) -> KeyId {
        match self {
            Encryptor::Client(k) => k.key_id(),
            Encryptor::Public(k) => k.key_id(),
        }
    }

    fn encrypt_bundle(&self, params: &[Param], values: &[Vec<BigInt>]) -> Result<Bundle, Error> {
        match self {
            Encryptor::Client(k) => k.encrypt_bundle(params, values),
            Encryptor::Public(k) => k.encrypt_bundle(params, values),
        }
    }

    /// `key` for `cipher`, encrypted once (a transciphering key).
    pub(crate) fn transcipher_key(
        &self,
        cipher: Cipher,
        key: &[u8; 16],
    ) -> Result<TranscipherKey, Error> {
        match self {
            Encryptor::Client(k) => k.transcipher_key(cipher, key),
            Encryptor::Public(k) => k.transcipher_key(cipher, key),
        }
    }

    /// How the output line names the key.
    pub(crate) fn named(&self) -> &'static str {
        match self {
            Encryptor::Client(_) => "under key",
            Encryptor::Public(_) => "with the public key of key",
        }
    }
}

/// A file of the kind `found` given to the option for the other kind:
/// the error says which option takes it.
fn hint(e: Error, found: &str, option: &str) -> Error {
    match e {
        Error::File(FileError::WrongKind {
            ref path,
            found: kind,
            ..
        }) if kind == found => Error::Config(format!(
            "{} holds a {found}: give it with {option}",
            path.display()
        )),
        e => e,
    }
}

/// The inputs `--only` names, as the run of `sig` they must form: every
/// input when none is named.
fn select<'a>(sig: &'a [Param], only: &[String]) -> Result<&'a [Param], Error> {
    if only.is_empty() {
        return Ok(sig);
    }
    run_of(sig, only).map_err(|e| {
        let why = match e {
            Error::Dimensions(why) => why,
            e => e.to_string(),
        };
        Error::Config(format!("--only {}: {why}", only.join(",")))
    })
}

/// `hearth encrypt`.
pub fn run(args: Args) -> Result<(), Error> {
    let key = Encryptor::load(args.key.as_deref(), args.public_key.as_deref())?;
    secure(key.params())?;
    let prog = load_program(&args.program)?;
    let program_params = prog.circuit().params();
    if key.params().id != program_params {
        return Err(Error::ParamsMismatch {
            expected: program_params,
            found: key.params().id,
        });
    }
    let sig = &prog.signature().inputs;
    let chosen = select(sig, &args.only)?;
    for (name, _) in &args.inputs {
        if sig.iter().any(|p| &p.name == name) && !chosen.iter().any(|p| &p.name == name) {
            return Err(Error::Config(format!(
                "--input {name}=...: input {name} is not one of --only {}",
                args.only.join(",")
            )));
        }
    }
    for name in &args.clear {
        if !chosen.iter().any(|p| &p.name == name) {
            return Err(Error::Config(format!(
                "--clear {name}: not one of the inputs encrypted here ({})",
                names(chosen)
            )));
        }
    }
    let clear = crate::values::read_inputs(chosen, args.values.as_deref(), &args.inputs)?;
    let bundle = Bundle::with_clear_values(
        key.params().id,
        key.key_id(),
        chosen,
        &clear,
        &args.clear,
        |ps, vs| key.encrypt_bundle(ps, vs),
    )?;
    if chosen.len() == sig.len() {
        prog.check_bundle(&bundle)?;
    }
    let out = &args.out;
    bundle.save(out)?;
    let count = clear.iter().map(Vec::len).sum::<usize>();
    let what = if chosen.len() == sig.len() {
        format!("{} inputs", sig.len())
    } else {
        format!(
            "input{} {} (of {})",
            if chosen.len() == 1 { "" } else { "s" },
            names(chosen),
            names(sig)
        )
    };
    let clear_note = if args.clear.is_empty() {
        String::new()
    } else {
        format!(", {} in the clear", args.clear.join(","))
    };
    println!(
        "{count} values of {what} encrypted{clear_note} {} {} to {} ({} bytes)",
        key.named(),
        key.key_id(),
        out.display(),
        file_len(out)
    );
    if chosen.len() != sig.len() {
        println!(
            "join the owners' bundles in the program's order: hearth combine --out FILE BUNDLE..."
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth::Shape;

    #[test]
    fn named_files_parse() {
        assert_eq!(
            parse_named_file("x=a.npy"),
            Ok(("x".into(), PathBuf::from("a.npy")))
        );
        assert!(parse_named_file("x").is_err());
        assert!(parse_named_file("=a").is_err());
    }

    /// `--only` takes a run of consecutive inputs in order, and says why
    /// anything else is refused.
    #[test]
    fn only_selects_a_run_of_the_inputs() {
        let sig: Vec<Param> = ["a", "b", "c", "d"]
            .iter()
            .map(|n| Param {
                name: n.to_string(),
                shape: Shape::Int { digits: 4 },
                dims: vec![],
            })
            .collect();
        let only = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            select(&sig, &names).map(names_of)
        };
        fn names_of(ps: &[Param]) -> Vec<String> {
            ps.iter().map(|p| p.name.clone()).collect()
        }
        assert_eq!(only(&[]).unwrap(), ["a", "b", "c", "d"]);
        assert_eq!(only(&["c"]).unwrap(), ["c"]);
        assert_eq!(only(&["b", "c", "d"]).unwrap(), ["b", "c", "d"]);
        for (bad, says) in [
            (
                &["c", "b"][..],
                "consecutive and in the program's order (a, b, c, d)",
            ),
            (&["a", "c"], "consecutive"),
            (
                &["e"],
                "the program has no input e (its inputs: a, b, c, d)",
            ),
            (&["b", "b"], "consecutive"),
            (&["b", ""], "consecutive"),
            (&[""], "no input  (its inputs"),
        ] {
            let e = only(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
