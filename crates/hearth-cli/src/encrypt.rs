//! `hearth encrypt`: clear values for a program's inputs into a bundle,
//! under the client key (the client side).

use std::path::PathBuf;

use hearth::{ClientKey, Error};

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
pub struct Args {
    /// The client key (client.key).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The program file the values are for (its signature names the inputs).
    #[arg(long, value_name = "FILE")]
    program: PathBuf,
    /// A JSON object of inputs by name: a number (or decimal string) per
    /// scalar, nested arrays per tensor (default: none; every input then
    /// comes from --input).
    #[arg(long, value_name = "FILE.json")]
    values: Option<PathBuf>,
    /// One input from its own file: NAME=FILE.npy (int64, the input's
    /// dims), NAME=FILE.csv (a header line, then rows) or NAME=FILE.json.
    /// Repeat for each input (default: none).
    #[arg(long = "input", value_name = "NAME=FILE", value_parser = parse_named_file)]
    inputs: Vec<(String, PathBuf)>,
    /// The bundle to write.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

/// `hearth encrypt`.
pub fn run(args: Args) -> Result<(), Error> {
    let (key, program, values, inputs, out) = (
        &args.key,
        &args.program,
        args.values.as_deref(),
        &args.inputs,
        &args.out,
    );
    let client = ClientKey::load(key)?;
    secure(client.params())?;
    let prog = load_program(program)?;
    let sig = &prog.signature().inputs;
    let clear = crate::values::read_inputs(sig, values, inputs)?;
    let bundle = client.encrypt_bundle(sig, &clear)?;
    prog.check_bundle(&bundle)?;
    bundle.save(out)?;
    println!(
        "{} values of {} inputs encrypted under key {} to {} ({} bytes)",
        clear.iter().map(Vec::len).sum::<usize>(),
        sig.len(),
        client.key_id(),
        out.display(),
        file_len(out)
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_files_parse() {
        assert_eq!(
            parse_named_file("x=a.npy"),
            Ok(("x".into(), PathBuf::from("a.npy")))
        );
        assert!(parse_named_file("x").is_err());
        assert!(parse_named_file("=a").is_err());
    }
}
