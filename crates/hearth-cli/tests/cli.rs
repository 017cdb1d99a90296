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
fn count_bench_draws_level_profiles() {
    let dir = std::env::temp_dir().join(format!("hearth-cli-plot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for family in ["digits", "bits"] {
        let path = dir.join(format!("{family}.svg"));
        let (ok, _, err) = hearth(&[
            "bench",
            "ops",
            "--backend",
            "count",
            "--family",
            family,
            "--bits",
            "8,16",
            "--plot",
            path.to_str().unwrap(),
        ]);
        assert!(ok, "{err}");
        assert!(err.contains("plot written to"), "{err}");
        let svg = std::fs::read_to_string(&path).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.ends_with("</svg>\n"),
            "{svg}"
        );
        assert!(
            svg.contains("16-digit") || svg.contains("u16 words"),
            "{svg}"
        );
        assert!(svg.contains("max: ") && svg.contains("2 threads"), "{svg}");
    }
    // Refused before anything runs: not SVG, or a folder that is missing.
    for bad in ["plot.png", "/no/such/folder/plot.svg"] {
        let (ok, _, err) = hearth(&["bench", "ops", "--backend", "count", "--plot", bad]);
        assert!(!ok && err.contains("--plot"), "{err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
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

#[test]
fn emu_runs_assembly_and_reports_bad_programs() {
    let example = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/emu/countdown.s"
    );
    let (ok, out, err) = hearth(&[
        "emu", "run", example, "--mode", "clear", "--reg", "r4=3", "--trace",
    ]);
    assert!(ok, "{err}");
    // 40 + 70 clamped to 100, r4 counted down, three decisions.
    assert!(out.contains("r0  = 0x00000064 (100, encrypted)"), "{out}");
    assert!(out.contains("r4  = 0x00000000 (0, encrypted)"), "{out}");
    assert!(
        out.contains("movgt r0, #100") && out.contains("(oblivious)"),
        "{out}"
    );
    assert!(err.contains("3 branch decision(s)"), "{err}");
    // A decision budget too small: the run stops at the branch, state printed.
    let (ok, out, err) = hearth(&[
        "emu",
        "run",
        example,
        "--mode",
        "clear",
        "--reg",
        "r4=3",
        "--decisions",
        "1",
    ]);
    assert!(!ok);
    assert!(err.contains("budget of 1 exhausted"), "{err}");
    assert!(out.contains("pc  = 0x0001001c"), "{out}");
    let dir = std::env::temp_dir().join(format!("hearth-emu-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.s");
    std::fs::write(&bad, "mov r0, #1\nfrobnicate r1\n").unwrap();
    let (ok, _, err) = hearth(&["emu", "run", bad.to_str().unwrap(), "--mode", "clear"]);
    assert!(
        !ok && err.contains("line 2") && err.contains("frobnicate"),
        "{err}"
    );
    let elf = dir.join("bad.elf");
    std::fs::write(&elf, b"\x7fELF\x01\x01\x01").unwrap();
    let (ok, _, err) = hearth(&["emu", "run", elf.to_str().unwrap(), "--mode", "clear"]);
    assert!(!ok && err.contains("ELF"), "{err}");
    let (ok, _, err) = hearth(&["emu", "run", example, "--reg", "r15=1"]);
    assert!(!ok && err.contains("r0..r14"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
