//! The `hearth` command: key generation, file inspection, a demo, benchmarks.

mod apps;
mod bench;
mod bits_ops;
mod demo;
mod emu;
mod emu_bench;
mod engine;
mod fuzz;
mod kernels_bench;
mod keygen;
mod ops;
mod params_bench;
mod radix_study;
mod report;
#[cfg(feature = "tfhe-pbs-stats")]
mod tfhe_pbs;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "hearth",
    version,
    about = "Exact integer arithmetic over TFHE-encrypted data"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a client key and a server key.
    Keygen {
        /// Parameter set: DIGITS_128, DIGITS_KS32_128 (digits, faster on CPUs), GATES_128 or BITS_128.
        #[arg(long, default_value = "DIGITS_128")]
        params: String,
        /// Directory to write client.key (mode 0600) and server.key into.
        #[arg(long)]
        out: PathBuf,
    },
    /// Describe a hearth key or ciphertext file.
    Info { file: PathBuf },
    /// Generate keys, run a small encrypted computation, check it against the clear backend.
    Demo {
        /// Worker threads (default: HEARTH_THREADS or all cores).
        #[arg(long, env = "HEARTH_THREADS")]
        threads: Option<usize>,
        #[arg(long, value_enum, default_value = "cpu")]
        backend: engine::Engine,
    },
    /// Applications on real data: encrypt, run with progress, decrypt, compare with the clear model.
    App {
        #[command(subcommand)]
        which: apps::App,
    },
    /// Benchmarks (markdown table on stdout; --json FILE also writes JSON, `-` for stdout).
    Bench {
        #[command(subcommand)]
        which: bench::Which,
    },
    /// The A32 emulator on encrypted registers and memory.
    Emu {
        #[command(subcommand)]
        which: emu::Emu,
    },
    /// Serve A32 programs for remote key owners (holds only the server key).
    Serve(emu::ServeArgs),
    /// Run an A32 program on a `hearth serve` server, answering its branch
    /// queries with the secret key.
    Client(emu::ClientArgs),
    /// Maintenance tools.
    Tool {
        #[command(subcommand)]
        which: Tool,
    },
}

#[derive(Subcommand)]
enum Tool {
    /// Regenerate the addition-subtraction chain table (ASC*, 12-bit windows)
    /// by exhaustive search; the binary embeds the same table.
    AscTable {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only check that the search reproduces the embedded table.
        #[arg(long)]
        check: bool,
    },
    /// Check random programs of the typed integer API against BigInt
    /// arithmetic (clear backend), or encrypted against the clear backend.
    FuzzPrograms(fuzz::FuzzArgs),
}

fn asc_table(out: Option<PathBuf>, check: bool) -> Result<(), hearth::Error> {
    let text = hearth::digits::asc::table_text();
    if check {
        if text != hearth::digits::asc::embedded_text() {
            return Err(hearth::Error::Config(
                "the search does not reproduce the embedded table".into(),
            ));
        }
        println!(
            "the search reproduces the embedded table ({} lines)",
            text.lines().count()
        );
        return Ok(());
    }
    match out {
        Some(path) => std::fs::write(&path, text)
            .map_err(|source| hearth::FileError::Io { path, source }.into()),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Keygen { params, out } => keygen::keygen(&params, &out),
        Command::Info { file } => keygen::info(&file),
        Command::Demo { threads, backend } => demo::demo(threads, backend),
        Command::Bench { which } => bench::run(which),
        Command::App { which } => apps::run(which),
        Command::Emu { which } => emu::run(which),
        Command::Serve(args) => emu::serve(args),
        Command::Client(args) => emu::client(args),
        Command::Tool {
            which: Tool::AscTable { out, check },
        } => asc_table(out, check),
        Command::Tool {
            which: Tool::FuzzPrograms(args),
        } => fuzz::fuzz_programs(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
