//! Options that several commands share, declared once and used with
//! `#[command(flatten)]`, and the value syntax they share: `--threads N`,
//! `--params NAME`, `--backend BACKEND`, `--family FAMILY`,
//! `--max-memory SIZE`, `--format FORMAT`; sizes (`parse_size`) and
//! durations (`parse_duration`) with units. `crate::help` checks every
//! command's options against them.

use std::ffi::OsStr;
use std::time::Duration;

use clap::builder::{PossibleValue, TypedValueParser};
use hearth::backend::Engine;
use hearth::crypto::params::ALL;
use hearth::{Error, ParameterSet};

/// `--threads`, with `HEARTH_THREADS` as its default.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Threads {
    /// Worker threads (default: HEARTH_THREADS, else all cores).
    #[arg(long = "threads", env = "HEARTH_THREADS", value_name = "N")]
    pub threads: Option<usize>,
}

impl Threads {
    /// The count asked for, if any (`None`: the backend's default).
    pub fn get(self) -> Option<usize> {
        self.threads
    }

    /// The count to use: the one asked for, else all cores; 0 is an error.
    pub fn resolve(self) -> Result<usize, Error> {
        hearth::backend::resolve_threads(self.threads)
    }
}

/// `--params NAME`: a secure parameter set of the library's table.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct ParamsArg {
    /// Parameter set, by name (any case): DIGITS_128, the one key of every
    /// type, DIGITS_KS32_128 (the same, faster on CPUs) or DIGITS_MB4_128
    /// (the same digits, multi-bit bootstrap: tfhe-rs's GPU set); GATES_128
    /// or BITS_128 (words and bools only). Insecure test sets are refused.
    #[arg(
        long = "params",
        value_name = "NAME",
        default_value = "DIGITS_128",
        value_parser = ParamsParser
    )]
    pub params: &'static ParameterSet,
}

/// `--backend BACKEND`: where encrypted circuits run.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct BackendArg {
    /// Where the encrypted circuits run: cpu (tfhe-rs's CPU bootstrap on a
    /// thread pool), gpu (tfhe-rs's CUDA bootstrap, a level per launch; a
    /// build with the `gpu` feature; else cpu, saying why) or mpi (the
    /// ranks of an `mpirun` / `srun` launch of this same command: rank 0
    /// schedules and bootstraps, every other rank bootstraps for it; a
    /// build with the `mpi` feature; `HEARTH_RANK_TIMEOUT` seconds of
    /// silence from a rank, 60 by default, end the run naming it).
    #[arg(
        long = "backend",
        value_name = "BACKEND",
        value_parser = engine_parser(),
        default_value = "cpu"
    )]
    pub backend: Engine,
}

/// The library's [`Engine`] by name (`cpu`, `gpu`, `mpi`: [`Engine::ALL`],
/// the possible values listed in `--help` and in clap's error).
pub fn engine_parser() -> impl TypedValueParser<Value = Engine> {
    clap::builder::PossibleValuesParser::new(Engine::ALL.map(Engine::name))
        .map(|s| s.parse::<Engine>().expect("one of the possible values"))
}

/// Which integer family a command's programs use, named after its types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Family {
    /// `Int` (exact, signed-binary digits), on DIGITS_128. Also `digits`,
    /// its earlier name.
    #[value(alias = "digits")]
    Int,
    /// Fixed-width words `U8` .. `I128` (two's-complement bits), on the
    /// same key as `Int`. Also `bits`, its earlier name.
    #[value(alias = "bits")]
    Words,
}

impl std::fmt::Display for Family {
    /// As in "random Int programs", "random word programs".
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Family::Int => "Int",
            Family::Words => "word",
        })
    }
}

/// `--family FAMILY`.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct FamilyArg {
    /// Integer family: int (exact `Int`s) or words (fixed-width `U8` ..
    /// `I128`), both on DIGITS_128 for `app`; `hearth-bench fuzz-programs`
    /// alternates the rules of DIGITS_128 and GATES_128 for words.
    #[arg(
        long = "family",
        value_name = "FAMILY",
        value_enum,
        default_value = "int"
    )]
    pub family: Family,
}

/// `--max-memory SIZE`: the most memory a run may be estimated to need.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct MaxMemory {
    /// Refuse to start work whose estimated peak memory is over SIZE
    /// (bytes, or with a unit: 512MiB, 8GiB; default: this machine's
    /// memory).
    #[arg(
        long = "max-memory",
        value_name = "SIZE",
        value_parser = parse_size,
        alias = "memory-limit"
    )]
    pub max_memory: Option<u64>,
}

impl MaxMemory {
    /// The limit in bytes: the one given, else this machine's memory
    /// (`u64::MAX` where it cannot be read).
    pub fn bytes(self) -> u64 {
        self.max_memory.unwrap_or_else(machine_memory)
    }
}

/// This machine's memory in bytes (`MemTotal` of /proc/meminfo), or
/// `u64::MAX` where it cannot be read.
pub fn machine_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            kib.checked_mul(1024)
        })
        .unwrap_or(u64::MAX)
}

