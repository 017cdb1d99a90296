//! The client builds without the server's stack: neither this crate nor
//! the Python package (crates/hearth-py, whose `hearth.Client` is this
//! crate's) depends, at build or run time of their own code, on an HTTP
//! server, an async runtime or a database driver. `cargo tree` says what
//! they depend on (normal dependencies: not build scripts', not tests').

use std::path::Path;
use std::process::Command;

/// Crates of the server side: none may be a normal dependency of a client.
const SERVER_SIDE: [&str; 5] = ["axum", "hyper", "tokio", "tokio-postgres", "hearth-server"];

/// The names of the crates `package` depends on (itself included), as
/// `cargo tree -e normal` lists them for this platform.
fn normal_dependencies(package: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(env!("CARGO"))
        .current_dir(&root)
        .args(["tree", "-p", package, "-e", "normal", "--prefix", "none"])
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree -p {package} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut names: Vec<String> = String::from_utf8(out.stdout)
        .expect("cargo tree writes UTF-8")
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Checks that `package` has none of [`SERVER_SIDE`] among its normal
/// dependencies.
fn check(package: &str) {
    let names = normal_dependencies(package);
    assert!(
        names.iter().any(|n| n == package),
        "cargo tree -p {package} did not list the package itself: {names:?}"
    );
    // The client is ureq's: the list is the one that matters.
    if package == "hearth-client" {
        assert!(names.iter().any(|n| n == "ureq"), "{names:?}");
    }
    let found: Vec<&String> = names
        .iter()
        .filter(|n| SERVER_SIDE.contains(&n.as_str()))
        .collect();
    assert!(
        found.is_empty(),
        "{package} depends on the server's crates {found:?}: a client must \
         build without them (move what it needs into hearth-client)"
    );
}

#[test]
fn the_client_builds_without_the_server() {
    check("hearth-client");
}

#[test]
fn the_python_package_builds_without_the_server() {
    check("hearth-py");
}
