//! The `hearth` command as a user runs it.

use std::process::Command;

/// `hearth ARGS` on 2 threads: (success, stdout, stderr).
pub(crate) fn hearth(args: &[&str]) -> (bool, String, String) {
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
        vec![
            "keygen",
            "--params",
            "insecure_test_bits",
            "--out",
            dir.to_str().unwrap(),
        ],
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

/// `keygen --compressed` writes a compressed server key that `info`
/// describes (kind, sizes, what it expands to) and that a command reading
/// server.key decompresses and runs with (an encrypted emulator run).
#[test]
fn compressed_keygen_info_and_use() {
    let dir = std::env::temp_dir().join(format!("hearth-cli-compressed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (ok, out, err) = hearth(&[
        "keygen",
        "--params",
        "GATES_128",
        "--out",
        dir.to_str().unwrap(),
        "--compressed",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("compressed"), "{out}");
    let server = dir.join("server.key");
    let size = std::fs::metadata(&server).unwrap().len();
    // 799 * 4 * 512 bootstrap bodies + 1536 * 3 key-switch bodies + 1536 *
    // 512 packing bodies, 8 bytes each, plus header and framing;
    // uncompressed it is about 107 MB.
    assert!(
        (19_419_136..19_419_136 + 512).contains(&size),
        "{size} bytes"
    );
    let (ok, out, err) = hearth(&["info", server.to_str().unwrap()]);
    assert!(ok, "{err}");
    for want in [
        "kind:        compressed server key",
        "GATES_128",
        &format!("size:        {size} bytes"),
        "bootstrap key 13090816 bytes, key switch 36864 bytes, packing key 6291456 bytes",
        "a server key of 107020288 bytes (bootstrap key 52363264, key switch 29491200, packing key 25165824), 5.5x",
        "status:      ok",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }

    let program = dir.join("add.s");
    std::fs::write(&program, "_start:\n add r0, r0, r1\n svc #0\n").unwrap();
    let (ok, out, err) = hearth(&[
        "emu",
        "run",
        program.to_str().unwrap(),
        "--keys",
        dir.to_str().unwrap(),
        "--reg",
        "r0=1000",
        "--reg",
        "r1=234",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("r0  = 0x000004d2 (1234, encrypted)"), "{out}");

    let mut bytes = std::fs::read(&server).unwrap();
    bytes.truncate(bytes.len() - 1);
    let bad = dir.join("bad.key");
    std::fs::write(&bad, &bytes).unwrap();
    let (ok, _, err) = hearth(&["info", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("truncated"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
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
    // The words run on the integers' key: one key generated.
    assert!(
        out.contains("words: u16 on DIGITS_128, the same key as the integers"),
        "{out}"
    );
    assert!(out.contains("| x * y (wrapping) | 1506 | 1506 |"), "{out}");
    assert!(
        out.contains("| x.rotate_left(y) | 36933 | 36933 |"),
        "{out}"
    );
    assert_eq!(err.matches("generating keys").count(), 1, "{err}");
}

#[test]
fn app_words_plan_on_the_one_key() {
    let dir = std::env::temp_dir().join(format!("hearth-cli-app-words-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/diabetes");
    let (input, model) = (data.join("rows.csv"), data.join("model.json"));
    for (family, want) in [
        ("words", "x: a signed 32-bit word x [2, 10]"),
        ("int", "x: an integer of 7 digits x [2, 10]"),
    ] {
        let out_dir = dir.join(family);
        let (ok, out, err) = hearth(&[
            "app",
            "regression",
            "--rows",
            "2",
            "--input",
            input.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
            "--family",
            family,
            "--export",
            out_dir.to_str().unwrap(),
        ]);
        assert!(ok, "{family}: {out}{err}");
        assert!(out.contains("\nDIGITS_128: "), "{family}: {out}");
        let values = std::fs::read_to_string(out_dir.join("values.json")).unwrap();
        assert!(values.contains("\"x\""), "{values}");
        let (ok, info, err) = hearth(&["info", out_dir.join("program.hprog").to_str().unwrap()]);
        assert!(ok, "{err}");
        assert!(
            info.contains("parameters:  DIGITS_128") && info.contains(want),
            "{family}: {info}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn asc_table_regenerates() {
    let (ok, out, err) = hearth(&["tool", "asc-table", "--check"]);
    assert!(
        ok && out.contains("reproduces the embedded table (2048 lines)"),
        "{out}{err}"
    );
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

/// The `r0` that `hearth emu run` / `hearth emu client` printed.
fn printed_r0(out: &str) -> u32 {
    let line = out
        .lines()
        .find(|l| l.starts_with("r0  = "))
        .unwrap_or_else(|| panic!("no r0 in {out}"));
    let hex = line["r0  = 0x".len()..].split_whitespace().next().unwrap();
    u32::from_str_radix(hex, 16).unwrap()
}

/// Four words of `data` (the data memory from `base`) at `addr`.
fn words_at(data: &[u8], base: u32, addr: u32) -> [i32; 4] {
    let at = (addr - base) as usize;
    std::array::from_fn(|i| {
        i32::from_le_bytes(data[at + 4 * i..at + 4 * i + 4].try_into().unwrap())
    })
}

fn dot4(a: [i32; 4], b: [i32; 4]) -> u32 {
    a.iter()
        .zip(&b)
        .fold(0i32, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y))) as u32
}

/// examples/emu/dot4.s reads two arrays through pointers given with
/// --clear-reg (`@a` resolved from the program's labels, or a number): its
/// r0 is the plain dot product of the arrays, for the file's own data and
/// for random arrays (--mem), clear and once encrypted; the same pointers
/// given encrypted (--reg), twice, or as unknown symbols are refused with
/// a message that says so.
#[test]
fn emu_reads_arrays_through_clear_pointer_registers() {
    use rand::{Rng, SeedableRng};
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/emu/dot4.s");
    let image = hearth_emu::Image::load(&std::fs::read(example).unwrap()).unwrap();
    let (a, b) = (image.symbols["a"], image.symbols["b"]);
    let want = dot4(
        words_at(&image.data, image.data_base, a),
        words_at(&image.data, image.data_base, b),
    );
    let pointers = ["--clear-reg", "r0=@a", "--clear-reg", "r1=@b"];
    let run = |extra: &[&str]| {
        let mut args = vec!["emu", "run", example];
        args.extend_from_slice(extra);
        hearth(&args)
    };
    let (ok, out, err) = run(&[&pointers[..], &["--mode", "clear"]].concat());
    assert!(ok, "{err}");
    assert_eq!(printed_r0(&out), want, "{out}");
    let r1 = format!("r1  = {0:#010x} ({0}, clear)", b + 16);
    assert!(out.contains(&r1), "the pointer moved on, clear: {out}");
    assert!(err.contains("0 branch decision(s)"), "{err}");

    // Random arrays through --mem, the pointers as @symbol or numbers.
    let dir = std::env::temp_dir().join(format!("hearth-emu-dot4-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mem = dir.join("arrays.bin");
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    for k in 0..3 {
        let mut data = image.data.clone();
        for w in (0..4u32).flat_map(|i| [a + 4 * i, b + 4 * i]) {
            let at = (w - image.data_base) as usize;
            data[at..at + 4].copy_from_slice(&rng.gen::<i32>().to_le_bytes());
        }
        std::fs::write(&mem, &data).unwrap();
        let want = dot4(
            words_at(&data, image.data_base, a),
            words_at(&data, image.data_base, b),
        );
        let r0 = if k == 0 {
            format!("r0={a:#x}")
        } else {
            "r0=@a".into()
        };
        let (ok, out, err) = run(&[
            "--mode",
            "clear",
            "--mem",
            mem.to_str().unwrap(),
            "--clear-reg",
            &r0,
            "--clear-reg",
            "r1=@b",
        ]);
        assert!(ok, "{err}");
        assert_eq!(printed_r0(&out), want, "{out}");
    }

    // Encrypted pointers cannot address memory: the run stops, says why.
    let (ok, _, err) = run(&["--mode", "clear", "--reg", "r0=@a", "--clear-reg", "r1=@b"]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("a base address depends on encrypted data") && err.contains("--clear-reg"),
        "{err}"
    );
    let (ok, _, err) = run(&["--mode", "clear", "--reg", "r0=1", "--clear-reg", "r0=@a"]);
    assert!(
        !ok && err.contains("r0 is given by both --reg and --clear-reg"),
        "{err}"
    );
    let (ok, _, err) = run(&[
        "--mode",
        "clear",
        "--clear-reg",
        "r1=@a",
        "--clear-reg",
        "r1=@b",
    ]);
    assert!(
        !ok && err.contains("r1 is given twice by --clear-reg"),
        "{err}"
    );
    let (ok, _, err) = run(&["--mode", "clear", "--clear-reg", "r0=@nope"]);
    assert!(
        !ok && err.contains("no symbol `nope`") && err.contains("stack_top"),
        "{err}"
    );
    let (ok, _, err) = run(&[
        "--mode",
        "clear",
        "--clear-reg",
        "r0=0x10000",
        "--width",
        "16",
    ]);
    assert!(!ok && err.contains("does not fit 16 bits"), "{err}");
    let (ok, _, err) = run(&["--clear-reg", "r15=@a"]);
    assert!(!ok && err.contains("r0..r14"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();

    // Encrypted (GATES_128, fresh keys): a word of the encrypted data
    // memory read through a clear pointer register. (Longer encrypted
    // programs, loads through clear pointers included, are hearth-emu's
    // tests/encrypted.rs; dot4 encrypted is about 4 800 bootstraps.)
    let small = dir.with_extension("s");
    std::fs::write(
        &small,
        "_start:\n ldr r0, [r1]\n add r0, r0, #5\n svc #0\n .data\nx: .word 1234\n",
    )
    .unwrap();
    let (ok, out, err) = hearth(&[
        "emu",
        "run",
        small.to_str().unwrap(),
        "--clear-reg",
        "r1=@x",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("r0  = 0x000004d7 (1239, encrypted)"), "{out}");
    std::fs::remove_file(&small).unwrap();
}

/// `hearth emu serve` / `hearth emu client` with a clear pointer register: the
/// server loads through it from encrypted memory.
#[test]
fn client_sends_clear_registers() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = std::env::temp_dir().join(format!("hearth-cli-remote-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let keys = dir.join("keys");
    let (ok, _, err) = hearth(&[
        "keygen",
        "--params",
        "GATES_128",
        "--out",
        keys.to_str().unwrap(),
    ]);
    assert!(ok, "{err}");
    let program = dir.join("sum.s");
    std::fs::write(
        &program,
        "_start:\n ldr r3, [r0]\n ldr r4, [r1]\n add r0, r3, r4\n add r0, r0, r2\n svc #0\n\
         .data\nx: .word 1000\ny: .word 234\n",
    )
    .unwrap();
    let image = hearth_emu::Image::load(&std::fs::read(&program).unwrap()).unwrap();
    let (x, y) = (0x1234_5678u32, 0xfedc_ba98u32);
    let mut mem = x.to_le_bytes().to_vec();
    mem.extend(y.to_le_bytes());
    std::fs::write(dir.join("mem.bin"), &mem).unwrap();
    assert_eq!(image.symbols["y"], image.data_base + 4);

    let port = crate::free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut server = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args([
            "emu",
            "serve",
            "--keys",
            keys.to_str().unwrap(),
            "--listen",
            &listen,
        ])
        .env("HEARTH_THREADS", "2")
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(server.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains("serving on"), "{first}");
    let (ok, out, err) = hearth(&[
        "emu",
        "client",
        "--keys",
        keys.to_str().unwrap(),
        "--connect",
        &listen,
        program.to_str().unwrap(),
        "--mem",
        dir.join("mem.bin").to_str().unwrap(),
        "--clear-reg",
        "r0=@x",
        "--clear-reg",
        "r1=@y",
        "--reg",
        "r2=77",
    ]);
    server.kill().unwrap();
    server.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ok, "{err}");
    assert_eq!(
        printed_r0(&out),
        x.wrapping_add(y).wrapping_add(77),
        "{out}"
    );
    let r1 = format!("r1  = {0:#010x} ({0}, clear)", image.symbols["y"]);
    assert!(out.contains(&r1), "{out}");
}

#[test]
#[cfg(not(feature = "mpi"))]
fn mpi_backend_without_the_feature_says_how_to_get_it() {
    for args in [
        vec!["demo", "--backend", "mpi"],
        vec!["app", "regression", "--rows", "1", "--backend", "mpi"],
    ] {
        let (ok, _, err) = hearth(&args);
        assert!(!ok, "{args:?} succeeded");
        assert!(err.contains("--features mpi"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
#[cfg(not(feature = "gpu"))]
fn require_gpu_turns_the_fallback_into_an_error() {
    // A GPU path in a build without the gpu feature must fail under
    // HEARTH_REQUIRE_GPU, not run on the cpu (the benchmarks' own paths
    // are checked in crates/hearth-bench/tests/bench.rs).
    let args = ["demo", "--backend", "gpu"];
    let out = Command::new(env!("CARGO_BIN_EXE_hearth"))
        .args(args)
        .env("HEARTH_THREADS", "2")
        .env("HEARTH_REQUIRE_GPU", "1")
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a run without a GPU must fail");
    assert!(err.contains("HEARTH_REQUIRE_GPU is set"), "{err}");
}

/// `hearth bench ARGS` runs the `hearth-bench` beside it with the same
/// arguments and exit status, and says how to get it where there is none.
#[test]
#[cfg(unix)]
fn bench_runs_hearth_bench_beside_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("hearth-cli-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("hearth");
    std::fs::copy(env!("CARGO_BIN_EXE_hearth"), &copy).unwrap();
    // A file just written may still be open in a child another test thread
    // forked meanwhile (until it execs): running it (the copy here, the
    // stand-in from hearth) then fails with ETXTBSY for a moment, so it is
    // retried.
    let run = |args: &[&str]| {
        for _ in 0..50 {
            match Command::new(&copy).args(args).env("PATH", "").output() {
                Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy => {}
                Ok(out) if !String::from_utf8_lossy(&out.stderr).contains("Text file busy") => {
                    return out;
                }
                Ok(_) => {}
                Err(e) => panic!("runs: {e}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        panic!("{} stayed busy", copy.display())
    };
    let out = run(&["bench", "ops", "--backend", "count"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("cargo run --release -p hearth-bench -- ARGS"),
        "{err}"
    );
    // A stand-in hearth-bench that echoes its arguments and fails with 3.
    let fake = dir.join("hearth-bench");
    std::fs::write(&fake, "#!/bin/sh\necho \"args: $*\"\nexit 3\n").unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run(&["bench", "ops", "--family", "words", "--help"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "args: ops --family words --help\n"
    );
    assert_eq!(out.status.code(), Some(3));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `hearth --help` lists one server, `server`; the emulator's TCP server
/// and client are `emu serve` and `emu client`.
#[test]
fn the_help_lists_one_server() {
    // The subcommands a `--help` lists, in order.
    let commands = |args: &[&str]| -> Vec<String> {
        let (ok, out, err) = hearth(args);
        assert!(ok, "{err}");
        out.lines()
            .skip_while(|l| !l.starts_with("Commands:"))
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .filter_map(|l| l.split_whitespace().next().map(String::from))
            .collect()
    };
    let top = commands(&["--help"]);
    assert!(
        top.iter().any(|c| c == "server") && top.iter().any(|c| c == "emu"),
        "{top:?}"
    );
    assert!(
        !top.iter().any(|c| c == "serve" || c == "client"),
        "{top:?}"
    );
    let emu = commands(&["emu", "--help"]);
    assert_eq!(emu[..3], ["run", "serve", "client"], "{emu:?}");
}
