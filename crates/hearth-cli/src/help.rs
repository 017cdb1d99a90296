//! The one vocabulary of the commands' options, checked: `check` walks a
//! whole clap command tree (`hearth`, `hearth-bench`) and lists every
//! command or option that has no help text, every value name outside
//! [`VALUE_NAMES`], every option whose help does not give its default, and
//! every shared option ([`SHARED`]) whose value name or values differ from
//! the table. Each binary runs it in a unit test.

/// The value names options may use, and what each means.
pub const VALUE_NAMES: &[(&str, &str)] = &[
    ("N", "a count"),
    ("SIZE", "bytes, or with a unit: 512MiB, 8GiB"),
    (
        "DURATION",
        "seconds, or with a unit: 400us, 500ms, 300s, 5min, 2h, 7d",
    ),
    ("NAME", "a name"),
    ("HEX", "hexadecimal digits"),
    ("FILE", "a file"),
    ("FILE.json", "a JSON file"),
    ("FILE.svg", "an SVG file"),
    ("DIR", "a folder"),
    ("PATH", "a file or a folder"),
    ("URL", "an http:// or https:// URL"),
    (
        "STORE",
        "where a server keeps its state: files, or a fleet's postgres:// URL",
    ),
    ("ORIGIN", "a web page's origin: scheme://host[:port]"),
    ("HOST:PORT", "an address"),
    ("ID", "a job id"),
    (
        "TOKEN-ID",
        "an API token's id (the 16 hex digits after `hth_`)",
    ),
    ("TOKEN", "an API token (from `hearth server token add`)"),
    ("SEED", "a random seed"),
    ("BITS", "operand widths in bits"),
    ("BACKEND", "where circuits run"),
    ("FAMILY", "an integer family"),
    ("FORMAT", "an output format"),
    ("MODE", "how a command runs"),
    ("CASE", "a benchmark case"),
    ("CIRCUIT", "a circuit's name or a program file"),
    ("KIND", "which inputs"),
    ("rN=VALUE", "a register and its value"),
    ("NAME=FILE", "an input and its file"),
];

/// An option several commands share: its value name, the values it may
/// take (empty: any), and a phrase its help must contain.
pub struct Shared {
    /// The long name, without `--`.
    pub long: &'static str,
    /// Its value name.
    pub value_name: &'static str,
    /// The values it may take on some command (a command may take fewer).
    pub values: &'static [&'static str],
    /// Words its help must contain.
    pub help: &'static str,
}

/// The shared options.
pub const SHARED: &[Shared] = &[
    Shared {
        long: "store",
        value_name: "STORE",
        values: &[],
        help: "postgres://",
    },
    Shared {
        long: "threads",
        value_name: "N",
        values: &[],
        help: "default: HEARTH_THREADS, else all cores",
    },
    Shared {
        long: "params",
        value_name: "NAME",
        values: &[
            "DIGITS_128",
            "DIGITS_KS32_128",
            "DIGITS_MB4_128",
            "GATES_128",
            "BITS_128",
        ],
        help: "Parameter set",
    },
    Shared {
        long: "backend",
        value_name: "BACKEND",
        values: &["count", "cpu", "gpu", "mpi"],
        help: "",
    },
    Shared {
        long: "family",
        value_name: "FAMILY",
        values: &["int", "words"],
        help: "",
    },
    Shared {
        long: "max-memory",
        value_name: "SIZE",
        values: &[],
        help: "bytes, or with a unit",
    },
    Shared {
        long: "format",
        value_name: "FORMAT",
        values: &["json", "csv", "npy"],
        help: "",
    },
    Shared {
        long: "json",
        value_name: "FILE",
        values: &[],
        help: "JSON",
    },
    Shared {
        long: "token",
        value_name: "TOKEN",
        values: &[],
        help: "default: HEARTH_TOKEN",
    },
    Shared {
        long: "ca-cert",
        value_name: "FILE",
        values: &[],
        help: "default: HEARTH_CA_CERT",
    },
    Shared {
        long: "plot",
        value_name: "FILE.svg",
        values: &[],
        help: "SVG",
    },
];

/// Every problem in `cmd`'s tree, as `path: problem` lines (`path` like
/// `hearth run --threads`); empty when the tree keeps the vocabulary.
pub fn check(cmd: &clap::Command) -> Vec<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = Vec::new();
    walk(&cmd, cmd.get_name(), &mut out);
    out
}