/// `--format FORMAT`: how results are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// JSON.
    Json,
    /// CSV: a header line, then rows.
    Csv,
    /// NumPy's `.npy` (int64).
    Npy,
}

impl Format {
    /// The format a path's extension names, if any.
    pub fn of_path(path: &std::path::Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "npy" => Some(Format::Npy),
            _ => None,
        }
    }

    /// The name used on the command line and as a file extension.
    pub fn name(self) -> &'static str {
        match self {
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Npy => "npy",
        }
    }
}

/// A size: bytes, or with a unit (`KiB`, `MiB`, `GiB`, `TiB`; `K`, `M`,
/// `G`, `T` mean the same).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (n, unit) =
        split_unit(s).ok_or_else(|| format!("{s:?} is not a size (e.g. 8GiB, 512MiB, 1000000)"))?;
    let shift = match unit.as_str() {
        "" | "b" => 0,
        "k" | "kib" => 10,
        "m" | "mib" => 20,
        "g" | "gib" => 30,
        "t" | "tib" => 40,
        other => return Err(format!("unknown size unit {other:?} (KiB, MiB, GiB, TiB)")),
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// A duration: seconds, or with a unit (`us`, `ms`, `s`, `min`, `h`); the
/// number may have a fraction (`0.5s`, `2.5ms`).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("{s:?} is not a duration (e.g. 300, 500ms, 5min)");
    let t = s.trim();
    let split = t
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| bad())?;
    let seconds = match unit.trim().to_ascii_lowercase().as_str() {
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "" | "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        other => {
            return Err(format!(
                "unknown duration unit {other:?} (us, ms, s, min, h, d)"
            ))
        }
    };
    Duration::try_from_secs_f64(n * seconds).map_err(|_| format!("{s:?} is too long"))
}

/// A whole number and the unit after it, lower case.
fn split_unit(s: &str) -> Option<(u64, String)> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    Some((num.parse().ok()?, unit.trim().to_ascii_lowercase()))
}

/// The set named `s` for a front end: insecure sets and unknown names are
/// refused with the library's messages (which list the known names).
pub fn parse_params(s: &str) -> Result<&'static ParameterSet, String> {
    ParameterSet::for_front_end(s).map_err(|e| e.to_string())
}

/// [`parse_params`] as a clap value parser that also lists the secure
/// sets of [`hearth::crypto::params::ALL`] as the possible values in
/// `--help`.
#[derive(Clone, Copy, Debug)]
pub struct ParamsParser;

impl TypedValueParser for ParamsParser {
    type Value = &'static ParameterSet;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        parse_params.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            ALL.iter()
                .filter(|p| !p.is_insecure())
                .map(|p| PossibleValue::new(p.name).help(p.source)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Families are named after their types; the earlier names still
    /// parse, so older commands (and recorded results) keep working.
    #[test]
    fn families_parse_by_type_and_earlier_name() {
        use clap::ValueEnum;
        for (name, family) in [
            ("int", Family::Int),
            ("digits", Family::Int),
            ("words", Family::Words),
            ("bits", Family::Words),
        ] {
            assert_eq!(Family::from_str(name, false), Ok(family), "{name}");
        }
        assert!(Family::from_str("gates", false).is_err());
        let shown: Vec<_> = Family::value_variants()
            .iter()
            .filter_map(|f| f.to_possible_value())
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(shown, ["int", "words"]);
    }

    #[test]
    fn sizes_and_durations_parse() {
        assert_eq!(parse_size("8GiB"), Ok(8 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("8 parsecs").is_err());
        assert!(parse_size("GiB").is_err());
        assert!(parse_size("99999999999TiB").is_err());
        assert_eq!(parse_duration("300"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("5min"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2 h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("13us"), Ok(Duration::from_micros(13)));
        assert!(parse_duration("3 days").is_err());
        assert!(parse_duration("1e999").is_err());
        assert!(parse_duration("..").is_err());
    }

    #[test]
    fn formats_follow_extensions() {
        use std::path::Path;
        assert_eq!(Format::of_path(Path::new("a/b.JSON")), Some(Format::Json));
        assert_eq!(Format::of_path(Path::new("b.csv")), Some(Format::Csv));
        assert_eq!(Format::of_path(Path::new("out")), None);
        assert!(machine_memory() > 0);
    }

    #[test]
    fn params_parser_takes_secure_sets_only() {
        assert_eq!(parse_params("digits_128").unwrap().name, "DIGITS_128");
        assert_eq!(parse_params("GATES_128").unwrap().name, "GATES_128");
        let e = parse_params("INSECURE_TEST_BITS").unwrap_err();
        assert!(e.contains("INSECURE"), "{e}");
        let e = parse_params("NOPE").unwrap_err();
        assert!(e.contains("unknown parameter set"), "{e}");
        let listed: Vec<String> = ParamsParser
            .possible_values()
            .unwrap()
            .map(|v| v.get_name().to_string())
            .collect();
        assert_eq!(listed.join(", "), hearth::crypto::params::names(true));
    }
}
