//! The `hearth` command: keys, files, the deployment commands, the demo,
//! the applications, the emulator and the compute server. Each command is
//! in the module named for it; what they share is the `hearth_cli`
//! library (options, backends, progress). The benchmarks are the
//! `hearth-bench` command (`hearth bench` runs it).

mod app;
mod asc_table;
mod bench;
mod cli_reference;
mod combine;
mod decrypt;
mod demo;
mod describe;
mod emu;
mod emu_client;
mod emu_serve;
mod encrypt;
mod fetch;
mod info;
mod inspect;
mod job_status;
mod keygen;
mod remote;
mod run;
mod seal;
mod server;
mod submit;
mod values;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hearth_cli::cluster;
use hearth_cli::options::Threads;

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
    /// Generate a client key, its public key (for data owners to encrypt
    /// with; not on GATES_128) and a server key.
    Keygen(keygen::Args),
    /// Describe a hearth key, ciphertext, program or bundle file, and check
    /// that it reads whole.
    Info(info::Args),
    /// Encrypt clear values for a program's inputs into a bundle, with the
    /// client key or the public key (client side, or a data owner: `--only`
    /// encrypts one's own inputs).
    Encrypt(encrypt::Args),
    /// Join the bundles of several data owners (`encrypt --only`) into
    /// one bundle for the program, in the order of its inputs.
    Combine(combine::Args),
    /// Seal bytes with AES-128-CTR or Kreyvium on the data owner's side
    /// (transciphering): sent in the clear (`encrypt --clear`), turned
    /// into encrypted words by the program.
    Seal(seal::Args),
    /// Encrypt a device's symmetric key once for transciphering, with the
    /// public key or the client key: a transciphering key file.
    SealKey(seal::KeyArgs),
    /// Run a program on a bundle of encrypted inputs (server side: server key only).
    Run(run::Args),
    /// Decrypt a bundle to clear values (client side).
    Decrypt(decrypt::Args),
    /// Show a program file's inputs, outputs, #PBS, depth and level widths.
    Inspect(inspect::Args),
    /// Generate keys, run a small encrypted computation, check it against the clear backend.
    Demo(demo::Args),
    /// Applications on real data: encrypt, run with progress, decrypt, compare with the clear model.
    App {
        #[command(subcommand)]
        which: app::App,
    },
    /// The benchmarks: runs `hearth-bench` with these arguments (built with
    /// `cargo build --release -p hearth-bench`).
    #[command(disable_help_flag = true)]
    Bench(bench::Args),
    /// The A32 emulator on encrypted registers and memory: runs programs
    /// here, or for a remote key owner over TCP (`emu serve`, `emu client`).
    Emu {
        #[command(subcommand)]
        which: emu::Emu,
    },
    /// The compute server: runs any program file on bundles for its
    /// tenants' server keys, over HTTP or HTTPS with API tokens (jobs
    /// admitted by cost, queued, kept on disk until fetched or expired).
    // Boxed: its many limits would make every command's value as large.
    Server(Box<server::Args>),
    /// Submit a program and a bundle to a `hearth server` (uploading the
    /// server key first if needed); prints the job id.
    Submit(submit::Args),
    /// Show a job's status on a `hearth server` (JSON).
    JobStatus(job_status::Args),
    /// Fetch a job's result bundle from a `hearth server` (optionally
    /// waiting for it), then forget the job there.
    Fetch(fetch::Args),
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
    AscTable(asc_table::Args),
    /// Print this command's reference in Markdown: every command with its
    /// arguments and their help (docs/reference/cli.md, below its
    /// introduction).
    CliReference(cli_reference::Args),
}

impl Command {
    /// The thread option of a command run with `--backend mpi`.
    fn mpi_threads(&self) -> Option<Threads> {
        match self {
            Command::Run(args) => args.mpi_threads(),
            Command::Demo(args) => args.mpi_threads(),
            Command::App { which } => which.mpi_threads(),
            Command::Server(args) => args.mpi_threads(),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    cluster::main(cli.command.mpi_threads(), || match cli.command {
        Command::Keygen(args) => keygen::run(args),
        Command::Info(args) => info::run(args),
        Command::Encrypt(args) => encrypt::run(args),
        Command::Combine(args) => combine::run(args),
        Command::Seal(args) => seal::run(args),
        Command::SealKey(args) => seal::run_key(args),
        Command::Run(args) => run::run(args),
        Command::Decrypt(args) => decrypt::run(args),
        Command::Inspect(args) => inspect::run(args),
        Command::Demo(args) => demo::run(args),
        Command::App { which } => app::run(which),
        Command::Bench(args) => bench::run(args),
        Command::Emu { which } => emu::run(which),
        Command::Server(args) => server::run(*args),
        Command::Submit(args) => submit::run(args),
        Command::JobStatus(args) => job_status::run(args),
        Command::Fetch(args) => fetch::run(args),
        Command::Tool {
            which: Tool::AscTable(args),
        } => asc_table::run(args),
        Command::Tool {
            which: Tool::CliReference(args),
        } => cli_reference::run(args, <Cli as clap::CommandFactory>::command()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// The whole tree as compiled (`--backend gpu` and `mpi` are in every
    /// build): every command and option has help, in the one vocabulary.
    #[test]
    fn every_option_keeps_the_vocabulary() {
        hearth_cli::help::assert_vocabulary(&Cli::command());
    }

    #[test]
    fn shared_options_parse_once_for_every_command() {
        let cli = Cli::try_parse_from([
            "hearth",
            "run",
            "--server-key",
            "k",
            "--program",
            "p",
            "--bundle",
            "b",
            "--out",
            "o",
            "--threads",
            "3",
            "--max-memory",
            "2GiB",
            "--backend",
            "gpu",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("parsed as another command");
        };
        assert!(args.mpi_threads().is_none());
        for args in [
            &[
                "hearth",
                "keygen",
                "--params",
                "INSECURE_TEST_DIGITS",
                "--out",
                "k",
            ][..],
            &["hearth", "demo", "--threads", "x"],
            &["hearth", "run", "--max-memory", "8 parsecs"],
            &[
                "hearth", "fetch", "--url", "http://h", "--job", "x", "--out", "o", "--poll",
                "1 day",
            ],
        ] {
            let e = Cli::try_parse_from(args)
                .err()
                .expect("refused")
                .to_string();
            assert!(e.contains("--"), "{e}");
        }
    }

    #[test]
    fn bench_passes_every_argument_on() {
        let cli =
            Cli::try_parse_from(["hearth", "bench", "ops", "--family", "words", "--help"]).unwrap();
        let Command::Bench(args) = cli.command else {
            panic!("parsed as another command");
        };
        let want: Vec<std::ffi::OsString> = ["ops", "--family", "words", "--help"]
            .iter()
            .map(Into::into)
            .collect();
        assert_eq!(args.args, want);
    }
}
