//! Typed errors. Library code returns these; it does not panic on user input.

use std::path::PathBuf;

use thiserror::Error;

use crate::crypto::encoding::Shape;
use crate::crypto::keys::KeyId;
use crate::crypto::params::ParamsId;

/// `Result` with hearth's [`enum@Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in hearth. New kinds may be added, so a
/// `match` needs a wildcard arm.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    /// No parameter set has this name.
    #[error("unknown parameter set `{0}` (known: {known})", known = crate::crypto::params::names(false))]
    UnknownParams(String),
    /// A front end was given an `INSECURE_*` test set.
    #[error("parameter set {0} is INSECURE and only for tests; use one of {known}", known = crate::crypto::params::names(true))]
    InsecureParams(&'static str),
    /// A key, ciphertext or circuit of another parameter set.
    #[error("parameter mismatch: expected {expected}, found {found}")]
    ParamsMismatch {
        /// The set of the key or circuit that was used.
        expected: ParamsId,
        /// The set of what was given to it.
        found: ParamsId,
    },
    /// A ciphertext or key made under another key pair.
    #[error("wrong key: expected key {expected}, found key {found}")]
    WrongKey {
        /// The key id of the key that was used.
        expected: KeyId,
        /// The key id of what was given to it.
        found: KeyId,
    },
    /// A digit to encrypt that is not in `Z_{2^pi}` (signed or unsigned view).
    #[error("value {value} is outside the digit range of {params} ([{min}, {max}])")]
    ValueOutOfRange {
        /// The value given.
        value: i64,
        /// The parameter set.
        params: ParamsId,
        /// The smallest digit accepted.
        min: i64,
        /// The largest digit accepted.
        max: i64,
    },
    /// A value that does not fit the type or width it is read or written as.
    #[error("{value} does not fit {target}")]
    DoesNotFit {
        /// The value, printed.
        value: String,
        /// What it should have fitted.
        target: String,
    },
    /// A circuit or program run with the wrong number of inputs.
    #[error("circuit expects {expected} inputs, got {found}")]
    InputCount {
        /// Inputs declared.
        expected: usize,
        /// Inputs given.
        found: usize,
    },
    /// A clear input outside the range its circuit input was declared with.
    #[error("input {input}: value {value} is outside its declared range [{lo}, {hi}]")]
    InputOutOfRange {
        /// The input's index.
        input: usize,
        /// The value given.
        value: i64,
        /// The declared range's lower end.
        lo: i64,
        /// The declared range's upper end.
        hi: i64,
    },
    /// The clear backend met a selector value the builder had ruled out.
    #[error(
        "bootstrap #{bootstrap}: selector value {value} is outside the range the builder proved \
         (an `assume_range` that does not hold)"
    )]
    SelectorOutOfRange {
        /// The bootstrap's index in the circuit.
        bootstrap: usize,
        /// The selector's value (a residue mod `2^pi`).
        value: u64,
    },
    /// A parameter set too small for an integer family.
    #[error("parameter set {params} cannot carry the {family} family: {reason}")]
    UnsupportedParams {
        /// The set.
        params: ParamsId,
        /// `digits` or `bits`.
        family: &'static str,
        /// What the family needs that the set lacks.
        reason: String,
    },
    /// A parameter set without a public key (its ciphertext dimension is
    /// not a power of two).
    #[error("parameter set {params} has no public key: {reason}")]
    NoPublicKey {
        /// The set.
        params: ParamsId,
        /// Why, and what to use instead.
        reason: String,
    },
    /// A request over one of hearth's limits (digits, products, memory, file size).
    #[error("{what} needs {size}, over the limit of {limit}")]
    TooLarge {
        /// What was too large, with its unit.
        what: String,
        /// Its size.
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// A value of another type or width than the program (or a method) expects.
    #[error("{what}: expected {expected}, found {found}")]
    ShapeMismatch {
        /// Where: an input index or a method.
        what: String,
        /// The shape expected.
        expected: Shape,
        /// The shape given.
        found: Shape,
    },
    /// Tensor shapes that do not fit together.
    #[error("dimensions do not match: {0}")]
    Dimensions(String),
    /// A program would decrypt two ciphertexts with the same keystream (the
    /// same round keys and overlapping clear counter blocks, or the same
    /// key and clear IV): their XOR would leak, so the program is refused.
    #[error("keystream reused: {0}")]
    KeystreamReused(String),
    /// Packed results ([`crate::crypto::packing`]) where ciphertexts to
    /// compute on are needed (a program's inputs), or a program's outputs
    /// too noisy to be packed and still decrypt.
    #[error("packed values: {0}")]
    Packed(String),
    /// A setting or request the caller can change: a thread count, a
    /// backend's name, an environment variable, a value of another
    /// program, a program that cannot be saved.
    #[error("configuration: {0}")]
    Config(String),
    /// The GPU backend cannot run here or failed: no device, a CUDA error,
    /// a parameter set it does not run yet.
    #[error("GPU: {0}")]
    Gpu(String),
    /// The MPI cluster cannot do what was asked: MPI already started, its
    /// thread level, a finished cluster, a key not shared with the ranks,
    /// a call on the wrong rank. A rank that fails is [`Error::Rank`].
    #[error("MPI cluster: {0}")]
    Cluster(String),
    /// An invariant of hearth's own code does not hold: a bug, to be
    /// reported; nothing the caller did.
    #[error("internal error (a bug in hearth, please report it): {0}")]
    Internal(String),
    /// A run was stopped by its caller (a cancel flag, Ctrl-C in Python)
    /// before it finished; nothing it made is returned.
    #[error("the run was cancelled after {done} of {total} bootstraps")]
    Cancelled {
        /// Bootstraps done when it stopped.
        done: usize,
        /// Bootstraps in the circuit.
        total: usize,
    },
    /// A rank of an MPI run (feature `mpi`) did not answer within the
    /// run's timeout, or answered what it should not. The run is lost; the
    /// MPI job should then be aborted (the rank may hold a half-sent
    /// message).
    #[error("MPI rank {rank}: {reason}")]
    Rank {
        /// The rank, in `MPI_COMM_WORLD`.
        rank: i32,
        /// What it did or failed to do.
        reason: String,
    },
    /// The builder refused a circuit.
    #[error(transparent)]
    Build(#[from] BuildError),
    /// A lookup table could not be built.
    #[error(transparent)]
    Lut(#[from] LutError),
    /// A file could not be read or written.
    #[error(transparent)]
    File(#[from] FileError),
}

/// A circuit the builder refuses; each names the offending node.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum BuildError {
    /// A bootstrap input (or output) noisier than its budget allows.
    #[error(
        "{node}: quadratic weight {weight} exceeds the budget {budget} of {params} \
         (the error would break decryption)"
    )]
    OverBudget {
        /// The node, described.
        node: String,
        /// Its quadratic weight.
        weight: u64,
        /// The budget for its margin.
        budget: u64,
        /// The parameter set.
        params: ParamsId,
    },
    /// A selector value where the lookup table is not defined.
    #[error(
        "{node}: the selector can take value {value} (range [{lo}, {hi}] mod 2^{pi}), \
         where the lookup table is not defined"
    )]
    SelectorNotCovered {
        /// The node, described.
        node: String,
        /// The first uncovered value (a residue).
        value: u64,
        /// The selector range's lower end.
        lo: i64,
        /// The selector range's upper end.
        hi: i64,
        /// The message bits of the parameter set.
        pi: u32,
    },
    /// More tables on one blind rotation than its slots can hold.
    #[error(
        "{node}: {luts} lookup tables on a selector of {width} values need {needed} slots, \
         but one bootstrap has {available}"
    )]
    ManyLutTooWide {
        /// The node, described.
        node: String,
        /// Tables asked for.
        luts: usize,
        /// Values the selector can take.
        width: u64,
        /// Slots needed.
        needed: u64,
        /// Slots one bootstrap has.
        available: u64,
    },
    /// A table made for another message space.
    #[error("{node}: lookup table is for pi = {lut_pi}, the circuit for pi = {pi}")]
    LutPiMismatch {
        /// The node, described.
        node: String,
        /// The table's message bits.
        lut_pi: u32,
        /// The circuit's message bits.
        pi: u32,
    },
    /// A wire of another builder.
    #[error("{node}: wire belongs to another circuit")]
    ForeignWire {
        /// The node, described.
        node: String,
    },
    /// Integer weights of a linear combination overflowed.
    #[error("{node}: integer weight overflow")]
    WeightOverflow {
        /// The node, described.
        node: String,
    },
    /// A wire used as a signed-binary digit that is not one.
    #[error("{node}: not a digit (range [{lo}, {hi}], quadratic weight {weight}; needs [-1, 1] and weight <= 1)")]
    NotADigit {
        /// The node, described.
        node: String,
        /// Its range's lower end.
        lo: i64,
        /// Its range's upper end.
        hi: i64,
        /// Its quadratic weight.
        weight: u64,
    },
    /// A wire used as a bit (0 or 2) that is not one.
    #[error("{node}: not a bit (range [{lo}, {hi}], quadratic weight {weight}; needs values 0 or 2 and a weight the margin-1 budget allows)")]
    NotABit {
        /// The node, described.
        node: String,
        /// Its range's lower end.
        lo: i64,
        /// Its range's upper end.
        hi: i64,
        /// Its quadratic weight.
        weight: u64,
    },
    /// A range with no value.
    #[error("{node}: empty range [{lo}, {hi}]")]
    EmptyRange {
        /// The node, described.
        node: String,
        /// The lower end.
        lo: i64,
        /// The upper end.
        hi: i64,
    },
    /// The build was stopped by the [`crate::circuit::Meter`] in force.
    #[error("the build was stopped {why}, after {bootstraps} bootstraps and {bytes} bytes")]
    Stopped {
        /// Bootstraps made until then, scratch builds included.
        bootstraps: u64,
        /// Bytes allocated until then.
        bytes: u64,
        /// Which limit it passed.
        why: String,
    },
}

