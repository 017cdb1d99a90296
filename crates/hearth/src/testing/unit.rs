//! The library's unit tests: they sit beside the code they test (private
//! items included), compiled with the `testing` feature as plain functions,
//! and run from the integration test binary (`tests/all.rs`, module
//! `unit`). So one build of the library serves every Rust test: a
//! `cfg(test)` build of it would cost the test command about 55 s of CPU.
//!
//! A module's tests are its `tests` module's functions, listed at its end
//! with `tests!`. A test left out of the list is dead code, and so is a
//! module left out of `MODULES`: the lints catch both.

use std::panic::{catch_unwind, AssertUnwindSafe};

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

/// Every module's unit tests.
const MODULES: &[(&str, Tests)] = &[
    ("backend::batch", crate::backend::batch::tests::TESTS),
    ("backend::cpu", crate::backend::cpu::tests::TESTS),
    (
        "backend::device_memory",
        crate::backend::device_memory::tests::TESTS,
    ),
    ("backend::simulate", crate::backend::simulate::tests::TESTS),
    ("bits::compare", crate::bits::compare::tests::TESTS),
    ("bits::counters", crate::bits::counters::tests::TESTS),
    ("bits::gates", crate::bits::gates::tests::TESTS),
    ("bits::packed", crate::bits::packed::tests::TESTS),
    ("circuit", crate::circuit::tests::TESTS),
    ("circuit::range", crate::circuit::range::tests::TESTS),
    (
        "circuit::selectors",
        crate::circuit::selectors::tests::TESTS,
    ),
    ("circuit::table", crate::circuit::table::tests::TESTS),
    (
        "crypto::compressed",
        crate::crypto::compressed::tests::TESTS,
    ),
    ("crypto::lut", crate::crypto::lut::tests::TESTS),
    ("crypto::noise", crate::crypto::noise::tests::TESTS),
    ("digits::asc", crate::digits::asc::tests::TESTS),
    ("digits::catalog", crate::digits::catalog::tests::TESTS),
    ("digits::mul", crate::digits::mul::tests::TESTS),
    ("digits::radix", crate::digits::radix::tests::TESTS),
    ("digits::recoding", crate::digits::recoding::tests::TESTS),
    ("kernels::io", crate::kernels::io::tests::TESTS),
    ("kernels::linalg", crate::kernels::linalg::tests::TESTS),
    ("testing::keys", crate::testing::keys::tests::TESTS),
    ("testing::programs", crate::testing::programs::tests::TESTS),
    (
        "testing::word_programs",
        crate::testing::word_programs::tests::TESTS,
    ),
];

/// The names of the unit tests, `module::test` (`circuit::range::...`).
pub fn names() -> Vec<String> {
    MODULES
        .iter()
        .flat_map(|(m, tests)| tests.iter().map(move |(t, _)| format!("{m}::{t}")))
        .collect()
}

/// Runs the unit tests whose names start with `prefix`, each to its end
/// (a panic's message goes to stderr), and returns the names of those that
/// panicked and how many ran.
pub fn run(prefix: &str) -> (Vec<String>, usize) {
    let mut failed = Vec::new();
    let mut ran = 0;
    for (m, tests) in MODULES {
        for (t, f) in *tests {
            let name = format!("{m}::{t}");
            if !name.starts_with(prefix) {
                continue;
            }
            ran += 1;
            if catch_unwind(AssertUnwindSafe(f)).is_err() {
                failed.push(name);
            }
        }
    }
    (failed, ran)
}
