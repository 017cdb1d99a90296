//! Options that several commands share, declared once and used with
//! `#[command(flatten)]`: `--threads`, `--json`, `--params`, `--plot`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use clap::builder::{PossibleValue, TypedValueParser};
use hearth::crypto::params::ALL;
use hearth::{Error, ParameterSet};

/// `--threads`, with `HEARTH_THREADS` as its default.
#[derive(clap::Args, Clone, Copy, Debug, Default)]
pub struct Threads {
    /// Worker threads (default: HEARTH_THREADS or all cores).
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

/// `--json FILE`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct JsonOut {
    /// Also write the results as JSON to FILE (`-`: JSON on stdout, the
    /// tables on stderr).
    #[arg(long = "json", value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// `--params NAME`: a secure parameter set of the library's table.
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct ParamsArg {
    /// Parameter set, by name (any case): DIGITS_128 or DIGITS_KS32_128
    /// (signed-binary digits; KS32 is faster on CPUs), GATES_128 (words),
    /// BITS_128. Insecure test sets are refused.
    #[arg(
        long = "params",
        value_name = "NAME",
        default_value = "DIGITS_128",
        value_parser = ParamsParser
    )]
    pub params: &'static ParameterSet,
}

/// `--plot FILE.svg`.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct PlotOut {
    /// Also draw the results as an SVG plot into FILE.svg (its folder must
    /// exist).
    #[arg(long = "plot", value_name = "FILE.svg", value_parser = parse_svg_path)]
    pub plot: Option<PathBuf>,
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

/// A plot path: it must end in `.svg` and its folder must exist, checked
/// before a long benchmark starts.
pub fn parse_svg_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    let is_svg = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"));
    if !is_svg {
        return Err("plots are SVG: name the file *.svg".into());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(format!("folder {} does not exist", dir.display()));
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn plot_paths_are_checked() {
        let dir = std::env::temp_dir();
        let ok = dir.join("x.svg");
        assert_eq!(parse_svg_path(ok.to_str().unwrap()).unwrap(), ok);
        assert!(parse_svg_path("plot.svg").is_ok());
        assert!(parse_svg_path("plot.png").unwrap_err().contains("*.svg"));
        let missing = dir.join("hearth-no-such-folder").join("x.svg");
        let e = parse_svg_path(missing.to_str().unwrap()).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }
}