/// Panics, listing every problem [`check`] finds in `cmd`'s tree (and
/// clap's own checks of it): the unit test of each command.
pub fn assert_vocabulary(cmd: &clap::Command) {
    cmd.clone().debug_assert();
    let problems = check(cmd);
    assert!(problems.is_empty(), "\n  {}", problems.join("\n  "));
}

fn walk(cmd: &clap::Command, path: &str, out: &mut Vec<String>) {
    if cmd.get_about().is_none() && cmd.get_long_about().is_none() {
        out.push(format!("{path}: no help text"));
    }
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if id == "help" || id == "version" {
            continue;
        }
        let name = match arg.get_long() {
            Some(long) => format!("--{long}"),
            None => format!("<{id}>"),
        };
        let at = format!("{path} {name}");
        let help = arg
            .get_long_help()
            .or(arg.get_help())
            .map(|h| h.to_string())
            .unwrap_or_default();
        if help.is_empty() {
            out.push(format!("{at}: no help text"));
        }
        if !arg.get_action().takes_values() || arg.is_positional() {
            continue;
        }
        let value_names: Vec<String> = arg
            .get_value_names()
            .unwrap_or_default()
            .iter()
            .map(|v| v.to_string())
            .collect();
        match value_names.as_slice() {
            [v] if VALUE_NAMES.iter().any(|(n, _)| n == v) => {}
            [v] => out.push(format!("{at}: value name {v} is not in the vocabulary")),
            _ => out.push(format!("{at}: no value name")),
        }
        // Repeated options (`--input A --input B`) default to none.
        let has_default = !arg.get_default_values().is_empty()
            || help.to_ascii_lowercase().contains("default")
            || arg.is_required_set()
            || matches!(arg.get_action(), clap::ArgAction::Append);
        if !has_default {
            out.push(format!("{at}: the help does not give the default"));
        }
        let Some(long) = arg.get_long() else {
            continue;
        };
        if let Some(shared) = SHARED.iter().find(|s| s.long == long) {
            if value_names.first().map(String::as_str) != Some(shared.value_name) {
                out.push(format!(
                    "{at}: value name {value_names:?}, not {}",
                    shared.value_name
                ));
            }
            if !help.contains(shared.help) {
                out.push(format!("{at}: the help does not say `{}`", shared.help));
            }
            if !shared.values.is_empty() {
                for v in arg.get_possible_values() {
                    if !shared.values.contains(&v.get_name()) {
                        out.push(format!(
                            "{at}: value {} is not one of {:?}",
                            v.get_name(),
                            shared.values
                        ));
                    }
                }
            }
        }
    }
    // clap's own `help` subcommand mirrors the tree without help texts.
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        walk(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    #[test]
    fn the_walk_finds_every_kind_of_problem() {
        let cmd = Command::new("x")
            .about("a tool")
            .arg(Arg::new("bare").long("bare"))
            .subcommand(
                Command::new("sub")
                    .arg(Arg::new("file").help("the input"))
                    .arg(
                        Arg::new("threads")
                            .long("threads")
                            .value_name("COUNT")
                            .help("Worker threads (default: HEARTH_THREADS, else all cores)"),
                    )
                    .arg(
                        Arg::new("max-memory")
                            .long("max-memory")
                            .value_name("SIZE")
                            .help("The most memory"),
                    )
                    .arg(
                        Arg::new("format")
                            .long("format")
                            .value_name("FORMAT")
                            .value_parser(["json", "xml"])
                            .default_value("json")
                            .help("How to write"),
                    ),
            );
        let problems = check(&cmd);
        let want = [
            "x --bare: no help text",
            "x --bare: no value name",
            "x --bare: the help does not give the default",
            "x sub: no help text",
            "x sub --threads: value name COUNT is not in the vocabulary",
            "x sub --threads: value name [\"COUNT\"], not N",
            "x sub --max-memory: the help does not give the default",
            "x sub --max-memory: the help does not say `bytes, or with a unit`",
            "x sub --format: value xml is not one of [\"json\", \"csv\", \"npy\"]",
        ];
        assert_eq!(problems, want);
    }
}
