//! The `hearth` command: key generation, file inspection, a demo, benchmarks.

mod apps;
mod bench;
mod bits_ops;
mod cluster;
mod compute;
mod demo;
mod deploy;
mod emu;
mod emu_bench;
mod engine;
mod fuzz;
mod kernels_bench;
mod keygen;
mod ops;
mod options;
mod params_bench;
mod plot;
mod radix_study;
mod report;
mod scale_bench;
#[cfg(feature = "tfhe-pbs-stats")]
mod tfhe_pbs;
mod values;

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
        #[command(flatten)]
        params: options::ParamsArg,
        /// Directory to write client.key (mode 0600) and server.key into.
        #[arg(long)]
        out: PathBuf,
        /// Write server.key compressed: tfhe-rs seeded keys, which store
        /// ciphertext bodies and the seeds of their masks (DIGITS_128
        /// 30 MB instead of 135 MB, GATES_128 13 MB instead of 82 MB).
        /// Every command that reads server.key decompresses it on load
        /// (about 0.1 s more on 2 cores). Default: uncompressed, which
        /// loads fastest.
        #[arg(long)]
        compressed: bool,
    },
    /// Describe a hearth key or ciphertext file.
    Info {
        /// The file: client.key, server.key (compressed or not), a
        /// ciphertext file, a program or a bundle.
        file: PathBuf,
    },
    /// Encrypt clear values for a program's inputs into a bundle (client side).
    Encrypt {
        /// The client key (client.key).
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// The program file the values are for (its signature names the inputs).
        #[arg(long, value_name = "FILE")]
        program: PathBuf,
        /// A JSON object of inputs by name: a number (or decimal string) per
        /// scalar, nested arrays per tensor.
        #[arg(long, value_name = "FILE.json")]
        values: Option<PathBuf>,
        /// One input from its own file: NAME=FILE.npy (int64, the input's
        /// dims), NAME=FILE.csv (a header line, then rows) or NAME=FILE.json.
        /// Repeat for each input.
        #[arg(long = "input", value_name = "NAME=FILE", value_parser = deploy::parse_named_file)]
        inputs: Vec<(String, PathBuf)>,
        /// The bundle to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Run a program on a bundle of encrypted inputs (server side: server key only).
    Run {
        /// The server key (server.key, compressed or not).
        #[arg(long, value_name = "FILE")]
        server_key: PathBuf,
        /// The program file.
        #[arg(long, value_name = "FILE")]
        program: PathBuf,
        /// The bundle of encrypted inputs (from `hearth encrypt`).
        #[arg(long, value_name = "FILE")]
        bundle: PathBuf,
        /// The bundle of encrypted outputs to write.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        #[command(flatten)]
        threads: options::Threads,
        /// Where the circuit runs.
        #[arg(long, value_enum, default_value = "cpu")]
        backend: engine::Engine,
        /// Refuse to start when the estimated peak memory exceeds this size
        /// (bytes, or with a unit: 512MiB, 8GiB).
        #[arg(long, value_name = "SIZE", value_parser = deploy::parse_size)]
        memory_limit: Option<u64>,
    },
    /// Decrypt a bundle to clear values (client side).
    Decrypt {
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
        /// With --out FOLDER: npy or csv files (int64 values only).
        #[arg(long, value_name = "FORMAT", value_parser = ["json", "npy", "csv"], default_value = "json")]
        format: String,
    },
    /// Show a program file's inputs, outputs, #PBS, depth and level widths.
    Inspect {
        /// The program file.
        program: PathBuf,
        #[command(flatten)]
        threads: options::Threads,
    },
    /// Generate keys, run a small encrypted computation, check it against the clear backend.
    Demo {
        #[command(flatten)]
        threads: options::Threads,
        /// Where the encrypted circuits run.
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
    /// The compute server: runs any program file on bundles for registered
    /// server keys, over HTTP (jobs admitted by cost, queued, kept on disk
    /// until fetched).
    Server(compute::ServerArgs),
    /// Submit a program and a bundle to a `hearth server` (uploading the
    /// server key first if needed); prints the job id.
    Submit(compute::SubmitArgs),
    /// Show a job's status on a `hearth server` (JSON).
    JobStatus(compute::StatusArgs),
    /// Fetch a job's result bundle from a `hearth server` (optionally
    /// waiting for it), then forget the job there.
    Fetch(compute::FetchArgs),
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

impl Command {
    /// The thread option of a command run with `--backend mpi`.
    fn mpi_threads(&self) -> Option<options::Threads> {
        use engine::Engine::Mpi;
        match self {
            Command::Run {
                backend: Mpi,
                threads,
                ..
            }
            | Command::Demo {
                backend: Mpi,
                threads,
            }
            | Command::Bench {
                which:
                    bench::Which::Engine {
                        backend: Mpi,
                        threads,
                        ..
                    },
            } => Some(*threads),
            Command::App { which } => which.mpi_threads(),
            _ => None,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Under `--backend mpi` every rank runs this command: rank 0 goes on,
    // the others serve it and stop here.
    if let Some(threads) = cli.command.mpi_threads() {
        match cluster::start(threads) {
            Ok(true) => {}
            Ok(false) => return ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("hearth: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let result = match cli.command {
        Command::Keygen {
            params,
            out,
            compressed,
        } => keygen::keygen(params.params, &out, compressed),
        Command::Info { file } => keygen::info(&file),
        Command::Encrypt {
            key,
            program,
            values,
            inputs,
            out,
        } => deploy::encrypt(&key, &program, values.as_deref(), &inputs, &out),
        Command::Run {
            server_key,
            program,
            bundle,
            out,
            threads,
            backend,
            memory_limit,
        } => deploy::run(
            &server_key,
            &program,
            &bundle,
            &out,
            threads,
            backend,
            memory_limit,
        ),
        Command::Decrypt {
            key,
            bundle,
            out,
            format,
        } => {
            let out = match (out, format.as_str()) {
                (None, "json") => Ok(deploy::DecryptOut::Stdout),
                (Some(p), "json") => Ok(deploy::DecryptOut::Json(p)),
                (Some(p), "npy") => Ok(deploy::DecryptOut::Tables(p, "npy")),
                (Some(p), _) => Ok(deploy::DecryptOut::Tables(p, "csv")),
                (None, f) => Err(hearth::Error::Config(format!(
                    "--format {f} writes files: give --out FOLDER"
                ))),
            };
            out.and_then(|out| deploy::decrypt(&key, &bundle, out))
        }
        Command::Inspect { program, threads } => deploy::inspect(&program, threads),
        Command::Demo { threads, backend } => demo::demo(threads, backend),
        Command::Bench { which } => bench::run(which),
        Command::App { which } => apps::run(which),
        Command::Emu { which } => emu::run(which),
        Command::Serve(args) => emu::serve(args),
        Command::Client(args) => emu::client(args),
        Command::Server(args) => compute::server(args),
        Command::Submit(args) => compute::submit(args),
        Command::JobStatus(args) => compute::status(args),
        Command::Fetch(args) => compute::fetch(args),
        Command::Tool {
            which: Tool::AscTable { out, check },
        } => asc_table(out, check),
        Command::Tool {
            which: Tool::FuzzPrograms(args),
        } => fuzz::fuzz_programs(args),
    };
    cluster::end(&result);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every command under `cmd` (itself included) without an about text,
    /// and every argument without a help text (clap's own `--help` and
    /// `--version` aside), as `hearth bench ops --plot`-like paths.
    fn missing_help(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
        if cmd.get_about().is_none() && cmd.get_long_about().is_none() {
            out.push(format!("{path} (command)"));
        }
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            if id == "help" || id == "version" {
                continue;
            }
            if arg.get_help().is_none() && arg.get_long_help().is_none() {
                let name = match arg.get_long() {
                    Some(long) => format!("--{long}"),
                    None => format!("<{id}>"),
                };
                out.push(format!("{path} {name}"));
            }
        }
        for sub in cmd.get_subcommands() {
            missing_help(sub, &format!("{path} {}", sub.get_name()), out);
        }
    }

    /// The whole tree as compiled: commands behind features (`bench
    /// tfhe-pbs` is in every build, `--backend gpu` too) are covered by
    /// running this test in a build with those features.
    #[test]
    fn every_command_and_option_has_help() {
        Cli::command().debug_assert();
        let mut cmd = Cli::command();
        cmd.build();
        let mut missing = Vec::new();
        missing_help(&cmd, "hearth", &mut missing);
        assert!(
            missing.is_empty(),
            "without help text:\n  {}",
            missing.join("\n  ")
        );
    }

    #[test]
    fn the_walk_finds_missing_help() {
        let cmd = clap::Command::new("x")
            .arg(clap::Arg::new("bare").long("bare"))
            .subcommand(
                clap::Command::new("sub")
                    .about("a command")
                    .arg(clap::Arg::new("file")),
            );
        let mut missing = Vec::new();
        missing_help(&cmd, "x", &mut missing);
        assert_eq!(missing, ["x (command)", "x --bare", "x sub <file>"]);
    }

    #[test]
    fn shared_options_parse_once_for_every_command() {
        let cli = Cli::try_parse_from([
            "hearth",
            "bench",
            "ops",
            "--threads",
            "3",
            "--params",
            "digits_ks32_128",
            "--json",
            "-",
            "--plot",
            "ops.svg",
        ])
        .unwrap();
        let Command::Bench {
            which:
                bench::Which::Ops {
                    threads,
                    params,
                    json,
                    plot,
                    ..
                },
        } = cli.command
        else {
            panic!("parsed as another command");
        };
        assert_eq!(threads.get(), Some(3));
        assert_eq!(params.params.name, "DIGITS_KS32_128");
        assert_eq!(json.json, Some(PathBuf::from("-")));
        assert_eq!(plot.plot, Some(PathBuf::from("ops.svg")));
        for args in [
            &[
                "hearth",
                "keygen",
                "--params",
                "INSECURE_TEST_DIGITS",
                "--out",
                "k",
            ][..],
            &["hearth", "bench", "noise", "--params", "insecure_test_bits"],
        ] {
            let e = Cli::try_parse_from(args)
                .err()
                .expect("refused")
                .to_string();
            assert!(e.contains("INSECURE") && e.contains("--params"), "{e}");
        }
        let e = Cli::try_parse_from(["hearth", "bench", "pbs", "--plot", "pbs.png"])
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("*.svg"), "{e}");
    }
}
