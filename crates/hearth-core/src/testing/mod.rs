//! Test support below the typed API (feature `testing`, not part of the
//! API): the unit-test lists every layer's `tests` module ends with, keys
//! shared by the tests of one process, and random circuits.

pub mod circuits;
pub mod keys;

/// A module's unit tests, by name (`hearth_testkit::unit` runs them).
pub type Tests = &'static [(&'static str, fn())];

/// Lists a `tests` module's test functions as its `TESTS`.
#[macro_export]
#[doc(hidden)]
macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        /// This module's unit tests, by name (`hearth_testkit::unit`).
        pub const TESTS: $crate::testing::Tests = &[$((stringify!($name), $name)),*];
    };
}

/// `[(path, TESTS)]` for the modules named, in the crate that names them:
/// a crate's `UNIT_TESTS`. A module left out is dead code (the lints catch
/// it), and so is a test left out of its module's `tests!`.
#[macro_export]
#[doc(hidden)]
// `crate` on purpose: the modules are the calling crate's.
#[allow(clippy::crate_in_macro_def)]
macro_rules! unit_tests {
    ($($($m:ident)::+),* $(,)?) => {
        &[$((stringify!($($m)::+), crate::$($m)::+::tests::TESTS)),*]
    };
}
