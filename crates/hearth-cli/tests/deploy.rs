//! The deployment commands end to end, as a key owner and a server run
//! them: `keygen --compressed`, `app regression --export`, `encrypt`,
//! `run`, `decrypt`; and the refusals between them.

use std::path::{Path, PathBuf};
use std::process::Command;

fn hearth(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .env("HEARTH_THREADS", "2")
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .output()
        .expect("runs");
    let r = (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(!r.2.contains("panicked"), "{args:?}: {}", r.2);
    r
}

fn ok(args: &[&str]) -> String {
    let (ok, out, err) = hearth(args);
    assert!(ok, "{args:?} failed: {err}");
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

#[test]
fn regression_rows_round_trip_through_files_and_bad_inputs_are_refused() {
    let d: PathBuf = std::env::temp_dir().join(format!("hearth-deploy-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let (keys, other, app) = (d.join("keys"), d.join("other"), d.join("app"));
    ok(&[
        "keygen",
        "--params",
        "DIGITS_128",
        "--compressed",
        "--out",
        s(&keys),
    ]);
    ok(&["keygen", "--params", "DIGITS_128", "--out", s(&other)]);
    ok(&["app", "regression", "--rows", "1", "--export", s(&app)]);
    let (prog, values) = (app.join("program.hprog"), app.join("values.json"));
    let inspect = ok(&["inspect", s(&prog)]);
    assert!(
        inspect.contains("input:       x: an integer of"),
        "{inspect}"
    );
    assert!(
        inspect.contains("x [1, 10]") && inspect.contains("PBS, depth"),
        "{inspect}"
    );

    let input = d.join("in.hb");
    ok(&[
        "encrypt",
        "--key",
        s(&keys.join("client.key")),
        "--program",
        s(&prog),
        "--values",
        s(&values),
        "--out",
        s(&input),
    ]);
    let out = d.join("out.hb");
    ok(&[
        "run",
        "--server-key",
        s(&keys.join("server.key")),
        "--program",
        s(&prog),
        "--bundle",
        s(&input),
        "--out",
        s(&out),
        "--max-memory",
        "4GiB",
    ]);
    let got = d.join("got.json");
    ok(&[
        "decrypt",
        "--key",
        s(&keys.join("client.key")),
        "--bundle",
        s(&out),
        "--out",
        s(&got),
    ]);
    // The clear model's outputs, computed by the app from plain integers.
    assert_eq!(json(&got), json(&app.join("expected.json")));
    let info = ok(&["info", s(&input)]);
    assert!(
        info.contains("value bundle") && info.contains("x: an integer"),
        "{info}"
    );

    // NPY out, one file per output.
    ok(&[
        "decrypt",
        "--key",
        s(&keys.join("client.key")),
        "--bundle",
        s(&out),
        "--out",
        s(&d.join("npy")),
        "--format",
        "npy",
    ]);
    let y = hearth::kernels::io::read_npy(d.join("npy/y.npy")).unwrap();
    let expected: Vec<i64> = json(&app.join("expected.json"))["y"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap())
        .collect();
    assert_eq!(y.data(), expected.as_slice());

    // Refusals, each before anything runs.
    let refused = |args: &[&str], needle: &str| {
        let (good, _, err) = hearth(args);
        assert!(!good, "{args:?} succeeded");
        assert!(err.contains(needle), "{args:?}: {err}");
    };
    let run = |key: &Path, program: &Path, bundle: &Path, limit: &str| {
        vec![
            "run".to_string(),
            "--server-key".into(),
            s(key).into(),
            "--program".into(),
            s(program).into(),
            "--bundle".into(),
            s(bundle).into(),
            "--out".into(),
            s(&d.join("x.hb")).into(),
            "--max-memory".into(),
            limit.into(),
        ]
    };
    let call = |v: Vec<String>, needle: &str| {
        let v: Vec<&str> = v.iter().map(String::as_str).collect();
        refused(&v, needle);
    };
    call(
        run(&other.join("server.key"), &prog, &input, "4GiB"),
        "wrong key",
    );
    call(
        run(&keys.join("server.key"), &prog, &input, "10MiB"),
        "memory",
    );
    call(
        run(&keys.join("server.key"), &input, &input, "4GiB"),
        "value bundle",
    );
    let cut = d.join("cut.hprog");
    let bytes = std::fs::read(&prog).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 9]).unwrap();
    call(
        run(&keys.join("server.key"), &cut, &input, "4GiB"),
        "truncated",
    );
    refused(
        &[
            "decrypt",
            "--key",
            s(&other.join("client.key")),
            "--bundle",
            s(&out),
        ],
        "wrong key",
    );
    // Values that do not fit the signature.
    std::fs::write(d.join("short.json"), r#"{"x": [[1, 2]]}"#).unwrap();
    refused(
        &[
            "encrypt",
            "--key",
            s(&keys.join("client.key")),
            "--program",
            s(&prog),
            "--values",
            s(&d.join("short.json")),
            "--out",
            s(&d.join("y.hb")),
        ],
        "x",
    );
    std::fs::write(d.join("none.json"), "{}").unwrap();
    refused(
        &[
            "encrypt",
            "--key",
            s(&keys.join("client.key")),
            "--program",
            s(&prog),
            "--values",
            s(&d.join("none.json")),
            "--out",
            s(&d.join("y.hb")),
        ],
        "no value for input x",
    );
    assert!(!d.join("x.hb").exists() && !d.join("y.hb").exists());

    // A program on insecure parameters is refused by the front end.
    let p = hearth::Program::new(&hearth::INSECURE_TEST_DIGITS);
    let a = p.input(4);
    p.output(&(&a + &a));
    let insecure = d.join("insecure.hprog");
    p.build().unwrap().save(&insecure).unwrap();
    call(
        run(&keys.join("server.key"), &insecure, &input, "4GiB"),
        "INSECURE",
    );
    let _ = std::fs::remove_dir_all(&d);
}
