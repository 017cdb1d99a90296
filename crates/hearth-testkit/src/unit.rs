//! The library's unit tests: they sit beside the code they test (private
//! items included), compiled with each crate's `testing` feature as plain
//! functions, listed by each crate's `UNIT_TESTS`, and run from hearth's
//! integration test binary (`crates/hearth/tests/all.rs`, module `unit`).
//! So one build of each crate serves every Rust test: a `cfg(test)` build
//! of the library would cost the test command about 55 s of CPU.
//!
//! A module's tests are its `tests` module's functions, listed at its end
//! with `hearth_core::tests!`. A test left out of the list is dead code,
//! and so is a module left out of its crate's `UNIT_TESTS`: the lints
//! catch both.

use std::panic::catch_unwind;

use hearth_core::testing::Tests;

/// Every crate's unit tests: `(layer, [(module, TESTS)])`. The layer
/// prefixes the names of a crate whose modules sit at its root.
const CRATES: &[(&str, &[(&str, Tests)])] = &[
    ("", hearth_core::UNIT_TESTS),
    ("", hearth_families::UNIT_TESTS),
    ("backend::", hearth_backend::UNIT_TESTS),
    ("", hearth::UNIT_TESTS),
    ("testing::", crate::UNIT_TESTS),
];

/// Every unit test as `module::test` (`circuit::range::...`) and its
/// function.
fn each() -> impl Iterator<Item = (String, fn())> {
    CRATES.iter().flat_map(|(layer, modules)| {
        modules.iter().flat_map(move |(m, tests)| {
            // `stringify!` spaces the path's `::`.
            let m = m.replace(' ', "");
            tests
                .iter()
                .map(move |(t, f)| (format!("{layer}{m}::{t}"), *f))
        })
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