/// A lookup table that cannot be built.
#[derive(Debug, Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LutError {
    /// Message bits outside 1..=8.
    #[error("pi = {0} is not supported (1..=8)")]
    BadPi(u32),
    /// A function that breaks `f(x + 2^(pi-1)) = -f(x)`.
    #[error(
        "not negacyclic: f({x}) = {a} but f({y}) = {b}, while f(x + 2^(pi-1)) must equal -f(x) \
         mod 2^pi"
    )]
    NotNegacyclic {
        /// A position.
        x: u64,
        /// The function there.
        a: u64,
        /// `x + 2^(pi-1)`.
        y: u64,
        /// The function there.
        b: u64,
    },
    /// A listing with more entries than positions.
    #[error("listing has {found} entries, more than the {max} positions of Z_2^{pi}")]
    TooLong {
        /// Entries given.
        found: usize,
        /// Positions available.
        max: usize,
        /// Message bits.
        pi: u32,
    },
    /// A listing that does not parse.
    #[error("listing: {0}")]
    Parse(String),
}

/// A key or ciphertext file that cannot be read.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum FileError {
    /// The file system refused.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not a hearth file.
    #[error("{path}: not a hearth file (bad magic)")]
    BadMagic {
        /// The file.
        path: PathBuf,
    },
    /// A format version this build does not read.
    #[error("{path}: {}", version_message(*found, *supported))]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// Its version.
        found: u16,
        /// The version this build reads.
        supported: u16,
    },
    /// Another kind of file than expected (e.g. a client key where a server key goes).
    #[error("{path}: holds a {found}, expected a {expected}")]
    WrongKind {
        /// The file.
        path: PathBuf,
        /// The kind it holds.
        found: &'static str,
        /// The kind expected.
        expected: &'static str,
    },
    /// A parameter-set id this build does not know.
    #[error("{path}: unknown parameter-set id {0}", .id)]
    UnknownParamsId {
        /// The file.
        path: PathBuf,
        /// The id in its header.
        id: u16,
    },
    /// Fewer bytes than the header announces.
    #[error("{path}: truncated ({found} bytes of payload, header says {expected})")]
    Truncated {
        /// The file.
        path: PathBuf,
        /// Payload bytes present.
        found: u64,
        /// Payload bytes announced.
        expected: u64,
    },
    /// A payload over the bound for its kind and parameter set.
    #[error("{path}: payload of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Payload bytes announced.
        size: u64,
        /// The bound.
        limit: u64,
    },
    /// A checksum mismatch.
    #[error("{path}: corrupted (checksum mismatch)")]
    Corrupted {
        /// The file.
        path: PathBuf,
    },
    /// A payload that does not decode.
    #[error("{path}: malformed payload: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// The decoder's message.
        reason: String,
    },
    /// A payload that decodes but does not fit its header or parameter set.
    #[error("{path}: {reason}")]
    Inconsistent {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        reason: String,
    },
}

/// What a file of another format version is, and what to do about it.
fn version_message(found: u16, supported: u16) -> String {
    if found < supported {
        format!(
            "written in format version {found} by an older hearth; this build reads version \
             {supported} only: write the file again with this build (keys: `hearth keygen`; \
             programs: compile again; values: encrypt again)"
        )
    } else {
        format!(
            "format version {found} is not supported (this build reads {supported}): \
             a newer hearth wrote it, or it is damaged"
        )
    }
}
