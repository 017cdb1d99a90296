//! `hearth-bench pke`: public-key encryption. Without `--noise`, hearth's
//! public key beside tfhe-rs's `CompactPublicKey` (feature `tfhe-rs`):
//! key sizes, encryption one value at a time and as one compact list,
//! bytes sent per value and the server's expansion. With `--noise N`, N
//! bootstraps of public-key inputs at the full budget: wrong results, and
//! the measured noise of the fresh public-key ciphertexts and of the
//! bootstraps beside the model's.

use std::path::PathBuf;

use hearth::{Error, ParameterSet};
use hearth_cli::options::Threads;
use tfhe::core_crypto::prelude::DynamicDistribution;

mod noise;
#[cfg(feature = "tfhe-rs")]
mod timed;

/// What `hearth-bench pke` was asked.
pub struct Options {
    pub params: &'static ParameterSet,
    pub threads: Threads,
    pub bits: Vec<usize>,
    pub values: usize,
    pub samples: usize,
    pub noise: Option<usize>,
    pub seed: u64,
    pub out: PathBuf,
}

/// `hearth-bench pke`: the noise run with `--noise`, else the comparison
/// with tfhe-rs (which needs the feature `tfhe-rs`).
pub fn pke(o: Options) -> Result<(), Error> {
    if let Some(count) = o.noise {
        if count == 0 {
            return Err(Error::Config("--noise 0: at least one bootstrap".into()));
        }
        return noise::noise(&o, count);
    }
    for &b in &o.bits {
        if ![8, 16, 32, 64].contains(&b) {
            return Err(Error::Config(format!(
                "--bits {b}: 8, 16, 32 or 64 (tfhe-rs's FheUint8 .. FheUint64)"
            )));
        }
    }
    if o.bits.is_empty() || o.values == 0 || o.samples == 0 {
        return Err(Error::Config(
            "--bits, --values and --samples need at least one".into(),
        ));
    }
    let most = o
        .values
        .saturating_mul(o.bits.iter().copied().max().unwrap_or(0));
    if most > hearth::formats::bundle::MAX_SEEDED_CIPHERTEXTS {
        return Err(Error::Config(format!(
            "--values {} of {} bits: {most} ciphertexts, over a bundle's {}",
            o.values,
            o.bits.iter().max().unwrap_or(&0),
            hearth::formats::bundle::MAX_SEEDED_CIPHERTEXTS
        )));
    }
    #[cfg(feature = "tfhe-rs")]
    return timed::pke(&o);
    #[cfg(not(feature = "tfhe-rs"))]
    Err(crate::tfhe::missing())
}

/// A noise distribution as its parameter sets write it.
fn distribution(d: DynamicDistribution<u64>) -> String {
    match d {
        DynamicDistribution::TUniform(t) => format!("TUniform({})", t.bound_log2()),
        DynamicDistribution::Gaussian(g) => format!("Gaussian(std {:e})", g.std),
    }
}

/// The command line as run, for the results' files.
fn command_line() -> String {
    let args: Vec<String> = std::env::args().skip(1).collect();
    format!("hearth-bench {}", args.join(" "))
}
