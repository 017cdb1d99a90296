//! The library's unit tests (`hearth_testkit::unit`: they live beside the
//! code they test), one test per top-level module so that the two test
//! threads share them: `cargo test --release -p hearth --test all
//! unit::digits` runs the digits family's.

use hearth_testkit::unit;

/// The top-level modules with unit tests.
const MODULES: [&str; 8] = [
    "backend::",
    "bits::",
    "circuit",
    "crypto::",
    "digits::",
    "formats::",
    "kernels::",
    "testing::",
];

fn run(prefix: &str) {
    let (failed, ran) = unit::run(prefix);
    assert!(ran > 0, "no unit test starts with {prefix}");
    assert!(
        failed.is_empty(),
        "{} of {ran} failed: {failed:?}",
        failed.len()
    );
}

#[test]
fn every_unit_test_runs_under_one_module() {
    for name in unit::names() {
        let under = MODULES.iter().filter(|m| name.starts_with(*m)).count();
        assert_eq!(under, 1, "{name} runs under {under} of {MODULES:?}");
    }
}

#[test]
fn formats() {
    run("formats::");
}

#[test]
fn backend() {
    run("backend::");
}

#[test]
fn bits() {
    run("bits::");
}

#[test]
fn circuit() {
    run("circuit");
}

#[test]
fn crypto() {
    run("crypto::");
}

#[test]
fn digits() {
    run("digits::");
}

#[test]
fn kernels() {
    run("kernels::");
}

#[test]
fn testing() {
    run("testing::");
}
