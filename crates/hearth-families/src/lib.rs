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

// The core's modules under the names the families' code uses.
#[cfg(feature = "testing")]
use hearth_backend as backend;
use hearth_core::{circuit, comparison, crypto, error};

pub mod bits;
pub mod digits;

/// This crate's unit tests, by module (`hearth_testkit::unit` runs them).
#[cfg(feature = "testing")]
#[doc(hidden)]
pub const UNIT_TESTS: &[(&str, hearth_core::testing::Tests)] = hearth_core::unit_tests![
    bits::compare,
    bits::counters,
    bits::gates,
    bits::packed_compare,
    digits::asc,
    digits::mul,
    digits::wide,
    digits::recoding,
];
