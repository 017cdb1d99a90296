//! hearth's core: what every other layer builds on.
//!
//! * [`crypto`]: parameter sets and their noise analysis, keys and
//!   ciphertexts, lookup tables, one KS-PBS, the file container and key
//!   files, the encodings of values as digits. Built on tfhe-rs's
//!   `core_crypto`; everything above it sees digits and tables.
//! * [`circuit`]: circuits (linear LWE operations and bootstraps), their
//!   builder with its static checks, and the auto-choice helpers.
//! * [`error`] and [`comparison`]: shared by every layer.
//!
//! Users depend on `hearth`, which re-exports this crate's modules under
//! the same names (`hearth::crypto`, `hearth::circuit`, ...). The
//! repository's `ARCHITECTURE.md` gives the crates' layers.

pub mod circuit;
pub mod comparison;
pub mod crypto;
pub mod error;
pub mod formats;
pub mod symmetric;
#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use circuit::{Circuit, CircuitBuilder, Stats, Wire};
pub use comparison::Comparison;
pub use crypto::compressed::{CompressedServerKey, ServerKeySizes};
pub use crypto::keys::{Ciphertext, ClientKey, KeyId, ServerKey};
pub use crypto::lut::Lut;
pub use crypto::params::{
    Budgets, Margin, ParameterSet, ParamsId, BITS_128, DIGITS_128, DIGITS_KS32_128, DIGITS_MB4_128,
    GATES_128, INSECURE_TEST_BITS, INSECURE_TEST_DIGITS,
};
pub use crypto::public_key::{CompactList, PublicKey};
pub use error::{BuildError, Error, FileError, LutError, Result};
