//! The library's unit tests: they sit beside the code they test (private
//! items included), compiled with the `testing` feature as plain functions,
//! and run from the integration test binary (`tests/all.rs`, module
//! `unit`). So one build of the library serves every Rust test: a
//! `cfg(test)` build of it would cost the test command about 55 s of CPU.
//!
//! A module's tests are its `tests` module's functions, listed at its end
//! with `tests!`. A test left out of the list is dead code, and so is a
//! module left out of `MODULES`: the lints catch both.

use std::panic::catch_unwind;

/// Lists a `tests` module's test functions as its `TESTS`.
macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        /// This module's unit tests, by name (`testing::unit`).
        pub(crate) const TESTS: $crate::testing::unit::Tests = &[$((stringify!($name), $name)),*];
    };
}
pub(crate) use tests;

/// A module's unit tests, by name.
pub(crate) type Tests = &'static [(&'static str, fn())];

/// `[(path, TESTS)]` for the modules named.
macro_rules! modules {
    ($($($m:ident)::+),* $(,)?) => {
        &[$((stringify!($($m)::+), crate::$($m)::+::tests::TESTS)),*]
    };
}

/// Every module's unit tests.
const MODULES: &[(&str, Tests)] = modules![
    api::program_file,
    backend::batch,
    backend::cpu,
    backend::device_memory,
    bits::compare,
    bits::counters,
    bits::gates,
    bits::packed_compare,
    circuit,
    circuit::choice,
    circuit::range,
    circuit::selectors,
    circuit::table,
    crypto::bundle,
    crypto::compressed,
    crypto::files,
    crypto::lut,
    crypto::noise,
    digits::asc,
    digits::catalog,
    digits::mul,
    digits::wide,
    digits::recoding,
    kernels::io,
    kernels::linalg,
    testing::keys,
    testing::programs,
    testing::word_programs,
];

/// Every unit test as `module::test` (`circuit::range::...`) and its
/// function.
fn each() -> impl Iterator<Item = (String, fn())> {
    MODULES.iter().flat_map(|(m, tests)| {
        // `stringify!` spaces the path's `::`.
        let m = m.replace(' ', "");
        tests.iter().map(move |(t, f)| (format!("{m}::{t}"), *f))
    })
}

/// The names of the unit tests, `module::test`.
pub fn names() -> Vec<String> {
    each().map(|(name, _)| name).collect()
}

/// Runs the unit tests whose names start with `prefix`, each to its end
/// (a panic's message goes to stderr), and returns the names of those that
/// panicked and how many ran.
pub fn run(prefix: &str) -> (Vec<String>, usize) {
    let mut failed = Vec::new();
    let mut ran = 0;
    for (name, f) in each().filter(|(name, _)| name.starts_with(prefix)) {
        ran += 1;
        if catch_unwind(f).is_err() {
            failed.push(name);
        }
    }
    (failed, ran)
}
