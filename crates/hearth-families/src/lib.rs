//! hearth's two integer families, as code that builds circuits:
//!
//! * [`digits`]: signed-binary digits (PARMESAN's representation) —
//!   carry-free additions, products, comparisons, recodings;
//! * [`bits`]: two's-complement bits — gates, adders, comparisons,
//!   products, shifts, division.
//!
//! Each algorithm is written once here, on a [`hearth_core::CircuitBuilder`];
//! the typed values of `hearth::api` call them, and any backend evaluates
//! the circuits they build. Users depend on `hearth`, which re-exports
//! both modules (`hearth::digits`, `hearth::bits`).

// The unit tests evaluate circuits on the clear and count backends (a
// dev-dependency: the backends know nothing of the families).
#[cfg(test)]
use hearth_backend as backend;
// The core's modules under the names the families' code uses.
use hearth_core::{circuit, comparison, crypto, error};

pub mod bits;
pub mod ciphers;
pub mod digits;
