//! Typed errors. Library code returns these; it does not panic on user input.

use std::path::PathBuf;

use thiserror::Error;

use crate::crypto::keys::KeyId;
use crate::crypto::params::ParamsId;

/// `Result` with hearth's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in hearth. New kinds may be added, so a
/// `match` needs a wildcard arm.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("unknown parameter set `{0}` (known: {known})", known = crate::crypto::params::names(false))]
    UnknownParams(String),
    #[error("parameter set {0} is INSECURE and only for tests; use one of {known}", known = crate::crypto::params::names(true))]
    InsecureParams(&'static str),
    #[error("parameter mismatch: expected {expected}, found {found}")]
    ParamsMismatch { expected: ParamsId, found: ParamsId },
    #[error("wrong key: expected key {expected}, found key {found}")]
    WrongKey { expected: KeyId, found: KeyId },
    #[error("value {value} is outside the digit range of {params} ([{min}, {max}])")]
    ValueOutOfRange {
        value: i64,
        params: ParamsId,
        min: i64,
        max: i64,
    },
    #[error("{value} does not fit {target}")]
    DoesNotFit { value: String, target: String },
    #[error("circuit expects {expected} inputs, got {found}")]
    InputCount { expected: usize, found: usize },
    #[error("input {input}: value {value} is outside its declared range [{lo}, {hi}]")]
    InputOutOfRange {
        input: usize,
        value: i64,
        lo: i64,
        hi: i64,
    },
    #[error(
        "bootstrap #{bootstrap}: selector value {value} is outside the range the builder proved \
         (an `assume_range` that does not hold)"
    )]
    SelectorOutOfRange { bootstrap: usize, value: u64 },
    #[error("parameter set {params} cannot carry the {family} family: {reason}")]
    UnsupportedParams {
        params: ParamsId,
        family: &'static str,
        reason: String,
    },
    #[error("{what} needs {size}, over the limit of {limit}")]
    TooLarge { what: String, size: u64, limit: u64 },
    #[error("{what}: expected {expected}, found {found}")]
    ShapeMismatch {
        what: String,
        expected: crate::api::Shape,
        found: crate::api::Shape,
    },
    #[error("dimensions do not match: {0}")]
    Dimensions(String),
    #[error("configuration: {0}")]
    Config(String),
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Lut(#[from] LutError),
    #[error(transparent)]
    File(#[from] FileError),
}

/// A circuit the builder refuses; each names the offending node.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    #[error(
        "{node}: quadratic weight {weight} exceeds the budget {budget} of {params} \
         (the error would break decryption)"
    )]
    OverBudget {
        node: String,
        weight: u64,
        budget: u64,
        params: ParamsId,
    },
    #[error(
        "{node}: the selector can take value {value} (range [{lo}, {hi}] mod 2^{pi}), \
         where the lookup table is not defined"
    )]
    SelectorNotCovered {
        node: String,
        value: u64,
        lo: i64,
        hi: i64,
        pi: u32,
    },
    #[error(
        "{node}: {luts} lookup tables on a selector of {width} values need {needed} slots, \
         but one bootstrap has {available}"
    )]
    ManyLutTooWide {
        node: String,
        luts: usize,
        width: u64,
        needed: u64,
        available: u64,
    },
    #[error("{node}: lookup table is for pi = {lut_pi}, the circuit for pi = {pi}")]
    LutPiMismatch { node: String, lut_pi: u32, pi: u32 },
    #[error("{node}: wire belongs to another circuit")]
    ForeignWire { node: String },
    #[error("{node}: integer weight overflow")]
    WeightOverflow { node: String },
    #[error("{node}: not a digit (range [{lo}, {hi}], quadratic weight {weight}; needs [-1, 1] and weight <= 1)")]
    NotADigit {
        node: String,
        lo: i64,
        hi: i64,
        weight: u64,
    },
    #[error("{node}: not a bit (range [{lo}, {hi}], quadratic weight {weight}; needs values 0 or 2 and a weight the margin-1 budget allows)")]
    NotABit {
        node: String,
        lo: i64,
        hi: i64,
        weight: u64,
    },
    #[error("{node}: empty range [{lo}, {hi}]")]
    EmptyRange { node: String, lo: i64, hi: i64 },
}

/// A lookup table that cannot be built.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LutError {
    #[error("pi = {0} is not supported (1..=8)")]
    BadPi(u32),
    #[error(
        "not negacyclic: f({x}) = {a} but f({y}) = {b}, while f(x + 2^(pi-1)) must equal -f(x) \
         mod 2^pi"
    )]
    NotNegacyclic { x: u64, a: u64, y: u64, b: u64 },
    #[error("listing has {found} entries, more than the {max} positions of Z_2^{pi}")]
    TooLong { found: usize, max: usize, pi: u32 },
    #[error("listing: {0}")]
    Parse(String),
}

/// A key or ciphertext file that cannot be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: not a hearth file (bad magic)")]
    BadMagic { path: PathBuf },
    #[error("{path}: format version {found} is not supported (this build reads {supported})")]
    UnsupportedVersion {
        path: PathBuf,
        found: u16,
        supported: u16,
    },
    #[error("{path}: holds a {found}, expected a {expected}")]
    WrongKind {
        path: PathBuf,
        found: &'static str,
        expected: &'static str,
    },
    #[error("{path}: unknown parameter-set id {0}", .id)]
    UnknownParamsId { path: PathBuf, id: u16 },
    #[error("{path}: truncated ({found} bytes of payload, header says {expected})")]
    Truncated {
        path: PathBuf,
        found: u64,
        expected: u64,
    },
    #[error("{path}: payload of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        path: PathBuf,
        size: u64,
        limit: u64,
    },
    #[error("{path}: corrupted (checksum mismatch)")]
    Corrupted { path: PathBuf },
    #[error("{path}: malformed payload: {reason}")]
    Malformed { path: PathBuf, reason: String },
    #[error("{path}: {reason}")]
    Inconsistent { path: PathBuf, reason: String },
}
