//! The `hearth` command as a user runs it.

use std::process::Command;

fn hearth(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .env("HEARTH_THREADS", "2")
        .output()
        .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn insecure_parameters_are_refused_by_every_command() {
    let dir = std::env::temp_dir().join(format!("hearth-cli-insecure-{}", std::process::id()));
    for args in [
        vec![
            "keygen",
            "--params",
            "INSECURE_TEST_DIGITS",
            "--out",
            dir.to_str().unwrap(),
        ],
        vec!["bench", "pbs", "--params", "INSECURE_TEST_BITS"],
        vec!["bench", "engine", "--params", "insecure_test_digits"],
        vec!["bench", "noise", "--params", "INSECURE_TEST_DIGITS"],
        vec!["bench", "ops", "--params", "INSECURE_TEST_DIGITS"],
    ] {
        let (ok, _, err) = hearth(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains("INSECURE"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    assert!(!dir.join("client.key").exists());
    let (ok, _, err) = hearth(&["keygen", "--params", "NOPE", "--out", dir.to_str().unwrap()]);
    assert!(!ok && err.contains("unknown parameter set"), "{err}");
}

#[test]
fn keygen_info_and_bad_files() {
    let dir = std::env::temp_dir().join(format!("hearth-cli-keys-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, out, err) = hearth(&[
        "keygen",
        "--params",
        "BITS_128",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("BITS_128"), "{out}");
    let server = dir.join("server.key");
    let (ok, out, err) = hearth(&["info", server.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        out.contains("server key") && out.contains("BITS_128") && out.contains("status:      ok"),
        "{out}"
    );

    let mut bytes = std::fs::read(&server).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    let bad = dir.join("bad.key");
    std::fs::write(&bad, &bytes).unwrap();
    let (ok, _, err) = hearth(&["info", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("corrupted"), "{err}");
    std::fs::write(&bad, &bytes[..n / 3]).unwrap();
    let (ok, _, err) = hearth(&["info", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("truncated"), "{err}");
    std::fs::write(&bad, b"hello").unwrap();
    let (ok, _, err) = hearth(&["info", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("not a hearth file"), "{err}");
}

#[test]
fn demo_checks_itself() {
    let (ok, out, err) = hearth(&["demo"]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("all outputs match"), "{out}");
    assert!(out.contains("#PBS 7, depth 2"), "{out}");
    assert!(out.contains("| max(x0, x1, x2) | 113 | 113 |"), "{out}");
    assert!(
        out.contains("| 3*x0 - 5*x1 + 7*x2 | -532 | -532 |"),
        "{out}"
    );
}

#[test]
fn asc_table_regenerates_and_count_bench_runs() {
    let (ok, out, err) = hearth(&["tool", "asc-table", "--check"]);
    assert!(
        ok && out.contains("reproduces the embedded table (2048 lines)"),
        "{out}{err}"
    );
    let (ok, out, err) = hearth(&["bench", "ops", "--backend", "count", "--bits", "4,8,16"]);
    assert!(ok, "{err}");
    assert!(
        out.contains("| mul | 16 |") && out.contains("| scalar mul x805 | 16 | "),
        "{out}"
    );
    assert!(
        !out.contains("| NO |"),
        "an operation costs more than PARMESAN's:\n{out}"
    );
}

#[test]
fn fuzz_programs_checks_random_programs() {
    let (ok, out, err) = hearth(&["tool", "fuzz-programs", "--count", "300", "--seed", "9"]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("300 random Digits programs") && out.contains("0 failures"),
        "{out}"
    );
    let (ok, out, err) = hearth(&[
        "tool",
        "fuzz-programs",
        "--family",
        "bits",
        "--count",
        "100",
    ]);
    assert!(ok, "{out}{err}");
    assert!(
        out.contains("100 random Bits programs") && out.contains("0 failures"),
        "{out}"
    );
    let (ok, _, err) = hearth(&["tool", "fuzz-programs", "--count", "3", "--threads", "0"]);
    assert!(!ok && err.contains("thread count"), "{err}");
}
