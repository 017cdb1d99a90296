//! `hearth bench ARGS`: the benchmarks live in their own binary,
//! `hearth-bench` (crates/hearth-bench, which alone builds tfhe-rs's
//! integer API for the comparisons); this runs it with the same arguments
//! when it sits next to `hearth` or on the PATH.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use hearth::Error;

/// `hearth bench`.
#[derive(clap::Args)]
pub struct Args {
    /// The benchmark and its options, as `hearth-bench` takes them (`hearth
    /// bench --help` lists them when hearth-bench is built).
    #[arg(
        value_name = "ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub args: Vec<OsString>,
}

/// Where `hearth-bench` is: next to this executable, else on the PATH.
fn find() -> Option<PathBuf> {
    let name = format!("hearth-bench{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.join(&name)));
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(&name));
    beside.into_iter().chain(on_path).find(|p| p.is_file())
}

/// `hearth bench ARGS`: `hearth-bench ARGS`, with its exit status.
pub fn run(args: Args) -> Result<(), Error> {
    let Some(bench) = find() else {
        return Err(Error::Config(
            "the benchmarks are the hearth-bench command: run them with `cargo run --release \
             -p hearth-bench -- ARGS`, or build it next to hearth (`cargo build --release -p \
             hearth-bench`)"
                .into(),
        ));
    };
    let status = Command::new(&bench)
        .args(&args.args)
        .status()
        .map_err(|e| Error::Config(format!("{}: {e}", bench.display())))?;
    match status.code() {
        Some(0) => Ok(()),
        code => std::process::exit(code.unwrap_or(1)),
    }
}
